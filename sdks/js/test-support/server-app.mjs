// The browser proof shared by the server-side framework examples (examples/next,
// examples/sveltekit): each is the same small application written with its framework's package,
// served by its framework's production server on its own origin. The application is a
// confidential client of svc; the browser goes to svc directly for the hosted sign-in and the
// application's server calls svc's token, UserInfo and revocation endpoints, so no proxy is needed.
//
// What every example renders and serves (its test reads nothing else):
//   /           #status (signed-in | signed-out), #sub, #userinfo-email (UserInfo called on the
//               server with the session's access token), #token (its last 12 characters),
//               #error (?svc_error=…), a#login (/api/auth/login?returnTo=/), a form button #logout
//               (POST /api/auth/logout)
//   /protected  guarded by the framework's middleware or hook: #private "Only for <sub>", #tab (?tab=)
//   /api/token  JSON { sub, token, email } from UserInfo; ?refresh=1 forces a refresh first;
//               401 { error: "login_required" } without a session
//   /api/auth/* the package's routes
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { PASSWORD, env, management, managementToken } from "./e2e.mjs";
import { launchChromium } from "./spa.mjs";

const COOKIE = "svc_rp_session";

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs `node <args>` in `cwd` with `settings` in the environment (the production server of an
 * example) and resolves once `origin` answers; `stop()` ends it, `output()` is what it printed.
 */
export async function serve(origin, args, cwd, settings) {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...settings }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const stop = () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", resolve), child.kill("SIGTERM"))));
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${origin}/api/auth/session`).then((r) => r.ok, () => false);
    if (ok) return { stop, output: () => output };
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  assert.fail(`the ${args.join(" ")} server did not answer: ${output}`);
}

async function provision(framework, origin) {
  const machine = await managementToken(env.issuer, "applications:write users:write");
  const app = await management(env.issuer, machine, "POST", "/applications", {
    name: `${framework} example`,
    first_party: true,
    redirect_uris: [`${origin}/api/auth/callback`],
    post_logout_redirect_uris: [`${origin}/`],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "client_secret_basic",
    allowed_scopes: ["openid", "profile", "email", "offline_access"],
  });
  const email = `${framework}.${Date.now().toString(36)}@example.com`;
  const person = await management(env.issuer, machine, "POST", "/tenant-users", { email, password: PASSWORD, name: "Grace Hopper" });
  return { clientId: app.client_id, clientSecret: app.client_secret, email, sub: person.id };
}

/**
 * The example of `framework` through the whole journey. `start(port, origin, settings)` starts
 * its production server on `port` with the SVC_* settings (see `serve`). Signed out; a forged
 * callback and a mix-up are refused; sign in through the hosted page; the server-rendered page
 * shows the sub and UserInfo; the cookie's attributes; /session without tokens; a route's
 * forced refresh, stored; a cross-site logout refused; logout ending svc's session; the
 * protected path's returnTo round trip; returnTo to another origin ignored.
 */
export async function serverAppJourney(framework, start) {
  // The app's origin must be known before the application is registered: take the port first.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const person = await provision(framework, origin);
  const server = await start(port, origin, {
    SVC_ISSUER: env.issuer,
    SVC_CLIENT_ID: person.clientId,
    SVC_CLIENT_SECRET: person.clientSecret,
    SVC_SESSION_SECRET: randomBytes(32).toString("base64url"),
  });
  let browser;
  try {
    browser = await launchChromium();
    const context = await browser.newContext();
    const tab = await context.newPage();
    const pageErrors = [];
    tab.on("pageerror", (e) => pageErrors.push(e.message));
    const text = (selector) => tab.textContent(selector).then((t) => t?.trim() ?? "");
    // Nothing may ever leave for another origin than the app's and svc's.
    await context.route((url) => url.hostname === "evil.example", (route) => {
      pageErrors.push(`navigated to ${route.request().url()}`);
      return route.abort();
    });

    await tab.goto(`${origin}/`);
    assert.equal(await text("#status"), "signed-out");

    // A callback this application never asked for: an error, no session.
    await tab.goto(`${origin}/api/auth/callback?code=forged&state=forged&iss=${encodeURIComponent(env.issuer)}`);
    assert.equal(new URL(tab.url()).pathname, "/");
    assert.equal(await text("#error"), "state_mismatch");
    assert.equal(await text("#status"), "signed-out");

    // A mix-up: a real pending login, answered with another issuer's iss (RFC 9207).
    const started = await fetch(`${origin}/api/auth/login?returnTo=/`, { redirect: "manual" });
    assert.equal(started.status, 302);
    const authorize = new URL(started.headers.get("location"));
    assert.equal(authorize.origin, new URL(env.issuer).origin);
    assert.equal(authorize.searchParams.get("client_id"), person.clientId);
    assert.equal(authorize.searchParams.get("redirect_uri"), `${origin}/api/auth/callback`);
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.ok(authorize.searchParams.get("nonce"));
    const loginCookie = started.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}_login=`));
    assert.match(loginCookie, /; Path=\/api\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/);
    const mixup = await fetch(`${origin}/api/auth/callback?code=x&state=${authorize.searchParams.get("state")}&iss=${encodeURIComponent("https://evil.example")}`, {
      redirect: "manual",
      headers: { cookie: loginCookie.split(";")[0] },
    });
    assert.equal(mixup.status, 303);
    assert.equal(new URL(mixup.headers.get("location")).searchParams.get("svc_error"), "issuer_mismatch");
    assert.ok(!mixup.headers.getSetCookie().some((c) => c.startsWith(`${COOKIE}=`) && !/Max-Age=0/.test(c)), "no session from a mix-up");

    // Sign in from the login link through svc's hosted page and back to a server-rendered page.
    await tab.goto(`${origin}/`);
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.click("#login")]);
    await tab.fill('input[name="email"]', person.email);
    await tab.fill('input[name="password"]', PASSWORD);
    await Promise.all([tab.waitForURL(`${origin}/`), tab.press('input[name="password"]', "Enter")]);
    assert.equal(await text("#status"), "signed-in", `error=${await text("#error")}`);
    assert.equal(await text("#sub"), person.sub);
    assert.equal(await text("#userinfo-email"), person.email, "UserInfo answered the server-side call");
    assert.equal(await text("#error"), "");
    const first = await text("#token");
    assert.match(first, /^[A-Za-z0-9_-]{12}$/);

    // The session cookie: sealed, HttpOnly, Lax, Path=/ (not Secure on http://127.0.0.1 only).
    const cookies = await context.cookies(origin);
    const session = cookies.filter((c) => c.name === COOKIE || c.name.startsWith(`${COOKIE}.`));
    assert.ok(session.length >= 1, JSON.stringify(cookies.map((c) => c.name)));
    for (const c of session) {
      assert.equal(c.httpOnly, true);
      assert.equal(c.sameSite, "Lax");
      assert.equal(c.path, "/");
      assert.equal(c.secure, false);
      assert.match(c.value, /^(v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+|[A-Za-z0-9_.-]+)$/);
      assert.ok(!c.value.includes(first), "the access token is not readable in the cookie");
    }
    assert.ok(!cookies.some((c) => c.name === `${COOKIE}_login`), "the pending login was spent");

    // /api/auth/session: who, for client components, without tokens.
    await tab.goto(`${origin}/api/auth/session`);
    const info = JSON.parse(await tab.textContent("body"));
    assert.equal(info.isAuthenticated, true);
    assert.equal(info.user.sub, person.sub);
    assert.ok(!JSON.stringify(info).includes(first), "no token in /session");

    // A route handler: the same token; then a forced refresh gives a new one that works at UserInfo.
    await tab.goto(`${origin}/api/token`);
    assert.deepEqual(JSON.parse(await tab.textContent("body")), { sub: person.sub, token: first, email: person.email });
    await tab.goto(`${origin}/api/token?refresh=1`);
    const refreshed = JSON.parse(await tab.textContent("body"));
    assert.equal(refreshed.sub, person.sub);
    assert.equal(refreshed.email, person.email, "UserInfo accepts the refreshed access token");
    assert.notEqual(refreshed.token, first);
    // The route handler stored the renewed session: the page now uses the new token, and a second
    // forced refresh works (the rotated refresh token was kept; the spent one would end the session).
    await tab.goto(`${origin}/`);
    assert.equal(await text("#token"), refreshed.token);
    await tab.goto(`${origin}/api/token?refresh=1`);
    const again = JSON.parse(await tab.textContent("body"));
    assert.equal(again.email, person.email);
    assert.notEqual(again.token, refreshed.token);

    // The protected page, signed in: rendered.
    await tab.goto(`${origin}/protected?tab=signed-in`);
    assert.equal(await text("#private"), `Only for ${person.sub}`);

    // A logout form from another site is refused (the session stays).
    const csrf = await fetch(`${origin}/api/auth/logout`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: "https://evil.example", cookie: session.map((c) => `${c.name}=${c.value}`).join("; ") },
    });
    assert.equal(csrf.status, 403);

    // Logout: through svc's end-session endpoint back home, signed out here and at svc.
    await tab.goto(`${origin}/`);
    await Promise.all([tab.waitForURL(`${origin}/`), tab.click("#logout")]);
    assert.equal(await text("#status"), "signed-out");
    assert.ok(!(await context.cookies(origin)).some((c) => c.name.startsWith(COOKIE)), "the session cookie is gone");
    await tab.goto(`${origin}/api/token`);
    assert.deepEqual(JSON.parse(await tab.textContent("body")), { error: "login_required" });

    // The middleware: a protected path, signed out, goes to svc's sign-in (the password is asked
    // again: svc's session ended) and, after it, back to exactly that path.
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.goto(`${origin}/protected?tab=deep`)]);
    assert.ok(await tab.isVisible('input[name="password"]'), "svc asks for the password again: its session ended");
    await tab.fill('input[name="email"]', person.email);
    await tab.fill('input[name="password"]', PASSWORD);
    await Promise.all([tab.waitForURL(`${origin}/protected?tab=deep`), tab.press('input[name="password"]', "Enter")]);
    assert.equal(await text("#private"), `Only for ${person.sub}`);
    assert.equal(await text("#tab"), "deep");

    // returnTo pointing at another origin is ignored (svc's session is alive: straight through).
    for (const evil of ["https://evil.example/", "//evil.example/", "/\\evil.example/"]) {
      await tab.goto(`${origin}/api/auth/login?returnTo=${encodeURIComponent(evil)}`);
      await tab.waitForURL(`${origin}/`, { timeout: 5000 }).catch(() => assert.fail(`${evil}: at ${tab.url()}`));
      assert.equal(await text("#status"), "signed-in");
    }

    assert.deepEqual(pageErrors, []);
    console.log(`svc-js ${framework} browser test: passed against`, origin);
  } catch (error) {
    console.error(server.output());
    throw error;
  } finally {
    await browser?.close();
    await server.stop();
  }

}

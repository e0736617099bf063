// The browser proof shared by the framework examples (examples/<framework>): each is a Vite build
// of the same small application, written with its framework's package, and this module drives
// it in Chromium against a running svc. svc's token endpoint sends no CORS headers, so the built
// application is served the way it would be in production: a reverse proxy (a few lines of
// node:http) serves it under /app/ and passes every other request, Host included, to svc, whose
// development issuer is then the proxy's origin.
//
// What every example application renders (its test reads nothing else):
//   #status        loading | signed-in | signed-out
//   #sub, #email   the signed-in person's ID token claims (from the framework's hook, composable or
//                  store; svc keeps email out of the ID token, UserInfo has it)
//   #error         the adapter's error state: the error's `code` (e.g. state_mismatch), else empty
//   #token         the tail of the last access token it got with getAccessToken()
//   #userinfo-email, #userinfo-calls  the email UserInfo answered with that token, how many answers
//   buttons #login, #userinfo, #refresh (getAccessToken({ forceRefresh: true })), #logout
// and it reads { issuer, clientId } from /app/config.json, which this proxy serves.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import http from "node:http";
import { extname } from "node:path";
import { PASSWORD, env, management, managementToken } from "./e2e.mjs";

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".json": "application/json" };

/**
 * A same-origin proxy: `serve(path)` answers the application's own paths (a
 * `{ type, body }` or undefined), everything else goes to `upstream` (svc).
 */
export async function sameOriginProxy(upstream, serve) {
  const target = new URL(upstream);
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url, "http://proxy").pathname;
    if (path === "/favicon.ico") return res.writeHead(204).end();
    const own = await serve(path).catch(() => ({ status: 500, type: "text/plain", body: "proxy error" }));
    if (own) {
      res.writeHead(own.status ?? 200, { "content-type": own.type, "cache-control": "no-store" });
      return res.end(own.body);
    }
    const forward = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Serves a Vite build under /app/: its files, config.json, and index.html for every other /app/ path (client-side routes, the callback). */
function spaFiles(dist, config) {
  return async (path) => {
    if (!path.startsWith("/app/")) return undefined;
    const rest = path.slice("/app/".length);
    if (rest === "config.json") return { type: TYPES[".json"], body: JSON.stringify(config()) };
    if (/^assets\/[A-Za-z0-9_.-]+$/.test(rest)) {
      const body = await readFile(new URL(rest, dist)).catch(() => undefined);
      return body ? { type: TYPES[extname(rest)] ?? "application/octet-stream", body } : { status: 404, type: "text/plain", body: "not found" };
    }
    return { type: TYPES[".html"], body: await readFile(new URL("index.html", dist)) };
  };
}

/** Headless Chromium from CHROMIUM_PATH (default Debian's /usr/bin/chromium). */
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
    timeout: 60_000,
  });
}

/** A public SPA application with `redirect` and `bye` registered, and a person with a password. */
export async function provisionSpa(name, { redirect, bye }) {
  const machine = await managementToken(env.issuer, "applications:write users:write");
  const app = await management(env.issuer, machine, "POST", "/applications", {
    name,
    first_party: true,
    redirect_uris: [redirect],
    post_logout_redirect_uris: [bye],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "none",
    allowed_scopes: ["openid", "profile", "email", "offline_access"],
  });
  const email = `${name.replace(/[^a-z]/gi, "").toLowerCase()}.${Date.now().toString(36)}@example.com`;
  const person = await management(env.issuer, machine, "POST", "/tenant-users", { email, password: PASSWORD, name: "Katherine Johnson" });
  return { clientId: app.client_id, email, sub: person.id };
}

/**
 * The example application of `framework`, built into `dist`, through the whole journey: signed
 * out; a forged callback shows the adapter's error and stays signed out; sign in through the
 * hosted page; the claims from the framework's state; UserInfo with getAccessToken(); a forced
 * refresh; logout back to the application, signed out at svc too. `more(tab, context)` runs
 * framework-specific steps at the end (signed out, at svc's sign-in page).
 */
export async function exampleJourney(framework, dist, more) {
  let config;
  const proxy = await sameOriginProxy(env.issuer, spaFiles(dist, () => config));
  const origin = proxy.origin;
  let browser;
  try {
    const person = await provisionSpa(`${framework} example`, { redirect: `${origin}/app/callback`, bye: `${origin}/app/` });
    config = { issuer: origin, clientId: person.clientId };

    browser = await launchChromium();
    const tab = await (await browser.newContext()).newPage();
    const pageErrors = [];
    tab.on("pageerror", (e) => pageErrors.push(e.message));
    tab.on("requestfailed", (r) => pageErrors.push(`${r.url()}: ${r.failure()?.errorText}`));
    const status = (value) => tab.waitForFunction((v) => document.querySelector("#status")?.textContent === v, value, { timeout: 20_000 });
    const text = (selector) => tab.textContent(selector).then((t) => t?.trim() ?? "");

    await tab.goto(`${origin}/app/`);
    await status("signed-out").catch((e) => assert.fail(`${e.message}; ${pageErrors.join("; ")}`));
    assert.equal(await text("#error"), "");

    // A callback this application never asked for: the adapter shows the error, signed out.
    await tab.goto(`${origin}/app/callback?code=forged&state=forged&iss=${encodeURIComponent(origin)}`);
    await status("signed-out");
    assert.equal(await text("#error"), "state_mismatch");
    assert.equal(await text("#sub"), "");

    // Sign in from the application's button through svc's hosted page and back.
    await tab.goto(`${origin}/app/`);
    await status("signed-out");
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.click("#login")]);
    await tab.fill('input[name="email"]', person.email);
    await tab.fill('input[name="password"]', PASSWORD);
    await Promise.all([tab.waitForURL(/\/app\/callback/), tab.press('input[name="password"]', "Enter")]);
    await status("signed-in").catch(async (e) => assert.fail(`${e.message}; error=${await text("#error")}; ${pageErrors.join("; ")}`));
    assert.equal(await text("#sub"), person.sub);
    assert.equal(await text("#error"), "");
    const landed = new URL(tab.url());
    assert.equal(landed.search, "", "the code and state left the address bar");
    assert.equal(landed.pathname, "/app/", "onSignIn routed to returnTo");

    // An API call (UserInfo) with the token getAccessToken() gives.
    await tab.click("#userinfo");
    await tab.waitForFunction(() => document.querySelector("#userinfo-calls")?.textContent === "1");
    assert.equal(await text("#userinfo-email"), person.email);
    const first = await text("#token");
    assert.match(first, /^[A-Za-z0-9_-]{12}$/);

    // A forced refresh: a new access token, still good for UserInfo, still the same person.
    await tab.click("#refresh");
    await tab.waitForFunction((old) => document.querySelector("#token")?.textContent !== old, first);
    assert.notEqual(await text("#token"), first);
    const refreshed = await text("#token");
    await tab.click("#userinfo");
    await tab.waitForFunction(() => document.querySelector("#userinfo-calls")?.textContent === "2");
    assert.equal(await text("#token"), refreshed, "UserInfo was called with the refreshed token");
    assert.equal(await text("#userinfo-email"), person.email);
    assert.equal(await text("#status"), "signed-in");
    assert.equal(await text("#sub"), person.sub);

    // Logout: through svc's end-session endpoint back to the application, signed out there and at svc.
    await Promise.all([tab.waitForURL((url) => url.pathname === "/app/" && url.searchParams.has("state")), tab.click("#logout")]);
    await status("signed-out");
    assert.equal(await text("#sub"), "");
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.click("#login")]);
    assert.ok(await tab.isVisible('input[name="password"]'), "svc asks for the password again: its session ended");
    await more?.(tab, { origin, person, status, text, pageErrors });

    assert.deepEqual(pageErrors, []);
    console.log(`svc-js ${framework} browser test: passed against`, origin);
  } finally {
    await browser?.close();
    await proxy.close();
  }
}

// @svc/client in a real page: Chromium (playwright-core, Debian's /usr/bin/chromium or
// CHROMIUM_PATH) against a running svc. svc's token endpoint sends no CORS headers, so the
// single-page application is served the way it would be in production: a reverse proxy (the
// workspace's test-support/spa.mjs) serves the application under /spa/ and passes every other
// request, Host included, to the real service, whose development issuer is then the proxy's origin.
// Covers login() by redirect through the hosted sign-in, handleCallback() with
// the address bar cleaned, where tokens are (not) kept, getAccessToken() with a forced refresh
// under Web Locks, UserInfo, login({ popup: true }) and logout(). Skipped without SVC_E2E_*.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { PASSWORD, env, management, managementToken, skip } from "./e2e.mjs";
import { launchChromium, sameOriginProxy } from "../../../test-support/spa.mjs";

const DIST = new URL("../dist/", import.meta.url);

/** The application's one page: the client from /spa/dist, then what the path asks for. */
function page(issuer, clientId) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>SPA</title></head><body>
<button id="popup-login" type="button">Sign in (popup)</button><pre id="out"></pre>
<script type="module">
import { createSvcClient, isLoginPopup } from "/spa/dist/index.js";
const client = createSvcClient({
  baseURL: ${JSON.stringify(issuer)},
  oauth: { clientId: ${JSON.stringify(clientId)}, redirectUri: ${JSON.stringify(`${issuer}/spa/callback`)},
    scopes: "openid profile email offline_access", postLogoutRedirectUri: ${JSON.stringify(`${issuer}/spa/bye`)} },
});
window.client = client;
document.getElementById("popup-login").onclick = () => {
  window.popupResult = client.login({ popup: true }).then((r) => ({ sub: r.user.sub }), (e) => ({ error: e.name + ": " + e.message }));
};
if (location.pathname === "/spa/callback" && !isLoginPopup()) {
  window.callbackResult = client.handleCallback().then(
    (r) => ({ sub: r.user.sub, returnTo: r.returnTo, url: location.href }),
    (e) => ({ error: e.name + ": " + e.message }),
  );
}
window.ready = true;
</script></body></html>`;
}

/** The application's own paths under /spa/: the client from dist, and the page for every other one. */
function spaFiles(app) {
  return async (path) => {
    if (path.startsWith("/spa/dist/")) {
      const file = path.slice("/spa/dist/".length);
      if (!/^[a-z]+\.js$/.test(file)) return { status: 404, type: "text/plain", body: "not found" };
      return { type: "text/javascript", body: await readFile(new URL(file, DIST)) };
    }
    if (path.startsWith("/spa/")) return { type: "text/html; charset=utf-8", body: app() };
    return undefined;
  };
}

test("browser: login() and handleCallback() in Chromium against a running svc", { skip, timeout: 180_000 }, async () => {
  let clientId;
  const proxy = await sameOriginProxy(env.issuer, spaFiles(() => page(proxy.origin, clientId)));
  const issuer = proxy.origin;
  let browser;
  try {
    const machine = await managementToken(env.issuer, "applications:write users:write");
    const app = await management(env.issuer, machine, "POST", "/applications", {
      name: "JS SPA in Chromium (@svc/client)",
      first_party: true,
      redirect_uris: [`${issuer}/spa/callback`],
      post_logout_redirect_uris: [`${issuer}/spa/bye`],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
      allowed_scopes: ["openid", "profile", "email", "offline_access"],
    });
    clientId = app.client_id;
    const email = `grace.${Date.now().toString(36)}@example.com`;
    const person = await management(env.issuer, machine, "POST", "/tenant-users", { email, password: PASSWORD, name: "Grace Hopper" });

    browser = await launchChromium();
    const context = await browser.newContext();
    const tab = await context.newPage();
    const pageErrors = [];
    tab.on("pageerror", (e) => pageErrors.push(e.message));
    tab.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
    tab.on("requestfailed", (r) => pageErrors.push(`${r.url()}: ${r.failure()?.errorText}`));
    await tab.goto(`${issuer}/spa/`);
    await tab.waitForFunction(() => window.ready === true);

    // login() by redirect: the page goes to svc, the person signs in on the hosted page.
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.evaluate(() => { void window.client.login({ returnTo: "/spa/inbox" }); })]);
    await tab.fill('input[name="email"]', email);
    await tab.fill('input[name="password"]', PASSWORD);
    await Promise.all([tab.waitForURL(/\/spa\/callback/), tab.press('input[name="password"]', "Enter")]);
    await tab.waitForFunction(() => window.ready === true).catch((e) => assert.fail(`${e.message}; ${tab.url()}; ${pageErrors.join("; ")}`));
    const result = await tab.evaluate(() => window.callbackResult);
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.sub, person.id);
    assert.equal(result.returnTo, "/spa/inbox");
    assert.equal(new URL(result.url).search, "", "the code and state left the address bar");

    // Tokens live in memory only; the pending login left sessionStorage with the callback.
    const stored = await tab.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, locks: !!navigator.locks }));
    assert.deepEqual(stored, { local: 0, session: 0, locks: true });

    // A forced refresh through the Web Locks API, shared by concurrent callers; UserInfo same-origin.
    const tokens = await tab.evaluate(async () => {
      const first = await window.client.getAccessToken();
      const before = (await window.client.getTokens()).refreshToken;
      const again = await Promise.all([1, 2].map(() => window.client.getAccessToken({ forceRefresh: true })));
      const after = (await window.client.getTokens()).refreshToken;
      const info = await window.client.fetchUserInfo();
      return { first, again, rotated: before !== after, email: info.email };
    });
    assert.notEqual(tokens.again[0], tokens.first);
    assert.equal(tokens.again[0], tokens.again[1]);
    assert.equal(tokens.rotated, true);
    assert.equal(tokens.email, email);

    // login({ popup: true }) from a click: the popup rides the svc session back to the callback.
    await tab.goto(`${issuer}/spa/`);
    await tab.waitForFunction(() => window.ready === true);
    await tab.click("#popup-login");
    await tab.waitForFunction(() => window.popupResult !== undefined);
    const popup = await tab.evaluate(() => window.popupResult);
    assert.equal(popup.error, undefined, popup.error);
    assert.equal(popup.sub, person.id);

    // logout(): to svc's end-session endpoint and back to the registered address with the state.
    await Promise.all([tab.waitForURL(/\/spa\/bye/), tab.evaluate(() => { void window.client.logout(); })]);
    assert.match(new URL(tab.url()).searchParams.get("state") ?? "", /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(pageErrors, []);
    console.log("svc-js browser test: passed against", issuer);
  } finally {
    await browser?.close();
    await proxy.close();
  }
});

// @svc/electron against a live svc: a real loopback server, a real browser (headless Chromium
// standing in for the system browser `shell.openExternal` opens) signing in on svc's hosted page,
// real token, refresh, UserInfo and revocation endpoints. Plus hostile callbacks (a forged state,
// an RFC 9207 mix-up) and what stays refused afterwards. Skips without SVC_E2E_* (js_sdk.rs sets them).
import assert from "node:assert/strict";
import { readFile, mkdtemp, stat } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { IssuerMismatchError, LoginRequiredError, StateMismatchError, createElectronAuth, TokenError } from "@svc/electron";
import { refreshTokens, discover } from "@svc/client";
import { PASSWORD, env, management, managementToken, skip } from "../../../test-support/e2e.mjs";
import { launchChromium } from "../../../test-support/spa.mjs";

test("createElectronAuth refuses incomplete options", () => {
  assert.throws(() => createElectronAuth({ baseURL: "https://id.example", clientId: "a" }), TypeError);
  assert.throws(() => createElectronAuth({ clientId: "a", openExternal: () => {} }), TypeError);
});

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A stand-in for Electron's safeStorage: reversible, but the file must not show the tokens. */
const fakeSafeStorage = {
  isEncryptionAvailable: () => true,
  encryptString: (text) => Buffer.from(Buffer.from(text, "utf8").map((b) => b ^ 0x5a)),
  decryptString: (data) => Buffer.from(data.map((b) => b ^ 0x5a)).toString("utf8"),
};

test("@svc/electron: system browser, loopback redirect, refresh, storage, logout, hostile callbacks", { skip, timeout: 120_000 }, async () => {
  // Registered without a port: svc accepts a loopback IP literal on any port (RFC 8252 §7.3), so
  // the sign-in below listens on whatever port the OS gives it. The hostile cases use a fixed
  // port (`port`) so that they can forge callbacks to it.
  const port = await freePort();
  const redirect = `http://127.0.0.1:${port}/callback`;
  const machine = await managementToken(env.issuer, "applications:write users:write");
  const app = await management(env.issuer, machine, "POST", "/applications", {
    name: "electron example",
    first_party: true,
    redirect_uris: ["http://127.0.0.1/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "none",
    allowed_scopes: ["openid", "profile", "email", "offline_access"],
  });
  const email = `electron.${Date.now().toString(36)}@example.com`;
  const person = await management(env.issuer, machine, "POST", "/tenant-users", { email, password: PASSWORD, name: "Ada Lovelace" });
  const dir = await mkdtemp(join(tmpdir(), "svc-electron-"));
  const storage = { safeStorage: fakeSafeStorage, path: join(dir, "session.bin") };

  const browser = await launchChromium();
  try {
    const tab = await (await browser.newContext()).newPage();
    const opened = [];
    let browsing;
    // shell.openExternal resolves once the browser has the URL; the sign-in happens afterwards.
    const openExternal = (url) => {
      opened.push(url);
      browsing = (async () => {
        await tab.goto(url);
        await tab.fill('input[name="email"]', email);
        await tab.fill('input[name="password"]', PASSWORD);
        await Promise.all([tab.waitForURL((u) => /^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(u.href)), tab.press('input[name="password"]', "Enter")]);
      })();
    };
    // No port: an ephemeral one, as RFC 8252 §7.3 intends.
    const auth = createElectronAuth({ baseURL: env.issuer, clientId: app.client_id, openExternal, storage });

    const signIn = await auth.login();
    await browsing;
    const authorize = new URL(opened[0]);
    const ephemeral = authorize.searchParams.get("redirect_uri");
    assert.match(ephemeral, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.notEqual(ephemeral, "http://127.0.0.1/callback", "the port the OS gave is presented");
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.ok(authorize.searchParams.get("nonce") && authorize.searchParams.get("state"));
    assert.equal(signIn.user.sub, person.id);
    assert.ok(signIn.tokens.refreshToken, "offline_access brought a refresh token");
    assert.equal(await tab.textContent("#result"), "signed-in", "the browser tab tells the person to go back");

    // The loopback server is gone: the callback URL (with its code) cannot be replayed.
    await assert.rejects(fetch(tab.url()), /fetch failed/);

    // The access token works at UserInfo; a forced refresh rotates it and keeps working.
    const first = await auth.getAccessToken();
    assert.equal(first, signIn.tokens.accessToken);
    assert.equal((await auth.fetchUserInfo()).email, email);
    const second = await auth.getAccessToken({ forceRefresh: true });
    assert.notEqual(second, first);
    assert.equal((await auth.fetchUserInfo()).sub, person.id);

    // The file holds the tokens encrypted (never in the clear), readable only by its owner, and a
    // new instance (the application restarted) resumes the session from it.
    const file = await readFile(storage.path);
    assert.ok(!file.toString("latin1").includes(second), "no access token in the clear");
    assert.equal((await stat(storage.path)).mode & 0o777, 0o600);
    const restarted = createElectronAuth({ baseURL: env.issuer, clientId: app.client_id, openExternal, storage, port });
    assert.equal((await restarted.getUser()).sub, person.id);
    assert.equal(await restarted.getAccessToken(), second);
    const third = await restarted.getAccessToken({ forceRefresh: true });
    assert.notEqual(third, second);
    const spent = JSON.parse(fakeSafeStorage.decryptString(await readFile(storage.path))).tokens.refreshToken;

    // Without encryption available nothing is written: memory only.
    const plainDir = await mkdtemp(join(tmpdir(), "svc-electron-"));
    const noCrypto = { safeStorage: { ...fakeSafeStorage, isEncryptionAvailable: () => false }, path: join(plainDir, "s.bin") };
    assert.equal(await createElectronAuth({ baseURL: env.issuer, clientId: app.client_id, openExternal, storage: noCrypto }).getUser(), null);

    // Logout revokes the refresh token at svc and deletes the file.
    await restarted.logout();
    await assert.rejects(restarted.getAccessToken(), LoginRequiredError);
    await assert.rejects(stat(storage.path), { code: "ENOENT" });
    await assert.rejects(refreshTokens(await discover(env.issuer), spent, { clientId: app.client_id }), (e) => e instanceof TokenError && e.error === "invalid_grant");

    // A forged callback (another state) while the login waits: an error page, login() rejects,
    // and the loopback server is closed at once (a second hit is refused).
    const hostile = (makeUrl) => async (url) => {
      const callback = makeUrl(new URL(url));
      const page = await fetch(callback);
      hostile.status = page.status;
      hostile.body = await page.text();
      hostile.callback = callback;
    };
    const forged = createElectronAuth({
      baseURL: env.issuer,
      clientId: app.client_id,
      port,
      openExternal: hostile((u) => `${redirect}?code=stolen&state=forged&iss=${encodeURIComponent(env.issuer)}`),
    });
    await assert.rejects(forged.login(), StateMismatchError);
    assert.equal(hostile.status, 400);
    assert.match(hostile.body, /state_mismatch/);
    await assert.rejects(fetch(hostile.callback), /fetch failed/);
    assert.equal(await forged.getUser(), null);

    // A mix-up (RFC 9207): the right state, another issuer's iss.
    const mixup = createElectronAuth({
      baseURL: env.issuer,
      clientId: app.client_id,
      port,
      openExternal: hostile((u) => `${redirect}?code=x&state=${u.searchParams.get("state")}&iss=${encodeURIComponent("https://evil.example")}`),
    });
    await assert.rejects(mixup.login(), IssuerMismatchError);
    assert.equal(hostile.status, 400);
    assert.match(hostile.body, /issuer_mismatch/);

    // Only the callback path spends the login; a second callback while the first is being
    // redeemed is refused (409), and a timeout closes the server too.
    let hits;
    const twice = createElectronAuth({
      baseURL: env.issuer,
      clientId: app.client_id,
      port,
      timeoutMs: 3000,
      openExternal: async (url) => {
        const state = new URL(url).searchParams.get("state");
        const probe = await fetch(`http://127.0.0.1:${port}/favicon.ico`);
        const bad = `${redirect}?error=access_denied&state=${state}&iss=${encodeURIComponent(env.issuer)}`;
        const [a, b] = await Promise.all([fetch(bad), fetch(bad)]);
        hits = [probe.status, a.status, b.status].sort();
      },
    });
    await assert.rejects(twice.login(), (e) => e.code === "access_denied");
    assert.deepEqual(hits, [400, 404, 409]);
    const idle = createElectronAuth({ baseURL: env.issuer, clientId: app.client_id, port, timeoutMs: 300, openExternal: () => {} });
    await assert.rejects(idle.login(), (e) => e.code === "timeout");
    await assert.rejects(fetch(redirect), /fetch failed/);
  } finally {
    await browser.close();
  }
  console.log("svc-js electron loopback test: passed against", env.issuer);
});

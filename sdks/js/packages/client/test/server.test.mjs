// @svc/client/server without a framework and without svc: the sealing, the cookie attributes,
// returnTo, the protected-path check, and the routes driven with Web Requests against a fake
// authorization server (a fetch that answers discovery, JWKS, token and revocation with tokens
// signed here), including the hostile callbacks: wrong state, another issuer, bad ID tokens.
// The live tests of the same routes in real servers are examples/next and examples/sveltekit.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CHUNK,
  SessionSecretError,
  attributes,
  authRoute,
  chunkedWrites,
  forgetIssuers,
  parseCookieHeader,
  readChunked,
  requireSession,
  safeReturnTo,
  seal,
  serializeCookie,
  unseal,
} from "../dist/server/index.js";
import { makeKey, sign } from "./helpers.mjs";

/** The routes as a framework adapter mounts them (a 404 outside basePath, as @svc/next answers). */
function createAuthHandlers(options) {
  const handle = async (request) => (await authRoute(options, request)) ?? new Response("not found", { status: 404 });
  return { GET: handle, POST: handle };
}
const authMiddleware = (options, { protect }) => (request) => requireSession(options, request, protect);

const SECRET = "a-test-secret-that-is-long-enough-32+";
const OTHER = "another-secret-of-at-least-32-bytes!!";
const ISSUER = "https://op.test";
const CLIENT = "app_next_test";
const APP = "https://app.test";

// ---------------------------------------------------------------- sealing

test("seal: round trip; tampered, wrong key, other purpose and expired values are refused", async () => {
  const value = { a: 1, s: "ü" };
  const sealed = await seal(value, SECRET, "p", Date.now() + 60_000);
  assert.match(sealed, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  assert.ok(!sealed.includes("ü") && !Buffer.from(sealed.split(".")[2], "base64url").toString("latin1").includes('"a"'), "encrypted, not encoded");
  assert.deepEqual(await unseal(sealed, SECRET, "p"), value);
  // Every byte of the ciphertext is authenticated.
  const bytes = Buffer.from(sealed.split(".")[2], "base64url");
  for (const at of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
    const changed = Buffer.from(bytes);
    changed[at] ^= 1;
    assert.equal(await unseal(`v1.${sealed.split(".")[1]}.${changed.toString("base64url")}`, SECRET, "p"), undefined, `byte ${at}`);
  }
  assert.equal(await unseal(sealed.replace(/^v1\./, "v2."), SECRET, "p"), undefined);
  assert.equal(await unseal(sealed, OTHER, "p"), undefined, "wrong key");
  assert.equal(await unseal(sealed, SECRET, "q"), undefined, "sealed for another cookie");
  assert.equal(await unseal(await seal(value, SECRET, "p", Date.now() - 1), SECRET, "p"), undefined, "expired");
  assert.equal(await unseal(sealed, SECRET, "p", Date.now() + 61_000), undefined, "expired later");
  assert.equal(await unseal("garbage", SECRET, "p"), undefined);
  assert.equal(await unseal("v1.!!.!!", SECRET, "p"), undefined);
  // Rotation: the old secret still opens, listed after the new one.
  assert.deepEqual(await unseal(sealed, [OTHER, SECRET], "p"), value);
  await assert.rejects(seal(value, "short", "p", Date.now() + 1000), SessionSecretError);
});

// ---------------------------------------------------------------- cookies and returnTo

test("cookies: HttpOnly, SameSite=Lax, Secure except on http loopback; chunks reassemble and stale ones are deleted", () => {
  assert.equal(serializeCookie({ name: "n", value: "v", attributes: attributes("https://app.test", "/", 60) }), "n=v; Path=/; Max-Age=60; HttpOnly; Secure; SameSite=Lax");
  assert.equal(serializeCookie({ name: "n", value: "v", attributes: attributes("http://127.0.0.1:3000", "/api/auth", 600) }), "n=v; Path=/api/auth; Max-Age=600; HttpOnly; SameSite=Lax");
  for (const dev of ["http://localhost:3000", "http://[::1]:3000", "http://app.localhost"]) assert.equal(attributes(dev, "/", 1).secure, false, dev);
  assert.equal(attributes("http://app.example", "/", 1).secure, true, "plain HTTP elsewhere still asks for Secure");
  assert.match(serializeCookie({ name: "n", value: "", attributes: attributes(APP, "/", 0) }), /Max-Age=0; Expires=Thu, 01 Jan 1970/);

  const big = "x".repeat(CHUNK * 2 + 5);
  const writes = chunkedWrites("s", big, ["s", "s.0", "s.7", "other", "s.x"], attributes(APP, "/", 60));
  const live = writes.filter((w) => w.attributes.maxAge > 0);
  assert.deepEqual(live.map((w) => w.name), ["s.0", "s.1", "s.2"]);
  assert.deepEqual(writes.filter((w) => w.attributes.maxAge === 0).map((w) => w.name).sort(), ["s", "s.7"]);
  const jar = new Map(live.map((w) => [w.name, w.value]));
  assert.equal(readChunked("s", (n) => jar.get(n)), big);
  // Back to one cookie: the chunks go.
  const small = chunkedWrites("s", "small", ["s.0", "s.1", "s.2"], attributes(APP, "/", 60));
  assert.deepEqual(small.map((w) => [w.name, w.attributes.maxAge > 0]), [["s", true], ["s.0", false], ["s.1", false], ["s.2", false]]);
  assert.deepEqual([...parseCookieHeader("a=1; b=x=y;c=3; a=2")], [["a", "1"], ["b", "x=y"], ["c", "3"]]);
});

test("safeReturnTo: same-origin paths only", () => {
  for (const ok of ["/", "/a", "/a/b?c=1&d=%2F#h", "/%2F%2Fevil.example"]) assert.equal(safeReturnTo(ok), ok, ok);
  assert.equal(safeReturnTo("/a/../b"), "/b");
  for (const evil of ["https://evil.example/", "//evil.example", "/\\evil.example", "\\\\evil.example", "/\t/evil.example", "/\n/evil.example", "javascript:alert(1)", "evil.example", "", null, undefined, `/${"a".repeat(3000)}`]) {
    assert.equal(safeReturnTo(evil), "/", JSON.stringify(evil));
  }
  assert.equal(safeReturnTo("//evil.example", "/home"), "/home");
});

// ---------------------------------------------------------------- a fake authorization server

async function fakeServer(options = {}) {
  const key = await makeKey("RS256", "k1");
  const calls = [];
  let nextTokens = options.tokens;
  let refuse = false;
  const metadata = {
    issuer: ISSUER,
    authorization_endpoint: `${ISSUER}/oauth/authorize`,
    token_endpoint: `${ISSUER}/oauth/token`,
    jwks_uri: `${ISSUER}/jwks`,
    userinfo_endpoint: `${ISSUER}/userinfo`,
    end_session_endpoint: `${ISSUER}/oauth/logout`,
    revocation_endpoint: `${ISSUER}/oauth/revoke`,
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
  };
  const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const fetch = async (input, init = {}) => {
    const url = input.toString();
    const headers = new Headers(init.headers);
    const body = new URLSearchParams(init.body ?? "");
    calls.push({ url, method: init.method ?? "GET", authorization: headers.get("authorization"), body });
    if (url === `${ISSUER}/.well-known/openid-configuration`) return json(metadata);
    if (url === metadata.jwks_uri) return json({ keys: [key.jwk] });
    if (url === metadata.revocation_endpoint) return new Response(null, { status: 200 });
    if (url === metadata.token_endpoint) {
      if (body.get("grant_type") === "refresh_token" && refuse) return json({ error: "invalid_grant" }, 400);
      // Yield, so that concurrent refreshes really overlap.
      await new Promise((r) => setTimeout(r, 20));
      return json(await nextTokens(body));
    }
    return new Response("not found", { status: 404 });
  };
  const now = () => Math.floor(Date.now() / 1000);
  const idToken = (claims = {}, header = {}) => sign(key, { iss: ISSUER, sub: "usr_1", aud: CLIENT, iat: now(), exp: now() + 300, email: "ada@example.com", ...claims }, header);
  let serial = 0;
  const issue = async (body, claims, header, expiresIn = 3600) => {
    serial++;
    return { access_token: `at-${serial}-${"x".repeat(12)}`, token_type: "Bearer", expires_in: expiresIn, refresh_token: `rt-${serial}`, id_token: await idToken(claims, header) };
  };
  nextTokens ??= (body) => issue(body, { nonce: options.nonce?.() });
  return { metadata, fetch, calls, idToken, issue, setTokens: (f) => (nextTokens = f), refuseRefresh: () => (refuse = true) };
}

function setup(server, extra = {}) {
  forgetIssuers();
  const options = { issuer: ISSUER, clientId: CLIENT, clientSecret: "cs_secret", secret: SECRET, fetch: server.fetch, ...extra };
  return { options, ...createAuthHandlers(options) };
}

/** A browser's cookie jar for the app, applying Set-Cookie headers. */
function jar() {
  const cookies = new Map();
  return {
    cookies,
    header: () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    take(response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const eq = pair.indexOf("=");
        if (/Max-Age=0/.test(line)) cookies.delete(pair.slice(0, eq));
        else cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return response;
    },
  };
}

const req = (path, browser, init = {}) =>
  new Request(`${APP}${path}`, { ...init, headers: { cookie: browser?.header() ?? "", ...(init.headers ?? {}) } });

/** GET /login, and the authorization request's parameters. */
async function startLogin(app, browser, returnTo = "/after") {
  const response = browser.take(await app.GET(req(`/api/auth/login?returnTo=${encodeURIComponent(returnTo)}`, browser)));
  assert.equal(response.status, 302);
  return new URL(response.headers.get("location")).searchParams;
}

async function callback(app, browser, params) {
  const response = browser.take(await app.GET(req(`/api/auth/callback?${new URLSearchParams(params)}`, browser)));
  assert.equal(response.status, 303);
  return new URL(response.headers.get("location"));
}

// ---------------------------------------------------------------- route handlers

test("login → callback: PKCE S256, state and nonce; a sealed session; /session without tokens; client_secret_basic", async () => {
  let nonce;
  const server = await fakeServer({ nonce: () => nonce });
  const app = setup(server);
  const browser = jar();
  const login = browser.take(await app.GET(req("/api/auth/login?returnTo=%2Fafter%3Fx%3D1", browser)));
  const pendingCookie = login.headers.getSetCookie()[0];
  assert.match(pendingCookie, /^svc_rp_session_login=v1\.[^;]+; Path=\/api\/auth; Max-Age=600; HttpOnly; Secure; SameSite=Lax$/);
  const params = new URL(login.headers.get("location")).searchParams;
  assert.equal(params.get("client_id"), CLIENT);
  assert.equal(params.get("redirect_uri"), `${APP}/api/auth/callback`);
  assert.equal(params.get("code_challenge_method"), "S256");
  assert.match(params.get("code_challenge"), /^[A-Za-z0-9_-]{43}$/);
  assert.equal(params.get("scope"), "openid profile email offline_access");
  nonce = params.get("nonce");
  assert.ok(nonce && params.get("state"));

  const landed = await callback(app, browser, { code: "c1", state: params.get("state"), iss: ISSUER });
  assert.equal(landed.toString(), `${APP}/after?x=1`);
  assert.ok(!browser.cookies.has("svc_rp_session_login"), "the pending login is spent");
  const sealed = readChunked("svc_rp_session", (n) => browser.cookies.get(n));
  assert.ok(sealed && !sealed.includes("at-1"), "the session cookie is sealed");

  const token = server.calls.find((c) => c.url === server.metadata.token_endpoint);
  assert.equal(token.authorization, `Basic ${Buffer.from(`${CLIENT}:cs_secret`).toString("base64")}`);
  assert.equal(token.body.get("code"), "c1");
  assert.match(token.body.get("code_verifier"), /^[A-Za-z0-9_-]{43,}$/);
  assert.equal(server.calls.find((c) => c.url === server.metadata.jwks_uri).authorization, null, "the secret goes to the token endpoint only");

  const session = await (await app.GET(req("/api/auth/session", browser))).json();
  assert.equal(session.isAuthenticated, true);
  assert.equal(session.user.sub, "usr_1");
  assert.equal(session.user.email, "ada@example.com");
  assert.equal(session.user.nonce, undefined);
  assert.ok(!JSON.stringify(session).includes("at-1") && !JSON.stringify(session).includes("rt-1"), "no tokens in /session");

  // The same callback again: the pending login is gone.
  assert.equal((await callback(app, browser, { code: "c1", state: params.get("state"), iss: ISSUER })).searchParams.get("svc_error"), "state_mismatch");
});

test("hostile callbacks: wrong state, another issuer, no iss, a foreign pending cookie — refused before the code is used", async () => {
  const server = await fakeServer();
  const app = setup(server);
  for (const [name, params, code] of [
    ["wrong state", (p) => ({ code: "c", state: "forged", iss: ISSUER }), "state_mismatch"],
    ["mix-up", (p) => ({ code: "c", state: p.get("state"), iss: "https://evil.example" }), "issuer_mismatch"],
    ["no iss", (p) => ({ code: "c", state: p.get("state") }), "issuer_mismatch"],
    ["repeated state", (p) => [["code", "c"], ["state", p.get("state")], ["state", p.get("state")], ["iss", ISSUER]], "repeated_parameter"],
    ["error answer", (p) => ({ error: "access_denied", state: p.get("state"), iss: ISSUER }), "access_denied"],
  ]) {
    const browser = jar();
    const landed = await callback(app, browser, params(await startLogin(app, browser)));
    assert.equal(landed.origin + landed.pathname, `${APP}/`, name);
    assert.equal(landed.searchParams.get("svc_error"), code, name);
    assert.ok(![...browser.cookies.keys()].some((n) => n.startsWith("svc_rp_session")), `${name}: no session, pending login spent`);
  }
  // A pending login sealed by another application's secret is no pending login.
  const browser = jar();
  const params = await startLogin(app, browser);
  const foreign = setup(server, { secret: OTHER });
  assert.equal((await callback(foreign, browser, { code: "c", state: params.get("state"), iss: ISSUER })).searchParams.get("svc_error"), "state_mismatch");
  assert.ok(!server.calls.some((c) => c.url === server.metadata.token_endpoint), "no code was redeemed");
});

test("hostile ID tokens: wrong nonce, wrong audience, alg none, expired — no session", async () => {
  const server = await fakeServer();
  const app = setup(server);
  const now = Math.floor(Date.now() / 1000);
  const none = async (claims) => {
    const token = await server.idToken(claims);
    const [, payload] = token.split(".");
    return `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
  };
  for (const [name, make] of [
    ["wrong nonce", (nonce) => server.idToken({ nonce: `${nonce}x` })],
    ["wrong audience", (nonce) => server.idToken({ nonce, aud: "app_other" })],
    ["alg none", (nonce) => none({ nonce })],
    ["expired", (nonce) => server.idToken({ nonce, iat: now - 7200, exp: now - 3600 })],
    ["another issuer", (nonce) => server.idToken({ nonce, iss: "https://evil.example" })],
  ]) {
    const browser = jar();
    const params = await startLogin(app, browser);
    server.setTokens(async () => ({ access_token: "at", token_type: "Bearer", expires_in: 300, id_token: await make(params.get("nonce")) }));
    const landed = await callback(app, browser, { code: "c", state: params.get("state"), iss: ISSUER });
    assert.equal(landed.searchParams.get("svc_error"), "invalid_id_token", name);
    assert.ok(![...browser.cookies.keys()].some((n) => n.startsWith("svc_rp_session")), `${name}: no session`);
  }
});

/** A signed-in browser (the callback completed). */
async function signedIn(server, app, expiresIn = 3600) {
  const browser = jar();
  const params = await startLogin(app, browser, "/");
  // The sign-in's access token lives `expiresIn` seconds, refreshed ones an hour.
  server.setTokens((body) => (body.get("grant_type") === "authorization_code" ? server.issue(body, { nonce: params.get("nonce") }, {}, expiresIn) : server.issue(body, {}, {}, 3600)));
  await callback(app, browser, { code: "c", state: params.get("state"), iss: ISSUER });
  assert.ok(browser.cookies.size > 0);
  return browser;
}

test("logout: POST from the same origin only; clears the session, revokes the refresh token, ends svc's session", async () => {
  const server = await fakeServer();
  const app = setup(server);
  const browser = await signedIn(server, app);
  assert.equal((await app.GET(req("/api/auth/logout", browser))).status, 405, "no GET logout");
  const csrf = await app.POST(req("/api/auth/logout", browser, { method: "POST", headers: { origin: "https://evil.example" } }));
  assert.equal(csrf.status, 403);
  const crossSite = await app.POST(req("/api/auth/logout", browser, { method: "POST", headers: { "sec-fetch-site": "cross-site" } }));
  assert.equal(crossSite.status, 403);
  assert.equal((await (await app.GET(req("/api/auth/session", browser))).json()).isAuthenticated, true, "still signed in");

  const out = browser.take(await app.POST(req("/api/auth/logout", browser, { method: "POST", headers: { origin: APP } })));
  assert.equal(out.status, 303);
  const end = new URL(out.headers.get("location"));
  assert.equal(end.origin + end.pathname, server.metadata.end_session_endpoint);
  assert.equal(end.searchParams.get("post_logout_redirect_uri"), `${APP}/`);
  assert.equal(end.searchParams.get("client_id"), CLIENT);
  assert.ok(end.searchParams.get("id_token_hint")?.split(".").length === 3);
  assert.equal(browser.cookies.size, 0, "the session cookie is deleted");
  const revoke = server.calls.find((c) => c.url === server.metadata.revocation_endpoint);
  assert.equal(revoke.body.get("token"), "rt-1");
  assert.ok(revoke.authorization?.startsWith("Basic "));
});

test("refresh: rotates the refresh token; concurrent requests share one refresh; a refused one signs out", async () => {
  const server = await fakeServer();
  const app = setup(server);
  // A token with 100 s left, outside the 60 s window: /refresh leaves it alone (no needless refresh).
  const fresh = await signedIn(server, app, 100);
  const before = fresh.header();
  const untouched = await app.GET(req("/api/auth/refresh?returnTo=%2Fpage", fresh));
  assert.equal(untouched.headers.get("location"), `${APP}/page`);
  assert.equal(untouched.headers.getSetCookie().length, 0);
  assert.equal(fresh.header(), before);

  // Past half of its (2 s) lifetime: refreshed, and the cookie holds the rotated refresh token.
  const browser = await signedIn(server, app, 2);
  await new Promise((r) => setTimeout(r, 1100));
  const count = () => server.calls.filter((c) => c.url === server.metadata.token_endpoint && c.body.get("grant_type") === "refresh_token").length;
  const [a, b] = await Promise.all([app.GET(req("/api/auth/refresh?returnTo=%2Fpage", browser)), app.GET(req("/api/auth/refresh?returnTo=//evil.example", browser))]);
  assert.equal(count(), 1, "two concurrent requests, one refresh");
  assert.equal(a.headers.get("location"), `${APP}/page`);
  assert.equal(b.headers.get("location"), `${APP}/`, "returnTo checked here too");
  browser.take(a);
  const refreshCall = server.calls.findLast((c) => c.body.get("grant_type") === "refresh_token");
  assert.ok(refreshCall.authorization?.startsWith("Basic "));
  const session = await (await app.GET(req("/api/auth/session", browser))).json();
  assert.ok(session.expiresAt > Date.now() + 3000_000, "the new token's expiry");
  // A request still carrying the old cookie shortly after gets the same result, not a replay.
  browser.take(await app.GET(req("/api/auth/refresh?returnTo=%2F", browser)));
  assert.equal(count(), 1);

  // svc refuses the refresh token: the session is cleared and the browser goes to login.
  const dead = await signedIn(server, app, 2);
  await new Promise((r) => setTimeout(r, 1100));
  server.refuseRefresh();
  const refused = await app.GET(req("/api/auth/refresh?returnTo=%2Fx", dead));
  assert.equal(refused.headers.get("location"), `${APP}/api/auth/login?returnTo=%2Fx`);
  assert.ok(refused.headers.getSetCookie().some((c) => c.startsWith("svc_rp_session=;") && /Max-Age=0/.test(c)), "the session cookie is deleted");
});

test("requireSession: protected paths need a session; the login redirect carries the path as returnTo", async () => {
  const server = await fakeServer();
  const app = setup(server);
  const middleware = authMiddleware(app.options, { protect: ["/account", /^\/admin(\/|$)/] });
  const out = await middleware(new Request(`${APP}/account/settings?tab=2`));
  assert.equal(out.status, 307);
  const login = new URL(out.headers.get("location"));
  assert.equal(login.origin + login.pathname, `${APP}/api/auth/login`);
  assert.equal(login.searchParams.get("returnTo"), "/account/settings?tab=2");
  assert.equal((await middleware(new Request(`${APP}/admin`))).status, 307);
  assert.equal(await middleware(new Request(`${APP}/accounting`)), undefined, "a prefix is a path segment");
  assert.equal(await middleware(new Request(`${APP}/`)), undefined);
  // Behind a proxy: the public origin from X-Forwarded-Host/-Proto, not the internal URL.
  const proxied = await middleware(new Request("http://localhost:3000/account", { headers: { "x-forwarded-host": "app.test", "x-forwarded-proto": "https" } }));
  assert.equal(new URL(proxied.headers.get("location")).origin, APP);

  const browser = await signedIn(server, app);
  assert.equal(await middleware(req("/account/settings", browser)), undefined, "signed in: through");
  // A session cookie sealed with another key counts as none.
  const forged = await seal({ user: { sub: "usr_x" }, accessToken: "a", tokenType: "Bearer", expiresAt: Date.now() + 60_000, receivedAt: Date.now(), sessionExpiresAt: Date.now() + 60_000 }, OTHER, "svc_rp_session", Date.now() + 60_000);
  assert.equal((await middleware(new Request(`${APP}/account`, { headers: { cookie: `svc_rp_session=${forged}` } }))).status, 307);
});

test("options: a short secret or a missing issuer is a clear error at the first request", async () => {
  const server = await fakeServer();
  const short = setup(server, { secret: "too-short" });
  await assert.rejects(short.GET(new Request(`${APP}/api/auth/login`)), SessionSecretError);
  const none = createAuthHandlers({ clientId: CLIENT, secret: SECRET, fetch: server.fetch });
  const saved = process.env.SVC_ISSUER;
  delete process.env.SVC_ISSUER;
  await assert.rejects(none.GET(new Request(`${APP}/api/auth/login`)), /no issuer/);
  if (saved !== undefined) process.env.SVC_ISSUER = saved;
});

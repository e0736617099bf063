// The stateful client against an in-process stand-in for the token endpoint (a fetch function):
// the callback's single-use pending login, storage defaults, the shared and rotating refresh,
// logout with revocation, discovery checks and DPoP gating. The real service is exercised by
// live.test.mjs.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthorizationError,
  DPoPKey,
  DiscoveryError,
  IssuerMismatchError,
  LoginRequiredError,
  MemoryStorage,
  NetworkError,
  StateMismatchError,
  TokenError,
  createSvcClient,
  discover,
  parseJws,
} from "../dist/index.js";
import { CLIENT_ID, ISSUER, METADATA, idClaims, makeKey, sign } from "./helpers.mjs";

const key = await makeKey("RS256");
const REDIRECT = "http://127.0.0.1:65500/callback";

/** A stand-in authorization server: discovery, JWKS, token (rotating refresh tokens), revocation. */
function stubServer({ metadata = METADATA, accessLifetime = 300, dpopNonce } = {}) {
  const state = { tokenCalls: 0, revoked: [], live: new Set(), pendingNonce: undefined, dpopProofs: [], counter: 0, delayMs: 0 };
  const json = (body, status = 200, headers = {}) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
  const fetch = async (input, init = {}) => {
    const url = new URL(input);
    if (url.pathname === "/.well-known/openid-configuration") return json(metadata);
    if (url.pathname === "/.well-known/jwks.json") return json({ keys: [key.jwk] });
    const form = new URLSearchParams(init.body ?? "");
    if (url.pathname === "/oauth/revoke") {
      state.revoked.push(form.get("token"));
      return new Response(null, { status: 200 });
    }
    if (url.pathname !== "/oauth/token") return json({ error: "not_found" }, 404);
    state.tokenCalls++;
    const proof = init.headers?.dpop;
    if (proof) {
      state.dpopProofs.push(proof);
      if (dpopNonce && parseJws(proof).payload.nonce !== dpopNonce) {
        return json({ error: "use_dpop_nonce" }, 400, { "dpop-nonce": dpopNonce });
      }
    }
    if (form.get("client_id") !== CLIENT_ID) return json({ error: "invalid_client" }, 401);
    await new Promise((r) => setTimeout(r, state.delayMs));
    let nonce;
    if (form.get("grant_type") === "authorization_code") {
      if (form.get("code") !== "good-code" || !form.get("code_verifier")) return json({ error: "invalid_grant" }, 400);
      nonce = state.pendingNonce;
    } else if (form.get("grant_type") === "refresh_token") {
      if (!state.live.delete(form.get("refresh_token"))) return json({ error: "invalid_grant" }, 400);
    } else {
      return json({ error: "unsupported_grant_type" }, 400);
    }
    const n = ++state.counter;
    const refresh = `rt_${n}`;
    state.live.add(refresh);
    const id = await sign(key, idClaims({ nonce }));
    return json({ access_token: `at_${n}`, token_type: proof ? "DPoP" : "Bearer", expires_in: accessLifetime, refresh_token: refresh, id_token: id, scope: "openid" });
  };
  return { fetch, state };
}

function client(server, options = {}) {
  return createSvcClient({ baseURL: ISSUER, oauth: { clientId: CLIENT_ID, redirectUri: REDIRECT, postLogoutRedirectUri: "http://127.0.0.1:65500/bye" }, fetch: server.fetch, ...options });
}

/** Starts a login and returns the callback svc would send for it. */
async function startLogin(c, server, query = (s) => `code=good-code&state=${s}&iss=${encodeURIComponent(ISSUER)}`) {
  const url = new URL(await c.createLoginUrl({ returnTo: "/inbox" }));
  server.state.pendingNonce = url.searchParams.get("nonce");
  return `${REDIRECT}?${query(url.searchParams.get("state"))}`;
}

test("handleCallback redeems the code once, stores the tokens in memory, and returns where to go", async () => {
  const server = stubServer();
  const transient = new MemoryStorage();
  const storage = new MemoryStorage();
  const c = client(server, { transientStorage: transient, storage });
  const callback = await startLogin(c, server);
  assert.equal(await c.isAuthenticated(), false);
  const result = await c.handleCallback(callback);
  assert.equal(result.user.sub, "usr_1");
  assert.equal(result.returnTo, "/inbox");
  assert.equal(await c.getAccessToken(), "at_1");
  assert.equal((await c.getUser()).sub, "usr_1");
  assert.equal(await c.isAuthenticated(), true);
  assert.ok(storage.get(`svc:${CLIENT_ID}:tokens`).includes("rt_1"));
  assert.equal([...transient["values"].keys()].length, 0, "the pending login is gone");
  await assert.rejects(c.handleCallback(callback), StateMismatchError);
});

test("a callback with a forged state or iss is refused before the code is used; an error callback ends the login", async () => {
  const server = stubServer();
  const c = client(server);
  const callback = await startLogin(c, server);
  await assert.rejects(c.handleCallback(callback.replace(/state=[^&]+/, "state=forged")), StateMismatchError);
  await assert.rejects(c.handleCallback(callback.replace(/iss=[^&]+/, "iss=https%3A%2F%2Fevil.example")), IssuerMismatchError);
  await assert.rejects(c.handleCallback(callback.replace(/&iss=[^&]+/, "")), IssuerMismatchError);
  assert.equal(server.state.tokenCalls, 0);
  // The pending login survived the forgeries.
  await c.handleCallback(callback);

  const denied = await startLogin(c, server, (s) => `error=access_denied&error_description=denied&state=${s}&iss=${encodeURIComponent(ISSUER)}`);
  await assert.rejects(c.handleCallback(denied), (e) => e instanceof AuthorizationError && e.error === "access_denied");
  await assert.rejects(c.handleCallback(denied), StateMismatchError);
});

test("an ID token with another nonce is refused", async () => {
  const server = stubServer();
  const c = client(server);
  const callback = await startLogin(c, server);
  server.state.pendingNonce = "someone-elses-nonce";
  await assert.rejects(c.handleCallback(callback), (e) => e.rule === "nonce");
  assert.equal(await c.getTokens(), null);
});

test("getAccessToken refreshes near expiry, shares one refresh between callers and keeps the rotated token", async () => {
  const server = stubServer({ accessLifetime: 20 });
  const c = client(server);
  await c.handleCallback(await startLogin(c, server));
  server.state.delayMs = 20;
  // 20 s lifetime < 30 s leeway: every call wants a refresh; all share the first.
  const tokens = await Promise.all([c.getAccessToken(), c.getAccessToken(), c.getAccessToken()]);
  assert.deepEqual(tokens, ["at_2", "at_2", "at_2"]);
  assert.equal(server.state.tokenCalls, 2);
  assert.equal((await c.getTokens()).refreshToken, "rt_2");
  assert.equal((await c.getUser()).sub, "usr_1");
  const forced = await Promise.all([c.getAccessToken({ forceRefresh: true }), c.getAccessToken({ forceRefresh: true })]);
  assert.deepEqual(forced, ["at_3", "at_3"]);
  assert.equal((await c.getTokens()).refreshToken, "rt_3");
});

test("a fresh token is returned without contacting the server; a refused refresh token signs out", async () => {
  const server = stubServer();
  const c = client(server);
  await assert.rejects(c.getAccessToken(), LoginRequiredError);
  await c.handleCallback(await startLogin(c, server));
  const calls = server.state.tokenCalls;
  assert.equal(await c.getAccessToken(), "at_1");
  assert.equal(server.state.tokenCalls, calls);
  server.state.live.clear();
  await assert.rejects(c.getAccessToken({ forceRefresh: true }), (e) => e instanceof LoginRequiredError && e.cause instanceof TokenError && e.cause.error === "invalid_grant");
  assert.equal(await c.getTokens(), null);
});

test("logout forgets the tokens, revokes the refresh token and goes to the end-session endpoint", async () => {
  const server = stubServer();
  const visited = [];
  const c = client(server, { navigate: (url) => visited.push(url) });
  await c.handleCallback(await startLogin(c, server));
  const idToken = (await c.getTokens()).idToken;
  const { url, state } = await c.logout();
  assert.deepEqual(visited, [url]);
  assert.deepEqual(server.state.revoked, ["rt_1"]);
  assert.equal(await c.getTokens(), null);
  const q = new URL(url).searchParams;
  assert.equal(q.get("id_token_hint"), idToken);
  assert.equal(q.get("post_logout_redirect_uri"), "http://127.0.0.1:65500/bye");
  assert.equal(q.get("client_id"), CLIENT_ID);
  assert.equal(q.get("state"), state);
  // Revocation failing (best effort) does not stop the logout.
  const failing = client({ fetch: async (u, i) => (new URL(u).pathname === "/oauth/revoke" ? Promise.reject(new Error("offline")) : server.fetch(u, i)) }, { navigate: () => {} });
  await failing.handleCallback(await startLogin(failing, server));
  await failing.logout({ navigate: false });
  assert.equal(await failing.getTokens(), null);
});

test("login needs a way to navigate outside a browser, and navigates with the URL it built", async () => {
  const server = stubServer();
  await assert.rejects(client(server).login(), (e) => e.code === "no_navigation");
  const visited = [];
  await client(server, { navigate: (url) => visited.push(url) }).login({ extraParams: { prompt: "login" } });
  assert.equal(new URL(visited[0]).searchParams.get("prompt"), "login");
});

test("discovery refuses a document for another issuer and reports network failures", async () => {
  const server = stubServer();
  await assert.rejects(discover(`${ISSUER}/`, { fetch: server.fetch }), DiscoveryError);
  await assert.rejects(discover("not a url", { fetch: server.fetch }), DiscoveryError);
  await assert.rejects(discover(ISSUER, { fetch: async () => { throw new TypeError("fetch failed"); } }), (e) => e instanceof DiscoveryError && e.cause instanceof NetworkError);
  const noS256 = stubServer({ metadata: { ...METADATA, code_challenge_methods_supported: ["plain"] } });
  await assert.rejects(discover(ISSUER, { fetch: noS256.fetch }), DiscoveryError);
  // A failed discovery is retried on the next call.
  let up = false;
  const flaky = client({ fetch: async (u, i) => (up ? server.fetch(u, i) : new Response("down", { status: 503 })) });
  await assert.rejects(flaky.metadata(), DiscoveryError);
  up = true;
  assert.equal((await flaky.metadata()).issuer, ISSUER);
});

test("DPoP proofs carry the method, target and access-token hash, signed by the key in their header", async () => {
  const dpop = await DPoPKey.generate();
  const proof = await dpop.proof("post", "https://as.example/token?x=1#f", "at_1");
  const { header, payload, signingInput, signature } = parseJws(proof);
  assert.equal(header.typ, "dpop+jwt");
  assert.equal(header.alg, "ES256");
  assert.equal(header.jwk.d, undefined, "no private member");
  assert.equal(payload.htm, "POST");
  assert.equal(payload.htu, "https://as.example/token");
  assert.equal(payload.ath, Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("at_1"))).toString("base64url"));
  assert.match(payload.jti, /^[A-Za-z0-9_-]{22}$/);
  const pub = await crypto.subtle.importKey("jwk", header.jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  assert.ok(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, signature, signingInput));
  assert.match(await dpop.thumbprint(), /^[A-Za-z0-9_-]{43}$/);
});

test("DPoP is used only when discovery offers ES256, and a nonce challenge is answered once", async () => {
  const plain = stubServer();
  const c1 = client(plain);
  await c1.handleCallback(await startLogin(c1, plain));
  assert.equal(plain.state.dpopProofs.length, 0);
  assert.deepEqual(await c1.getAuthorizationHeaders(), { authorization: "Bearer at_1" });

  const offering = stubServer({ metadata: { ...METADATA, dpop_signing_alg_values_supported: ["ES256"] }, dpopNonce: "n0nce" });
  const c2 = client(offering);
  await c2.handleCallback(await startLogin(c2, offering));
  assert.equal(offering.state.dpopProofs.length, 2, "a first proof, then one with the server's nonce");
  assert.equal(parseJws(offering.state.dpopProofs[1]).payload.nonce, "n0nce");
  const headers = await c2.getAuthorizationHeaders("GET", "https://api.example/things?page=2");
  assert.equal(headers.authorization, "DPoP at_1");
  assert.equal(parseJws(headers.dpop).payload.htu, "https://api.example/things");

  const optedOut = client(offering, { dpop: false });
  const before = offering.state.dpopProofs.length;
  await optedOut.handleCallback(await startLogin(optedOut, offering));
  assert.equal(offering.state.dpopProofs.length, before);
  assert.equal((await optedOut.getTokens()).tokenType, "Bearer");
});

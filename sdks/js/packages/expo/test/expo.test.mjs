// @svc/expo in Node, with the two Expo modules injected as fakes (no device or simulator runs
// here): openAuthSessionAsync answers as the system browser would after the hosted sign-in, and
// a fake authorization server (a fetch) checks PKCE, issues signed ID tokens with the nonce,
// rotates refresh tokens and records revocations. The protocol checks themselves are
// @svc/client's (tested there and against a live svc); this tests what @svc/expo adds.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { IssuerMismatchError, LoginRequiredError, StateMismatchError, createExpoAuth, useSvcAuth } from "@svc/expo";
import { CLIENT_ID, ISSUER, METADATA, makeKey, sign } from "../../client/test/helpers.mjs";

const REDIRECT = "com.example.app:/oauth/callback";
const BYE = "com.example.app:/bye";
const key = await makeKey("RS256");

function fakeServer() {
  const op = { pending: undefined, issued: 0, refreshes: [], revoked: [], refuse: false };
  op.fetch = async (url, init = {}) => {
    url = String(url);
    if (url === `${ISSUER}/.well-known/openid-configuration`) return Response.json(METADATA);
    if (url === METADATA.jwks_uri) return Response.json({ keys: [key.jwk] });
    const form = new URLSearchParams(init.body);
    if (url === METADATA.revocation_endpoint) {
      op.revoked.push(form.get("token"));
      return new Response(null, { status: 200 });
    }
    if (url !== METADATA.token_endpoint) return new Response("no", { status: 404 });
    const now = Math.floor(Date.now() / 1000);
    const n = ++op.issued;
    if (form.get("grant_type") === "authorization_code") {
      const challenge = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
      if (form.get("code") !== "c1" || challenge !== op.pending?.challenge || form.get("redirect_uri") !== REDIRECT) {
        return Response.json({ error: "invalid_grant" }, { status: 400 });
      }
      const idToken = await sign(key, { iss: ISSUER, sub: "usr_1", aud: CLIENT_ID, exp: now + 300, iat: now, nonce: op.pending.nonce, email: "ada@example.com" });
      return Response.json({ access_token: `at-${n}`, token_type: "Bearer", expires_in: op.expiresIn ?? 3600, refresh_token: `rt-${n}`, id_token: idToken });
    }
    op.refreshes.push(form.get("refresh_token"));
    if (op.refuse) return Response.json({ error: "invalid_grant" }, { status: 400 });
    return Response.json({ access_token: `at-${n}`, token_type: "Bearer", expires_in: 3600, refresh_token: `rt-${n}` });
  };
  return op;
}

/** The system browser: records the authorization URL and comes back as `answer(url)` says. */
function browser(op, answer = (u) => ({ type: "success", url: `${REDIRECT}?code=c1&state=${u.searchParams.get("state")}&iss=${encodeURIComponent(ISSUER)}` })) {
  const calls = [];
  const open = async (url, redirectUrl) => {
    calls.push({ url, redirectUrl });
    const u = new URL(url);
    op.pending = { challenge: u.searchParams.get("code_challenge"), nonce: u.searchParams.get("nonce") };
    return answer(u);
  };
  open.calls = calls;
  return open;
}

function secureStore() {
  const values = new Map();
  return {
    values,
    getItemAsync: async (k) => values.get(k) ?? null,
    setItemAsync: async (k, v) => {
      assert.match(k, /^[A-Za-z0-9._-]+$/, "SecureStore keys allow only these characters");
      values.set(k, v);
    },
    deleteItemAsync: async (k) => void values.delete(k),
  };
}

const make = (op, extra = {}) =>
  createExpoAuth({ baseURL: ISSUER, clientId: CLIENT_ID, redirectUri: REDIRECT, postLogoutRedirectUri: BYE, fetch: op.fetch, openAuthSessionAsync: browser(op), ...extra });

test("createExpoAuth refuses incomplete options", () => {
  assert.throws(() => createExpoAuth({ baseURL: ISSUER, clientId: CLIENT_ID, openAuthSessionAsync: async () => ({ type: "cancel" }) }), TypeError);
});

test("login through the auth session: PKCE S256 to the deep link, tokens in the secure store, state published", async () => {
  const op = fakeServer();
  const store = secureStore();
  const open = browser(op);
  const auth = make(op, { secureStore: store, openAuthSessionAsync: open });
  const seen = [];
  auth.subscribe(() => seen.push(auth.getState().status));
  const { user, tokens } = await auth.login({ extraParams: { prompt: "login" } });
  const sent = new URL(open.calls[0].url);
  assert.equal(open.calls[0].redirectUrl, REDIRECT);
  assert.equal(sent.searchParams.get("redirect_uri"), REDIRECT);
  assert.equal(sent.searchParams.get("code_challenge_method"), "S256");
  assert.equal(sent.searchParams.get("prompt"), "login");
  assert.equal(user.sub, "usr_1");
  assert.equal(tokens.accessToken, "at-1");
  assert.deepEqual(seen, ["signed-in"]);
  assert.equal(auth.getState().user.email, "ada@example.com");
  assert.equal(store.values.get(`svc.${CLIENT_ID}.refresh`), "rt-1");
  for (const [k, v] of store.values) assert.ok(v.length <= 2048, `${k} fits a SecureStore entry`);
  assert.equal(await auth.getAccessToken(), "at-1");

  // The app restarts: the session comes back from the secure store; a forced refresh rotates.
  const again = make(op, { secureStore: store });
  assert.equal(again.getState().status, "loading");
  assert.equal((await again.restore()).status, "signed-in");
  assert.equal(again.getState().user.sub, "usr_1");
  assert.equal(await again.getAccessToken({ forceRefresh: true }), "at-2");
  assert.equal(store.values.get(`svc.${CLIENT_ID}.refresh`), "rt-2");
  assert.equal(again.getState().user.sub, "usr_1", "the person survives a refresh without an ID token");

  // Logout: revoked at svc, the store emptied, svc's session ended in the browser.
  const bye = [];
  const leaving = make(op, { secureStore: store, openAuthSessionAsync: async (url, redirectUrl) => (bye.push({ url, redirectUrl }), { type: "success", url: BYE }) });
  await leaving.logout({ endSession: true });
  assert.deepEqual(op.revoked, ["rt-2"]);
  assert.equal(store.values.size, 0);
  const end = new URL(bye[0].url);
  assert.equal(`${end.origin}${end.pathname}`, METADATA.end_session_endpoint);
  assert.equal(end.searchParams.get("post_logout_redirect_uri"), BYE);
  assert.ok(end.searchParams.get("id_token_hint"));
  assert.equal(leaving.getState().status, "signed-out");
  await assert.rejects(leaving.getAccessToken(), LoginRequiredError);
});

test("hostile or abandoned callbacks sign nobody in", async () => {
  const cases = [
    [(u) => ({ type: "cancel" }), (e) => e.code === "cancel"],
    [(u) => ({ type: "success", url: `${REDIRECT}?code=c1&state=forged&iss=${encodeURIComponent(ISSUER)}` }), StateMismatchError],
    [(u) => ({ type: "success", url: `${REDIRECT}?code=c1&state=${u.searchParams.get("state")}&iss=${encodeURIComponent("https://evil.example")}` }), IssuerMismatchError],
    [(u) => ({ type: "success", url: `com.evil.app:/cb?code=c1&state=${u.searchParams.get("state")}&iss=${encodeURIComponent(ISSUER)}` }), (e) => e.code === "callback_error"],
    [(u) => ({ type: "success", url: `${REDIRECT}?error=access_denied&state=${u.searchParams.get("state")}&iss=${encodeURIComponent(ISSUER)}` }), (e) => e.code === "access_denied"],
  ];
  for (const [answer, expected] of cases) {
    const op = fakeServer();
    const store = secureStore();
    const auth = make(op, { secureStore: store, openAuthSessionAsync: browser(op, answer) });
    await auth.restore();
    await assert.rejects(auth.login(), expected);
    assert.equal(auth.getState().status, "signed-out");
    assert.ok(auth.getState().error, "the failure is published");
    assert.equal(store.values.size, 0);
    assert.equal(op.issued, 0, "no code was redeemed");
  }
});

test("one refresh for concurrent callers; a refused refresh token signs out and clears the store", async () => {
  const op = fakeServer();
  op.expiresIn = 10; // inside the 30 s leeway: every getAccessToken() refreshes
  const store = secureStore();
  const auth = make(op, { secureStore: store });
  await auth.login();
  const [a, b] = await Promise.all([auth.getAccessToken(), auth.getAccessToken()]);
  assert.equal(a, "at-2");
  assert.equal(b, "at-2");
  assert.deepEqual(op.refreshes, ["rt-1"], "the rotating refresh token was spent once");
  op.refuse = true;
  await assert.rejects(auth.getAccessToken({ forceRefresh: true }), LoginRequiredError);
  assert.deepEqual(op.refreshes, ["rt-1", "rt-2"]);
  assert.equal(auth.getState().status, "signed-out");
  assert.equal(auth.getState().error.code, "login_required");
  assert.equal(store.values.size, 0);
});

test("useSvcAuth renders the current state", async () => {
  const op = fakeServer();
  const auth = make(op);
  const View = () => {
    const { status, user } = useSvcAuth(auth);
    return createElement("p", null, `${status}:${user?.sub ?? ""}`);
  };
  assert.equal(renderToString(createElement(View)), "<p>loading:</p>");
  await auth.login();
  assert.equal(renderToString(createElement(View)), "<p>signed-in:usr_1</p>");
});

// authStore(): the state the framework packages render, driven by a stand-in client whose
// answers each test chooses (the real client's protocol checks are tested elsewhere).
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { LoginRequiredError, StateMismatchError, TokenError, authStore } from "../dist/index.js";

const USER = { sub: "usr_1", email: "ada@example.com" };

/** A client double: `signedIn` decides what is stored; calls are recorded. */
function fakeClient({ signedIn = false, callback, token = "at_1" } = {}) {
  const calls = [];
  const client = {
    redirectUri: "https://app.example/callback",
    signedIn,
    calls,
    async isAuthenticated() {
      return client.signedIn;
    },
    async getUser() {
      return client.signedIn ? { ...USER } : null;
    },
    async handleCallback() {
      calls.push("handleCallback");
      if (callback instanceof Error) throw callback;
      client.signedIn = true;
      return { user: { ...USER }, tokens: {}, returnTo: "/inbox" };
    },
    async login(options) {
      calls.push(["login", options]);
      if (options?.popup) {
        client.signedIn = true;
        return { user: { ...USER }, tokens: {}, returnTo: undefined };
      }
      return undefined;
    },
    async logout() {
      calls.push("logout");
      client.signedIn = false;
      return { url: "https://acme.id.example/oauth/end-session", state: "s" };
    },
    async getAccessToken(options) {
      calls.push(["getAccessToken", options]);
      if (token instanceof Error) {
        if (token instanceof LoginRequiredError) client.signedIn = false;
        throw token;
      }
      return token;
    },
  };
  return client;
}

test("authStore: a failed logout is signed out all the same, with the error", async () => {
  const client = fakeClient({ signedIn: true });
  client.logout = async () => {
    client.signedIn = false;
    throw new TypeError("no browser");
  };
  const store = authStore(client);
  await store.start();
  await assert.rejects(store.logout(), TypeError);
  assert.equal(store.getState().isAuthenticated, false);
  assert.equal(store.getState().error.message, "no browser");
});

afterEach(() => {
  delete globalThis.location;
});

test("authStore: one store per client, loading until started", () => {
  const client = fakeClient();
  assert.equal(authStore(client), authStore(client));
  assert.notEqual(authStore(client), authStore(fakeClient()));
  assert.deepEqual(authStore(client).getState(), { isLoading: true, isAuthenticated: false, user: null, error: null });
});

test("authStore: start() without a callback reads the stored tokens", async () => {
  const store = authStore(fakeClient({ signedIn: true }));
  const seen = [];
  store.subscribe((s) => seen.push(s));
  const state = await store.start();
  assert.deepEqual(state, { isLoading: false, isAuthenticated: true, user: USER, error: null });
  assert.equal(store.getState(), state);
  assert.equal(seen.length, 1);
  assert.ok(Object.isFrozen(state));
});

test("authStore: the callback is completed once however often start() runs", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=s&iss=x" };
  const client = fakeClient();
  const store = authStore(client);
  let signIns = 0;
  const [a, b] = await Promise.all([store.start({ onSignIn: (r) => (signIns += r.returnTo === "/inbox" ? 1 : 100) }), store.start()]);
  await store.start();
  assert.equal(a, b);
  assert.deepEqual(client.calls, ["handleCallback"]);
  assert.equal(signIns, 1);
  assert.deepEqual(store.getState(), { isLoading: false, isAuthenticated: true, user: USER, error: null });
});

test("authStore: a refused callback is an error state, signed out", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=forged" };
  const store = authStore(fakeClient({ callback: new StateMismatchError() }));
  const state = await store.start();
  assert.equal(state.isLoading, false);
  assert.equal(state.isAuthenticated, false);
  assert.ok(state.error instanceof StateMismatchError);
  assert.equal(state.error.code, "state_mismatch");
});

test("authStore: only the redirect URI's path with state or error is a callback", async () => {
  for (const href of ["https://app.example/callback", "https://app.example/other?state=s", "https://other.example/callback?state=s"]) {
    globalThis.location = { href };
    const client = fakeClient();
    await authStore(client).start();
    assert.deepEqual(client.calls, [], href);
  }
  globalThis.location = { href: "https://app.example/elsewhere?code=c" };
  const client = fakeClient();
  await authStore(client).start({ isCallback: (url) => url.pathname === "/elsewhere" });
  assert.deepEqual(client.calls, ["handleCallback"]);
});

test("authStore: a popup login signs in; a redirect login leaves the state alone", async () => {
  const client = fakeClient();
  const store = authStore(client);
  await store.start();
  assert.equal(await store.login(), undefined);
  assert.equal(store.getState().isAuthenticated, false);
  const result = await store.login({ popup: true });
  assert.equal(result.user.sub, "usr_1");
  assert.deepEqual(store.getState(), { isLoading: false, isAuthenticated: true, user: USER, error: null });
});

test("authStore: a refused refresh signs out and rejects; other failures keep the session", async () => {
  const refused = new LoginRequiredError("the session ended");
  const store = authStore(fakeClient({ signedIn: true, token: refused }));
  await store.start();
  await assert.rejects(store.getAccessToken({ forceRefresh: true }), LoginRequiredError);
  assert.equal(store.getState().isAuthenticated, false);
  assert.equal(store.getState().error, refused);

  const down = new TokenError(503, "http_503");
  const other = authStore(fakeClient({ signedIn: true, token: down }));
  await other.start();
  await assert.rejects(other.getAccessToken(), TokenError);
  assert.equal(other.getState().isAuthenticated, true);
  assert.equal(other.getState().error, down);
});

test("authStore: getAccessToken() passes its options and clears an old error", async () => {
  globalThis.location = { href: "https://app.example/callback?state=forged" };
  const client = fakeClient({ callback: new StateMismatchError() });
  const store = authStore(client);
  await store.start();
  client.signedIn = true;
  assert.equal(await store.getAccessToken({ forceRefresh: true }), "at_1");
  assert.deepEqual(client.calls.at(-1), ["getAccessToken", { forceRefresh: true }]);
  assert.deepEqual(store.getState(), { isLoading: false, isAuthenticated: true, user: USER, error: null });
});

test("authStore: logout() signs the state out and clears an old error; unsubscribed listeners hear nothing", async () => {
  const client = fakeClient({ signedIn: true, token: new TokenError(503, "http_503") });
  const store = authStore(client);
  await store.start();
  await assert.rejects(store.getAccessToken());
  assert.equal(store.getState().error.code, "http_503");
  const seen = [];
  const stop = store.subscribe((s) => seen.push(s.isAuthenticated));
  const { state } = await store.logout();
  assert.equal(state, "s");
  assert.deepEqual(seen, [false]);
  assert.deepEqual(store.getState(), { isLoading: false, isAuthenticated: false, user: null, error: null });
  stop();
  await store.login({ popup: true });
  assert.deepEqual(seen, [false]);
});

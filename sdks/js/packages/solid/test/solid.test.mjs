// @svc/solid in Node, with Solid's browser build (node --conditions=browser) so signals react:
// the getters track, the provider gives useAuth() its state, a disposed owner stops following.
// The callback and the redirects run in Chromium in examples/solid's browser test.
import assert from "node:assert/strict";
import { test } from "node:test";
import { StateMismatchError, authStore } from "@svc/client";
import { createComponent, createEffect, createRoot } from "solid-js";
import { SvcProvider, createSvc, useAuth } from "../dist/index.js";

function fakeClient({ signedIn = false, callback } = {}) {
  const client = {
    redirectUri: "https://app.example/callback",
    signedIn,
    async isAuthenticated() {
      return client.signedIn;
    },
    async getUser() {
      return client.signedIn ? { sub: "usr_1" } : null;
    },
    async handleCallback() {
      throw callback;
    },
    async getAccessToken() {
      return "at_1";
    },
    async logout() {
      client.signedIn = false;
      return { url: "https://acme.id.example/oauth/end-session", state: "s" };
    },
  };
  return client;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

test("solid: the getters are reactive, from loading to signed in to signed out", async () => {
  const client = fakeClient({ signedIn: true });
  const seen = [];
  const dispose = createRoot((dispose) => {
    const auth = createSvc(client);
    createEffect(() => seen.push(auth.isLoading ? "loading" : auth.isAuthenticated ? `in:${auth.user.sub}` : "out"));
    return dispose;
  });
  await settle();
  await authStore(client).start();
  await settle();
  await authStore(client).logout({ navigate: false });
  await settle();
  assert.deepEqual(seen, ["loading", "in:usr_1", "out"]);
  dispose();
  client.signedIn = true;
  assert.equal(await authStore(client).getAccessToken(), "at_1");
  assert.equal(authStore(client).getState().isAuthenticated, true);
  assert.deepEqual(seen, ["loading", "in:usr_1", "out"], "a disposed root no longer follows");
});

test("solid: <SvcProvider> gives useAuth() the state; a forged callback is its error", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=forged" };
  try {
    const client = fakeClient({ callback: new StateMismatchError() });
    let auth;
    const dispose = createRoot((dispose) => {
      createComponent(SvcProvider, {
        client,
        get children() {
          auth = useAuth();
          return null;
        },
      });
      return dispose;
    });
    await authStore(client).start();
    assert.equal(auth.error.code, "state_mismatch");
    assert.equal(auth.isAuthenticated, false);
    assert.equal(auth.isLoading, false);
    assert.equal(auth.client, client);
    assert.equal(auth.login, authStore(client).login);
    dispose();
  } finally {
    delete globalThis.location;
  }
});

test("solid: useAuth() outside <SvcProvider> says where it belongs", () => {
  assert.throws(() => createRoot(() => useAuth()), /must be used inside <SvcProvider/);
});

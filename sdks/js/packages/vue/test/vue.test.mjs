// @svc/vue in Node: the plugin, the composable's refs following the store, and the errors. The
// callback and the redirects run in Chromium in examples/vue's browser test.
import assert from "node:assert/strict";
import { test } from "node:test";
import { StateMismatchError, authStore } from "@svc/client";
import { createApp, isReadonly, isRef, watch, nextTick } from "vue";
import { createSvc, useAuth } from "../dist/index.js";

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
    async logout() {
      client.signedIn = false;
      return { url: "https://acme.id.example/oauth/end-session", state: "s" };
    },
  };
  return client;
}

test("vue: useAuth() without the plugin says what is missing", () => {
  const app = createApp({});
  assert.throws(() => app.runWithContext(() => useAuth()), /app\.use\(createSvc\(client\)\)/);
});

test("vue: the refs follow the store, from loading to signed in to signed out", async () => {
  const client = fakeClient({ signedIn: true });
  const app = createApp({});
  app.use(createSvc(client));
  const auth = app.runWithContext(() => useAuth());
  assert.ok(isRef(auth.isAuthenticated) && isReadonly(auth.isAuthenticated));
  assert.equal(auth.isLoading.value, true);
  const changes = [];
  watch(auth.isAuthenticated, (v) => changes.push(v));
  await authStore(client).start();
  assert.equal(auth.isLoading.value, false);
  assert.equal(auth.isAuthenticated.value, true);
  assert.equal(auth.user.value.sub, "usr_1");
  await nextTick();
  await auth.logout({ navigate: false });
  assert.equal(auth.isAuthenticated.value, false);
  assert.equal(auth.user.value, null);
  await nextTick();
  assert.deepEqual(changes, [true, false]);
});

test("vue: the plugin completes the callback in a browser, and a forged one is an error ref", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=forged" };
  try {
    const client = fakeClient({ callback: new StateMismatchError() });
    const plugin = createSvc(client);
    createApp({}).use(plugin);
    const state = await authStore(client).start();
    assert.equal(state.error.code, "state_mismatch");
    assert.equal(plugin.auth.error.value.code, "state_mismatch");
    assert.equal(plugin.auth.isAuthenticated.value, false);
    assert.equal(plugin.auth.isLoading.value, false);
  } finally {
    delete globalThis.location;
  }
});

test("vue: the actions are the store's", () => {
  const client = fakeClient();
  const { auth } = createSvc(client);
  assert.equal(auth.login, authStore(client).login);
  assert.equal(auth.getAccessToken, authStore(client).getAccessToken);
  assert.equal(auth.client, client);
});

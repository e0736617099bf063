// @svc/svelte in Node: the stores follow the client's authStore and the first subscriber starts
// it. The callback and the redirects run in Chromium in examples/svelte's browser test.
import assert from "node:assert/strict";
import { test } from "node:test";
import { StateMismatchError, authStore } from "@svc/client";
import { get } from "svelte/store";
import { createSvc } from "../dist/index.js";

function fakeClient({ signedIn = false, callback } = {}) {
  const client = {
    redirectUri: "https://app.example/callback",
    signedIn,
    callbacks: 0,
    async isAuthenticated() {
      return client.signedIn;
    },
    async getUser() {
      return client.signedIn ? { sub: "usr_1" } : null;
    },
    async handleCallback() {
      client.callbacks++;
      throw callback;
    },
    async logout() {
      client.signedIn = false;
      return { url: "https://acme.id.example/oauth/end-session", state: "s" };
    },
  };
  return client;
}

test("svelte: the stores follow the state, from loading to signed in to signed out", async () => {
  const client = fakeClient({ signedIn: true });
  const svc = createSvc(client);
  const seen = [];
  const stop = svc.isAuthenticated.subscribe((v) => seen.push(v));
  assert.equal(get(svc.isLoading), true);
  await svc.start();
  assert.deepEqual(get(svc.auth), { isLoading: false, isAuthenticated: true, user: { sub: "usr_1" }, error: null });
  assert.equal(get(svc.user).sub, "usr_1");
  await svc.logout({ navigate: false });
  assert.equal(get(svc.user), null);
  assert.deepEqual(seen, [false, true, false]);
  stop();
});

test("svelte: in a browser the first subscriber completes the callback, once; a forged one is the error store", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=forged" };
  try {
    const client = fakeClient({ callback: new StateMismatchError() });
    const svc = createSvc(client);
    const errors = [];
    const stops = [svc.error.subscribe((e) => errors.push(e?.code ?? null)), svc.auth.subscribe(() => undefined), createSvc(client).auth.subscribe(() => undefined)];
    await authStore(client).start();
    assert.equal(client.callbacks, 1);
    assert.deepEqual(errors, [null, "state_mismatch"]);
    assert.equal(get(svc.isAuthenticated), false);
    for (const stop of stops) stop();
  } finally {
    delete globalThis.location;
  }
});

test("svelte: without a browser nothing starts by itself", async () => {
  const client = fakeClient({ signedIn: true });
  const svc = createSvc(client);
  const stop = svc.auth.subscribe(() => undefined);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(get(svc.isLoading), true);
  stop();
  assert.equal(svc.login, authStore(client).login);
});

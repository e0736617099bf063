// @svc/react in Node: server rendering shows what each state renders (effects do not run there,
// so the store is started by hand). The effects, the callback and the redirects run in Chromium
// in examples/react's browser test.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createElement as h } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { StateMismatchError, authStore } from "@svc/client";
import { RequireAuth, SvcProvider, useAuth, useSvc } from "../dist/index.js";

function fakeClient({ signedIn = false, callback } = {}) {
  return {
    redirectUri: "https://app.example/callback",
    async isAuthenticated() {
      return signedIn;
    },
    async getUser() {
      return signedIn ? { sub: "usr_1", email: "ada@example.com" } : null;
    },
    async handleCallback() {
      throw callback;
    },
  };
}

function Probe() {
  const auth = useAuth();
  const client = useSvc();
  const label = auth.isLoading ? "loading" : auth.isAuthenticated ? `in:${auth.user.sub}` : `out:${auth.error?.code ?? "-"}`;
  return h("p", { "data-client": client.redirectUri }, label);
}

const render = (client, child = h(Probe)) => renderToStaticMarkup(h(SvcProvider, { client }, child));

test("react: useAuth() outside <SvcProvider> says where it belongs", () => {
  assert.throws(() => renderToStaticMarkup(h(Probe)), /useAuth\(\) must be used inside <SvcProvider/);
});

test("react: the provider's state, from loading to signed in", async () => {
  const client = fakeClient({ signedIn: true });
  assert.equal(render(client), '<p data-client="https://app.example/callback">loading</p>');
  await authStore(client).start();
  assert.equal(render(client), '<p data-client="https://app.example/callback">in:usr_1</p>');
});

test("react: a failed callback renders signed out with the error's code", async () => {
  globalThis.location = { href: "https://app.example/callback?code=c&state=forged" };
  try {
    const client = fakeClient({ callback: new StateMismatchError() });
    await authStore(client).start();
    assert.equal(render(client), '<p data-client="https://app.example/callback">out:state_mismatch</p>');
  } finally {
    delete globalThis.location;
  }
});

test("react: <RequireAuth> renders its children only when signed in", async () => {
  const guarded = h(RequireAuth, { fallback: h("i", null, "wait") }, h("b", null, "secret"));
  const inside = fakeClient({ signedIn: true });
  const outside = fakeClient();
  await authStore(inside).start();
  await authStore(outside).start();
  assert.equal(render(inside, guarded), "<b>secret</b>");
  assert.equal(render(outside, guarded), "<i>wait</i>");
});

test("react: the actions are the store's, stable across renders", async () => {
  const client = fakeClient({ signedIn: true });
  const seen = [];
  function Grab() {
    seen.push(useAuth());
    return null;
  }
  render(client, h(Grab));
  await authStore(client).start();
  render(client, h(Grab));
  assert.equal(seen.length, 2);
  assert.notEqual(seen[0], seen[1]);
  assert.equal(seen[0].login, seen[1].login);
  assert.equal(seen[1].login, authStore(client).login);
  assert.equal(seen[1].getAccessToken, authStore(client).getAccessToken);
});

// @svc/sveltekit's hook without a SvelteKit server: a RequestEvent-shaped object with a cookie
// jar, a fake authorization server (a fetch), and what the hook does with them — the routes, the
// guard, event.locals.svc and its refresh written back to the cookies. The routes' own checks
// (hostile callbacks, sealing) are tested in @svc/client (test/server.test.mjs); the whole
// journey under `node build` with svc in examples/sveltekit.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LoginRequiredError, createSvcHandle, seal, unseal } from "@svc/sveltekit";

const ISSUER = "https://op.test";
const SECRET = "0123456789abcdef0123456789abcdef";
const COOKIE = "svc_rp_session";
const metadata = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/authorize`,
  token_endpoint: `${ISSUER}/token`,
  jwks_uri: `${ISSUER}/jwks`,
  end_session_endpoint: `${ISSUER}/logout`,
  authorization_response_iss_parameter_supported: true,
};

function fakeServer() {
  const refreshes = [];
  let refuse = false;
  const fetch = async (url, init = {}) => {
    if (String(url).endsWith("/.well-known/openid-configuration")) return Response.json(metadata);
    if (String(url) === metadata.token_endpoint) {
      const body = new URLSearchParams(init.body);
      refreshes.push(body.get("refresh_token"));
      if (refuse) return Response.json({ error: "invalid_grant" }, { status: 400 });
      return Response.json({ access_token: `at-new-${refreshes.length}`, token_type: "Bearer", expires_in: 3600, refresh_token: `rt-new-${refreshes.length}` });
    }
    return new Response("no", { status: 404 });
  };
  return { fetch, refreshes, refuse: () => (refuse = true) };
}

/** The parts of a SvelteKit RequestEvent the hook uses, with a cookie jar recording set(). */
function event(url, cookies = {}) {
  const jar = new Map(Object.entries(cookies));
  const sets = [];
  const request = new Request(url, { headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "), host: new URL(url).host } });
  return {
    sets,
    jar,
    request,
    url: new URL(url),
    locals: {},
    cookies: {
      get: (name) => jar.get(name),
      getAll: () => [...jar].map(([name, value]) => ({ name, value })),
      set: (name, value, options) => {
        sets.push({ name, value, options });
        if (options.maxAge === 0) jar.delete(name);
        else jar.set(name, value);
      },
    },
  };
}

async function sessionCookie({ expiresIn = 3600, receivedAgo = 0, refreshToken = "rt-old" } = {}) {
  const now = Date.now();
  const session = {
    user: { sub: "usr_1", email: "ada@example.com" },
    accessToken: "at-old",
    tokenType: "Bearer",
    expiresAt: now + expiresIn * 1000,
    receivedAt: now - receivedAgo * 1000,
    refreshToken,
    sessionExpiresAt: now + 86_400_000,
  };
  return { [COOKIE]: await seal(session, SECRET, COOKIE, session.sessionExpiresAt) };
}

function hook(server, extra = {}) {
  return createSvcHandle({ issuer: ISSUER, clientId: "app_1", secret: SECRET, fetch: server.fetch, protect: ["/account"], ...extra });
}

const resolved = new Response("page");
const resolveSpy = () => {
  const spy = async () => {
    spy.calls++;
    return resolved;
  };
  spy.calls = 0;
  return spy;
};

test("the hook answers the routes under basePath and guards protected paths without rendering them", async () => {
  const handle = hook(fakeServer());
  const resolve = resolveSpy();
  const login = await handle({ event: event("http://127.0.0.1:5173/api/auth/login?returnTo=%2Faccount"), resolve });
  assert.equal(login.status, 302);
  assert.equal(new URL(login.headers.get("location")).searchParams.get("redirect_uri"), "http://127.0.0.1:5173/api/auth/callback");
  const forged = await handle({ event: event(`http://127.0.0.1:5173/api/auth/callback?code=x&state=forged&iss=${ISSUER}`), resolve });
  assert.equal(forged.headers.get("location"), "http://127.0.0.1:5173/?svc_error=state_mismatch");
  const guarded = await handle({ event: event("http://127.0.0.1:5173/account/keys?x=1"), resolve });
  assert.equal(guarded.status, 307);
  assert.equal(guarded.headers.get("location"), "http://127.0.0.1:5173/api/auth/login?returnTo=%2Faccount%2Fkeys%3Fx%3D1");
  assert.equal(resolve.calls, 0, "nothing rendered");
  assert.equal(await handle({ event: event("http://127.0.0.1:5173/"), resolve }), resolved);
  assert.equal(resolve.calls, 1);
});

test("locals.svc signed out: user null, getAccessToken rejects, requireAccessToken redirects back to this page", async () => {
  const handle = hook(fakeServer());
  const e = event("http://127.0.0.1:5173/inbox?page=2");
  await handle({ event: e, resolve: resolveSpy() });
  assert.equal(e.locals.svc.user, null);
  assert.equal(e.locals.svc.session, null);
  await assert.rejects(e.locals.svc.getAccessToken(), LoginRequiredError);
  await assert.rejects(e.locals.svc.requireAccessToken(), (thrown) => {
    assert.equal(thrown.status, 303);
    assert.equal(thrown.location, "http://127.0.0.1:5173/api/auth/login?returnTo=%2Finbox%3Fpage%3D2");
    return true;
  });
  // A session cookie sealed with another secret is no session.
  const other = event("http://127.0.0.1:5173/", await sessionCookie());
  await hook(fakeServer(), { secret: "another-secret-of-32-bytes-or-more!!" })({ event: other, resolve: resolveSpy() });
  assert.equal(other.locals.svc.user, null);
});

test("locals.svc signed in: the user; a fresh token as is; a near-expiry or forced one refreshed and written back", async () => {
  const server = fakeServer();
  const handle = hook(server);
  const fresh = event("http://127.0.0.1:5173/", await sessionCookie());
  await handle({ event: fresh, resolve: resolveSpy() });
  assert.equal(fresh.locals.svc.user.sub, "usr_1");
  assert.deepEqual(Object.keys(fresh.locals.svc.session).sort(), ["expiresAt", "user"], "no tokens in session");
  assert.equal((await fresh.locals.svc.getAccessToken()).accessToken, "at-old");
  assert.equal(fresh.sets.length, 0, "nothing written for a fresh token");
  assert.equal(server.refreshes.length, 0);

  // 30 s left of an hour: refreshed; the cookie now holds the rotated refresh token, sealed.
  const stale = event("http://127.0.0.1:5173/", await sessionCookie({ expiresIn: 30, receivedAgo: 3570 }));
  await handle({ event: stale, resolve: resolveSpy() });
  const token = await stale.locals.svc.getAccessToken();
  assert.equal(token.accessToken, "at-new-1");
  assert.deepEqual(server.refreshes, ["rt-old"]);
  const written = stale.sets.find((s) => s.name === COOKIE);
  assert.deepEqual({ ...written.options, encode: undefined }, { path: "/", maxAge: written.options.maxAge, httpOnly: true, secure: false, sameSite: "lax", encode: undefined });
  assert.ok(written.options.maxAge > 86_000);
  const stored = await unseal(written.value, SECRET, COOKIE);
  assert.equal(stored.refreshToken, "rt-new-1");
  assert.equal(stored.accessToken, "at-new-1");
  // Within the request, a second call uses the renewed session.
  assert.equal((await stale.locals.svc.getAccessToken()).accessToken, "at-new-1");
  assert.equal(server.refreshes.length, 1);

  const forced = event("http://127.0.0.1:5173/", { [COOKIE]: written.value });
  await handle({ event: forced, resolve: resolveSpy() });
  assert.equal((await forced.locals.svc.getAccessToken({ forceRefresh: true })).accessToken, "at-new-2");
  assert.deepEqual(server.refreshes, ["rt-old", "rt-new-1"], "the rotated token was used, never the spent one");
});

test("a refused refresh token signs out: the cookie is deleted and LoginRequiredError thrown", async () => {
  const server = fakeServer();
  server.refuse();
  // (Another refresh token than the test above used: a token refreshed moments ago is answered
  // from that refresh's result, which is the point of sharing it.)
  const e = event("http://127.0.0.1:5173/", await sessionCookie({ expiresIn: 30, receivedAgo: 3570, refreshToken: "rt-dead" }));
  await hook(server)({ event: e, resolve: resolveSpy() });
  await assert.rejects(e.locals.svc.getAccessToken(), LoginRequiredError);
  assert.ok(e.sets.some((s) => s.name === COOKIE && s.options.maxAge === 0));
  assert.equal(e.locals.svc.user, null);
});

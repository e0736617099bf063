// @svc/solidstart's middleware without a SolidStart server: a FetchEvent-shaped object (request,
// locals, a response stub whose headers collect Set-Cookie), a fake authorization server (a
// fetch), and what the middleware does with them — the routes, the guard, event.locals.svc and
// its refresh written back as cookies. The routes' own checks (hostile callbacks, sealing) are
// tested in @svc/client (test/server.test.mjs); the whole journey under SolidStart's production
// server with svc in examples/solidstart.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LoginRequiredError, seal, svcLocals, svcMiddleware, unseal } from "@svc/solidstart";

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
      // A network round trip: concurrent callers overlap here.
      await new Promise((r) => setTimeout(r, 20));
      if (refuse) return Response.json({ error: "invalid_grant" }, { status: 400 });
      return Response.json({ access_token: `at-new-${refreshes.length}`, token_type: "Bearer", expires_in: 3600, refresh_token: `rt-new-${refreshes.length}` });
    }
    return new Response("no", { status: 404 });
  };
  return { fetch, refreshes, refuse: () => (refuse = true) };
}

/** The parts of a SolidStart FetchEvent the middleware uses. */
function event(url, cookies = {}) {
  const headers = { host: new URL(url).host };
  const pairs = Object.entries(cookies).map(([k, v]) => `${k}=${v}`);
  if (pairs.length) headers.cookie = pairs.join("; ");
  return { request: new Request(url, { headers }), locals: {}, response: { headers: new Headers() } };
}

/** The Set-Cookie lines the middleware wrote, by name. */
function written(e) {
  return new Map(e.response.headers.getSetCookie().map((line) => [line.slice(0, line.indexOf("=")), line]));
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

function middleware(server, extra = {}) {
  return svcMiddleware({ issuer: ISSUER, clientId: "app_1", secret: SECRET, fetch: server.fetch, protect: ["/account"], ...extra });
}

test("the middleware answers the routes under basePath and guards protected paths; other requests go on", async () => {
  const run = middleware(fakeServer());
  const login = await run(event("http://127.0.0.1:3000/api/auth/login?returnTo=%2Faccount"));
  assert.equal(login.status, 302);
  assert.equal(new URL(login.headers.get("location")).searchParams.get("redirect_uri"), "http://127.0.0.1:3000/api/auth/callback");
  const forged = await run(event(`http://127.0.0.1:3000/api/auth/callback?code=x&state=forged&iss=${ISSUER}`));
  assert.equal(forged.headers.get("location"), "http://127.0.0.1:3000/?svc_error=state_mismatch");
  const guarded = await run(event("http://127.0.0.1:3000/account/keys?x=1"));
  assert.equal(guarded.status, 307);
  assert.equal(guarded.headers.get("location"), "http://127.0.0.1:3000/api/auth/login?returnTo=%2Faccount%2Fkeys%3Fx%3D1");
  const page = event("http://127.0.0.1:3000/");
  assert.equal(await run(page), undefined, "no Response: SolidStart renders the route");
  assert.ok(page.locals.svc);
  assert.throws(() => svcLocals({ locals: {} }), /svcMiddleware/);
});

test("locals.svc signed out: user null, getAccessToken rejects, requireAccessToken throws a redirect back to this page", async () => {
  const e = event("http://127.0.0.1:3000/inbox?page=2");
  await middleware(fakeServer())(e);
  const svc = svcLocals(e);
  assert.equal(svc.user, null);
  assert.equal(svc.session, null);
  await assert.rejects(svc.getAccessToken(), LoginRequiredError);
  await assert.rejects(svc.requireAccessToken(), (thrown) => {
    assert.ok(thrown instanceof Response);
    assert.equal(thrown.status, 302);
    assert.equal(thrown.headers.get("location"), "http://127.0.0.1:3000/api/auth/login?returnTo=%2Finbox%3Fpage%3D2");
    return true;
  });
  // A session cookie sealed with another secret is no session.
  const other = event("http://127.0.0.1:3000/", await sessionCookie());
  await middleware(fakeServer(), { secret: "another-secret-of-32-bytes-or-more!!" })(other);
  assert.equal(other.locals.svc.user, null);
});

test("locals.svc signed in: a fresh token as is; a near-expiry one refreshed once for concurrent callers and written back", async () => {
  const server = fakeServer();
  const run = middleware(server);
  const fresh = event("http://127.0.0.1:3000/", await sessionCookie());
  await run(fresh);
  assert.equal(fresh.locals.svc.user.sub, "usr_1");
  assert.deepEqual(Object.keys(fresh.locals.svc.session).sort(), ["expiresAt", "user"], "no tokens in session");
  assert.equal((await fresh.locals.svc.getAccessToken()).accessToken, "at-old");
  assert.equal(written(fresh).size, 0, "nothing written for a fresh token");
  assert.equal(server.refreshes.length, 0);

  // 30 s left of an hour: two server functions of one request ask at once; one refresh, the rotated token sealed in the cookie.
  const stale = event("http://127.0.0.1:3000/", await sessionCookie({ expiresIn: 30, receivedAgo: 3570 }));
  await run(stale);
  const [a, b] = await Promise.all([stale.locals.svc.getAccessToken(), stale.locals.svc.getAccessToken()]);
  assert.equal(a.accessToken, "at-new-1");
  assert.equal(b.accessToken, "at-new-1");
  assert.deepEqual(server.refreshes, ["rt-old"], "the rotating refresh token was spent once");
  const line = written(stale).get(COOKIE);
  assert.match(line, /; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
  assert.ok(Number(/Max-Age=(\d+)/.exec(line)[1]) > 86_000);
  const value = line.slice(COOKIE.length + 1, line.indexOf(";"));
  const stored = await unseal(value, SECRET, COOKIE);
  assert.equal(stored.refreshToken, "rt-new-1");
  assert.equal(stored.accessToken, "at-new-1");
  assert.equal((await stale.locals.svc.getAccessToken()).accessToken, "at-new-1", "the renewed session is used afterwards");
  assert.equal(server.refreshes.length, 1);

  const forced = event("http://127.0.0.1:3000/", { [COOKIE]: value });
  await run(forced);
  assert.equal((await forced.locals.svc.getAccessToken({ forceRefresh: true })).accessToken, "at-new-2");
  assert.deepEqual(server.refreshes, ["rt-old", "rt-new-1"], "the rotated token was used, never the spent one");
});

test("a refused refresh token signs out: the cookie is deleted and LoginRequiredError thrown", async () => {
  const server = fakeServer();
  server.refuse();
  const e = event("http://127.0.0.1:3000/", await sessionCookie({ expiresIn: 30, receivedAgo: 3570, refreshToken: "rt-dead" }));
  await middleware(server)(e);
  await assert.rejects(e.locals.svc.getAccessToken(), LoginRequiredError);
  assert.match(written(e).get(COOKIE), /Max-Age=0/);
  assert.equal(e.locals.svc.user, null);
});

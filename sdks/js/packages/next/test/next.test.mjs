// @svc/next's mapping onto Next's idioms, without Next's server: the route handlers' GET/POST,
// the middleware, and the package loading in plain Node. The routes' behaviour (sealing,
// hostile callbacks, refresh) is tested in @svc/client (test/server.test.mjs); the whole
// journey in a real `next start` with svc in examples/next.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SessionSecretError, authMiddleware, createAuthHandlers, getSession, requireAccessToken, safeReturnTo, unseal } from "@svc/next";

const ISSUER = "https://op.test";
const metadata = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/authorize`,
  token_endpoint: `${ISSUER}/token`,
  jwks_uri: `${ISSUER}/jwks`,
  end_session_endpoint: `${ISSUER}/logout`,
  authorization_response_iss_parameter_supported: true,
};
const fetch = async (url) =>
  String(url).endsWith("/.well-known/openid-configuration") ? Response.json(metadata) : new Response("no", { status: 404 });
const options = { issuer: ISSUER, clientId: "app_1", secret: "0123456789abcdef0123456789abcdef", fetch, basePath: "/auth" };

test("createAuthHandlers: GET and POST route under basePath; elsewhere 404", async () => {
  const { GET, POST } = createAuthHandlers(options);
  const login = await GET(new Request("https://app.test/auth/login?returnTo=%2Finbox", { headers: { host: "app.test" } }));
  assert.equal(login.status, 302);
  const authorize = new URL(login.headers.get("location"));
  assert.equal(authorize.origin + authorize.pathname, metadata.authorization_endpoint);
  assert.equal(authorize.searchParams.get("redirect_uri"), "https://app.test/auth/callback");
  const cookie = login.headers.getSetCookie()[0];
  assert.match(cookie, /^svc_rp_session_login=v1\.[^;]+; Path=\/auth; Max-Age=600; HttpOnly; Secure; SameSite=Lax$/);
  const pending = await unseal(cookie.split(";")[0].split("=")[1], options.secret, "svc_rp_session_login");
  assert.equal(pending.returnTo, "/inbox");
  assert.equal(pending.state, authorize.searchParams.get("state"));

  assert.equal((await GET(new Request("https://app.test/auth/nothing"))).status, 404);
  assert.equal((await GET(new Request("https://app.test/api/auth/login"))).status, 404, "not under this basePath");
  assert.equal((await GET(new Request("https://app.test/auth/logout"))).status, 405);
  assert.equal((await POST(new Request("https://app.test/auth/logout", { method: "POST", headers: { origin: "https://evil.example" } }))).status, 403);
  const out = await POST(new Request("https://app.test/auth/logout", { method: "POST", headers: { origin: "https://app.test" } }));
  assert.equal(out.status, 303);
  assert.equal(new URL(out.headers.get("location")).searchParams.get("post_logout_redirect_uri"), "https://app.test/");
});

test("authMiddleware: a protected path without a session goes to login with returnTo; others pass", async () => {
  const middleware = authMiddleware(options, { protect: ["/account"] });
  const out = await middleware(new Request("http://localhost:3000/account/x?y=1", { headers: { host: "127.0.0.1:3000" } }));
  assert.equal(out.status, 307);
  assert.equal(out.headers.get("location"), "http://127.0.0.1:3000/auth/login?returnTo=%2Faccount%2Fx%3Fy%3D1");
  assert.equal(await middleware(new Request("http://localhost:3000/public")), undefined);
  assert.equal(await middleware(new Request("http://localhost:3000/auth/login")), undefined, "the auth routes themselves pass");
});

test("the package loads in plain Node; the request-bound functions need Next's request context", async () => {
  assert.equal(safeReturnTo("//evil.example"), "/");
  assert.equal(typeof SessionSecretError, "function");
  // Outside a Next request there are no cookies to read: an error, never a silent "signed in".
  await assert.rejects(requireAccessToken(options));
  await assert.rejects(getSession(options));
});

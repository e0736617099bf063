// requireAccessToken() and getSession() with Next's request APIs stood in for (test/fake-next):
// a server component (cookies cannot be set) never refreshes — svc's rotated refresh token could
// not be stored and the spent one left in the cookie would end the session on its next use — it
// redirects through the refresh route; a route handler refreshes and writes the cookie back.
import assert from "node:assert/strict";
import { register } from "node:module";
import { test } from "node:test";
import { seal, unseal } from "@svc/client/server";

register("./fake-next/hooks.mjs", import.meta.url);
const { LoginRequiredError, getSession, requireAccessToken } = await import("@svc/next");
const { Redirect } = await import("./fake-next/navigation.mjs");

const ISSUER = "https://op.test";
const SECRET = "0123456789abcdef0123456789abcdef";
const COOKIE = "svc_rp_session";
const metadata = { issuer: ISSUER, authorization_endpoint: `${ISSUER}/a`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/jwks` };
const refreshes = [];
const fetch = async (url, init = {}) => {
  if (String(url).endsWith("/.well-known/openid-configuration")) return Response.json(metadata);
  if (String(url) === metadata.token_endpoint) {
    const token = new URLSearchParams(init.body).get("refresh_token");
    refreshes.push(token);
    if (token === "rt-dead") return Response.json({ error: "invalid_grant" }, { status: 400 });
    return Response.json({ access_token: `at-after-${token}`, token_type: "Bearer", expires_in: 3600, refresh_token: `rt-after-${token}` });
  }
  return new Response("no", { status: 404 });
};
const options = { issuer: ISSUER, clientId: "app_1", secret: SECRET, fetch };

/** A request of a signed-in browser whose access token has `left` seconds of its hour left. */
async function request({ left = 3600, refreshToken = "rt-1", writable }) {
  const now = Date.now();
  const session = { user: { sub: "usr_1" }, accessToken: `at-${refreshToken}`, tokenType: "Bearer", expiresAt: now + left * 1000, receivedAt: now - (3600 - left) * 1000, refreshToken, sessionExpiresAt: now + 86_400_000 };
  globalThis.fakeNext = { host: "127.0.0.1:3000", writable, sets: [], cookies: new Map([[COOKIE, await seal(session, SECRET, COOKIE, session.sessionExpiresAt)]]) };
  return globalThis.fakeNext;
}

test("a fresh token: returned as is, in a server component too", async () => {
  await request({ writable: false });
  const token = await requireAccessToken(options);
  assert.equal(token.accessToken, "at-rt-1");
  assert.equal(token.user.sub, "usr_1");
  assert.equal((await getSession(options)).user.sub, "usr_1");
  assert.deepEqual(refreshes, []);
});

test("server component, near expiry: no refresh here, a redirect through the refresh route back to returnTo", async () => {
  const r = await request({ left: 20, refreshToken: "rt-sc", writable: false });
  await assert.rejects(requireAccessToken(options, { returnTo: "/inbox?x=1" }), (e) => e instanceof Redirect && e.location === "/api/auth/refresh?returnTo=%2Finbox%3Fx%3D1");
  await assert.rejects(requireAccessToken(options, { forceRefresh: true }), TypeError);
  assert.deepEqual(refreshes, [], "the refresh token was not spent");
  assert.deepEqual(r.sets, []);
});

test("route handler, near expiry or forced: refreshed, and the rotated refresh token is written to the cookie", async () => {
  const r = await request({ left: 20, refreshToken: "rt-rh", writable: true });
  const token = await requireAccessToken(options);
  assert.equal(token.accessToken, "at-after-rt-rh");
  assert.deepEqual(refreshes, ["rt-rh"]);
  const written = r.sets.findLast((s) => s.name === COOKIE);
  assert.deepEqual({ ...written.options, maxAge: 0 }, { path: "/", maxAge: 0, httpOnly: true, secure: false, sameSite: "lax" });
  assert.equal((await unseal(written.value, SECRET, COOKIE)).refreshToken, "rt-after-rt-rh");
  // Forced: the next call uses the rotated token, not the spent one.
  globalThis.fakeNext.writable = true;
  assert.equal((await requireAccessToken(options, { forceRefresh: true })).accessToken, "at-after-rt-after-rt-rh");
  assert.deepEqual(refreshes, ["rt-rh", "rt-after-rt-rh"]);
});

test("no session, or a refused refresh token: to login (or LoginRequiredError with onMissing: throw)", async () => {
  globalThis.fakeNext = { host: "app.test", writable: false, sets: [], cookies: new Map() };
  await assert.rejects(requireAccessToken(options, { returnTo: "https://evil.example/" }), (e) => e instanceof Redirect && e.location === "/api/auth/login?returnTo=%2F");
  await assert.rejects(requireAccessToken(options, { onMissing: "throw" }), LoginRequiredError);
  assert.equal(await getSession(options), null);

  const r = await request({ left: 20, refreshToken: "rt-dead", writable: true });
  await assert.rejects(requireAccessToken(options, { returnTo: "/a" }), (e) => e instanceof Redirect && e.location === "/api/auth/login?returnTo=%2Fa");
  assert.ok(r.sets.some((s) => s.name === COOKIE && s.options.maxAge === 0), "the dead session is deleted");
});

// base64url, PKCE, the authorization URL, the callback checks, the errors, the lock.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthorizationError,
  CallbackError,
  IssuerMismatchError,
  StateMismatchError,
  SvcError,
  base64urlDecode,
  base64urlEncode,
  codeChallengeS256,
  createAuthorizationUrl,
  createCodeVerifier,
  oauthSignOut,
  randomToken,
  validateCallback,
} from "../dist/index.js";
import { withLock } from "../dist/lock.js";
import { METADATA, ISSUER } from "./helpers.mjs";

test("base64url round-trips bytes and text and refuses other alphabets", () => {
  const bytes = new Uint8Array(300).map((_, i) => (i * 37) % 256);
  assert.deepEqual(base64urlDecode(base64urlEncode(bytes)), bytes);
  assert.equal(base64urlEncode("\u00ff\u00fe"), Buffer.from("\u00ff\u00fe").toString("base64url"));
  assert.equal(base64urlEncode(new Uint8Array([0xfb, 0xff])), "-_8");
  for (const bad of ["a+b", "a/b", "YQ==", "abcde", "a b"]) {
    assert.throws(() => base64urlDecode(bad), TypeError, bad);
  }
  assert.equal(base64urlEncode(new Uint8Array(200000)).length, Math.ceil((200000 * 4) / 3));
});

test("random tokens carry 256 bits and differ", () => {
  const a = randomToken();
  assert.equal(a.length, 43);
  assert.notEqual(a, randomToken());
});

test("PKCE S256 matches RFC 7636 appendix B and refuses bad verifiers", async () => {
  assert.equal(await codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  const verifier = createCodeVerifier();
  assert.match(verifier, /^[A-Za-z0-9_-]{43}$/);
  await assert.rejects(codeChallengeS256("short"), TypeError);
  await assert.rejects(codeChallengeS256("x".repeat(129)), TypeError);
  await assert.rejects(codeChallengeS256("a".repeat(42) + "+"), TypeError);
});

test("the authorization URL carries PKCE, state and a nonce for openid, and keeps its own parameters", async () => {
  const { url, pending } = await createAuthorizationUrl(METADATA, {
    clientId: "app_1",
    redirectUri: "http://127.0.0.1:9/cb",
    scope: ["openid", "email"],
    extraParams: { prompt: "login", login_hint: undefined },
  });
  const u = new URL(url);
  assert.equal(u.origin + u.pathname, METADATA.authorization_endpoint);
  const q = Object.fromEntries(u.searchParams);
  assert.equal(q.response_type, "code");
  assert.equal(q.client_id, "app_1");
  assert.equal(q.redirect_uri, "http://127.0.0.1:9/cb");
  assert.equal(q.scope, "openid email");
  assert.equal(q.state, pending.state);
  assert.equal(q.nonce, pending.nonce);
  assert.equal(q.code_challenge_method, "S256");
  assert.equal(q.code_challenge, await codeChallengeS256(pending.codeVerifier));
  assert.equal(q.prompt, "login");
  assert.equal("login_hint" in q, false);

  const plain = await createAuthorizationUrl(METADATA, { clientId: "a", redirectUri: "http://127.0.0.1:9/cb", scope: "email" });
  assert.equal(new URL(plain.url).searchParams.has("nonce"), false);
  assert.equal(plain.pending.nonce, undefined);
  for (const name of ["state", "code_challenge_method", "redirect_uri", "nonce"]) {
    await assert.rejects(
      createAuthorizationUrl(METADATA, { clientId: "a", redirectUri: "http://127.0.0.1:9/cb", scope: "openid", extraParams: { [name]: "x" } }),
      TypeError,
    );
  }
});

test("a callback must carry the pending state, then the issuer (RFC 9207), before its code or error counts", () => {
  const iss = encodeURIComponent(ISSUER);
  const cb = (query) => `http://127.0.0.1:9/cb?${query}`;
  assert.equal(validateCallback(METADATA, cb(`code=c1&state=s1&iss=${iss}`), "s1"), "c1");
  assert.equal(validateCallback(METADATA, `code=c1&state=s1&iss=${iss}`, "s1"), "c1");

  assert.throws(() => validateCallback(METADATA, cb(`code=c1&state=s2&iss=${iss}`), "s1"), StateMismatchError);
  assert.throws(() => validateCallback(METADATA, cb(`code=c1&iss=${iss}`), "s1"), StateMismatchError);
  assert.throws(() => validateCallback(METADATA, cb(`code=c1&state=&iss=${iss}`), ""), StateMismatchError);
  // The state check comes first: a forged error with the wrong state is a state mismatch.
  assert.throws(() => validateCallback(METADATA, cb(`error=access_denied&state=s2&iss=${iss}`), "s1"), StateMismatchError);

  assert.throws(() => validateCallback(METADATA, cb("code=c1&state=s1"), "s1"), IssuerMismatchError);
  assert.throws(() => validateCallback(METADATA, cb("code=c1&state=s1&iss=https%3A%2F%2Fevil.example"), "s1"), IssuerMismatchError);
  assert.throws(() => validateCallback(METADATA, cb(`code=c1&state=s1&iss=${iss}%2F`), "s1"), IssuerMismatchError);
  // A server that does not advertise the parameter may omit it, but a present one must match.
  const legacy = { ...METADATA, authorization_response_iss_parameter_supported: false };
  assert.equal(validateCallback(legacy, cb("code=c1&state=s1"), "s1"), "c1");
  assert.throws(() => validateCallback(legacy, cb("code=c1&state=s1&iss=https%3A%2F%2Fevil.example"), "s1"), IssuerMismatchError);

  assert.throws(() => validateCallback(METADATA, cb(`code=c1&code=c2&state=s1&iss=${iss}`), "s1"), (e) => e instanceof CallbackError && e.rule === "repeated_parameter");
  assert.throws(() => validateCallback(METADATA, cb(`state=s1&state=s1&code=c&iss=${iss}`), "s1"), CallbackError);
  assert.throws(() => validateCallback(METADATA, cb(`state=s1&iss=${iss}`), "s1"), (e) => e.rule === "missing_code");

  assert.throws(
    () => validateCallback(METADATA, cb(`error=access_denied&error_description=no+way&state=s1&iss=${iss}`), "s1"),
    (e) => e instanceof AuthorizationError && e.error === "access_denied" && e.error_description === "no way" && e instanceof SvcError,
  );
});

test("the errors form one hierarchy with stable codes", () => {
  const e = new StateMismatchError();
  assert.ok(e instanceof CallbackError && e instanceof SvcError && e instanceof Error);
  assert.equal(e.code, "state_mismatch");
  assert.equal(e.name, "StateMismatchError");
  assert.equal(new IssuerMismatchError().rule, "issuer_mismatch");
});

test("the logout URL carries the hint, the registered return address, the client and a state", () => {
  const url = new URL(oauthSignOut(METADATA, { idTokenHint: "eyJ.x.y", postLogoutRedirectUri: "http://127.0.0.1:9/bye", clientId: "app_1", state: "s" }));
  assert.equal(url.origin + url.pathname, METADATA.end_session_endpoint);
  assert.deepEqual(Object.fromEntries(url.searchParams), { id_token_hint: "eyJ.x.y", post_logout_redirect_uri: "http://127.0.0.1:9/bye", client_id: "app_1", state: "s" });
  assert.throws(() => oauthSignOut({ ...METADATA, end_session_endpoint: undefined }), SvcError);
});

test("the in-process lock runs one task at a time, in order, and survives a failing task", async () => {
  const order = [];
  let running = 0;
  const task = (name, fail) => async () => {
    running++;
    assert.equal(running, 1);
    await new Promise((r) => setTimeout(r, 5));
    order.push(name);
    running--;
    if (fail) throw new Error(name);
  };
  const results = await Promise.allSettled([withLock("l", task("a")), withLock("l", task("b", true)), withLock("l", task("c"))]);
  assert.deepEqual(order, ["a", "b", "c"]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
});

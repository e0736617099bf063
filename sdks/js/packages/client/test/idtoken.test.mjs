// ID token validation (OpenID Connect Core §3.1.3.7) with keys generated here: every rule,
// the algorithms svc signs with, hostile headers and the key set's refetch limit.
import assert from "node:assert/strict";
import { test } from "node:test";
import { IdTokenError, KeySet, decodeJwtClaims, parseJws, validateIdToken } from "../dist/index.js";
import { CLIENT_ID, ISSUER, b64u, idClaims, jwksFetch, makeKey, sign } from "./helpers.mjs";

const rs = await makeKey("RS256");
const es = await makeKey("ES256");
let ed;
try {
  ed = await makeKey("EdDSA");
} catch {
  ed = undefined;
}
const keys = () => new KeySet(`${ISSUER}/.well-known/jwks.json`, jwksFetch([rs, es, ...(ed ? [ed] : [])]));
const expect = (overrides = {}) => ({ issuer: ISSUER, clientId: CLIENT_ID, nonce: "n-1", ...overrides });

/** Asserts validation fails with `rule`. */
async function refused(token, rule, expectations = expect(), keySet = keys()) {
  await assert.rejects(validateIdToken(token, keySet, expectations), (e) => {
    assert.ok(e instanceof IdTokenError, `${e}`);
    assert.equal(e.rule, rule, e.message);
    return true;
  });
}

test("a valid RS256 ID token passes and yields its claims", async () => {
  const claims = await validateIdToken(await sign(rs, idClaims({ email: "a@example.com" })), keys(), expect());
  assert.equal(claims.sub, "usr_1");
  assert.equal(claims.email, "a@example.com");
});

test("ES256 and EdDSA tokens pass when the application registered that algorithm", async (t) => {
  await validateIdToken(await sign(es, idClaims()), keys(), expect({ algorithm: "ES256" }));
  if (!ed) return t.skip("this runtime's WebCrypto has no Ed25519");
  await validateIdToken(await sign(ed, idClaims()), keys(), expect({ algorithm: "EdDSA" }));
});

test("the algorithm is the registered one: none, HS256 and another asymmetric algorithm are refused", async () => {
  const good = await sign(rs, idClaims());
  const [, payload, signature] = good.split(".");
  await refused(`${b64u(JSON.stringify({ alg: "none" }))}.${payload}.`, "algorithm");
  await refused(`${b64u(JSON.stringify({ alg: "HS256", kid: rs.kid }))}.${payload}.${signature}`, "algorithm");
  await refused(await sign(es, idClaims()), "algorithm");
  await refused(good, "algorithm", expect({ algorithm: "ES256" }));
});

test("the signature must verify: a tampered payload or signature, another key's signature", async () => {
  const good = await sign(rs, idClaims());
  const [header, , signature] = good.split(".");
  const forged = b64u(JSON.stringify(idClaims({ sub: "usr_admin" })));
  await refused(`${header}.${forged}.${signature}`, "signature");
  const flipped = Buffer.from(signature, "base64url");
  flipped[0] ^= 1;
  await refused(`${header}.${good.split(".")[1]}.${b64u(flipped)}`, "signature");
  const stranger = await makeKey("RS256", rs.kid);
  await refused(await sign(stranger, idClaims()), "signature");
  // ES256 signatures are r‖s (64 bytes), never DER.
  const es256 = await sign(es, idClaims());
  await refused(`${es256.split(".").slice(0, 2).join(".")}.${b64u(new Uint8Array(70))}`, "signature", expect({ algorithm: "ES256" }));
});

test("the key must exist, fit the algorithm and be for signatures", async () => {
  await refused(await sign(rs, idClaims(), { kid: "unknown" }), "key");
  // An ES256 key's kid in an RS256 header: the key does not fit the algorithm.
  await refused(await sign(rs, idClaims(), { kid: es.kid }), "key");
  const enc = await makeKey("RS256", "enc-key");
  enc.jwk.use = "enc";
  await refused(await sign(enc, idClaims()), "key", expect(), new KeySet("https://x/jwks", jwksFetch([enc])));
  // Without a kid only an unambiguous key set answers.
  const lone = new KeySet("https://x/jwks", jwksFetch([rs]));
  await validateIdToken(await sign(rs, idClaims(), { kid: undefined }), lone, expect());
});

test("an access token (typ at+jwt) or a token with crit is not an ID token", async () => {
  await refused(await sign(rs, idClaims(), { typ: "at+jwt" }), "type");
  await refused(await sign(rs, idClaims(), { typ: "application/at+JWT" }), "type");
  await refused(await sign(rs, idClaims(), { crit: ["exp"] }), "type");
});

test("issuer, audience and azp name this client at this issuer", async () => {
  await refused(await sign(rs, idClaims({ iss: "https://evil.example" })), "issuer");
  await refused(await sign(rs, idClaims({ iss: `${ISSUER}/` })), "issuer");
  await refused(await sign(rs, idClaims({ aud: "app_other" })), "audience");
  await refused(await sign(rs, idClaims({ aud: ["app_other", "app_third"] })), "audience");
  await refused(await sign(rs, idClaims({ aud: [CLIENT_ID, "app_other"] })), "azp");
  await refused(await sign(rs, idClaims({ aud: [CLIENT_ID, "app_other"], azp: "app_other" })), "azp");
  await refused(await sign(rs, idClaims({ azp: "app_other" })), "azp");
  await validateIdToken(await sign(rs, idClaims({ aud: [CLIENT_ID, "app_other"], azp: CLIENT_ID })), keys(), expect());
});

test("exp and iat are required and checked with the clock skew", async () => {
  const now = Math.floor(Date.now() / 1000);
  await refused(await sign(rs, idClaims({ exp: undefined })), "missing_claim");
  await refused(await sign(rs, idClaims({ iat: "yesterday" })), "missing_claim");
  await refused(await sign(rs, idClaims({ exp: now - 61 })), "expired");
  await validateIdToken(await sign(rs, idClaims({ exp: now - 30 })), keys(), expect());
  await refused(await sign(rs, idClaims({ exp: now - 30 })), "expired", expect({ clockSkew: 0 }));
  await refused(await sign(rs, idClaims({ iat: now + 120 })), "issued_in_future");
  await validateIdToken(await sign(rs, idClaims({ iat: now + 30 })), keys(), expect());
  // A fixed `now`: the token of an hour ago is expired then.
  await refused(await sign(rs, idClaims()), "expired", expect({ now: Date.now() + 3600_000 }));
});

test("sub is required; the nonce must be the request's; a refreshed token names the same subject", async () => {
  await refused(await sign(rs, idClaims({ sub: "" })), "missing_claim");
  await refused(await sign(rs, idClaims({ nonce: "n-2" })), "nonce");
  await refused(await sign(rs, idClaims({ nonce: undefined })), "nonce");
  await validateIdToken(await sign(rs, idClaims({ nonce: undefined })), keys(), expect({ nonce: undefined }));
  await refused(await sign(rs, idClaims({ nonce: undefined })), "subject", expect({ nonce: undefined, subject: "usr_2" }));
});

test("malformed tokens are refused before any key is fetched", async () => {
  const fetch = jwksFetch([rs]);
  const set = new KeySet("https://x/jwks", fetch);
  for (const token of ["", "a.b", "a.b.c.d", "!!.e30.", `${b64u("[]")}.${b64u("{}")}.`, `${b64u('{"alg":"RS256"}')}.${b64u("[1]")}.`]) {
    await refused(token, "malformed", expect(), set);
  }
  assert.equal(fetch.calls, 0);
  assert.throws(() => parseJws("e30.e30.e30"), IdTokenError);
  assert.equal(decodeJwtClaims(await sign(rs, idClaims())).sub, "usr_1");
});

test("the key set is cached, and an unknown kid refetches at most once a minute", async () => {
  let now = 1_000_000;
  const fetch = jwksFetch([rs]);
  const set = new KeySet("https://x/jwks", fetch, () => now);
  const token = await sign(rs, idClaims());
  await validateIdToken(token, set, expect());
  await validateIdToken(token, set, expect());
  assert.equal(fetch.calls, 1);
  const rotated = await makeKey("RS256", "rotated");
  const newToken = await sign(rotated, idClaims());
  await refused(newToken, "key", expect(), set);
  assert.equal(fetch.calls, 1, "within a minute of the last fetch: no refetch");
  now += 61_000;
  fetch.calls = 0;
  const refreshed = new KeySet("https://x/jwks", jwksFetch([rs, rotated]), () => now);
  await validateIdToken(newToken, refreshed, expect());
  // The rotation case proper: the same set learns the new key after the minute.
  const keysNow = [rs];
  const moving = async () => new Response(JSON.stringify({ keys: keysNow.map((k) => k.jwk) }));
  const live = new KeySet("https://x/jwks", moving, () => now);
  await validateIdToken(token, live, expect());
  keysNow.push(rotated);
  await refused(newToken, "key", expect(), live);
  now += 61_000;
  await validateIdToken(newToken, live, expect());
});

test("a key set that cannot be read is a key failure, not a crash", async () => {
  const broken = new KeySet("https://x/jwks", async () => new Response("oops", { status: 500 }));
  await refused(await sign(rs, idClaims()), "key", expect(), broken);
});

// Verifies back-channel logout tokens the way a relying party must (OpenID Connect
// Back-Channel Logout 1.0 §2.6), with jose: the signature against the issuer's JWKS, `typ`
// `logout+jwt`, `iss`, `aud`, `iat` no older than two minutes, the `events` member, `sid`
// (required by the registration), `jti`, and no `nonce`.
//
// Input (environment): JWKS (the issuer's key set, JSON), ISSUER, TOKENS (a JSON array of
// {"token": "...", "audience": "app_…"}). Prints one JSON line: the verified claims of each
// token in order and the checks that ran.
import { createLocalJWKSet, jwtVerify, decodeProtectedHeader } from "jose";

const EVENT = "http://schemas.openid.net/event/backchannel-logout";

function fail(step, message) {
  console.error(`interop check failed during "${step}": ${message}`);
  process.exit(1);
}

const jwks = createLocalJWKSet(JSON.parse(process.env.JWKS ?? "null") ?? fail("input", "JWKS"));
const issuer = process.env.ISSUER ?? fail("input", "ISSUER");
const tokens = JSON.parse(process.env.TOKENS ?? "[]");
if (tokens.length === 0) fail("input", "no TOKENS");

const verified = [];
for (const [i, { token, audience }] of tokens.entries()) {
  const step = `token ${i}`;
  const header = decodeProtectedHeader(token);
  let result;
  try {
    result = await jwtVerify(token, jwks, {
      issuer,
      audience,
      typ: "logout+jwt",
      algorithms: ["RS256", "ES256", "EdDSA"],
      maxTokenAge: "2m",
      requiredClaims: ["iat", "jti", "sid", "events"],
    });
  } catch (e) {
    fail(step, `${e.code ?? e.name}: ${e.message}`);
  }
  const claims = result.payload;
  const events = claims.events;
  if (typeof events !== "object" || events === null || Array.isArray(events)) {
    fail(step, "events is not a JSON object");
  }
  const member = events[EVENT];
  if (typeof member !== "object" || member === null || Array.isArray(member)) {
    fail(step, `events lacks the ${EVENT} member with an object value`);
  }
  if ("nonce" in claims) fail(step, "a logout token must not carry a nonce");
  if (typeof claims.sub !== "string" && typeof claims.sid !== "string") {
    fail(step, "neither sub nor sid");
  }
  verified.push({ alg: header.alg, typ: header.typ, kid: header.kid, claims });
}

console.log(
  JSON.stringify({
    ok: true,
    verified,
    checks: {
      signature: true,
      typ: true,
      iss: true,
      aud: true,
      iat_recent: true,
      events: true,
      no_nonce: true,
      sid: true,
      jti: true,
    },
  }),
);

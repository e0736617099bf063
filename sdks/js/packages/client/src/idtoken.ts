// ID token validation, OpenID Connect Core §3.1.3.7 (and §12.2 for a refreshed one): the
// signature against the issuer's key set first, then every claim rule in the order of the
// spec. Each failure is an IdTokenError naming its rule.

import { timingSafeEqual } from "./encoding.js";
import { IdTokenError } from "./errors.js";
import { type KeySet, type SigningAlgorithm, SUPPORTED_ALGORITHMS, parseJws, verifySignature } from "./jwt.js";

/** The claims of a validated ID token. */
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  exp: number;
  iat: number;
  nonce?: string;
  azp?: string;
  auth_time?: number;
  acr?: string;
  amr?: string[];
  sid?: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  [claim: string]: unknown;
}

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  /** The algorithm the application registered (`id_token_signed_response_alg`); svc's default is RS256. */
  algorithm?: SigningAlgorithm;
  /** The nonce of the authorization request; omit for a refreshed ID token (Core §12.2). */
  nonce?: string;
  /** A refreshed ID token must name the same person (Core §12.2). */
  subject?: string;
  /** Seconds of clock skew tolerated on `exp` and `iat` (default 60). */
  clockSkew?: number;
  /** Milliseconds since the epoch; defaults to `Date.now()`. */
  now?: number;
}

/** Checks signature and claims; returns the claims or throws IdTokenError. */
export async function validateIdToken(token: string, keys: KeySet, expected: IdTokenExpectations): Promise<IdTokenClaims> {
  const jws = parseJws(token);
  const algorithm = expected.algorithm ?? "RS256";
  if (!SUPPORTED_ALGORITHMS.includes(algorithm)) throw new IdTokenError("algorithm", "the expected algorithm is not supported");
  if (jws.header.alg !== algorithm) {
    throw new IdTokenError("algorithm", `signed with ${JSON.stringify(jws.header.alg).slice(0, 20)}, expected ${algorithm}`);
  }
  const typ = typeof jws.header.typ === "string" ? jws.header.typ.toLowerCase() : "";
  // An access token (RFC 9068) is signed by the same keys: its typ keeps it from passing as an ID token.
  if (typ === "at+jwt" || typ === "application/at+jwt" || jws.header.crit !== undefined) {
    throw new IdTokenError("type", "the token is not an ID token");
  }
  const kid = typeof jws.header.kid === "string" ? jws.header.kid : undefined;
  const key = await keys.key(kid, algorithm);
  if (!(await verifySignature(jws, algorithm, key))) throw new IdTokenError("signature", "the signature does not verify");
  checkIdTokenClaims(jws.payload, expected);
  return jws.payload as IdTokenClaims;
}

/** Core §3.1.3.7 items 2–11 on claims whose signature has been verified. Exported for tests. */
export function checkIdTokenClaims(claims: Record<string, unknown>, expected: IdTokenExpectations): void {
  if (claims.iss !== expected.issuer) throw new IdTokenError("issuer", "issued by another issuer");
  const aud = claims.aud;
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
  if (!audiences.includes(expected.clientId)) throw new IdTokenError("audience", "issued to another client");
  if (claims.azp !== undefined && claims.azp !== expected.clientId) throw new IdTokenError("azp", "authorized for another party");
  if (claims.azp === undefined && audiences.length > 1) {
    throw new IdTokenError("azp", "several audiences and no azp naming this client");
  }
  const { exp, iat } = claims;
  if (typeof exp !== "number" || typeof iat !== "number" || !Number.isFinite(exp) || !Number.isFinite(iat)) {
    throw new IdTokenError("missing_claim", "exp or iat is missing");
  }
  const now = (expected.now ?? Date.now()) / 1000;
  const skew = expected.clockSkew ?? 60;
  if (now >= exp + skew) throw new IdTokenError("expired", "expired");
  if (iat > now + skew) throw new IdTokenError("issued_in_future", "issued in the future");
  if (typeof claims.sub !== "string" || claims.sub === "") throw new IdTokenError("missing_claim", "sub is missing");
  if (expected.nonce !== undefined) {
    if (typeof claims.nonce !== "string" || !timingSafeEqual(claims.nonce, expected.nonce)) {
      throw new IdTokenError("nonce", "the nonce does not match the authorization request");
    }
  }
  if (expected.subject !== undefined && claims.sub !== expected.subject) {
    throw new IdTokenError("subject", "a refreshed ID token names another subject");
  }
}

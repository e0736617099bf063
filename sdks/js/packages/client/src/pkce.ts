// PKCE (RFC 7636) with S256 only: svc refuses `plain`, and so does this package.

import { base64urlEncode, randomToken, sha256 } from "./encoding.js";

/** A fresh code verifier: 32 random bytes → 43 characters of the unreserved set (RFC 7636 §4.1). */
export function createCodeVerifier(): string {
  return randomToken(32);
}

/** `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2). */
export async function codeChallengeS256(verifier: string): Promise<string> {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) {
    throw new TypeError("a PKCE code verifier is 43 to 128 unreserved characters (RFC 7636 §4.1)");
  }
  return base64urlEncode(await sha256(verifier));
}

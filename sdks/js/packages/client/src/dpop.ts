// DPoP (RFC 9449) proofs with an ES256 key that never leaves WebCrypto (the private key is not
// extractable). Used only when the server's discovery document lists ES256 in
// `dpop_signing_alg_values_supported` (svc does, by default: `[dpop].enabled`). The key lives as long as the client object; tokens bound to it are useless
// without it, which is why it is never written to storage.

import { base64urlEncode, buffer, randomToken, sha256, utf8, webCrypto } from "./encoding.js";

/** A public key as sent in a proof's `jwk` header (P-256). */
export interface DPoPPublicJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
}

export class DPoPKey {
  /** The latest `DPoP-Nonce` each server origin asked for (RFC 9449 §8). */
  private readonly nonces = new Map<string, string>();

  private constructor(
    private readonly privateKey: CryptoKey,
    /** The public key as a JWK, sent in every proof's header. */
    readonly publicJwk: DPoPPublicJwk,
  ) {}

  static async generate(): Promise<DPoPKey> {
    const pair = await webCrypto().subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"]);
    const exported = await webCrypto().subtle.exportKey("jwk", pair.publicKey);
    return new DPoPKey(pair.privateKey, { kty: "EC", crv: exported.crv, x: exported.x, y: exported.y });
  }

  /** The RFC 7638 thumbprint of the public key (`jkt`), as the server binds tokens to it. */
  async thumbprint(): Promise<string> {
    const { crv, kty, x, y } = this.publicJwk;
    return base64urlEncode(await sha256(JSON.stringify({ crv, kty, x, y })));
  }

  /** Remembers a nonce the server sent (any answer may carry one). */
  rememberNonce(url: string, response: Response): void {
    const nonce = response.headers.get("dpop-nonce");
    if (nonce) this.nonces.set(new URL(url).origin, nonce);
  }

  /** A proof for one request: `htu` without query or fragment, `ath` when presenting an access token. */
  async proof(method: string, url: string, accessToken?: string): Promise<string> {
    const target = new URL(url);
    const htu = `${target.origin}${target.pathname}`;
    const claims: Record<string, unknown> = {
      jti: randomToken(16),
      htm: method.toUpperCase(),
      htu,
      iat: Math.floor(Date.now() / 1000),
    };
    const nonce = this.nonces.get(target.origin);
    if (nonce) claims.nonce = nonce;
    if (accessToken) claims.ath = base64urlEncode(await sha256(accessToken));
    const header = { typ: "dpop+jwt", alg: "ES256", jwk: this.publicJwk };
    const input = `${base64urlEncode(JSON.stringify(header))}.${base64urlEncode(JSON.stringify(claims))}`;
    const signature = await webCrypto().subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.privateKey, buffer(utf8(input)));
    return `${input}.${base64urlEncode(new Uint8Array(signature))}`;
  }
}

/** Whether the server accepts DPoP proofs this package can make. */
export function serverOffersDPoP(metadata: { dpop_signing_alg_values_supported?: unknown }): boolean {
  const algs = metadata.dpop_signing_alg_values_supported;
  return Array.isArray(algs) && algs.includes("ES256");
}

// JWS compact parsing and signature verification over WebCrypto, and the issuer's key set
// (JWKS) cache. Only asymmetric algorithms exist here (RS256, ES256, EdDSA with Ed25519):
// `none` and HS* can never be selected, whatever a token's header says, and a key is used
// only for the algorithm its JWK declares, so a token cannot pick how it is checked.

import { base64urlDecode, base64urlDecodeText, buffer, utf8, webCrypto } from "./encoding.js";
import { IdTokenError } from "./errors.js";
import { type FetchLike, readJson, send } from "./http.js";

export type SigningAlgorithm = "RS256" | "ES256" | "EdDSA";
export const SUPPORTED_ALGORITHMS: readonly SigningAlgorithm[] = ["RS256", "ES256", "EdDSA"];

export interface JwsHeader {
  alg: string;
  kid?: string;
  typ?: string;
  crit?: unknown;
  [field: string]: unknown;
}

export interface Jwk {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  crv?: string;
  n?: string;
  e?: string;
  x?: string;
  y?: string;
  [field: string]: unknown;
}

export interface ParsedJws {
  header: JwsHeader;
  payload: Record<string, unknown>;
  signingInput: Uint8Array;
  signature: Uint8Array;
}

/** Splits and decodes a compact JWS; the signature is not checked here. */
export function parseJws(token: string): ParsedJws {
  const parts = token.split(".");
  if (parts.length !== 3) throw new IdTokenError("malformed", "not a compact JWS (three parts)");
  const [h, p, s] = parts as [string, string, string];
  let header: unknown;
  let payload: unknown;
  let signature: Uint8Array;
  try {
    header = JSON.parse(base64urlDecodeText(h));
    payload = JSON.parse(base64urlDecodeText(p));
    signature = base64urlDecode(s);
  } catch {
    throw new IdTokenError("malformed", "a part is not base64url-encoded JSON");
  }
  if (!isObject(header) || typeof header.alg !== "string") throw new IdTokenError("malformed", "the header has no alg");
  if (!isObject(payload)) throw new IdTokenError("malformed", "the payload is not a JSON object");
  return { header: header as JwsHeader, payload, signingInput: utf8(`${h}.${p}`), signature };
}

/** Decodes a JWT's claims without any check: for display only, never for a decision. */
export function decodeJwtClaims(token: string): Record<string, unknown> {
  return parseJws(token).payload;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** WebCrypto parameters for an algorithm: import, then verify. */
function algorithmParams(alg: SigningAlgorithm): { importAlg: AlgorithmIdentifier | RsaHashedImportParams | EcKeyImportParams; verifyAlg: AlgorithmIdentifier | EcdsaParams } {
  switch (alg) {
    case "RS256":
      return { importAlg: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, verifyAlg: { name: "RSASSA-PKCS1-v1_5" } };
    case "ES256":
      return { importAlg: { name: "ECDSA", namedCurve: "P-256" }, verifyAlg: { name: "ECDSA", hash: "SHA-256" } };
    case "EdDSA":
      return { importAlg: { name: "Ed25519" }, verifyAlg: { name: "Ed25519" } };
  }
}

/** The key types each algorithm may use: a mismatch means a confused or hostile key set. */
function keyFits(jwk: Jwk, alg: SigningAlgorithm): boolean {
  if (jwk.use !== undefined && jwk.use !== "sig") return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  switch (alg) {
    case "RS256":
      return jwk.kty === "RSA" && typeof jwk.n === "string" && typeof jwk.e === "string";
    case "ES256":
      return jwk.kty === "EC" && jwk.crv === "P-256" && typeof jwk.x === "string" && typeof jwk.y === "string";
    case "EdDSA":
      return jwk.kty === "OKP" && jwk.crv === "Ed25519" && typeof jwk.x === "string";
  }
}

/** @internal Imports only the public members, so a JWK's extra fields (`alg`, `key_ops`…) cannot trip WebCrypto. */
export async function importPublicJwk(jwk: Jwk, alg: SigningAlgorithm): Promise<CryptoKey> {
  if (!keyFits(jwk, alg)) throw new IdTokenError("key", `the key does not fit ${alg}`);
  const members: JsonWebKey =
    jwk.kty === "RSA" ? { kty: "RSA", n: jwk.n, e: jwk.e }
    : jwk.kty === "EC" ? { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y }
    : { kty: "OKP", crv: jwk.crv, x: jwk.x };
  try {
    return await webCrypto().subtle.importKey("jwk", members, algorithmParams(alg).importAlg, false, ["verify"]);
  } catch (cause) {
    throw new IdTokenError("key", `the ${alg} key could not be imported (${(cause as Error)?.name ?? "error"}; EdDSA needs a runtime with Ed25519 in WebCrypto)`);
  }
}

/** @internal */
export async function verifySignature(jws: ParsedJws, alg: SigningAlgorithm, key: CryptoKey): Promise<boolean> {
  // A P-256 signature is exactly r‖s, 64 bytes; WebCrypto expects that form too (not DER).
  if (alg === "ES256" && jws.signature.length !== 64) return false;
  if (alg === "EdDSA" && jws.signature.length !== 64) return false;
  try {
    return await webCrypto().subtle.verify(algorithmParams(alg).verifyAlg, key, buffer(jws.signature), buffer(jws.signingInput));
  } catch {
    return false;
  }
}

/** How long a fetched key set is trusted, and the least time between two fetches for an unknown kid. */
const KEYSET_TTL_MS = 10 * 60 * 1000;
const REFETCH_MIN_MS = 60 * 1000;

/**
 * The issuer's JWKS, cached: a `kid` not in the cache triggers one fetch at most once a minute
 * (key rotation), so a stream of tokens with invented kids cannot hammer the server.
 */
export class KeySet {
  private keys: Jwk[] = [];
  private fetchedAt = -Infinity;
  private inflight: Promise<void> | undefined;
  private readonly imported = new Map<string, Promise<CryptoKey>>();

  constructor(
    private readonly jwksUri: string,
    private readonly fetchFn: FetchLike,
    private readonly now: () => number = Date.now,
  ) {}

  /** @internal The verification key for a token header, or an IdTokenError("key"). */
  async key(kid: string | undefined, alg: SigningAlgorithm): Promise<CryptoKey> {
    let jwk = this.find(kid, alg);
    const age = this.now() - this.fetchedAt;
    if (!jwk || age > KEYSET_TTL_MS) {
      if (age > REFETCH_MIN_MS || this.keys.length === 0) await this.refresh();
      jwk = this.find(kid, alg);
    }
    if (!jwk) throw new IdTokenError("key", "no key of the issuer matches the token's kid and alg");
    const cacheKey = `${alg}:${JSON.stringify([jwk.kty, jwk.kid, jwk.n, jwk.x, jwk.y])}`;
    let imported = this.imported.get(cacheKey);
    if (!imported) {
      imported = importPublicJwk(jwk, alg);
      this.imported.set(cacheKey, imported);
      imported.catch(() => this.imported.delete(cacheKey));
    }
    return imported;
  }

  private find(kid: string | undefined, alg: SigningAlgorithm): Jwk | undefined {
    const fitting = this.keys.filter((k) => keyFits(k, alg));
    if (kid !== undefined) return fitting.find((k) => k.kid === kid);
    // Without a kid only an unambiguous key set can answer.
    return fitting.length === 1 ? fitting[0] : undefined;
  }

  private refresh(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        const response = await send(this.fetchFn, this.jwksUri, { headers: { accept: "application/json" } });
        const body = await readJson(response);
        const keys = isObject(body) && Array.isArray(body.keys) ? body.keys.filter(isObject) : undefined;
        if (!response.ok || !keys) throw new IdTokenError("key", `the issuer's key set could not be read (HTTP ${response.status})`);
        this.keys = keys as Jwk[];
        this.fetchedAt = this.now();
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}

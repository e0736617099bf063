// Sealing: what a server-side sign-in keeps in the browser's cookies (the pending login, the
// session with its tokens) is encrypted and authenticated with AES-256-GCM over WebCrypto, so it
// runs unchanged in Node, in Edge runtimes and in workers. The browser can neither read the
// tokens nor change a byte without the value being refused.

import { base64urlDecode, base64urlEncode } from "../index.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The format's version, first in every sealed value, so a later format can refuse or migrate this one. */
const VERSION = "v1";
const MIN_SECRET_BYTES = 32;

/** Thrown for a secret shorter than 32 bytes: a short one could be guessed offline from any cookie. */
export class SessionSecretError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "SessionSecretError";
  }
}

const keyCache = new Map<string, Promise<CryptoKey>>();

/**
 * One AES key per (secret, purpose): HKDF-SHA-256 turns the configured secret (any string of
 * ≥ 32 bytes, not necessarily uniformly random) into a key, and the purpose (the cookie's name)
 * keeps a login cookie from ever being accepted as a session cookie.
 */
function aesKey(secret: string, purpose: string): Promise<CryptoKey> {
  const bytes = encoder.encode(secret);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new SessionSecretError(`the session secret must be at least ${MIN_SECRET_BYTES} bytes (e.g. \`openssl rand -base64 32\`)`);
  }
  const id = `${purpose}\u0000${secret}`;
  let key = keyCache.get(id);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", bytes, "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: encoder.encode("svc sealed cookie"), info: encoder.encode(purpose) },
          material,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keyCache.set(id, key);
  }
  return key;
}

/**
 * Seals `value` (JSON) until `expiresAt` (ms since the epoch): `v1.<iv>.<ciphertext>`. The
 * expiry is inside the ciphertext, so a cookie kept past its Max-Age is refused all the same.
 */
export async function seal(value: unknown, secret: string, purpose: string, expiresAt: number): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = encoder.encode(JSON.stringify({ exp: expiresAt, v: value }));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(VERSION) }, await aesKey(secret, purpose), plain);
  return `${VERSION}.${base64urlEncode(iv)}.${base64urlEncode(new Uint8Array(sealed))}`;
}

/**
 * The value sealed by `seal` with the same secret and purpose, or undefined when it was changed,
 * sealed with another key or purpose, malformed or expired. Several secrets may be given
 * (the current one first) to rotate the secret without signing everyone out.
 */
export async function unseal<T = unknown>(sealed: string | undefined, secret: string | readonly string[], purpose: string, now = Date.now()): Promise<T | undefined> {
  if (!sealed) return undefined;
  const parts = sealed.split(".");
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  let iv: Uint8Array;
  let data: Uint8Array;
  try {
    iv = base64urlDecode(parts[1]!);
    data = base64urlDecode(parts[2]!);
  } catch {
    return undefined;
  }
  if (iv.length !== 12 || data.length < 16) return undefined;
  for (const candidate of typeof secret === "string" ? [secret] : secret) {
    let plain: ArrayBuffer;
    try {
      plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: iv as Uint8Array<ArrayBuffer>, additionalData: encoder.encode(VERSION) }, await aesKey(candidate, purpose), data as Uint8Array<ArrayBuffer>);
    } catch (error) {
      if (error instanceof SessionSecretError) throw error;
      continue; // another key, or changed bytes: the tag does not verify
    }
    const opened = JSON.parse(decoder.decode(plain)) as { exp?: unknown; v?: unknown };
    if (typeof opened.exp !== "number" || opened.exp <= now) return undefined;
    return opened.v as T;
  }
  return undefined;
}

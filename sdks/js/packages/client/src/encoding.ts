// base64url (RFC 4648 §5, no padding), random values and SHA-256 over WebCrypto: the only
// primitives the flows need, kept here so the rest never touches bytes directly. Works in
// browsers and in Node 20+ (globalThis.crypto, atob/btoa).

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** @internal The WebCrypto implementation, or a clear failure where there is none (plain-http pages in some browsers). */
export function webCrypto(): Crypto {
  const crypto = globalThis.crypto;
  if (!crypto?.subtle || typeof crypto.getRandomValues !== "function") {
    throw new Error("WebCrypto (crypto.subtle) is not available: use a secure context (https or localhost) or Node 20+");
  }
  return crypto;
}

// Public signatures say plain `Uint8Array` so the declarations compile with TypeScript before
// 5.7 (no generic typed arrays); WebCrypto calls go through `buffer()`.
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** @internal The view as WebCrypto's BufferSource (every array here is backed by a plain ArrayBuffer). */
export function buffer(bytes: Uint8Array): BufferSource {
  return bytes as unknown as BufferSource;
}

export function base64urlEncode(input: Uint8Array | string): string {
  const bytes = typeof input === "string" ? utf8(input) : input;
  let binary = "";
  // Chunks keep String.fromCharCode under the engines' argument limits for large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Strict: refuses padding, the standard alphabet's `+` and `/`, and impossible lengths. */
export function base64urlDecode(input: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(input) || input.length % 4 === 1) {
    throw new TypeError("not base64url");
  }
  const padded = input.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((input.length + 3) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function base64urlDecodeText(input: string): string {
  return decoder.decode(base64urlDecode(input));
}

/** `bytes` random bytes, base64url-encoded: 32 bytes give 256 bits, as state, nonce and verifier use. */
export function randomToken(bytes = 32): string {
  const buffer = new Uint8Array(bytes);
  webCrypto().getRandomValues(buffer);
  return base64urlEncode(buffer);
}

export async function sha256(input: string | Uint8Array): Promise<Uint8Array> {
  const data = typeof input === "string" ? utf8(input) : input;
  return new Uint8Array(await webCrypto().subtle.digest("SHA-256", buffer(data)));
}

/** Compares without an early exit, so a mismatch's position does not leak through timing. */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = utf8(a);
  const right = utf8(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return diff === 0;
}

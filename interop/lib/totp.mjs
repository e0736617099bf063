// An authenticator app for the interop scripts: RFC 6238 TOTP (HMAC-SHA-1, 6 digits, 30 s steps)
// on node:crypto, written from the RFC and independent of the server's implementation, checked
// against the RFC's own test vector at load.
import { createHmac } from 'node:crypto';

export const STEP_SECONDS = 30;

/** RFC 4648 base32 (A–Z, 2–7), spaces and padding ignored, any case. */
export function base32Decode(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out = [];
  for (const char of clean) {
    const index = alphabet.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${JSON.stringify(char)} in ${JSON.stringify(text)}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** The HOTP value (RFC 4226 §5.3) of `secret` (bytes) for `counter`, as `digits` digits. */
export function hotp(secret, counter, digits = 6) {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(binary).padStart(digits, '0');
}

// RFC 6238 Appendix B, SHA-1, T = 59 s: 94287082 (8 digits).
if (hotp(Buffer.from('12345678901234567890'), Math.floor(59 / STEP_SECONDS), 8) !== '94287082') {
  throw new Error('the TOTP helper does not reproduce the RFC 6238 test vector');
}

const currentStep = () => Math.floor(Date.now() / 1000 / STEP_SECONDS);

/**
 * The app with the key a setup page shows (base32). The server accepts one code per time step
 * and ±1 step around its clock: every `code()` is for a later step than the one before, within
 * one step of now, waiting for the clock when the next usable step is still two ahead.
 */
export class Authenticator {
  constructor(keyBase32) {
    this.secret = base32Decode(keyBase32);
    this.lastStep = null;
  }

  async code() {
    const now = currentStep();
    const step = this.lastStep === null ? now : Math.max(now, this.lastStep + 1);
    if (step > now + 1) {
      const wait = (step - 1) * STEP_SECONDS * 1000 + 500 - Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    }
    this.lastStep = step;
    return hotp(this.secret, step);
  }

  /** A code that no step within the server's window (now ±1) produces. */
  wrongCode() {
    const now = currentStep();
    const valid = new Set([now - 1, now, now + 1].map((s) => hotp(this.secret, s)));
    return ['000000', '123456', '999999', '314159'].find((c) => !valid.has(c));
  }
}

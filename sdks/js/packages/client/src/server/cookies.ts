// The cookies this package writes and how: HttpOnly (page scripts never see tokens),
// SameSite=Lax (sent on the top-level redirect back from svc, not on cross-site subrequests),
// Secure except on plain-HTTP loopback development origins, and split into numbered chunks
// when a sealed session outgrows the ~4 KB browsers keep per cookie.

export interface CookieAttributes {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
  httpOnly: true;
  sameSite: "lax";
}

export interface CookieWrite {
  name: string;
  value: string;
  attributes: CookieAttributes;
}

/** Where a chunked value is split: under the per-cookie limit with the name and attributes. */
export const CHUNK = 3800;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Secure unless the application runs on plain HTTP on a loopback name (development): a browser
 * drops Secure cookies on http:, and everywhere else a session cookie must not travel unencrypted.
 */
export function secureFor(origin: string): boolean {
  const url = new URL(origin);
  return !(url.protocol === "http:" && (LOOPBACK.has(url.hostname) || url.hostname.endsWith(".localhost")));
}

export function attributes(origin: string, path: string, maxAge: number): CookieAttributes {
  return { path, maxAge: Math.max(0, Math.floor(maxAge)), secure: secureFor(origin), httpOnly: true, sameSite: "lax" };
}

/** A Set-Cookie header value. Values are base64url and dots, so they need no quoting. */
export function serializeCookie({ name, value, attributes: a }: CookieWrite): string {
  const parts = [`${name}=${value}`, `Path=${a.path}`, `Max-Age=${a.maxAge}`];
  if (a.maxAge === 0) parts.push("Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  parts.push("HttpOnly");
  if (a.secure) parts.push("Secure");
  parts.push("SameSite=Lax");
  return parts.join("; ");
}

/** The cookies of a Cookie request header (the first of a repeated name wins, as browsers send the most specific path first). */
export function parseCookieHeader(header: string | null | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, pair.slice(eq + 1).trim());
  }
  return cookies;
}

/** A value written as `name` or as `name.0`, `name.1`… (see `chunkedWrites`). */
export function readChunked(name: string, get: (name: string) => string | undefined): string | undefined {
  const whole = get(name);
  if (whole) return whole;
  let value = "";
  for (let i = 0; ; i++) {
    const chunk = get(`${name}.${i}`);
    if (!chunk) return value || undefined;
    value += chunk;
  }
}

/**
 * The writes that store `value` under `name` (one cookie, or chunks when it is long) and delete
 * whatever else of `name` the browser holds (`present`: the request's cookie names), so a
 * shorter session never leaves a stale chunk behind. `value` undefined deletes it all.
 */
export function chunkedWrites(name: string, value: string | undefined, present: Iterable<string>, live: CookieAttributes): CookieWrite[] {
  const gone: CookieAttributes = { ...live, maxAge: 0 };
  const writes: CookieWrite[] = [];
  const kept = new Set<string>();
  if (value !== undefined && value.length <= CHUNK) {
    writes.push({ name, value, attributes: live });
    kept.add(name);
  } else if (value !== undefined) {
    for (let i = 0; i * CHUNK < value.length; i++) {
      writes.push({ name: `${name}.${i}`, value: value.slice(i * CHUNK, (i + 1) * CHUNK), attributes: live });
      kept.add(`${name}.${i}`);
    }
  }
  for (const existing of present) {
    if ((existing === name || (existing.startsWith(`${name}.`) && /^\d+$/.test(existing.slice(name.length + 1)))) && !kept.has(existing)) {
      writes.push({ name: existing, value: "", attributes: gone });
    }
  }
  return writes;
}

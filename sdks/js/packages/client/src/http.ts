// The package's only contact with the network: fetch with errors turned into NetworkError and
// TokenError, form posts to the OAuth endpoints, JSON reads. Redirects are never followed on
// credential-bearing requests (an endpoint that redirects is misconfigured, and following it
// could hand a code or token to another host).

import { NetworkError, TokenError } from "./errors.js";

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** `fetch` bound to globalThis (browsers throw "Illegal invocation" on a detached `window.fetch`). */
export function defaultFetch(): FetchLike {
  if (typeof globalThis.fetch !== "function") {
    throw new NetworkError("fetch is not available: pass `fetch` in the options (Node 20+ has it built in)");
  }
  return (input, init) => globalThis.fetch(input, init);
}

export async function send(fetchFn: FetchLike, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetchFn(url, { redirect: "manual", ...init });
  } catch (cause) {
    throw new NetworkError(`${init.method ?? "GET"} ${new URL(url).origin}${new URL(url).pathname} failed: ${String((cause as Error)?.message ?? cause)}`, { cause });
  }
}

/** The body as JSON, or undefined when it is not JSON (an error page, an empty 200). */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A TokenError from an OAuth error body (RFC 6749 §5.2) or, failing that, from the status. */
export function errorFrom(response: Response, body: unknown): TokenError {
  const fields = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const error = typeof fields.error === "string" && fields.error ? fields.error : `http_${response.status}`;
  const description = typeof fields.error_description === "string" ? fields.error_description : undefined;
  return new TokenError(response.status, error, description);
}

/** POSTs an `application/x-www-form-urlencoded` body and returns the JSON object answered with 200. */
export async function postForm(
  fetchFn: FetchLike,
  url: string,
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
  /** Sees every answer before its status is judged (DPoP nonces come on errors too). */
  onResponse?: (response: Response) => void,
): Promise<Record<string, unknown>> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) form.set(name, value);
  }
  const response = await send(fetchFn, url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...headers },
    body: form.toString(),
    cache: "no-store",
  });
  onResponse?.(response);
  const body = await readJson(response);
  if (!response.ok) throw errorFrom(response, body);
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw new TokenError(response.status, "invalid_response", "the answer is not a JSON object");
  }
  return body as Record<string, unknown>;
}

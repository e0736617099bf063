// The routes of a server-side sign-in under `basePath`: login, callback, logout, session and
// refresh, with only the Web Request/Response API, so every framework adapter (a Next route
// handler, a SvelteKit hook) hands them its Request and returns their Response. Also the check
// a middleware or hook makes before rendering a protected path.

import { SvcError, createAuthorizationUrl, exchangeCode, oauthSignOut, revokeToken, validateCallback } from "../index.js";
import { type Config, type ServerAuthOptions, clientFetch, configOf, keysOf, metadataOf } from "./config.js";
import { type CookieWrite, attributes, parseCookieHeader, serializeCookie } from "./cookies.js";
import { safeReturnTo } from "./return-to.js";
import { seal, unseal } from "./seal.js";
import { needsRefresh, readSession, refreshSession, sessionFromTokens, sessionInfo, sessionWrites } from "./session.js";

/** What the login route keeps until the callback, sealed in a cookie for ten minutes. */
interface PendingCookie {
  state: string;
  nonce?: string;
  codeVerifier: string;
  redirectUri: string;
  returnTo: string;
}
const LOGIN_TTL_S = 600;

/**
 * The application's public origin: the configured `appUrl`, else the request's Host
 * (or X-Forwarded-Host/-Proto from a proxy in front). Not `request.url`: `next start` builds it
 * from the name it listens on (`localhost`), which is not what the browser uses. A forged Host
 * only affects the forger's own request: svc accepts only registered redirect URIs.
 */
export function originFrom(config: Config, headers: Headers, fallback: string): string {
  if (config.appUrl) return config.appUrl;
  const url = new URL(fallback);
  const host = headers.get("x-forwarded-host")?.split(",")[0]?.trim() || headers.get("host") || url.host;
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || url.protocol.slice(0, -1);
  return `${proto === "https" ? "https" : "http"}://${host}`;
}

export function appOrigin(config: Config, request: Request): string {
  return originFrom(config, request.headers, request.url);
}

function redirect(location: string, writes: CookieWrite[] = [], status = 303): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const write of writes) headers.append("set-cookie", serializeCookie(write));
  return new Response(null, { status, headers });
}

function plain(status: number, text: string, extra: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...extra } });
}

/** `/errorPath?svc_error=<code>`: the application shows it (the code is stable: `state_mismatch`…). */
function errorLocation(config: Config, origin: string, error: unknown): string {
  const url = new URL(config.errorPath, origin);
  url.searchParams.set("svc_error", error instanceof SvcError ? error.code : "server_error");
  return url.toString();
}

/**
 * A browser POST from another site (a CSRF form) carries its Origin or a Sec-Fetch-Site other
 * than same-origin; those are refused. Requests without either come from non-browser clients,
 * which cannot ride on the person's cookies.
 */
function sameOrigin(request: Request, origin: string): boolean {
  const from = request.headers.get("origin");
  if (from !== null) return from === origin;
  const site = request.headers.get("sec-fetch-site");
  return site === null || site === "same-origin" || site === "none";
}

async function login(config: Config, request: Request): Promise<Response> {
  const origin = appOrigin(config, request);
  const url = new URL(request.url);
  const metadata = await metadataOf(config);
  const { url: authorizationUrl, pending } = await createAuthorizationUrl(metadata, {
    clientId: config.clientId,
    redirectUri: `${origin}${config.basePath}/callback`,
    scope: config.scope,
    extraParams: config.authorizationParams,
  });
  const kept: PendingCookie = {
    state: pending.state,
    codeVerifier: pending.codeVerifier,
    redirectUri: pending.redirectUri,
    returnTo: safeReturnTo(url.searchParams.get("returnTo")),
  };
  if (pending.nonce !== undefined) kept.nonce = pending.nonce;
  const sealed = await seal(kept, config.secrets[0]!, config.loginCookieName, Date.now() + LOGIN_TTL_S * 1000);
  return redirect(authorizationUrl, [{ name: config.loginCookieName, value: sealed, attributes: attributes(origin, config.basePath, LOGIN_TTL_S) }], 302);
}

async function callback(config: Config, request: Request): Promise<Response> {
  const origin = appOrigin(config, request);
  const cookies = parseCookieHeader(request.headers.get("cookie"));
  // The pending login is single-use whatever happens: a second callback with the same state fails.
  const spent: CookieWrite = { name: config.loginCookieName, value: "", attributes: attributes(origin, config.basePath, 0) };
  try {
    const pending = await unseal<PendingCookie>(cookies.get(config.loginCookieName), config.secrets, config.loginCookieName);
    const metadata = await metadataOf(config);
    // No pending login (expired, another browser, a forged link): the state cannot match.
    const code = validateCallback(metadata, request.url, pending?.state ?? "");
    const tokens = await exchangeCode(metadata, code, pending!, {
      clientId: config.clientId,
      fetch: clientFetch(config, metadata),
      keys: await keysOf(config),
      idTokenSigningAlg: config.idTokenSigningAlg,
    });
    const session = sessionFromTokens(config, tokens);
    const writes = await sessionWrites(config, origin, session, cookies.keys());
    return redirect(new URL(pending!.returnTo, origin).toString(), [spent, ...writes]);
  } catch (error) {
    // A failed callback leaves an existing session as it was: a forged link cannot sign anyone out.
    return redirect(errorLocation(config, origin, error), [spent]);
  }
}

async function logout(config: Config, request: Request): Promise<Response> {
  const origin = appOrigin(config, request);
  if (!sameOrigin(request, origin)) return plain(403, "cross-site logout refused");
  const cookies = parseCookieHeader(request.headers.get("cookie"));
  const session = await readSession(config, (name) => cookies.get(name));
  const writes = await sessionWrites(config, origin, undefined, cookies.keys());
  const back = new URL(config.postLogoutPath, origin).toString();
  const metadata = await metadataOf(config);
  if (session?.refreshToken && metadata.revocation_endpoint) {
    // Best effort: the end-session request below ends the svc session (and its refresh tokens) anyway.
    await revokeToken(metadata, session.refreshToken, { clientId: config.clientId, tokenTypeHint: "refresh_token", fetch: clientFetch(config, metadata) }).catch(() => undefined);
  }
  if (!metadata.end_session_endpoint) return redirect(back, writes);
  const options: Parameters<typeof oauthSignOut>[1] = { clientId: config.clientId, postLogoutRedirectUri: back };
  if (session?.idToken) options.idTokenHint = session.idToken;
  return redirect(oauthSignOut(metadata, options), writes);
}

async function sessionRoute(config: Config, request: Request): Promise<Response> {
  const cookies = parseCookieHeader(request.headers.get("cookie"));
  const session = await readSession(config, (name) => cookies.get(name));
  const body = session ? { isAuthenticated: true, ...sessionInfo(session) } : { isAuthenticated: false };
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

/**
 * GET /refresh?returnTo=…: renews a session whose access token is about to expire and sends the
 * browser back. Adapters redirect here from code that cannot set cookies (Next's server
 * components); a fresh token is left alone, so this cannot loop or waste refresh tokens.
 */
async function refresh(config: Config, request: Request): Promise<Response> {
  const origin = appOrigin(config, request);
  const url = new URL(request.url);
  const returnTo = safeReturnTo(url.searchParams.get("returnTo"));
  const cookies = parseCookieHeader(request.headers.get("cookie"));
  const session = await readSession(config, (name) => cookies.get(name));
  if (!session) return redirect(loginUrl(config, origin, returnTo));
  if (!needsRefresh(config, session)) return redirect(new URL(returnTo, origin).toString());
  try {
    const next = await refreshSession(config, session);
    return redirect(new URL(returnTo, origin).toString(), await sessionWrites(config, origin, next, cookies.keys()));
  } catch (error) {
    const cleared = await sessionWrites(config, origin, undefined, cookies.keys());
    return redirect(loginUrl(config, origin, returnTo), error instanceof SvcError && error.code === "login_required" ? cleared : []);
  }
}

/**
 * The answer to `request` when it is one of the routes under `basePath`, else undefined (the
 * application's own request):
 *
 * - `GET  /login?returnTo=/path` — to svc's sign-in (PKCE S256, state, nonce in a sealed cookie)
 * - `GET  /callback` — checks state and `iss`, redeems the code, validates the ID token, sets the session
 * - `POST /logout` — same-origin only; clears the session, revokes the refresh token, ends svc's session
 * - `GET  /session` — `{ isAuthenticated, user, expiresAt }` as JSON, no tokens (for client code)
 * - `GET  /refresh?returnTo=/path` — renews a near-expiry access token, then back
 */
export async function authRoute(options: ServerAuthOptions, request: Request): Promise<Response | undefined> {
  const config = configOf(options);
  const path = new URL(request.url).pathname;
  if (!path.startsWith(`${config.basePath}/`)) return undefined;
  const action = path.slice(config.basePath.length + 1);
  if (request.method === "POST") return action === "logout" ? logout(config, request) : plain(404, "not found");
  if (request.method !== "GET" && request.method !== "HEAD") return plain(405, "method not allowed", { allow: "GET, POST" });
  switch (action) {
    case "login":
      return login(config, request);
    case "callback":
      return callback(config, request);
    case "session":
      return sessionRoute(config, request);
    case "refresh":
      return refresh(config, request);
    case "logout":
      return plain(405, "logout is a POST (a form button): a GET could be triggered by any page", { allow: "POST" });
    default:
      return plain(404, "not found");
  }
}

/** Which paths need a session: prefixes (`/account` covers `/account/…`, not `/accounting`), regular expressions, or a function of the pathname. */
export type ProtectRule = ReadonlyArray<string | RegExp> | ((pathname: string) => boolean);

export function isProtected(protect: ProtectRule, pathname: string): boolean {
  if (typeof protect === "function") return protect(pathname);
  return protect.some((rule) =>
    typeof rule === "string" ? pathname === rule || pathname.startsWith(rule.endsWith("/") ? rule : `${rule}/`) : rule.test(pathname),
  );
}

/**
 * For a middleware or hook before rendering: a 307 to `<basePath>/login?returnTo=<path>` when
 * `request` is for a protected path and carries no valid session, else undefined. It checks the
 * seal and expiry only (no network) and does not refresh.
 */
export async function requireSession(options: ServerAuthOptions, request: Request, protect: ProtectRule): Promise<Response | undefined> {
  const config = configOf(options);
  const url = new URL(request.url);
  if (url.pathname.startsWith(`${config.basePath}/`) || !isProtected(protect, url.pathname)) return undefined;
  const cookies = parseCookieHeader(request.headers.get("cookie"));
  if (await readSession(config, (name) => cookies.get(name))) return undefined;
  return redirect(loginUrl(config, appOrigin(config, request), `${url.pathname}${url.search}`), [], 307);
}

/** `<origin><basePath>/login?returnTo=<returnTo>` */
export function loginUrl(config: Config, origin: string, returnTo: string): string {
  return `${origin}${config.basePath}/login?returnTo=${encodeURIComponent(safeReturnTo(returnTo))}`;
}

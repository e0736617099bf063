// The server-side session: what the sealed session cookie holds, how it is read and written
// whatever the cookie API (a Request's header, a framework's cookie store), and the refresh with svc's
// rotating refresh tokens.

import { LoginRequiredError, type TokenSet, TokenError, refreshTokens } from "../index.js";
import { type Config, clientFetch, keysOf, metadataOf } from "./config.js";
import { type CookieWrite, attributes, chunkedWrites, readChunked } from "./cookies.js";
import { seal, unseal } from "./seal.js";

/** The ID token claims kept in the session (the person's, not the token's plumbing). */
export interface SessionUser {
  sub: string;
  [claim: string]: unknown;
}

/** The sealed session cookie's content (not part of the public API). */
export interface StoredSession {
  user: SessionUser;
  accessToken: string;
  tokenType: string;
  /** ms since the epoch */
  expiresAt: number;
  /** When the access token was received (ms): its lifetime bounds the refresh window. */
  receivedAt: number;
  refreshToken?: string;
  /** For `id_token_hint` at logout. */
  idToken?: string;
  scope?: string;
  /** The session's own end (ms), fixed at sign-in: refreshes do not extend it. */
  sessionExpiresAt: number;
}

/** What applications see of a session: no tokens (they stay on the server). */
export interface SessionInfo {
  user: SessionUser;
  /** When the current access token expires (ms since the epoch). */
  expiresAt: number;
  scope?: string;
}

/** Claims of the ID token that describe the token rather than the person: not kept. */
const PLUMBING = new Set(["iss", "aud", "exp", "iat", "nbf", "nonce", "azp", "at_hash", "c_hash", "jti"]);

/** A new session from the tokens of a code exchange. */
export function sessionFromTokens(config: Config, tokens: TokenSet, now = Date.now()): StoredSession {
  const claims = tokens.idTokenClaims;
  if (!claims) throw new LoginRequiredError("the sign-in returned no ID token: is `openid` in the scope?");
  const user: SessionUser = { sub: claims.sub };
  for (const [name, value] of Object.entries(claims)) if (!PLUMBING.has(name)) user[name] = value;
  const session: StoredSession = {
    user,
    accessToken: tokens.accessToken,
    tokenType: tokens.tokenType,
    expiresAt: tokens.expiresAt,
    receivedAt: now,
    sessionExpiresAt: now + config.sessionMaxAge * 1000,
  };
  if (tokens.refreshToken) session.refreshToken = tokens.refreshToken;
  if (tokens.idToken) session.idToken = tokens.idToken;
  if (tokens.scope) session.scope = tokens.scope;
  return session;
}

export function sessionInfo(session: StoredSession): SessionInfo {
  const info: SessionInfo = { user: session.user, expiresAt: session.expiresAt };
  if (session.scope) info.scope = session.scope;
  return info;
}

/**
 * The session of a request, or undefined (none, tampered with, another key, past its
 * end, or an access token expired with no refresh token to renew it).
 */
export async function readSession(config: Config, get: (name: string) => string | undefined, now = Date.now()): Promise<StoredSession | undefined> {
  const session = await unseal<StoredSession>(readChunked(config.cookieName, get), config.secrets, config.cookieName, now);
  if (!session || typeof session.accessToken !== "string" || typeof session.user?.sub !== "string") return undefined;
  if (!session.refreshToken && session.expiresAt <= now) return undefined;
  return session;
}

/** The cookie writes that store `session` (undefined: delete it) for the application at `origin`. */
export async function sessionWrites(config: Config, origin: string, session: StoredSession | undefined, present: Iterable<string>, now = Date.now()): Promise<CookieWrite[]> {
  if (!session) return chunkedWrites(config.cookieName, undefined, present, attributes(origin, "/", 0));
  const sealed = await seal(session, config.secrets[0]!, config.cookieName, session.sessionExpiresAt);
  return chunkedWrites(config.cookieName, sealed, present, attributes(origin, "/", (session.sessionExpiresAt - now) / 1000));
}

/**
 * Whether the access token is near its end: fewer than `refreshBefore` seconds left, but never
 * more than half its lifetime, so a `refreshBefore` longer than svc's token lifetime cannot make
 * every fresh token "near expiry" (and the refresh route loop).
 */
export function needsRefresh(config: Config, session: StoredSession, now = Date.now()): boolean {
  const lifetime = session.expiresAt - (session.receivedAt ?? now);
  return session.expiresAt - now < Math.min(config.refreshBefore * 1000, lifetime / 2);
}

/**
 * Refreshes in flight or just done, by the refresh token they used. svc rotates refresh tokens
 * and treats a second use of one as theft (the whole family is revoked), so concurrent requests
 * of one browser (a page and its route handlers) must not each redeem the same token: they
 * share one refresh, and a request that still carries the old cookie shortly after gets the
 * same result instead of replaying the spent token.
 */
/** By issuer, client and refresh token. */
const refreshes = new Map<string, { result: Promise<StoredSession>; until: number }>();
const REMEMBER_MS = 30_000;

/**
 * The session with a new access token (and the rotated refresh token). A refused
 * refresh token (revoked, expired, session ended at svc) is a LoginRequiredError.
 */
export function refreshSession(config: Config, session: StoredSession, now = Date.now()): Promise<StoredSession> {
  const refreshToken = session.refreshToken;
  if (!refreshToken) return Promise.reject(new LoginRequiredError("the session has no refresh token (is offline_access in the scope?)"));
  for (const [id, entry] of refreshes) if (entry.until < now) refreshes.delete(id);
  const id = `${config.issuer}\u0000${config.clientId}\u0000${refreshToken}`;
  const known = refreshes.get(id);
  if (known) return known.result;
  const result = (async () => {
    const metadata = await metadataOf(config);
    let tokens: TokenSet;
    try {
      tokens = await refreshTokens(metadata, refreshToken, {
        clientId: config.clientId,
        fetch: clientFetch(config, metadata),
        keys: await keysOf(config),
        idTokenSigningAlg: config.idTokenSigningAlg,
        subject: session.user.sub,
      });
    } catch (error) {
      if (error instanceof TokenError && (error.error === "invalid_grant" || error.status === 401)) {
        throw new LoginRequiredError("svc refused the refresh token: sign in again", { cause: error });
      }
      throw error;
    }
    const next: StoredSession = { ...session, accessToken: tokens.accessToken, tokenType: tokens.tokenType, expiresAt: tokens.expiresAt, receivedAt: Date.now() };
    if (tokens.refreshToken) next.refreshToken = tokens.refreshToken;
    if (tokens.idToken) next.idToken = tokens.idToken;
    if (tokens.scope) next.scope = tokens.scope;
    return next;
  })();
  refreshes.set(id, { result, until: now + REMEMBER_MS });
  // A failure is not remembered: a network error may pass, and the next request retries.
  result.catch(() => refreshes.delete(id));
  return result;
}

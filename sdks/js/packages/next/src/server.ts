// For server components, route handlers and server actions: the session and an access token
// from Next's cookies(). The one Next-specific limit: a server component cannot set cookies, so
// when its access token needs refreshing it redirects through the refresh route (which can)
// instead of refreshing itself — refreshing without storing svc's rotated refresh token would
// leave the cookie holding a spent token whose next use revokes the whole session.

import { LoginRequiredError } from "@svc/client";
import {
  type Config,
  type ServerAuthOptions,
  type SessionInfo,
  type SessionUser,
  type StoredSession,
  configOf,
  needsRefresh,
  originFrom,
  readSession,
  refreshSession,
  safeReturnTo,
  sessionInfo,
  sessionWrites,
} from "@svc/client/server";
import type { cookies as nextCookies } from "next/headers";

export interface AccessToken {
  /** Send as `Authorization: <tokenType> <accessToken>` (Bearer: the server keeps no DPoP key). */
  accessToken: string;
  tokenType: string;
  /** ms since the epoch */
  expiresAt: number;
  user: SessionUser;
}

export interface RequireAccessTokenOptions {
  /**
   * The page to come back to after a sign-in or a refresh redirect (a same-origin path; server
   * components cannot know their own URL). Default `/`.
   */
  returnTo?: string;
  /** Refresh even when the token is still fresh (route handlers and server actions only). */
  forceRefresh?: boolean;
  /** Without a session: `"redirect"` (default) to the login route, `"throw"` a LoginRequiredError (e.g. to answer 401 from an API route). */
  onMissing?: "redirect" | "throw";
}

type CookieStore = Awaited<ReturnType<typeof nextCookies>>;

/**
 * Next's request APIs, imported when first used rather than at the top: the rest of this
 * package (handlers, middleware, sealing) then also loads in plain Node (tests, scripts), where
 * `next/headers` has no ESM entry point.
 */
async function next() {
  const [{ cookies, headers }, { redirect }] = await Promise.all([import("next/headers"), import("next/navigation")]);
  return { cookies, headers, redirect };
}

async function requestOrigin(config: Config): Promise<string> {
  const { headers } = await next();
  return originFrom(config, new Headers(await headers()), "http://localhost");
}

function present(store: CookieStore): string[] {
  return store.getAll().map((cookie) => cookie.name);
}

/** Whether this render may set cookies: only route handlers and server actions can. */
function canSetCookies(config: Config, store: CookieStore, session: StoredSession): boolean {
  const name = store.get(config.cookieName) ? config.cookieName : `${config.cookieName}.0`;
  const current = store.get(name)?.value;
  if (!current) return false;
  try {
    // Rewrites the cookie as it is; in a server component Next throws instead.
    store.set(name, current, { path: "/", httpOnly: true, sameSite: "lax", maxAge: Math.max(0, Math.floor((session.sessionExpiresAt - Date.now()) / 1000)) });
    return true;
  } catch {
    return false;
  }
}

async function store(config: Config, cookieStore: CookieStore, session: StoredSession | undefined): Promise<void> {
  for (const write of await sessionWrites(config, await requestOrigin(config), session, present(cookieStore))) {
    const a = write.attributes;
    cookieStore.set(write.name, write.value, { path: a.path, maxAge: a.maxAge, httpOnly: a.httpOnly, secure: a.secure, sameSite: a.sameSite });
  }
}

/** The signed-in person (the ID token's claims) and the access token's expiry, or null. No tokens. */
export async function getSession(options: ServerAuthOptions = {}): Promise<SessionInfo | null> {
  const config = configOf(options);
  const cookieStore = await (await next()).cookies();
  const session = await readSession(config, (name) => cookieStore.get(name)?.value);
  return session ? sessionInfo(session) : null;
}

/**
 * An access token for calling APIs from the server, refreshed with the rotating refresh token
 * when it has less than `refreshBefore` seconds left (or when `forceRefresh`). In a route handler
 * or server action the renewed session is written back to the cookie; in a server component
 * (which cannot write cookies) a near-expiry token sends the browser through `<basePath>/refresh`
 * and back to `returnTo`. Without a session (or when svc refuses the refresh token) it redirects
 * to the login route, or throws LoginRequiredError with `onMissing: "throw"`.
 */
export async function requireAccessToken(options: ServerAuthOptions = {}, call: RequireAccessTokenOptions = {}): Promise<AccessToken> {
  const config = configOf(options);
  const returnTo = safeReturnTo(call.returnTo);
  const { cookies, redirect } = await next();
  const toLogin = (reason: string, cause?: unknown): never => {
    if (call.onMissing === "throw") throw new LoginRequiredError(reason, { cause });
    return redirect(`${config.basePath}/login?returnTo=${encodeURIComponent(returnTo)}`);
  };
  const cookieStore = await cookies();
  let session = await readSession(config, (name) => cookieStore.get(name)?.value);
  if (!session) return toLogin("no signed-in session");
  if (call.forceRefresh || needsRefresh(config, session)) {
    if (!canSetCookies(config, cookieStore, session)) {
      if (call.forceRefresh) throw new TypeError("forceRefresh needs a route handler or a server action: a server component cannot store the rotated refresh token");
      redirect(`${config.basePath}/refresh?returnTo=${encodeURIComponent(returnTo)}`);
    }
    try {
      session = await refreshSession(config, session);
    } catch (error) {
      if (!(error instanceof LoginRequiredError)) throw error;
      await store(config, cookieStore, undefined);
      return toLogin(error.message, error);
    }
    await store(config, cookieStore, session);
  }
  return { accessToken: session.accessToken, tokenType: session.tokenType, expiresAt: session.expiresAt, user: session.user };
}


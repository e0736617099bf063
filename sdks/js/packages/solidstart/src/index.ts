// @svc/solidstart: SolidStart's idioms over @svc/client/server. One request middleware (for
// `createMiddleware({ onRequest })`) answers the sign-in routes under basePath, guards protected
// paths, and puts the session on `event.locals.svc` for pages' server functions and API routes.
// Cookies go through SolidStart's response stub (`event.response.headers`), which writes them to
// the underlying response whatever the route returns (a page, a server function, a Response),
// so a refreshed session is always written back.
//
// SolidStart's types are not imported: the few fields used are declared structurally below, so
// the package has no type dependency on vinxi/h3 and works with SolidStart 1.x's FetchEvent.

import { LoginRequiredError, SvcError } from "@svc/client";
import {
  type ProtectRule,
  type ServerAuthOptions,
  type SessionInfo,
  type SessionUser,
  type StoredSession,
  authRoute,
  configOf,
  loginUrl,
  needsRefresh,
  originFrom,
  parseCookieHeader,
  readSession,
  refreshSession,
  requireSession,
  serializeCookie,
  sessionInfo,
  sessionWrites,
} from "@svc/client/server";

export interface SvcMiddlewareOptions extends ServerAuthOptions {
  /** Paths that need a session (prefixes, regular expressions or a function); others are open. */
  protect?: ProtectRule;
}

/** The part of SolidStart's FetchEvent (`@solidjs/start/server`) this package uses. */
export interface SvcFetchEvent {
  request: Request;
  locals: object;
  response: { headers: { append(name: string, value: string): void } };
}

export interface SvcAccessToken {
  /** Send as `Authorization: <tokenType> <accessToken>` (a Bearer token: the server keeps no DPoP key). */
  accessToken: string;
  tokenType: string;
  /** ms since the epoch */
  expiresAt: number;
  user: SessionUser;
}

/**
 * `event.locals.svc` (in middleware, API routes, and `getRequestEvent()` in server functions).
 * Type it in `src/global.d.ts`: `declare namespace App { interface RequestEventLocals { svc: import("@svc/solidstart").SvcLocals } }`.
 */
export interface SvcLocals {
  /** The signed-in person (the ID token's claims), or null. */
  readonly user: SessionUser | null;
  /** The person and the access token's expiry, no tokens (safe to send to the browser). */
  readonly session: SessionInfo | null;
  /**
   * An access token, refreshed with the rotating refresh token when near expiry or when
   * `forceRefresh`; the renewed session is written to the cookie. Rejects with
   * LoginRequiredError without a session or when svc refuses the refresh token (the session
   * cookie is then deleted).
   */
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<SvcAccessToken>;
  /**
   * getAccessToken(), but without a session it throws a 302 Response to the login route and
   * back to this page — what `@solidjs/router`'s `redirect()` throws, which server functions,
   * queries and API routes all turn into the redirect.
   */
  requireAccessToken(options?: { forceRefresh?: boolean }): Promise<SvcAccessToken>;
  /** The login route's URL with `returnTo` (default: this page). */
  loginUrl(returnTo?: string): string;
}

/** `event.locals.svc`, or a TypeError naming the missing middleware. */
export function svcLocals(event: { locals: object }): SvcLocals {
  const svc = (event.locals as { svc?: SvcLocals }).svc;
  if (!svc) throw new TypeError("event.locals.svc is not set: add svcMiddleware() to src/middleware.ts's onRequest");
  return svc;
}

/**
 * `export default createMiddleware({ onRequest: [svcMiddleware({ protect: ["/account"] })] })`
 * in `src/middleware.ts` (and `middleware: "src/middleware.ts"` in app.config.ts). Options
 * default from the environment like `@svc/next`'s: SVC_ISSUER, SVC_CLIENT_ID,
 * SVC_CLIENT_SECRET, SVC_SESSION_SECRET.
 */
export function svcMiddleware(options: SvcMiddlewareOptions = {}): (event: SvcFetchEvent) => Promise<Response | void> {
  return async (event) => {
    const request = event.request;
    const routed = await authRoute(options, request);
    if (routed) return routed;
    if (options.protect) {
      const toLogin = await requireSession(options, request, options.protect);
      if (toLogin) return toLogin;
    }
    const config = configOf(options);
    const url = new URL(request.url);
    const origin = originFrom(config, request.headers, url.href);
    const cookies = parseCookieHeader(request.headers.get("cookie"));
    let session: StoredSession | undefined = await readSession(config, (name) => cookies.get(name));
    const here = `${url.pathname}${url.search}`;
    const store = async (next: StoredSession | undefined): Promise<void> => {
      for (const write of await sessionWrites(config, origin, next, cookies.keys())) event.response.headers.append("set-cookie", serializeCookie(write));
    };

    // One refresh per request: two server functions awaiting tokens at once must not both
    // spend the rotating refresh token (the second use would end the session at svc).
    let refreshing: Promise<StoredSession> | undefined;
    const getAccessToken: SvcLocals["getAccessToken"] = async ({ forceRefresh = false } = {}) => {
      if (!session) throw new LoginRequiredError("no signed-in session");
      if (forceRefresh || needsRefresh(config, session)) {
        const current = session;
        refreshing ??= (async () => {
          try {
            const renewed = await refreshSession(config, current);
            session = renewed;
            await store(renewed);
            return renewed;
          } catch (error) {
            if (error instanceof LoginRequiredError) {
              session = undefined;
              await store(undefined);
            }
            throw error;
          } finally {
            refreshing = undefined;
          }
        })();
        const renewed = await refreshing;
        return { accessToken: renewed.accessToken, tokenType: renewed.tokenType, expiresAt: renewed.expiresAt, user: renewed.user };
      }
      return { accessToken: session.accessToken, tokenType: session.tokenType, expiresAt: session.expiresAt, user: session.user };
    };
    const locals: SvcLocals = {
      get user() {
        return session?.user ?? null;
      },
      get session() {
        return session ? sessionInfo(session) : null;
      },
      getAccessToken,
      async requireAccessToken(call) {
        try {
          return await getAccessToken(call);
        } catch (error) {
          if (error instanceof LoginRequiredError) {
            throw new Response(null, { status: 302, headers: { location: loginUrl(config, origin, here) } });
          }
          throw error;
        }
      },
      loginUrl: (returnTo = here) => loginUrl(config, origin, returnTo),
    };
    (event.locals as { svc?: SvcLocals }).svc = locals;
    return;
  };
}

export { SessionSecretError, safeReturnTo, seal, unseal } from "@svc/client/server";
export type { ProtectRule, SessionInfo, SessionUser } from "@svc/client/server";
export { LoginRequiredError, SvcError };

// @svc/sveltekit: SvelteKit's idioms over @svc/client/server. One server hook answers the
// sign-in routes under basePath, guards protected paths, and puts the session on
// `event.locals.svc` for load functions, actions and endpoints — which, unlike Next's server
// components, may all set cookies, so a refreshed session is always written back.

import { LoginRequiredError, SvcError } from "@svc/client";
import {
  type ProtectRule,
  type ServerAuthOptions,
  type SessionInfo,
  type SessionUser,
  type StoredSession,
  configOf,
  loginUrl,
  needsRefresh,
  originFrom,
  readSession,
  refreshSession,
  requireSession,
  sessionInfo,
  sessionWrites,
  authRoute,
} from "@svc/client/server";
import { type Handle, type RequestEvent, redirect } from "@sveltejs/kit";

export interface SvcHandleOptions extends ServerAuthOptions {
  /** Paths that need a session (prefixes, regular expressions or a function); others are open. */
  protect?: ProtectRule;
}

export interface SvcAccessToken {
  /** Send as `Authorization: <tokenType> <accessToken>` (a Bearer token: the server keeps no DPoP key). */
  accessToken: string;
  tokenType: string;
  /** ms since the epoch */
  expiresAt: number;
  user: SessionUser;
}

/** `event.locals.svc`: declare it in `src/app.d.ts` as `interface Locals { svc: SvcLocals }`. */
export interface SvcLocals {
  /** The signed-in person (the ID token's claims), or null. */
  readonly user: SessionUser | null;
  /** The person and the access token's expiry, no tokens (safe to return from a load function). */
  readonly session: SessionInfo | null;
  /**
   * An access token, refreshed with the rotating refresh token when near expiry or when
   * `forceRefresh`; the renewed session is written to the cookie. Rejects with
   * LoginRequiredError without a session or when svc refuses the refresh token (the session
   * cookie is then deleted).
   */
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<SvcAccessToken>;
  /** getAccessToken(), but without a session it redirects (303) to the login route and back to this page. */
  requireAccessToken(options?: { forceRefresh?: boolean }): Promise<SvcAccessToken>;
  /** The login route's URL with `returnTo` (default: this page). */
  loginUrl(returnTo?: string): string;
}

function store(event: RequestEvent, writes: Awaited<ReturnType<typeof sessionWrites>>): void {
  for (const { name, value, attributes: a } of writes) {
    event.cookies.set(name, value, { path: a.path, maxAge: a.maxAge, httpOnly: a.httpOnly, secure: a.secure, sameSite: a.sameSite, encode: (v) => v });
  }
}

/**
 * `export const handle = createSvcHandle({ protect: ["/account"] })` in `src/hooks.server.ts`
 * (combine with others through `sequence()`). Options default from the environment like
 * `@svc/next`'s: SVC_ISSUER, SVC_CLIENT_ID, SVC_CLIENT_SECRET, SVC_SESSION_SECRET.
 */
export function createSvcHandle(options: SvcHandleOptions = {}): Handle {
  return async ({ event, resolve }) => {
    const routed = await authRoute(options, event.request);
    if (routed) return routed;
    if (options.protect) {
      const toLogin = await requireSession(options, event.request, options.protect);
      if (toLogin) return toLogin;
    }
    const config = configOf(options);
    const origin = originFrom(config, event.request.headers, event.url.href);
    let session: StoredSession | undefined = await readSession(config, (name) => event.cookies.get(name));
    const present = (): string[] => event.cookies.getAll().map((cookie) => cookie.name);
    const here = `${event.url.pathname}${event.url.search}`;

    const getAccessToken: SvcLocals["getAccessToken"] = async ({ forceRefresh = false } = {}) => {
      if (!session) throw new LoginRequiredError("no signed-in session");
      if (forceRefresh || needsRefresh(config, session)) {
        try {
          session = await refreshSession(config, session);
        } catch (error) {
          if (error instanceof LoginRequiredError) {
            session = undefined;
            store(event, await sessionWrites(config, origin, undefined, present()));
          }
          throw error;
        }
        store(event, await sessionWrites(config, origin, session, present()));
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
          if (error instanceof LoginRequiredError) redirect(303, loginUrl(config, origin, here));
          throw error;
        }
      },
      loginUrl: (returnTo = here) => loginUrl(config, origin, returnTo),
    };
    (event.locals as { svc?: SvcLocals }).svc = locals;
    return resolve(event);
  };
}

export { SessionSecretError, safeReturnTo, seal, unseal } from "@svc/client/server";
export type { ProtectRule, SessionInfo, SessionUser } from "@svc/client/server";
export { LoginRequiredError, SvcError };

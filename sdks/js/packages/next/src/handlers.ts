// createAuthHandlers(): the `{ GET, POST }` of `app/api/auth/[...svc]/route.ts`. The routes
// themselves (login, callback, logout, session, refresh) are @svc/client/server's, written
// against Web Request/Response, which is what Next's route handlers take and return.

import { type ServerAuthOptions, authRoute } from "@svc/client/server";

export type RouteHandler = (request: Request) => Promise<Response>;

/**
 * The route handlers of `app/<basePath>/[...svc]/route.ts`:
 *
 * - `GET  /login?returnTo=/path` — to svc's sign-in (PKCE S256, state, nonce in a sealed cookie)
 * - `GET  /callback` — checks state and `iss`, redeems the code, validates the ID token, sets the session
 * - `POST /logout` — same-origin only; clears the session, revokes the refresh token, ends svc's session
 * - `GET  /session` — `{ isAuthenticated, user, expiresAt }` as JSON, no tokens (for client components)
 * - `GET  /refresh?returnTo=/path` — renews a near-expiry access token, then back
 */
export function createAuthHandlers(options: ServerAuthOptions = {}): { GET: RouteHandler; POST: RouteHandler } {
  // Mounted elsewhere than basePath, a request reaches no route: a 404 says so.
  const handle: RouteHandler = async (request) => (await authRoute(options, request)) ?? new Response("not found", { status: 404 });
  return { GET: handle, POST: handle };
}

// authMiddleware(): for `proxy.ts` (Next 16) or `middleware.ts` (Next 15). It only decides
// whether a protected path may be rendered: without a session it redirects to the login route
// with the requested path as returnTo. It returns undefined to let the request through, which
// Next treats as NextResponse.next(), so this module needs nothing from Next itself.

import { type ProtectRule, type ServerAuthOptions, requireSession } from "@svc/client/server";

export interface AuthMiddlewareOptions {
  /**
   * The paths that need a session: prefixes (`/account` covers `/account` and `/account/…`, not
   * `/accounting`), regular expressions, or a function of the pathname.
   */
  protect: ProtectRule;
}

/**
 * `export default authMiddleware(svcOptions, { protect: ["/account"] })`. A request for a
 * protected path without a valid session gets a 307 to `<basePath>/login?returnTo=<path>`;
 * everything else passes (undefined). The session's tokens are not refreshed here: route
 * handlers and server components do that when they need a token.
 */
export function authMiddleware(options: ServerAuthOptions, middleware: AuthMiddlewareOptions): (request: Request) => Promise<Response | undefined> {
  return (request) => requireSession(options, request, middleware.protect);
}

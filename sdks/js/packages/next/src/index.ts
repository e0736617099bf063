// The public surface of @svc/next: route handlers, the server-side session and access token,
// and the middleware — Next's idioms over @svc/client/server (sealed session cookie, routes,
// refresh) — plus the pieces an application may want on their own. Errors are @svc/client's.

export { createAuthHandlers } from "./handlers.js";
export type { RouteHandler } from "./handlers.js";
export { getSession, requireAccessToken } from "./server.js";
export type { AccessToken, RequireAccessTokenOptions } from "./server.js";
export { authMiddleware } from "./middleware.js";
export type { AuthMiddlewareOptions } from "./middleware.js";
export { SessionSecretError, safeReturnTo, seal, unseal } from "@svc/client/server";
export type { ServerAuthOptions as SvcNextOptions, SessionInfo, SessionUser } from "@svc/client/server";
export { LoginRequiredError, SvcError } from "@svc/client";

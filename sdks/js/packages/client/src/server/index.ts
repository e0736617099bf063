// @svc/client/server: the framework-free half of a server-side sign-in (a confidential or
// public client whose tokens stay on the server): the routes under a base path as Web
// Request → Response functions, the session in a sealed cookie, its refresh with svc's
// rotating refresh tokens, and the checks (returnTo, protected paths). The framework adapters
// (@svc/next, @svc/sveltekit) map these onto their own idioms.

export { clientFetch, configOf, forgetIssuers, keysOf, metadataOf } from "./config.js";
export type { Config, ServerAuthOptions } from "./config.js";
export { CHUNK, attributes, chunkedWrites, parseCookieHeader, readChunked, secureFor, serializeCookie } from "./cookies.js";
export type { CookieAttributes, CookieWrite } from "./cookies.js";
export { safeReturnTo } from "./return-to.js";
export { SessionSecretError, seal, unseal } from "./seal.js";
export { needsRefresh, readSession, refreshSession, sessionFromTokens, sessionInfo, sessionWrites } from "./session.js";
export type { SessionInfo, SessionUser, StoredSession } from "./session.js";
export { appOrigin, authRoute, isProtected, loginUrl, originFrom, requireSession } from "./routes.js";
export type { ProtectRule } from "./routes.js";

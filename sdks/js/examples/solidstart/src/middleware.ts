// The sign-in routes (/api/auth/login, /callback, /logout, /session, /refresh), the guard of
// /protected, and event.locals.svc. Settings from the environment at run time: SVC_ISSUER,
// SVC_CLIENT_ID, SVC_CLIENT_SECRET, SVC_SESSION_SECRET.
import { createMiddleware } from "@solidjs/start/middleware";
import { svcMiddleware } from "@svc/solidstart";

export default createMiddleware({ onRequest: [svcMiddleware({ protect: ["/protected"] })] });

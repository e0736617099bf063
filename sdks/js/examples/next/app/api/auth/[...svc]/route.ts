// /api/auth/login, /callback, /logout, /session, /refresh: all of @svc/next's routes.
import { createAuthHandlers } from "@svc/next";
import { svc } from "../../../../lib/svc";

export const { GET, POST } = createAuthHandlers(svc);

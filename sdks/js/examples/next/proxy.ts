// Next 16's proxy (formerly middleware.ts): /protected needs a session.
import { authMiddleware } from "@svc/next";
import { svc } from "./lib/svc";

export default authMiddleware(svc, { protect: ["/protected"] });

export const config = { matcher: ["/protected/:path*"] };

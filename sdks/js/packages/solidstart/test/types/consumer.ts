// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution against SolidStart's own middleware types.
import { type SvcAccessToken, type SvcLocals, type SvcMiddlewareOptions, LoginRequiredError, safeReturnTo, svcLocals, svcMiddleware } from "@svc/solidstart";
import { createMiddleware } from "@solidjs/start/middleware";
import type { FetchEvent } from "@solidjs/start/server";

const options: SvcMiddlewareOptions = { issuer: "https://acme.id.example", clientId: "app_1", protect: ["/account", /^\/admin/], scope: ["openid", "email"] };
// src/middleware.ts
export default createMiddleware({ onRequest: [svcMiddleware(options), svcMiddleware({ protect: (path) => path.startsWith("/x") })] });

// an API route or a server function's getRequestEvent()
export async function GET(event: FetchEvent): Promise<Response> {
  const svc: SvcLocals = svcLocals(event);
  const who: string | undefined = svc.user?.sub;
  try {
    const token: SvcAccessToken = await svc.getAccessToken({ forceRefresh: false });
    return Response.json({ who, type: token.tokenType, expiresAt: svc.session?.expiresAt });
  } catch (error) {
    if (error instanceof LoginRequiredError) return Response.redirect(svc.loginUrl(safeReturnTo("/inbox")));
    throw error;
  }
}

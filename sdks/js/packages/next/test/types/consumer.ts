// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, the way a Next application uses it.
import {
  type AccessToken,
  LoginRequiredError,
  type SessionInfo,
  type SvcNextOptions,
  authMiddleware,
  createAuthHandlers,
  getSession,
  requireAccessToken,
  safeReturnTo,
} from "@svc/next";

export const svc: SvcNextOptions = { issuer: "https://acme.id.example", clientId: "app_1", secret: ["new-secret-of-at-least-32-bytes!!", "old-secret-of-at-least-32-bytes!!"], scope: ["openid", "email"] };

// app/api/auth/[...svc]/route.ts
export const { GET, POST } = createAuthHandlers(svc);
const answer: Promise<Response> = GET(new Request("https://app.example/api/auth/login"));

// proxy.ts / middleware.ts
export const proxy: (request: Request) => Promise<Response | undefined> = authMiddleware(svc, { protect: ["/account", /^\/admin/] });
authMiddleware(svc, { protect: (path) => path.startsWith("/x") });

// a server component / route handler
export async function page(): Promise<string> {
  const session: SessionInfo | null = await getSession(svc);
  try {
    const token: AccessToken = await requireAccessToken(svc, { returnTo: safeReturnTo("/inbox"), onMissing: "throw" });
    return `${session?.user.sub} ${token.tokenType} ${token.accessToken} ${token.expiresAt}`;
  } catch (error) {
    if (error instanceof LoginRequiredError) return error.code;
    throw error;
  }
}
void answer;
// @ts-expect-error: protect is required
authMiddleware(svc, {});

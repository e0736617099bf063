// A consumer's view of the published package: resolved through its `exports` map and
// type-checked under Node16 and bundler resolution, the way a SvelteKit application uses it.
import { type SvcAccessToken, type SvcHandleOptions, type SvcLocals, LoginRequiredError, createSvcHandle, safeReturnTo } from "@svc/sveltekit";
import type { Handle } from "@sveltejs/kit";

const options: SvcHandleOptions = { issuer: "https://acme.id.example", clientId: "app_1", protect: ["/account", /^\/admin/], scope: ["openid", "email"] };
// src/hooks.server.ts
export const handle: Handle = createSvcHandle(options);
createSvcHandle({ protect: (path) => path.startsWith("/x") });

// a load function or endpoint
export async function load(locals: { svc: SvcLocals }): Promise<string> {
  const who: string | undefined = locals.svc.user?.sub;
  try {
    const token: SvcAccessToken = await locals.svc.getAccessToken({ forceRefresh: false });
    return `${who} ${token.tokenType} ${token.accessToken} ${locals.svc.session?.expiresAt}`;
  } catch (error) {
    if (error instanceof LoginRequiredError) return locals.svc.loginUrl(safeReturnTo("/inbox"));
    throw error;
  }
}

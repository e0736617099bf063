// A consumer's view of the published package: resolved through its `exports` map (the
// workspace links node_modules/@svc/client here), type-checked under Node16 and bundler
// resolution. If the map or the declarations were wrong, this would not compile.
import {
  type AuthState,
  type AuthStore,
  authStore,
  AuthorizationError,
  IdTokenError,
  type IdTokenClaims,
  type SvcStorage,
  SvcError,
  type TokenSet,
  createAuthorizationUrl,
  createSvcClient,
  discover,
  exchangeCode,
  oauthSignOut,
} from "@svc/client";

const storage: SvcStorage = { get: () => null, set: () => undefined, remove: () => undefined };
const client = createSvcClient({
  baseURL: "https://acme.id.example",
  oauth: { clientId: "app_1", redirectUri: "https://app.example/callback", scopes: ["openid", "offline_access"] },
  storage,
});

export async function usage(): Promise<string> {
  await client.login({ popup: { width: 500 } });
  const { user, tokens }: { user: IdTokenClaims | undefined; tokens: TokenSet } = await client.handleCallback();
  const token: string = await client.getAccessToken({ forceRefresh: false });
  const metadata = await discover("https://acme.id.example");
  const { url, pending } = await createAuthorizationUrl(metadata, { clientId: "app_1", redirectUri: "https://app.example/cb", scope: "openid" });
  await exchangeCode(metadata, "code", pending, { clientId: "app_1" });
  try {
    await client.logout();
  } catch (error) {
    if (error instanceof AuthorizationError) return error.error_description ?? error.error;
    if (error instanceof IdTokenError) return error.rule;
    if (error instanceof SvcError) return error.code;
  }
  return `${user?.sub}${tokens.accessToken}${token}${url}${oauthSignOut(metadata, { state: "s" })}`;
}

// The framework packages' common ground.
const store: AuthStore = authStore(client);
export const stop: () => void = store.subscribe((state: AuthState) => void state.user?.sub);
export const started: Promise<AuthState> = store.start({ isCallback: (url) => url.pathname === "/cb", onSignIn: (r) => void r.returnTo });
export const redirect: string = client.redirectUri;

// The server half, through its own `exports` entry.
import { type ServerAuthOptions, authRoute, requireSession, safeReturnTo as checkReturnTo } from "@svc/client/server";
const serverOptions: ServerAuthOptions = { issuer: "https://acme.id.example", clientId: "app_1", secret: "0123456789abcdef0123456789abcdef" };
export const serverAnswer: Promise<Response | undefined> = authRoute(serverOptions, new Request("https://app.example/api/auth/login"));
export const guarded: Promise<Response | undefined> = requireSession(serverOptions, new Request("https://app.example/x"), ["/x"]);
export const back: string = checkReturnTo("/x");

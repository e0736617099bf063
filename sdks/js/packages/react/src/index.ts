// The public surface of @svc/react: a provider, hooks and a guard over @svc/client's authStore.

export { RequireAuth, SvcProvider, useAuth, useSvc } from "./provider.js";
export type { Auth, RequireAuthProps, SvcProviderProps } from "./provider.js";
export type { AuthState, IdTokenClaims, LoginOptions, LogoutOptions, SignInResult, SvcClient } from "@svc/client";

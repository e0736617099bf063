// Svelte idioms over @svc/client: readable stores (`$auth`, `$isAuthenticated`, `$user`…) that
// follow the client's authStore, and its actions. The first subscriber in a browser completes
// the callback on the redirect URI (once per client), so a component only has to use `$auth`.
// Plain TypeScript on `svelte/store`: works with Svelte 4 and 5, no compiler needed here.

import {
  type AuthStartOptions,
  type AuthState,
  type IdTokenClaims,
  type LoginOptions,
  type LogoutOptions,
  type SignInResult,
  type SvcClient,
  authStore,
} from "@svc/client";
import { type Readable, derived, readable } from "svelte/store";

export type { AuthStartOptions, AuthState, IdTokenClaims, LoginOptions, LogoutOptions, SignInResult, SvcClient } from "@svc/client";

export interface SvcStores {
  /** The whole state: `{ isLoading, isAuthenticated, user, error }`. */
  readonly auth: Readable<AuthState>;
  readonly isLoading: Readable<boolean>;
  readonly isAuthenticated: Readable<boolean>;
  readonly user: Readable<IdTokenClaims | null>;
  readonly error: Readable<Error | null>;
  readonly client: SvcClient;
  login(options?: LoginOptions): Promise<SignInResult | undefined>;
  logout(options?: LogoutOptions): Promise<{ url: string; state: string }>;
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
  /** Completes the callback or reads the stored tokens; the first subscription does it anyway. */
  start(): Promise<AuthState>;
}

/** The stores of `client`; create them once, in a module the components import. */
export function createSvc(client: SvcClient, options: AuthStartOptions = {}): SvcStores {
  const store = authStore(client);
  const start = () => store.start(options);
  const auth = readable<AuthState>(store.getState(), (set) => {
    // Server rendering has no callback to complete and no tokens of the visitor's.
    if ((globalThis as { location?: unknown }).location) void start();
    set(store.getState());
    return store.subscribe(set);
  });
  return {
    auth,
    isLoading: derived(auth, (s) => s.isLoading),
    isAuthenticated: derived(auth, (s) => s.isAuthenticated),
    user: derived(auth, (s) => s.user),
    error: derived(auth, (s) => s.error),
    client,
    login: store.login,
    logout: store.logout,
    getAccessToken: store.getAccessToken,
    start,
  };
}

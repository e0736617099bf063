// Vue idioms over @svc/client: a plugin that starts the client's authStore (completing the
// callback on the redirect URI) and provides it, and a composable with read-only refs that
// follow it. Every component using the same client sees one state.

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
import { type App, type ComputedRef, type InjectionKey, computed, inject, shallowRef } from "vue";

export type { AuthStartOptions, AuthState, IdTokenClaims, LoginOptions, LogoutOptions, SignInResult, SvcClient } from "@svc/client";

/** What `useAuth()` returns: refs for the state, plain functions for the actions. */
export interface SvcAuth {
  readonly isLoading: ComputedRef<boolean>;
  readonly isAuthenticated: ComputedRef<boolean>;
  readonly user: ComputedRef<IdTokenClaims | null>;
  readonly error: ComputedRef<Error | null>;
  /** The whole state as one ref (a new object on every change). */
  readonly state: ComputedRef<AuthState>;
  readonly client: SvcClient;
  login(options?: LoginOptions): Promise<SignInResult | undefined>;
  logout(options?: LogoutOptions): Promise<{ url: string; state: string }>;
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
}

/** The plugin `createSvc()` returns; `auth` is what `useAuth()` gives, for use outside components (a router guard). */
export interface SvcPlugin {
  install(app: App): void;
  readonly auth: SvcAuth;
}

const KEY: InjectionKey<SvcAuth> = Symbol("@svc/vue");

/**
 * `app.use(createSvc(client, { onSignIn }))`. In a browser the plugin completes the callback on
 * the redirect URI, else reads the stored tokens (once per client, however many apps use it).
 */
export function createSvc(client: SvcClient, options: AuthStartOptions = {}): SvcPlugin {
  const store = authStore(client);
  // shallowRef: the state is replaced whole, never mutated, so deep reactivity would only cost.
  const state = shallowRef<AuthState>(store.getState());
  store.subscribe((next) => {
    state.value = next;
  });
  const auth: SvcAuth = {
    isLoading: computed(() => state.value.isLoading),
    isAuthenticated: computed(() => state.value.isAuthenticated),
    user: computed(() => state.value.user),
    error: computed(() => state.value.error),
    state: computed(() => state.value),
    client,
    login: store.login,
    logout: store.logout,
    getAccessToken: store.getAccessToken,
  };
  return {
    auth,
    install(app) {
      app.provide(KEY, auth);
      // Server rendering has no callback to complete and no tokens of the visitor's.
      if ((globalThis as { location?: unknown }).location) void store.start(options);
    },
  };
}

/** The state as refs and the actions, inside a component (or `app.runWithContext`) of an app that used the plugin. */
export function useAuth(): SvcAuth {
  const auth = inject(KEY, null);
  if (!auth) throw new Error("useAuth() needs the plugin: app.use(createSvc(client))");
  return auth;
}

// React idioms over @svc/client: the provider starts the client's authStore (completing the
// callback on the redirect URI), the hooks read it with useSyncExternalStore, so every component
// renders the same state and tearing between them is impossible.

import {
  type AuthStartOptions,
  type AuthState,
  type AuthStore,
  type LoginOptions,
  type LogoutOptions,
  type SignInResult,
  type SvcClient,
  authStore,
} from "@svc/client";
import { type ReactNode, createContext, useContext, useEffect, useMemo, useRef, useSyncExternalStore } from "react";

const SvcContext = createContext<AuthStore | null>(null);

export interface SvcProviderProps {
  /** The client, created once (module scope), not per render: `createSvcClient({ … })`. */
  client: SvcClient;
  /** Runs once the callback completed, e.g. to route to `result.returnTo`. */
  onSignIn?: (result: SignInResult) => void;
  /** Which URL is a callback; default: the client's redirect URI with `state` or `error`. */
  isCallback?: AuthStartOptions["isCallback"];
  children?: ReactNode;
}

/** Makes `useAuth()` work below it; on the redirect URI it completes the sign-in (once, StrictMode or not). */
export function SvcProvider({ client, onSignIn, isCallback, children }: SvcProviderProps) {
  const store = authStore(client);
  // The latest onSignIn, read when the callback completes rather than captured at the first render.
  const latest = useRef(onSignIn);
  useEffect(() => {
    latest.current = onSignIn;
  });
  useEffect(() => {
    // start() runs once per client: StrictMode's second effect and other providers get its result.
    void store.start({ ...(isCallback ? { isCallback } : {}), onSignIn: (result) => latest.current?.(result) });
  }, [store, isCallback]);
  return <SvcContext.Provider value={store}>{children}</SvcContext.Provider>;
}

function useStore(hook: string): AuthStore {
  const store = useContext(SvcContext);
  if (!store) throw new Error(`${hook} must be used inside <SvcProvider client={…}>`);
  return store;
}

/** The state and the actions; the actions keep their identity across renders. */
export interface Auth extends AuthState {
  login(options?: LoginOptions): Promise<SignInResult | undefined>;
  logout(options?: LogoutOptions): Promise<{ url: string; state: string }>;
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
}

/** `{ isLoading, isAuthenticated, user, error, login, logout, getAccessToken }`; re-renders on change. */
export function useAuth(): Auth {
  const store = useStore("useAuth()");
  const state = useSyncExternalStore(store.subscribe, store.getState, store.getState);
  return useMemo(
    () => ({ ...state, login: store.login, logout: store.logout, getAccessToken: store.getAccessToken }),
    [state, store],
  );
}

/** The SvcClient itself, for what the hooks do not cover (`fetchUserInfo()`, `getAuthorizationHeaders()`…). */
export function useSvc(): SvcClient {
  return useStore("useSvc()").client;
}

export interface RequireAuthProps {
  children?: ReactNode;
  /** Shown while loading, while redirecting, and after a failure. */
  fallback?: ReactNode;
  /** Passed to `login()`; `returnTo` defaults to this page's path. */
  loginOptions?: LoginOptions;
}

/**
 * Renders its children when signed in; otherwise starts a redirect login (once). After a failed
 * sign-in it does not retry (that could loop): the fallback can show `useAuth().error`.
 */
export function RequireAuth({ children, fallback = null, loginOptions }: RequireAuthProps) {
  const { isLoading, isAuthenticated, error, login } = useAuth();
  const redirecting = useRef(false);
  const options = useRef(loginOptions);
  useEffect(() => {
    options.current = loginOptions;
  });
  useEffect(() => {
    if (isLoading || isAuthenticated || error || redirecting.current) return;
    redirecting.current = true;
    const location = (globalThis as { location?: Location }).location;
    const returnTo = location ? location.pathname + location.search + location.hash : undefined;
    // A failed login is in the state (error); the fallback shows it.
    login({ ...(returnTo === undefined ? {} : { returnTo }), ...options.current }).catch(() => undefined);
  }, [isLoading, isAuthenticated, error, login]);
  return <>{isAuthenticated ? children : fallback}</>;
}

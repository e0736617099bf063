// Solid idioms over @svc/client: a signal that follows the client's authStore, read through an
// object of getters (reactive wherever it is read, like Solid's props), a context provider and
// `useAuth()`. Plain TypeScript without JSX (`createComponent` is what JSX compiles to), so the
// package needs no Solid compiler.

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
import { type Accessor, type JSX, createComponent, createContext, createSignal, getOwner, onCleanup, useContext } from "solid-js";

export type { AuthStartOptions, AuthState, IdTokenClaims, LoginOptions, LogoutOptions, SignInResult, SvcClient } from "@svc/client";

/** The state's fields are getters over a signal: read them in JSX or an effect and they track. */
export interface SvcAuth {
  readonly isLoading: boolean;
  readonly isAuthenticated: boolean;
  readonly user: IdTokenClaims | null;
  readonly error: Error | null;
  /** The whole state as an accessor. */
  readonly state: Accessor<AuthState>;
  readonly client: SvcClient;
  login(options?: LoginOptions): Promise<SignInResult | undefined>;
  logout(options?: LogoutOptions): Promise<{ url: string; state: string }>;
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
}

/**
 * The reactive state of `client`. In a browser it completes the callback on the redirect URI,
 * else reads the stored tokens (once per client). Inside a component or root it stops following
 * the store when that owner is disposed.
 */
export function createSvc(client: SvcClient, options: AuthStartOptions = {}): SvcAuth {
  const store = authStore(client);
  // equals: false is not needed: the store hands out a new object per change and the same one otherwise.
  const [state, setState] = createSignal<AuthState>(store.getState());
  const stop = store.subscribe((next) => setState(() => next));
  if (getOwner()) onCleanup(stop);
  // Server rendering has no callback to complete and no tokens of the visitor's.
  if ((globalThis as { location?: unknown }).location) void store.start(options);
  return {
    get isLoading() {
      return state().isLoading;
    },
    get isAuthenticated() {
      return state().isAuthenticated;
    },
    get user() {
      return state().user;
    },
    get error() {
      return state().error;
    },
    state,
    client,
    login: store.login,
    logout: store.logout,
    getAccessToken: store.getAccessToken,
  };
}

const SvcContext = createContext<SvcAuth>();

export interface SvcProviderProps {
  /** The client, created once (module scope): `createSvcClient({ … })`. */
  client: SvcClient;
  /** Runs once the callback completed, e.g. to route to `result.returnTo`. */
  onSignIn?: (result: SignInResult) => void;
  /** Which URL is a callback; default: the client's redirect URI with `state` or `error`. */
  isCallback?: AuthStartOptions["isCallback"];
  children?: JSX.Element;
}

/** `<SvcProvider client={client}>…</SvcProvider>`: makes `useAuth()` work below it. */
export function SvcProvider(props: SvcProviderProps): JSX.Element {
  const auth = createSvc(props.client, {
    ...(props.isCallback ? { isCallback: props.isCallback } : {}),
    onSignIn: (result) => props.onSignIn?.(result),
  });
  return createComponent(SvcContext.Provider, {
    value: auth,
    get children() {
      return props.children;
    },
  });
}

/** The state (reactive getters) and the actions, below `<SvcProvider>`. */
export function useAuth(): SvcAuth {
  const auth = useContext(SvcContext);
  if (!auth) throw new Error("useAuth() must be used inside <SvcProvider client={…}>");
  return auth;
}

// The sign-in state a user interface renders, shared by the framework packages (@svc/react,
// @svc/vue, @svc/svelte, @svc/solid): each of them only maps this one observable snapshot onto
// its framework's reactivity, so the rules (complete the callback once, a refused refresh signs
// out, errors are state rather than crashes) live in one place and are tested once.

import type { LoginOptions, LogoutOptions, SignInResult, SvcClient } from "./client.js";
import { isLoginPopup } from "./client.js";
import { LoginRequiredError } from "./errors.js";
import type { IdTokenClaims } from "./idtoken.js";

/** What an interface shows; a new object on every change, the same one otherwise. */
export interface AuthState {
  /** True until the first check (the callback on the redirect URI, else the stored tokens) is done. */
  readonly isLoading: boolean;
  readonly isAuthenticated: boolean;
  /** The ID token's claims while signed in. */
  readonly user: IdTokenClaims | null;
  /** The last failure of the callback, a login, a token request or a logout; cleared by the next success. */
  readonly error: Error | null;
}

export interface AuthStartOptions {
  /**
   * Whether `url` is a sign-in callback to complete. Default: the redirect URI's origin and path
   * with a `state` or `error` parameter, except in the sign-in popup (its opener completes it).
   */
  isCallback?: (url: URL) => boolean;
  /** Runs once a callback completed, e.g. to route to `result.returnTo`. */
  onSignIn?: (result: SignInResult) => void;
}

export interface AuthStore {
  readonly client: SvcClient;
  getState(): AuthState;
  /** Calls `listener` with each new state; returns the unsubscribe function. */
  subscribe(listener: (state: AuthState) => void): () => void;
  /**
   * Completes the callback when this page is one, else reads the stored tokens. Runs once per
   * store: later calls (a second mount, React's StrictMode double effects) get the same result,
   * because a pending login is single-use and a second `handleCallback()` would fail.
   */
  start(options?: AuthStartOptions): Promise<AuthState>;
  /** `client.login()`; a popup sign-in updates the state when it resolves. */
  login(options?: LoginOptions): Promise<SignInResult | undefined>;
  /** `client.logout()`; the state is signed out even when the browser is not sent away. */
  logout(options?: LogoutOptions): Promise<{ url: string; state: string }>;
  /** `client.getAccessToken()`; a refused refresh (`LoginRequiredError`) signs the state out. */
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
}

const INITIAL: AuthState = Object.freeze({ isLoading: true, isAuthenticated: false, user: null, error: null });
const stores = new WeakMap<SvcClient, AuthStore>();

/**
 * The store of `client`: one per client object, so that every component, provider or plugin
 * instance built on the same client sees the same state and completes the callback once.
 */
export function authStore(client: SvcClient): AuthStore {
  let store = stores.get(client);
  if (!store) {
    store = createAuthStore(client);
    stores.set(client, store);
  }
  return store;
}

function createAuthStore(client: SvcClient): AuthStore {
  let state = INITIAL;
  let started: Promise<AuthState> | undefined;
  const listeners = new Set<(state: AuthState) => void>();

  function set(next: Partial<AuthState>): void {
    const merged = { ...state, ...next };
    if (merged.isLoading === state.isLoading && merged.isAuthenticated === state.isAuthenticated && merged.user === state.user && merged.error === state.error) return;
    state = Object.freeze(merged);
    for (const listener of [...listeners]) listener(state);
  }

  /** The stored tokens' view; the previous user object is kept when its claims did not change, so renders stay put. */
  async function sync(error: Error | null): Promise<void> {
    const isAuthenticated = await client.isAuthenticated().catch(() => false);
    const claims = isAuthenticated ? await client.getUser().catch(() => null) : null;
    const user = claims && state.user && JSON.stringify(claims) === JSON.stringify(state.user) ? state.user : claims;
    set({ isLoading: false, isAuthenticated, user, error });
  }

  async function initialise(options: AuthStartOptions): Promise<AuthState> {
    try {
      const href = (globalThis as { location?: Location }).location?.href;
      const url = href ? new URL(href) : undefined;
      const isCallback = options.isCallback ?? defaultIsCallback(client.redirectUri);
      if (url && isCallback(url)) {
        const result = await client.handleCallback();
        set({ isLoading: false, isAuthenticated: true, user: result.user ?? (await client.getUser()), error: null });
        options.onSignIn?.(result);
      } else {
        await sync(null);
      }
    } catch (error) {
      await sync(asError(error));
    }
    return state;
  }

  return {
    client,
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    start(options = {}) {
      started ??= initialise(options);
      return started;
    },
    async login(options) {
      try {
        const result = await client.login(options);
        if (result) set({ isLoading: false, isAuthenticated: true, user: result.user ?? (await client.getUser()), error: null });
        return result;
      } catch (error) {
        set({ error: asError(error) });
        throw error;
      }
    },
    async logout(options) {
      try {
        const result = await client.logout(options);
        await sync(null);
        return result;
      } catch (error) {
        // The client forgets the tokens before anything that can fail: signed out all the same.
        await sync(asError(error));
        throw error;
      }
    },
    async getAccessToken(options) {
      try {
        const token = await client.getAccessToken(options);
        // A refresh may bring a new ID token; the state follows it.
        await sync(null);
        return token;
      } catch (error) {
        if (error instanceof LoginRequiredError) await sync(error);
        else set({ error: asError(error) });
        throw error;
      }
    },
  };
}

function defaultIsCallback(redirectUri: string): (url: URL) => boolean {
  const target = new URL(redirectUri);
  return (url) =>
    url.origin === target.origin &&
    url.pathname === target.pathname &&
    (url.searchParams.has("state") || url.searchParams.has("error")) &&
    !isLoginPopup();
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

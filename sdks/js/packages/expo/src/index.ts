// @svc/expo: sign-in for an Expo / React Native application, the way RFC 8252 asks of native
// apps: the system browser's authentication session (expo-web-browser's openAuthSessionAsync:
// ASWebAuthenticationSession on iOS, Custom Tabs on Android — not a web view the app could
// read), back to a deep link (a private-use scheme, RFC 8252 §7.1), PKCE S256, state and nonce.
// The protocol steps are @svc/client's stateless flow helpers. Expo's modules are not
// dependencies: `openAuthSessionAsync` and the secure store are typed structurally and
// injected, so the package builds and is tested in Node (no device runs here).

import {
  type FetchLike,
  type IdTokenClaims,
  KeySet,
  LoginRequiredError,
  type ServerMetadata,
  type SigningAlgorithm,
  SvcError,
  TokenError,
  type TokenSet,
  createAuthorizationUrl,
  decodeJwtClaims,
  discover,
  exchangeCode,
  oauthSignOut,
  refreshTokens,
  revokeToken,
  validateCallback,
} from "@svc/client";
import { useSyncExternalStore } from "react";

/** What expo-web-browser's `openAuthSessionAsync(url, redirectUrl)` resolves to (the fields used). */
export type AuthSessionResult = { type: "success"; url: string } | { type: string };

/** The part of expo-secure-store used (Keychain on iOS, Keystore-encrypted on Android). */
export interface SecureStoreLike {
  getItemAsync(key: string): Promise<string | null>;
  setItemAsync(key: string, value: string): Promise<void>;
  deleteItemAsync(key: string): Promise<void>;
}

export interface ExpoAuthOptions {
  /** The tenant's issuer, exactly as its discovery document names it. */
  baseURL: string;
  /** A public (`token_endpoint_auth_method: none`) native application of svc. */
  clientId: string;
  /**
   * The deep link svc redirects to, registered exactly, e.g. `com.example.app:/oauth/callback`
   * (`makeRedirectUri({ scheme: "com.example.app", path: "oauth/callback" })` of expo-auth-session).
   */
  redirectUri: string;
  /** Default `openid profile email offline_access` (`offline_access` brings the refresh token). */
  scopes?: string[] | string;
  /** expo-web-browser's `WebBrowser.openAuthSessionAsync`. */
  openAuthSessionAsync: (url: string, redirectUrl: string) => Promise<AuthSessionResult>;
  /** expo-secure-store (`import * as SecureStore from "expo-secure-store"`); default: memory only. */
  secureStore?: SecureStoreLike;
  /** Where svc's end-session page returns (registered in `post_logout_redirect_uris`). */
  postLogoutRedirectUri?: string;
  /** Seconds before expiry at which `getAccessToken()` refreshes (default 30). */
  refreshLeeway?: number;
  idTokenSigningAlg?: SigningAlgorithm;
  fetch?: FetchLike;
}

export interface ExpoAuthState {
  /** `loading` until the stored session was read. */
  status: "loading" | "signed-in" | "signed-out";
  user: IdTokenClaims | null;
  /** The last failure of login() or a refresh, if any (cleared by the next success). */
  error: SvcError | null;
}

export interface ExpoAuth {
  /** Signs in in the system browser; rejects with SvcError `cancel`/`dismiss` when the person closes it. */
  login(options?: { extraParams?: Record<string, string | undefined> }): Promise<{ user: IdTokenClaims | undefined; tokens: TokenSet }>;
  /** A valid access token, refreshed when near expiry or when `forceRefresh`; LoginRequiredError when signed out. */
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
  /** Revokes the refresh token, forgets the tokens and, with `endSession`, ends svc's browser session too. */
  logout(options?: { endSession?: boolean }): Promise<void>;
  /** Reads the stored session (done once, lazily; call at start-up to leave `loading`). */
  restore(): Promise<ExpoAuthState>;
  getState(): ExpoAuthState;
  subscribe(listener: () => void): () => void;
  metadata(): Promise<ServerMetadata>;
}

const DEFAULT_SCOPES = "openid profile email offline_access";

/**
 * SecureStore keys allow only letters, digits, ".", "-" and "_", and values over 2048 bytes may
 * be refused on some devices: each token gets its own entry instead of one JSON blob.
 */
function keysFor(clientId: string) {
  const id = clientId.replace(/[^A-Za-z0-9._-]/g, "_");
  return { access: `svc.${id}.access`, refresh: `svc.${id}.refresh`, id: `svc.${id}.id_token` };
}

class MemoryStore implements SecureStoreLike {
  private readonly values = new Map<string, string>();
  async getItemAsync(key: string) {
    return this.values.get(key) ?? null;
  }
  async setItemAsync(key: string, value: string) {
    this.values.set(key, value);
  }
  async deleteItemAsync(key: string) {
    this.values.delete(key);
  }
}

export function createExpoAuth(options: ExpoAuthOptions): ExpoAuth {
  if (!options?.baseURL || !options.clientId || !options.redirectUri || typeof options.openAuthSessionAsync !== "function") {
    throw new TypeError("createExpoAuth needs baseURL, clientId, redirectUri and openAuthSessionAsync");
  }
  const fetchFn = options.fetch;
  const store = options.secureStore ?? new MemoryStore();
  const keys = keysFor(options.clientId);
  const leeway = (options.refreshLeeway ?? 30) * 1000;
  let metadataPromise: Promise<ServerMetadata> | undefined;
  let keySet: KeySet | undefined;
  let current: TokenSet | null = null;
  let restoring: Promise<ExpoAuthState> | undefined;
  let refreshing: Promise<TokenSet> | undefined;
  let state: ExpoAuthState = { status: "loading", user: null, error: null };
  const listeners = new Set<() => void>();
  const publish = (next: Partial<ExpoAuthState>) => {
    // A new object each time: useSyncExternalStore compares snapshots by identity.
    state = { ...state, ...next };
    for (const listener of listeners) listener();
  };

  const metadata = (): Promise<ServerMetadata> => {
    metadataPromise ??= discover(options.baseURL, fetchFn ? { fetch: fetchFn } : {}).catch((error: unknown) => {
      metadataPromise = undefined;
      throw error;
    });
    return metadataPromise;
  };
  const tokenOptions = async () => {
    const meta = await metadata();
    keySet ??= new KeySet(meta.jwks_uri, fetchFn ?? ((input, init) => globalThis.fetch(input, init)));
    return { clientId: options.clientId, keys: keySet, fetch: fetchFn, idTokenSigningAlg: options.idTokenSigningAlg };
  };

  async function save(tokens: TokenSet | null): Promise<void> {
    current = tokens;
    // What is saved now supersedes anything stored before: no later read of the store.
    restoring ??= Promise.resolve(state);
    if (!tokens) {
      await Promise.all([store.deleteItemAsync(keys.access), store.deleteItemAsync(keys.refresh), store.deleteItemAsync(keys.id)]);
      publish({ status: "signed-out", user: null });
      return;
    }
    await store.setItemAsync(keys.access, JSON.stringify({ accessToken: tokens.accessToken, tokenType: tokens.tokenType, expiresAt: tokens.expiresAt, scope: tokens.scope }));
    await (tokens.refreshToken ? store.setItemAsync(keys.refresh, tokens.refreshToken) : store.deleteItemAsync(keys.refresh));
    await (tokens.idToken ? store.setItemAsync(keys.id, tokens.idToken) : store.deleteItemAsync(keys.id));
    publish({ status: "signed-in", user: tokens.idTokenClaims ?? null, error: null });
  }

  function restore(): Promise<ExpoAuthState> {
    restoring ??= (async () => {
      try {
        const [access, refreshToken, idToken] = await Promise.all([store.getItemAsync(keys.access), store.getItemAsync(keys.refresh), store.getItemAsync(keys.id)]);
        if (access) {
          const parsed = JSON.parse(access) as Pick<TokenSet, "accessToken" | "tokenType" | "expiresAt" | "scope">;
          const tokens: TokenSet = { accessToken: parsed.accessToken, tokenType: parsed.tokenType, expiresAt: parsed.expiresAt };
          if (parsed.scope) tokens.scope = parsed.scope;
          if (refreshToken) tokens.refreshToken = refreshToken;
          if (idToken) {
            tokens.idToken = idToken;
            // Validated when it was received; the device's secure store is the trust boundary now.
            tokens.idTokenClaims = decodeJwtClaims(idToken) as IdTokenClaims;
          }
          // A session that can neither be used nor refreshed is no session.
          if (tokens.refreshToken || tokens.expiresAt > Date.now()) {
            current = tokens;
            publish({ status: "signed-in", user: tokens.idTokenClaims ?? null });
            return state;
          }
        }
      } catch {
        // A damaged entry: signed out, as if never stored.
      }
      publish({ status: "signed-out", user: null });
      return state;
    })();
    return restoring;
  }

  async function login(call: { extraParams?: Record<string, string | undefined> } = {}) {
    try {
      const meta = await metadata();
      const { url, pending } = await createAuthorizationUrl(meta, {
        clientId: options.clientId,
        redirectUri: options.redirectUri,
        scope: options.scopes ?? DEFAULT_SCOPES,
        ...(call.extraParams ? { extraParams: call.extraParams } : {}),
      });
      const result = await options.openAuthSessionAsync(url, options.redirectUri);
      if (result.type !== "success" || !("url" in result)) {
        throw new SvcError(result.type, `the sign-in did not complete (${result.type})`);
      }
      // The session returns whatever URL opened the app with our scheme: it must be our redirect URI.
      if (!result.url.startsWith(`${options.redirectUri}?`)) throw new SvcError("callback_error", "the sign-in came back to another address than the redirect URI");
      const code = validateCallback(meta, result.url, pending.state);
      const tokens = await exchangeCode(meta, code, pending, await tokenOptions());
      await save(tokens);
      return { user: tokens.idTokenClaims, tokens };
    } catch (error) {
      publish({ error: error instanceof SvcError ? error : new SvcError("login_failed", String(error), { cause: error }) });
      throw error;
    }
  }

  async function refresh(tokens: TokenSet): Promise<TokenSet> {
    if (!tokens.refreshToken) throw new LoginRequiredError("the access token expired and there is no refresh token");
    try {
      const renewed = await refreshTokens(await metadata(), tokens.refreshToken, {
        ...(await tokenOptions()),
        ...(tokens.idTokenClaims?.sub ? { subject: tokens.idTokenClaims.sub } : {}),
      });
      renewed.refreshToken ??= tokens.refreshToken;
      if (!renewed.idToken && tokens.idToken) {
        renewed.idToken = tokens.idToken;
        if (tokens.idTokenClaims) renewed.idTokenClaims = tokens.idTokenClaims;
      }
      await save(renewed);
      return renewed;
    } catch (error) {
      if (error instanceof TokenError && error.error === "invalid_grant") {
        await save(null);
        const ended = new LoginRequiredError("the session ended: the refresh token was refused", { cause: error });
        publish({ error: ended });
        throw ended;
      }
      throw error;
    }
  }

  return {
    login,
    restore,
    metadata,
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async getAccessToken({ forceRefresh = false } = {}) {
      await restore();
      const tokens = current;
      if (!tokens) throw new LoginRequiredError();
      if (!forceRefresh && tokens.expiresAt - leeway > Date.now()) return tokens.accessToken;
      // One refresh at a time: svc's refresh tokens rotate, a second use of the old one ends the family.
      refreshing ??= refresh(tokens).finally(() => (refreshing = undefined));
      return (await refreshing).accessToken;
    },
    async logout({ endSession = false } = {}) {
      await restore();
      const tokens = current;
      await save(null);
      if (!tokens) return;
      const meta = await metadata();
      await revokeToken(meta, tokens.refreshToken ?? tokens.accessToken, {
        clientId: options.clientId,
        tokenTypeHint: tokens.refreshToken ? "refresh_token" : "access_token",
        ...(fetchFn ? { fetch: fetchFn } : {}),
      });
      if (endSession && options.postLogoutRedirectUri) {
        const url = oauthSignOut(meta, {
          clientId: options.clientId,
          postLogoutRedirectUri: options.postLogoutRedirectUri,
          ...(tokens.idToken ? { idTokenHint: tokens.idToken } : {}),
        });
        await options.openAuthSessionAsync(url, options.postLogoutRedirectUri);
      }
    },
  };
}

/** The auth state in a component, re-rendered when it changes: `const { status, user } = useSvcAuth(auth)`. */
export function useSvcAuth(auth: ExpoAuth): ExpoAuthState {
  return useSyncExternalStore(auth.subscribe, auth.getState, auth.getState);
}

export { AuthorizationError, IssuerMismatchError, LoginRequiredError, StateMismatchError, SvcError, TokenError } from "@svc/client";
export type { IdTokenClaims, TokenSet } from "@svc/client";

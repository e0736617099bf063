// The stateful client an application holds: discovery once, login by redirect or popup, the
// callback, tokens kept in its storage and refreshed before they expire (one refresh at a time,
// across tabs), UserInfo and logout. Everything protocol-level is in flow.ts.

import { type ServerMetadata, discover } from "./discovery.js";
import { DPoPKey, serverOffersDPoP } from "./dpop.js";
import { randomToken } from "./encoding.js";
import { AuthorizationError, LoginRequiredError, PopupError, StateMismatchError, SvcError, TokenError } from "./errors.js";
import {
  type PendingLogin,
  type TokenSet,
  callbackParams,
  createAuthorizationUrl,
  exchangeCode,
  fetchUserInfo,
  oauthSignOut,
  refreshTokens,
  revokeToken,
  scopeString,
  validateCallback,
} from "./flow.js";
import { type FetchLike, defaultFetch } from "./http.js";
import type { IdTokenClaims } from "./idtoken.js";
import { KeySet, type SigningAlgorithm } from "./jwt.js";
import { withLock } from "./lock.js";
import { MemoryStorage, type SvcStorage, defaultTransientStorage } from "./storage.js";

export interface SvcClientOptions {
  /** The tenant's issuer, exactly as its discovery document names it (e.g. `https://acme.id.example`). */
  baseURL: string;
  oauth: {
    clientId: string;
    /** Registered exactly in the application's `redirect_uris`. */
    redirectUri: string;
    /** Default `openid profile email offline_access` (`offline_access` brings the refresh token). */
    scopes?: string[] | string;
    /** Where logout returns; registered in `post_logout_redirect_uris`. */
    postLogoutRedirectUri?: string;
    /** The application's `id_token_signed_response_alg` (default RS256, as svc's). */
    idTokenSigningAlg?: SigningAlgorithm;
  };
  /** Where tokens live; default: memory. */
  storage?: SvcStorage;
  /** Where the pending login lives across the redirect; default: sessionStorage, else memory. */
  transientStorage?: SvcStorage;
  fetch?: FetchLike;
  /** How the browser is sent somewhere; default `location.assign` in a page. */
  navigate?: (url: string) => void | Promise<void>;
  /** Seconds before expiry at which `getAccessToken()` refreshes (default 30). */
  refreshLeeway?: number;
  /** Seconds of clock skew tolerated on ID tokens (default 60). */
  clockSkew?: number;
  /** Use DPoP when the server offers it (default true). */
  dpop?: boolean;
}

export interface LoginOptions {
  /** Open the sign-in in a popup instead of redirecting this page. */
  popup?: boolean | { width?: number; height?: number; timeoutMs?: number };
  /** Kept with the pending login and returned by `handleCallback()`. */
  returnTo?: string;
  scopes?: string[] | string;
  /** `prompt`, `login_hint`, `organization`, `resource`, `acr_values`, `max_age`… */
  extraParams?: Record<string, string | undefined>;
}

export interface SignInResult {
  /** The validated ID token's claims. */
  user: IdTokenClaims | undefined;
  tokens: TokenSet;
  returnTo: string | undefined;
}

export interface LogoutOptions {
  postLogoutRedirectUri?: string;
  /** Sent to the end-session endpoint and returned on the post-logout redirect; generated when omitted. */
  state?: string;
  /** `false` returns the URL without sending the browser there. */
  navigate?: boolean;
}

const DEFAULT_SCOPES = "openid profile email offline_access";
const CALLBACK_PARAMS = ["code", "state", "iss", "error", "error_description", "error_uri", "session_state"];

export class SvcClient {
  readonly issuer: string;
  readonly clientId: string;
  /** The registered redirect URI this client's logins come back to. */
  readonly redirectUri: string;
  private readonly options: SvcClientOptions;
  private readonly fetchFn: FetchLike;
  private readonly storage: SvcStorage;
  private readonly transient: SvcStorage;
  private metadataPromise: Promise<ServerMetadata> | undefined;
  private keys: KeySet | undefined;
  private dpopKey: Promise<DPoPKey | undefined> | undefined;
  private refreshing: Promise<TokenSet> | undefined;

  constructor(options: SvcClientOptions) {
    if (!options?.baseURL || !options.oauth?.clientId || !options.oauth.redirectUri) {
      throw new TypeError("createSvcClient needs baseURL and oauth: { clientId, redirectUri }");
    }
    this.options = options;
    this.issuer = options.baseURL;
    this.clientId = options.oauth.clientId;
    this.redirectUri = options.oauth.redirectUri;
    this.fetchFn = options.fetch ?? defaultFetch();
    this.storage = options.storage ?? new MemoryStorage();
    this.transient = options.transientStorage ?? defaultTransientStorage();
  }

  private key(name: string): string {
    return `svc:${this.clientId}:${name}`;
  }

  /** The issuer's discovery document, read once (a failure is retried on the next call). */
  metadata(): Promise<ServerMetadata> {
    this.metadataPromise ??= discover(this.issuer, { fetch: this.fetchFn }).catch((error: unknown) => {
      this.metadataPromise = undefined;
      throw error;
    });
    return this.metadataPromise;
  }

  private async keySet(): Promise<KeySet> {
    this.keys ??= new KeySet((await this.metadata()).jwks_uri, this.fetchFn);
    return this.keys;
  }

  /** The DPoP key when the server offers DPoP and it is not turned off; undefined otherwise. */
  private dpop(): Promise<DPoPKey | undefined> {
    this.dpopKey ??= this.metadata().then((m) => (this.options.dpop !== false && serverOffersDPoP(m) ? DPoPKey.generate() : undefined));
    return this.dpopKey;
  }

  private async requestOptions() {
    return {
      clientId: this.clientId,
      fetch: this.fetchFn,
      keys: await this.keySet(),
      idTokenSigningAlg: this.options.oauth.idTokenSigningAlg,
      clockSkew: this.options.clockSkew,
      dpop: await this.dpop(),
    };
  }

  /** Builds the authorization URL and keeps its pending login (for servers, tests, custom navigation). */
  async createLoginUrl(options: LoginOptions = {}): Promise<string> {
    const metadata = await this.metadata();
    const { url, pending } = await createAuthorizationUrl(metadata, {
      clientId: this.clientId,
      redirectUri: this.options.oauth.redirectUri,
      scope: scopeString(options.scopes ?? this.options.oauth.scopes ?? DEFAULT_SCOPES),
      extraParams: options.extraParams,
    });
    if (options.returnTo !== undefined) pending.returnTo = options.returnTo;
    await this.transient.set(this.key(`login:${pending.state}`), JSON.stringify(pending));
    return url;
  }

  /**
   * Starts a sign-in. Redirect (default): sends this page to the sign-in and never resolves in
   * practice; call `handleCallback()` on the redirect URI's page. Popup: resolves with the
   * sign-in's result once the popup reaches the redirect URI (same origin as this page).
   */
  async login(options: LoginOptions = {}): Promise<SignInResult | undefined> {
    if (options.popup) {
      // Opened before any await: browsers allow popups only within the click's activation.
      const settings = typeof options.popup === "object" ? options.popup : {};
      const popup = openPopup(settings.width ?? 480, settings.height ?? 680);
      try {
        const url = await this.createLoginUrl(options);
        popup.location.href = url;
      } catch (error) {
        popup.close();
        throw error;
      }
      return this.waitForPopup(popup, settings.timeoutMs ?? 5 * 60 * 1000);
    }
    const url = await this.createLoginUrl(options);
    await this.navigator()(url);
    return undefined;
  }

  private navigator(): (url: string) => void | Promise<void> {
    if (this.options.navigate) return this.options.navigate;
    const location = (globalThis as { location?: Location }).location;
    if (location && typeof location.assign === "function") return (url) => location.assign(url);
    throw new SvcError("no_navigation", "no browser to navigate: pass `navigate` in the options, or use createLoginUrl()");
  }

  private waitForPopup(popup: Window, timeoutMs: number): Promise<SignInResult> {
    const target = new URL(this.options.oauth.redirectUri);
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        if (popup.closed) {
          clearInterval(timer);
          reject(new PopupError("popup_closed", "the sign-in popup was closed before it finished"));
          return;
        }
        let href: string | undefined;
        try {
          href = popup.location.href;
        } catch {
          // Cross-origin while the popup shows the sign-in pages.
        }
        if (href) {
          const at = new URL(href, target);
          if (at.origin === target.origin && at.pathname === target.pathname && (at.searchParams.has("state") || at.searchParams.has("error"))) {
            clearInterval(timer);
            popup.close();
            this.handleCallback(href).then(resolve, reject);
            return;
          }
        }
        if (Date.now() > deadline) {
          clearInterval(timer);
          popup.close();
          reject(new PopupError("popup_timeout", "the sign-in popup did not finish in time"));
        }
      }, 200);
    });
  }

  /**
   * Completes a sign-in from the redirect URI (default: this page's URL): the pending login of
   * the callback's `state`, then `iss` (RFC 9207), `error`, the code with its PKCE verifier and
   * the ID token with its nonce. On success the tokens are stored and, when the URL is this
   * page's, the code and state are taken out of the address bar.
   */
  async handleCallback(url?: string | URL): Promise<SignInResult> {
    const location = (globalThis as { location?: Location }).location;
    const callback = url?.toString() ?? location?.href;
    if (!callback) throw new TypeError("handleCallback needs the callback URL outside a browser");
    const metadata = await this.metadata();
    const state = callbackParams(callback).get("state");
    const stored = state ? await this.transient.get(this.key(`login:${state}`)) : null;
    const pending = parsePending(stored);
    if (!pending) throw new StateMismatchError();
    let code: string;
    try {
      code = validateCallback(metadata, callback, pending.state);
    } catch (error) {
      // The server answered this login with an error: it is over. Other failures (a forged iss)
      // leave it pending, since they are not the server's answer.
      if (error instanceof AuthorizationError) await this.transient.remove(this.key(`login:${pending.state}`));
      throw error;
    }
    // Single use from here on: the state answered, whatever the code exchange does next.
    await this.transient.remove(this.key(`login:${pending.state}`));
    const tokens = await exchangeCode(metadata, code, pending, await this.requestOptions()).finally(() => {
      if (location && url === undefined) cleanAddressBar(location);
    });
    await this.saveTokens(tokens);
    return { user: tokens.idTokenClaims, tokens, returnTo: pending.returnTo };
  }

  /** The stored tokens, or null when signed out. */
  async getTokens(): Promise<TokenSet | null> {
    const raw = await this.storage.get(this.key("tokens"));
    if (!raw) return null;
    try {
      return JSON.parse(raw) as TokenSet;
    } catch {
      await this.storage.remove(this.key("tokens"));
      return null;
    }
  }

  private async saveTokens(tokens: TokenSet): Promise<void> {
    await this.storage.set(this.key("tokens"), JSON.stringify(tokens));
  }

  /** The claims of the signed-in person's ID token, or null. */
  async getUser(): Promise<IdTokenClaims | null> {
    return (await this.getTokens())?.idTokenClaims ?? null;
  }

  /** Whether there are tokens that can still give an access token (without contacting the server). */
  async isAuthenticated(): Promise<boolean> {
    const tokens = await this.getTokens();
    return !!tokens && (!!tokens.refreshToken || this.fresh(tokens));
  }

  private fresh(tokens: TokenSet): boolean {
    return tokens.expiresAt - (this.options.refreshLeeway ?? 30) * 1000 > Date.now();
  }

  /**
   * A valid access token: the stored one, or a new one from the refresh token when it expires
   * within `refreshLeeway`. Concurrent callers share one refresh; the rotated refresh token
   * replaces the old one. A refused refresh token signs out: LoginRequiredError.
   */
  async getAccessToken(options: { forceRefresh?: boolean } = {}): Promise<string> {
    const tokens = await this.getTokens();
    if (!tokens) throw new LoginRequiredError();
    if (!options.forceRefresh && this.fresh(tokens)) return tokens.accessToken;
    this.refreshing ??= withLock(`svc-refresh:${this.issuer}:${this.clientId}`, () => this.refresh(tokens, !!options.forceRefresh)).finally(() => {
      this.refreshing = undefined;
    });
    return (await this.refreshing).accessToken;
  }

  private async refresh(seen: TokenSet, force: boolean): Promise<TokenSet> {
    // Read again under the lock: another tab sharing the store may have rotated meanwhile.
    const current = await this.getTokens();
    if (!current) throw new LoginRequiredError();
    const rotatedElsewhere = current.refreshToken !== seen.refreshToken || current.accessToken !== seen.accessToken;
    if ((rotatedElsewhere || !force) && this.fresh(current)) return current;
    if (!current.refreshToken) throw new LoginRequiredError("the access token expired and there is no refresh token");
    let next: TokenSet;
    try {
      next = await refreshTokens(await this.metadata(), current.refreshToken, {
        ...(await this.requestOptions()),
        subject: current.idTokenClaims?.sub,
      });
    } catch (error) {
      if (error instanceof TokenError && error.error === "invalid_grant") {
        await this.storage.remove(this.key("tokens"));
        throw new LoginRequiredError("the session ended: the refresh token was refused", { cause: error });
      }
      throw error;
    }
    // No refresh token in the answer means the family ended (the old one is spent either way).
    const merged: TokenSet = { ...next };
    if (!next.idToken && current.idToken) {
      merged.idToken = current.idToken;
      if (current.idTokenClaims) merged.idTokenClaims = current.idTokenClaims;
    }
    await this.saveTokens(merged);
    return merged;
  }

  /** The headers that present the access token to an API (`DPoP` with a proof when the token is DPoP-bound). */
  async getAuthorizationHeaders(method = "GET", url?: string): Promise<Record<string, string>> {
    const accessToken = await this.getAccessToken();
    const tokens = await this.getTokens();
    const dpop = await this.dpop();
    if (dpop && tokens?.tokenType.toLowerCase() === "dpop") {
      if (!url) throw new TypeError("a DPoP-bound token needs the request's URL for its proof");
      return { authorization: `DPoP ${accessToken}`, dpop: await dpop.proof(method, url, accessToken) };
    }
    return { authorization: `Bearer ${accessToken}` };
  }

  /** UserInfo for the signed-in person; refused when it names another subject than the ID token. */
  async fetchUserInfo(): Promise<Record<string, unknown>> {
    const accessToken = await this.getAccessToken();
    const tokens = await this.getTokens();
    return fetchUserInfo(await this.metadata(), accessToken, {
      expectedSubject: tokens?.idTokenClaims?.sub,
      fetch: this.fetchFn,
      tokenType: tokens?.tokenType,
      dpop: await this.dpop(),
    });
  }

  /**
   * Signs out: forgets the tokens, revokes the refresh token (best effort, when the server has a
   * revocation endpoint) and sends the browser to the end-session endpoint (RP-initiated
   * logout). Returns that URL and the state it carries.
   */
  async logout(options: LogoutOptions = {}): Promise<{ url: string; state: string }> {
    const metadata = await this.metadata();
    const tokens = await this.getTokens();
    await this.storage.remove(this.key("tokens"));
    if (tokens?.refreshToken && metadata.revocation_endpoint) {
      await revokeToken(metadata, tokens.refreshToken, { clientId: this.clientId, tokenTypeHint: "refresh_token", fetch: this.fetchFn }).catch(() => undefined);
    }
    const state = options.state ?? randomToken(16);
    const postLogoutRedirectUri = options.postLogoutRedirectUri ?? this.options.oauth.postLogoutRedirectUri;
    const url = oauthSignOut(metadata, {
      clientId: this.clientId,
      idTokenHint: tokens?.idToken,
      postLogoutRedirectUri,
      state,
    });
    if (options.navigate !== false) await this.navigator()(url);
    return { url, state };
  }
}

/** A stored pending login, or undefined when there is none or it is not one (a corrupted store). */
function parsePending(stored: string | null | undefined): PendingLogin | undefined {
  if (!stored) return undefined;
  try {
    const pending = JSON.parse(stored) as PendingLogin;
    return typeof pending?.state === "string" && typeof pending.codeVerifier === "string" ? pending : undefined;
  } catch {
    return undefined;
  }
}

const POPUP_NAME = "svc-login";

/**
 * Whether this page is the sign-in popup of `login({ popup: true })`. Its opener reads the
 * callback from it and completes the sign-in, so the redirect URI's page must not call
 * `handleCallback()` here: the code would be spent twice, and svc revokes what a reused code
 * issued.
 */
export function isLoginPopup(): boolean {
  const view = globalThis as { name?: string; opener?: unknown };
  return view.name === POPUP_NAME && !!view.opener;
}

function openPopup(width: number, height: number): Window {
  const view = globalThis as unknown as Window;
  if (typeof view.open !== "function") throw new PopupError("popup_blocked", "popups need a browser window");
  const left = Math.max(0, (view.screenX ?? 0) + ((view.outerWidth ?? width) - width) / 2);
  const top = Math.max(0, (view.screenY ?? 0) + ((view.outerHeight ?? height) - height) / 2);
  const popup = view.open("about:blank", POPUP_NAME, `popup,width=${width},height=${height},left=${left},top=${top}`);
  if (!popup) throw new PopupError("popup_blocked", "the browser blocked the sign-in popup");
  return popup;
}

/** Takes the code and state out of the address bar and history, so a reload or a shared link cannot replay them. */
function cleanAddressBar(location: Location): void {
  const history = (globalThis as { history?: History }).history;
  if (!history?.replaceState) return;
  const url = new URL(location.href);
  for (const name of CALLBACK_PARAMS) url.searchParams.delete(name);
  history.replaceState(history.state, "", url.toString());
}

/** The factory: `createSvcClient({ baseURL, oauth: { clientId, redirectUri, scopes } })`. */
export function createSvcClient(options: SvcClientOptions): SvcClient {
  return new SvcClient(options);
}

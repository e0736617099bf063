// @svc/electron: sign-in for a desktop application's Electron main process, the way RFC 8252
// (OAuth 2.0 for Native Apps) asks: the person signs in in their system browser (§8.12: never an
// embedded web view, whose page the application could read), which comes back to a loopback
// HTTP server the application listens on for this one login (§7.3), with PKCE S256 (§8.1), state
// and nonce. The protocol steps are @svc/client's stateless flow helpers; this package owns the
// loopback server, the token lifecycle and where tokens are kept. Electron itself is not a
// dependency: the few APIs used (`shell.openExternal`, `safeStorage`) are typed structurally and
// injected, so this package works (and is tested) in plain Node too.

import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { dirname } from "node:path";
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
  discover,
  exchangeCode,
  fetchUserInfo,
  oauthSignOut,
  refreshTokens,
  revokeToken,
  validateCallback,
} from "@svc/client";

/** The part of Electron's `safeStorage` used (OS keychain-backed encryption). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Uint8Array;
  decryptString(encrypted: Buffer): string;
}

/** Where the tokens survive a restart: a file holding them encrypted by `safeStorage`. */
export interface EncryptedFileStorage {
  safeStorage: SafeStorageLike;
  /** e.g. `path.join(app.getPath("userData"), "svc-session.bin")`; written with mode 0600. */
  path: string;
}

export interface ElectronAuthOptions {
  /** The tenant's issuer, exactly as its discovery document names it. */
  baseURL: string;
  /** A public (`token_endpoint_auth_method: none`) native application of svc. */
  clientId: string;
  /** Default `openid profile email offline_access` (`offline_access` brings the refresh token). */
  scopes?: string[] | string;
  /** Opens a URL in the system browser: Electron's `shell.openExternal`. */
  openExternal: (url: string) => unknown;
  /** Default: memory only (signed out when the application quits). */
  storage?: EncryptedFileStorage;
  /**
   * The loopback port. Default 0: an ephemeral port chosen by the OS, as RFC 8252 §7.3 intends;
   * svc accepts any port for a redirect URI registered as `http://127.0.0.1/callback`. A fixed
   * port is for authorization servers that compare loopback ports exactly.
   */
  port?: number;
  /** The callback's path on the loopback server (default `/callback`). */
  callbackPath?: string;
  /** How long login() waits for the browser to come back (default 5 minutes). */
  timeoutMs?: number;
  /** Seconds before expiry at which `getAccessToken()` refreshes (default 30). */
  refreshLeeway?: number;
  /** The application's `id_token_signed_response_alg` (default RS256, as svc's). */
  idTokenSigningAlg?: SigningAlgorithm;
  /** The page shown in the browser after the callback; `ok` false when the sign-in failed. */
  page?: (ok: boolean, message: string) => string;
  fetch?: FetchLike;
}

export interface ElectronLoginOptions {
  /** `prompt`, `login_hint`, `organization`, `acr_values`, `max_age`… */
  extraParams?: Record<string, string | undefined>;
}

export interface ElectronSignIn {
  user: IdTokenClaims | undefined;
  tokens: TokenSet;
}

export interface ElectronLogoutOptions {
  /** Also end the person's session at svc by opening its end-session page in the browser (default false). */
  endSession?: boolean;
  /** Where svc's end-session page returns; registered in `post_logout_redirect_uris`. */
  postLogoutRedirectUri?: string;
}

export interface ElectronAuth {
  /** Signs in through the system browser; rejects on a refused, forged or timed-out callback. */
  login(options?: ElectronLoginOptions): Promise<ElectronSignIn>;
  /** A valid access token, refreshed when near expiry or when `forceRefresh`; LoginRequiredError when signed out. */
  getAccessToken(options?: { forceRefresh?: boolean }): Promise<string>;
  /** The signed-in person's ID token claims, or null. */
  getUser(): Promise<IdTokenClaims | null>;
  /** UserInfo with the current access token. */
  fetchUserInfo(): Promise<Record<string, unknown>>;
  /** Revokes the refresh token at svc (ending its whole family) and forgets the tokens. */
  logout(options?: ElectronLogoutOptions): Promise<void>;
  /** The issuer's discovery document (read once). */
  metadata(): Promise<ServerMetadata>;
}

const DEFAULT_SCOPES = "openid profile email offline_access";
/** The stored file's shape; a file of another version is ignored (signed out). */
const FORMAT = 1;

interface Stored {
  v: number;
  tokens: TokenSet;
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

function defaultPage(ok: boolean, message: string): string {
  return `<!doctype html><meta charset="utf-8"><title>${ok ? "Signed in" : "Sign-in failed"}</title><h1 id="result">${ok ? "signed-in" : "failed"}</h1><p id="message">${escapeHtml(message)}</p>`;
}

function answer(response: ServerResponse, status: number, html: string): void {
  // No caching and no referrer: the URL carried the authorization code.
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    connection: "close",
  });
  response.end(html);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // 127.0.0.1, not localhost (RFC 8252 §8.3): a name can resolve elsewhere or to another stack.
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      if (address && typeof address === "object") resolve(address.port);
      else reject(new Error("the loopback server has no port"));
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // The browser may keep its connection alive; the login is over, so are they.
    server.closeAllConnections();
  });
}

/** `createElectronAuth({ baseURL, clientId, openExternal: shell.openExternal })` in the main process. */
export function createElectronAuth(options: ElectronAuthOptions): ElectronAuth {
  if (!options?.baseURL || !options.clientId || typeof options.openExternal !== "function") {
    throw new TypeError("createElectronAuth needs baseURL, clientId and openExternal");
  }
  const fetchFn = options.fetch;
  const scope = options.scopes ?? DEFAULT_SCOPES;
  const callbackPath = options.callbackPath ?? "/callback";
  const leeway = (options.refreshLeeway ?? 30) * 1000;
  const render = options.page ?? defaultPage;
  let metadataPromise: Promise<ServerMetadata> | undefined;
  let keys: KeySet | undefined;
  // undefined: not read yet; null: signed out.
  let current: TokenSet | null | undefined;
  let refreshing: Promise<TokenSet> | undefined;
  let loginInFlight = false;

  const metadata = (): Promise<ServerMetadata> => {
    metadataPromise ??= discover(options.baseURL, fetchFn ? { fetch: fetchFn } : {}).catch((error: unknown) => {
      metadataPromise = undefined;
      throw error;
    });
    return metadataPromise;
  };
  const tokenOptions = async () => {
    const meta = await metadata();
    keys ??= new KeySet(meta.jwks_uri, fetchFn ?? ((input, init) => globalThis.fetch(input, init)));
    return { clientId: options.clientId, keys, fetch: fetchFn, idTokenSigningAlg: options.idTokenSigningAlg };
  };

  async function load(): Promise<TokenSet | null> {
    if (current !== undefined) return current;
    current = null;
    const storage = options.storage;
    if (!storage) return current;
    let data: Buffer;
    try {
      data = await readFile(storage.path);
    } catch {
      return current;
    }
    try {
      const stored = JSON.parse(storage.safeStorage.decryptString(data)) as Stored;
      if (stored.v === FORMAT && typeof stored.tokens?.accessToken === "string") current = stored.tokens;
    } catch {
      // Unreadable (another OS user's keychain, a damaged file): signed out, as if never stored.
    }
    return current;
  }

  async function save(tokens: TokenSet | null): Promise<void> {
    current = tokens;
    const storage = options.storage;
    if (!storage) return;
    if (!tokens) {
      await rm(storage.path, { force: true });
      return;
    }
    // Never write tokens in the clear: without OS encryption they stay in memory only.
    if (!storage.safeStorage.isEncryptionAvailable()) return;
    const stored: Stored = { v: FORMAT, tokens };
    const encrypted = storage.safeStorage.encryptString(JSON.stringify(stored));
    await mkdir(dirname(storage.path), { recursive: true });
    // Written aside then renamed: a crash mid-write leaves the old session, not half of one.
    const temp = `${storage.path}.${process.pid}.tmp`;
    await writeFile(temp, encrypted, { mode: 0o600 });
    await rename(temp, storage.path);
  }

  async function login(call: ElectronLoginOptions = {}): Promise<ElectronSignIn> {
    // One loopback server at a time: a second login would race the first for the browser.
    if (loginInFlight) throw new SvcError("login_in_progress", "a login is already waiting for the browser");
    loginInFlight = true;
    const meta = await metadata().catch((error: unknown) => {
      loginInFlight = false;
      throw error;
    });
    let settle!: { resolve: (code: string) => void; reject: (error: unknown) => void };
    const callback = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    // A forged callback can arrive while openExternal() is still pending: handled below, not unhandled.
    callback.catch(() => undefined);
    let answered = false;
    let pendingState = "";
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? "/", "http://127.0.0.1");
      if (request.method !== "GET" || url.pathname !== callbackPath) {
        // A favicon or a stray probe: not the callback, and it must not spend it.
        answer(response, 404, render(false, "not found"));
        return;
      }
      if (answered) {
        // The callback is single-use: a replay (or a second tab) gets nothing.
        answer(response, 409, render(false, "this sign-in was already handled; return to the application"));
        return;
      }
      answered = true;
      try {
        const code = validateCallback(meta, url, pendingState);
        answer(response, 200, render(true, "You are signed in; you can close this tab and return to the application."));
        settle.resolve(code);
      } catch (error) {
        const reason = error instanceof SvcError ? error.code : "callback_error";
        answer(response, 400, render(false, `The sign-in failed (${reason}); return to the application and try again.`));
        settle.reject(error);
      }
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const port = await listen(server, options.port ?? 0);
      const redirectUri = `http://127.0.0.1:${port}${callbackPath}`;
      const { url, pending } = await createAuthorizationUrl(meta, {
        clientId: options.clientId,
        redirectUri,
        scope,
        ...(call.extraParams ? { extraParams: call.extraParams } : {}),
      });
      pendingState = pending.state;
      const timeoutMs = options.timeoutMs ?? 300_000;
      timer = setTimeout(() => settle.reject(new SvcError("timeout", `no sign-in came back within ${timeoutMs} ms`)), timeoutMs);
      await options.openExternal(url);
      const code = await callback;
      clearTimeout(timer);
      await close(server);
      const tokens = await exchangeCode(meta, code, pending, await tokenOptions());
      await save(tokens);
      return { user: tokens.idTokenClaims, tokens };
    } finally {
      clearTimeout(timer);
      if (server.listening) await close(server);
      loginInFlight = false;
    }
  }

  async function refresh(tokens: TokenSet): Promise<TokenSet> {
    if (!tokens.refreshToken) throw new LoginRequiredError("the access token expired and there is no refresh token");
    const meta = await metadata();
    try {
      const renewed = await refreshTokens(meta, tokens.refreshToken, {
        ...(await tokenOptions()),
        ...(tokens.idTokenClaims?.sub ? { subject: tokens.idTokenClaims.sub } : {}),
      });
      // svc may omit what did not change; keep the person and the ID token (logout's hint).
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
        throw new LoginRequiredError("the session ended: the refresh token was refused", { cause: error });
      }
      throw error;
    }
  }

  async function getAccessToken({ forceRefresh = false } = {}): Promise<string> {
    const tokens = await load();
    if (!tokens) throw new LoginRequiredError();
    if (!forceRefresh && tokens.expiresAt - leeway > Date.now()) return tokens.accessToken;
    // One refresh at a time: svc's refresh tokens rotate, a second use of the old one ends the family.
    refreshing ??= refresh(tokens).finally(() => (refreshing = undefined));
    return (await refreshing).accessToken;
  }

  return {
    login,
    getAccessToken,
    metadata,
    async getUser() {
      return (await load())?.idTokenClaims ?? null;
    },
    async fetchUserInfo() {
      const token = await getAccessToken();
      const sub = current?.idTokenClaims?.sub;
      return fetchUserInfo(await metadata(), token, { ...(sub ? { expectedSubject: sub } : {}), ...(fetchFn ? { fetch: fetchFn } : {}) });
    },
    async logout({ endSession = false, postLogoutRedirectUri }: ElectronLogoutOptions = {}) {
      const tokens = await load();
      await save(null);
      if (!tokens) return;
      const meta = await metadata();
      const revoke = tokens.refreshToken ?? tokens.accessToken;
      await revokeToken(meta, revoke, {
        clientId: options.clientId,
        tokenTypeHint: tokens.refreshToken ? "refresh_token" : "access_token",
        ...(fetchFn ? { fetch: fetchFn } : {}),
      });
      if (endSession) {
        await options.openExternal(
          oauthSignOut(meta, {
            clientId: options.clientId,
            ...(tokens.idToken ? { idTokenHint: tokens.idToken } : {}),
            ...(postLogoutRedirectUri ? { postLogoutRedirectUri } : {}),
          }),
        );
      }
    },
  };
}

export { AuthorizationError, IssuerMismatchError, LoginRequiredError, StateMismatchError, SvcError, TokenError } from "@svc/client";
export type { IdTokenClaims, TokenSet } from "@svc/client";

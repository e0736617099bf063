// The options of a server-side sign-in (one object, defined once in the application and given
// to every entry point of a framework adapter such as @svc/next or @svc/sveltekit), their
// environment defaults, and what is shared per issuer across requests: the discovery document
// and the key set (fetched once, not per request).

import { type FetchLike, KeySet, type ServerMetadata, type SigningAlgorithm, discover } from "../index.js";

export interface ServerAuthOptions {
  /** svc's issuer URL, exactly as its discovery document names it. Default: `SVC_ISSUER`. */
  issuer?: string;
  /** The application's client_id. Default: `SVC_CLIENT_ID`. */
  clientId?: string;
  /**
   * The application's client secret when it is registered as a confidential client
   * (`client_secret_basic`). Default: `SVC_CLIENT_SECRET`; without one the application is a
   * public client (PKCE only).
   */
  clientSecret?: string;
  /**
   * The key of the sealed cookies: at least 32 bytes, e.g. `openssl rand -base64 32`. Several
   * (the current first) rotate it without signing everyone out. Default: `SVC_SESSION_SECRET`.
   */
  secret?: string | string[];
  /**
   * The application's public origin (`https://app.example`), used for the redirect URI, the
   * post-logout URI and the same-origin check of logout. Default: `SVC_APP_URL`, else the
   * origin of each request — set it behind a proxy that rewrites Host.
   */
  appUrl?: string;
  /** Where the login, callback, logout, session and refresh routes live. Default `/api/auth`. */
  basePath?: string;
  /** Default `openid profile email offline_access` (offline_access: a refresh token). */
  scope?: string | string[];
  /** More authorization request parameters (`prompt`, `acr_values`, `organization`…). */
  authorizationParams?: Record<string, string>;
  /** Where the browser lands after logout (registered at svc as a post-logout redirect URI with the origin). Default `/`. */
  postLogoutPath?: string;
  /** Where a failed sign-in lands, with `?svc_error=<code>` (e.g. `state_mismatch`). Default `/`. */
  errorPath?: string;
  /** The session's lifetime in seconds from sign-in, refreshes included. Default 7 days. */
  sessionMaxAge?: number;
  /** The session cookie's name (`<name>.0`, `<name>.1`… when it is larger than one cookie). Default `svc_rp_session` (not `svc_session`: svc names its own hosted-page session so, and cookies of one host are shared across ports). */
  cookieName?: string;
  /** The application's `id_token_signed_response_alg` (default RS256). */
  idTokenSigningAlg?: SigningAlgorithm;
  /** Refresh when the access token has fewer seconds left than this. Default 60. */
  refreshBefore?: number;
  /** For tests and proxies: the fetch used for every request to svc. */
  fetch?: FetchLike;
}

/** The options with their defaults applied (not part of the public API). */
export interface Config {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  secrets: string[];
  appUrl: string | undefined;
  basePath: string;
  scope: string | string[];
  authorizationParams: Record<string, string>;
  postLogoutPath: string;
  errorPath: string;
  sessionMaxAge: number;
  cookieName: string;
  loginCookieName: string;
  idTokenSigningAlg: SigningAlgorithm | undefined;
  refreshBefore: number;
  fetch: FetchLike;
}

function env(name: string): string | undefined {
  // `process` is absent in some Edge builds; the options then have to be given explicitly.
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value ? value : undefined;
}

const resolved = new WeakMap<ServerAuthOptions, Config>();

/**
 * The options with their defaults. Read at the first request, not at import: production builds
 * (`next build`, `vite build`) import server modules without the runtime environment.
 */
export function configOf(options: ServerAuthOptions): Config {
  const cached = resolved.get(options);
  if (cached) return cached;
  const issuer = options.issuer ?? env("SVC_ISSUER");
  const clientId = options.clientId ?? env("SVC_CLIENT_ID");
  const secret = options.secret ?? env("SVC_SESSION_SECRET");
  if (!issuer) throw new TypeError("svc: no issuer (options.issuer or SVC_ISSUER)");
  if (!clientId) throw new TypeError("svc: no clientId (options.clientId or SVC_CLIENT_ID)");
  if (!secret || secret.length === 0) throw new TypeError("svc: no session secret (options.secret or SVC_SESSION_SECRET)");
  const basePath = (options.basePath ?? "/api/auth").replace(/\/+$/, "");
  if (!basePath.startsWith("/")) throw new TypeError("svc: basePath must start with /");
  const fetchFn: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const cookieName = options.cookieName ?? "svc_rp_session";
  const config: Config = {
    issuer,
    clientId,
    clientSecret: options.clientSecret ?? env("SVC_CLIENT_SECRET"),
    secrets: typeof secret === "string" ? [secret] : secret,
    appUrl: (options.appUrl ?? env("SVC_APP_URL"))?.replace(/\/+$/, ""),
    basePath,
    scope: options.scope ?? "openid profile email offline_access",
    authorizationParams: options.authorizationParams ?? {},
    postLogoutPath: options.postLogoutPath ?? "/",
    errorPath: options.errorPath ?? "/",
    sessionMaxAge: options.sessionMaxAge ?? 7 * 24 * 3600,
    cookieName,
    loginCookieName: `${cookieName}_login`,
    idTokenSigningAlg: options.idTokenSigningAlg,
    refreshBefore: options.refreshBefore ?? 60,
    fetch: fetchFn,
  };
  resolved.set(options, config);
  return config;
}

interface IssuerState {
  metadata: Promise<ServerMetadata>;
  keys?: KeySet;
}
const issuers = new Map<string, IssuerState>();

/** The issuer's discovery document, read once per process (again after a failure). */
export async function metadataOf(config: Config): Promise<ServerMetadata> {
  const id = `${config.issuer}\u0000${config.clientId}`;
  let state = issuers.get(id);
  if (!state) {
    state = { metadata: discover(config.issuer, { fetch: config.fetch }) };
    issuers.set(id, state);
    state.metadata.catch(() => issuers.delete(id));
  }
  return state.metadata;
}

/** The issuer's key set, shared by every request (it refetches on an unknown kid itself). */
export async function keysOf(config: Config): Promise<KeySet> {
  const metadata = await metadataOf(config);
  const state = issuers.get(`${config.issuer}\u0000${config.clientId}`);
  if (state && !state.keys) state.keys = new KeySet(metadata.jwks_uri, config.fetch);
  return state?.keys ?? new KeySet(metadata.jwks_uri, config.fetch);
}

/**
 * The fetch for the token and revocation endpoints: with a client secret it adds
 * client_secret_basic (RFC 6749 §2.3.1) to those requests only, never to UserInfo or discovery.
 */
export function clientFetch(config: Config, metadata: ServerMetadata): FetchLike {
  const secret = config.clientSecret;
  if (!secret) return config.fetch;
  const authenticated = new Set([metadata.token_endpoint, metadata.revocation_endpoint].filter(Boolean));
  const basic = `Basic ${btoa(`${formEncode(config.clientId)}:${formEncode(secret)}`)}`;
  return (input, init) => {
    if (!authenticated.has(input.toString()) || init?.method !== "POST") return config.fetch(input, init);
    const headers = new Headers(init.headers);
    headers.set("authorization", basic);
    return config.fetch(input, { ...init, headers });
  };
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks for the Basic credentials. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** Test hook: forget the discovery documents and key sets. */
export function forgetIssuers(): void {
  issuers.clear();
}

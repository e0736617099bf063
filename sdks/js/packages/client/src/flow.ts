// The stateless building blocks of the code flow for a public client: the authorization URL
// (PKCE S256, state, nonce), the callback checks (state, RFC 9207 iss, error), the token
// endpoint (code, refresh, with DPoP when a key is given), revocation, UserInfo and the
// RP-initiated logout URL. The stateful client (client.ts) composes these; applications with
// their own storage can use them directly.

import type { ServerMetadata } from "./discovery.js";
import type { DPoPKey } from "./dpop.js";
import { randomToken, timingSafeEqual } from "./encoding.js";
import { AuthorizationError, CallbackError, IdTokenError, IssuerMismatchError, StateMismatchError, TokenError } from "./errors.js";
import { type FetchLike, defaultFetch, errorFrom, postForm, readJson, send } from "./http.js";
import { type IdTokenClaims, validateIdToken } from "./idtoken.js";
import { KeySet, type SigningAlgorithm } from "./jwt.js";
import { codeChallengeS256, createCodeVerifier } from "./pkce.js";

/** Parameters this package sets itself and extra parameters may not replace. */
const RESERVED = new Set(["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"]);

export interface AuthorizationUrlOptions {
  clientId: string;
  redirectUri: string;
  /** Space-separated or a list; `openid` adds a nonce. */
  scope: string | string[];
  /** Generated (256 bits) when omitted. */
  state?: string;
  nonce?: string;
  codeVerifier?: string;
  /** More parameters: `prompt`, `login_hint`, `organization`, `resource`, `acr_values`… */
  extraParams?: Record<string, string | undefined>;
}

/** What must be kept until the callback (in the browser's session storage, not in the URL). */
export interface PendingLogin {
  state: string;
  nonce?: string;
  codeVerifier: string;
  redirectUri: string;
  /** Where the application wanted to be after sign-in; carried for it, never used here. */
  returnTo?: string;
  createdAt: number;
}

export function scopeString(scope: string | string[]): string {
  return (Array.isArray(scope) ? scope : scope.split(/\s+/)).filter(Boolean).join(" ");
}

/** The authorization URL and the pending login to keep for `validateCallback` / `exchangeCode`. */
export async function createAuthorizationUrl(
  metadata: ServerMetadata,
  options: AuthorizationUrlOptions,
): Promise<{ url: string; pending: PendingLogin }> {
  const scope = scopeString(options.scope);
  const codeVerifier = options.codeVerifier ?? createCodeVerifier();
  const state = options.state ?? randomToken();
  const nonce = scope.split(" ").includes("openid") ? (options.nonce ?? randomToken()) : undefined;
  const url = new URL(metadata.authorization_endpoint);
  for (const [name, value] of Object.entries(options.extraParams ?? {})) {
    if (RESERVED.has(name)) throw new TypeError(`the ${name} parameter is set by @svc/client`);
    if (value !== undefined) url.searchParams.set(name, value);
  }
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", options.clientId);
  url.searchParams.set("redirect_uri", options.redirectUri);
  url.searchParams.set("scope", scope);
  url.searchParams.set("state", state);
  if (nonce !== undefined) url.searchParams.set("nonce", nonce);
  url.searchParams.set("code_challenge", await codeChallengeS256(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  const pending: PendingLogin = { state, codeVerifier, redirectUri: options.redirectUri, createdAt: Date.now() };
  if (nonce !== undefined) pending.nonce = nonce;
  return { url: url.toString(), pending };
}

/** The callback's query parameters (a full URL, a `?query` or a bare query). */
export function callbackParams(callback: string | URL): URLSearchParams {
  const text = callback.toString();
  const question = text.indexOf("?");
  const query = question >= 0 ? text.slice(question + 1) : text;
  return new URLSearchParams(query.split("#")[0]);
}

/**
 * The checks of a callback before its code is used, in this order: no repeated parameter,
 * `state` equal to the pending login's, `iss` equal to the issuer (RFC 9207; required when the
 * server advertises `authorization_response_iss_parameter_supported`, as svc does), then an
 * `error` → AuthorizationError, then the code.
 */
export function validateCallback(metadata: ServerMetadata, callback: string | URL, expectedState: string): string {
  const params = callbackParams(callback);
  for (const name of ["state", "iss", "code", "error"]) {
    if (params.getAll(name).length > 1) throw new CallbackError("repeated_parameter", `the callback repeats ${name}`);
  }
  const state = params.get("state");
  if (!expectedState || state === null || !timingSafeEqual(state, expectedState)) throw new StateMismatchError();
  const iss = params.get("iss");
  if (iss !== null ? iss !== metadata.issuer : metadata.authorization_response_iss_parameter_supported === true) {
    throw new IssuerMismatchError();
  }
  const error = params.get("error");
  if (error !== null) throw new AuthorizationError(error, params.get("error_description") ?? undefined);
  const code = params.get("code");
  if (!code) throw new CallbackError("missing_code", "the callback has neither a code nor an error");
  return code;
}

/** Tokens from the token endpoint; `expiresAt` is in milliseconds since the epoch. */
export interface TokenSet {
  accessToken: string;
  tokenType: string;
  expiresAt: number;
  scope?: string;
  refreshToken?: string;
  idToken?: string;
  /** The validated claims of `idToken`. */
  idTokenClaims?: IdTokenClaims;
}

export interface TokenRequestOptions {
  clientId: string;
  fetch?: FetchLike;
  /** The issuer's key set; one is made (and fetched) per call when omitted. */
  keys?: KeySet;
  /** The application's `id_token_signed_response_alg` (default RS256). */
  idTokenSigningAlg?: SigningAlgorithm;
  clockSkew?: number;
  /** Proofs of possession when the server offers DPoP. */
  dpop?: DPoPKey;
}

/** POSTs to the token endpoint; with DPoP, retries once with the nonce the server asks for (RFC 9449 §8). */
async function tokenRequest(metadata: ServerMetadata, params: Record<string, string | undefined>, options: TokenRequestOptions): Promise<Record<string, unknown>> {
  const fetchFn = options.fetch ?? defaultFetch();
  const url = metadata.token_endpoint;
  const dpop = options.dpop;
  for (let attempt = 0; ; attempt++) {
    const headers: Record<string, string> = dpop ? { dpop: await dpop.proof("POST", url) } : {};
    try {
      return await postForm(fetchFn, url, { ...params, client_id: options.clientId }, headers, (response) => dpop?.rememberNonce(url, response));
    } catch (error) {
      if (!(dpop && attempt === 0 && error instanceof TokenError && error.error === "use_dpop_nonce")) throw error;
    }
  }
}

function tokenSetFrom(body: Record<string, unknown>): TokenSet {
  const { access_token, token_type, expires_in, scope, refresh_token, id_token } = body;
  if (typeof access_token !== "string" || !access_token || typeof token_type !== "string") {
    throw new TokenError(200, "invalid_response", "the token response has no access_token or token_type");
  }
  const lifetime = typeof expires_in === "number" && expires_in > 0 ? expires_in : 300;
  const tokens: TokenSet = { accessToken: access_token, tokenType: token_type, expiresAt: Date.now() + lifetime * 1000 };
  if (typeof scope === "string") tokens.scope = scope;
  if (typeof refresh_token === "string" && refresh_token) tokens.refreshToken = refresh_token;
  if (typeof id_token === "string" && id_token) tokens.idToken = id_token;
  return tokens;
}

function keysFor(metadata: ServerMetadata, options: TokenRequestOptions): KeySet {
  return options.keys ?? new KeySet(metadata.jwks_uri, options.fetch ?? defaultFetch());
}

/** Redeems an authorization code (with its PKCE verifier) and validates the ID token and its nonce. */
export async function exchangeCode(
  metadata: ServerMetadata,
  code: string,
  pending: Pick<PendingLogin, "codeVerifier" | "redirectUri" | "nonce">,
  options: TokenRequestOptions,
): Promise<TokenSet> {
  const body = await tokenRequest(
    metadata,
    { grant_type: "authorization_code", code, redirect_uri: pending.redirectUri, code_verifier: pending.codeVerifier },
    options,
  );
  const tokens = tokenSetFrom(body);
  if (!tokens.idToken) {
    if (pending.nonce !== undefined) throw new IdTokenError("missing_claim", "an OpenID Connect sign-in came back without an ID token");
    return tokens;
  }
  tokens.idTokenClaims = await validateIdToken(tokens.idToken, keysFor(metadata, options), {
    issuer: metadata.issuer,
    clientId: options.clientId,
    algorithm: options.idTokenSigningAlg,
    nonce: pending.nonce,
    clockSkew: options.clockSkew,
  });
  return tokens;
}

/**
 * Redeems a refresh token. svc rotates them: the answer's refresh token replaces the old one,
 * which is dead from now on (and presenting it again revokes the whole family). A new ID token
 * is validated without a nonce and must name `subject` (Core §12.2).
 */
export async function refreshTokens(
  metadata: ServerMetadata,
  refreshToken: string,
  options: TokenRequestOptions & { scope?: string | string[]; subject?: string },
): Promise<TokenSet> {
  const scope = options.scope === undefined ? undefined : scopeString(options.scope);
  const body = await tokenRequest(metadata, { grant_type: "refresh_token", refresh_token: refreshToken, scope }, options);
  const tokens = tokenSetFrom(body);
  if (tokens.idToken) {
    tokens.idTokenClaims = await validateIdToken(tokens.idToken, keysFor(metadata, options), {
      issuer: metadata.issuer,
      clientId: options.clientId,
      algorithm: options.idTokenSigningAlg,
      subject: options.subject,
      clockSkew: options.clockSkew,
    });
  }
  return tokens;
}

/** RFC 7009 revocation (a refresh token ends its whole family at svc). Unknown tokens succeed too. */
export async function revokeToken(
  metadata: ServerMetadata,
  token: string,
  options: { clientId: string; tokenTypeHint?: "refresh_token" | "access_token"; fetch?: FetchLike },
): Promise<void> {
  if (!metadata.revocation_endpoint) throw new TokenError(0, "unsupported", "the server has no revocation_endpoint");
  await postForm(options.fetch ?? defaultFetch(), metadata.revocation_endpoint, {
    token,
    token_type_hint: options.tokenTypeHint,
    client_id: options.clientId,
  }).catch((error: unknown) => {
    // RFC 7009 §2.2: a 200 with an empty body is the normal answer, which postForm rejects as "not JSON".
    if (error instanceof TokenError && error.error === "invalid_response" && error.status === 200) return;
    throw error;
  });
}

/** UserInfo for an access token; refused when it names another subject than `expectedSubject` (Core §5.3.2). */
export async function fetchUserInfo(
  metadata: ServerMetadata,
  accessToken: string,
  options: { expectedSubject?: string; fetch?: FetchLike; tokenType?: string; dpop?: DPoPKey } = {},
): Promise<Record<string, unknown>> {
  const endpoint = metadata.userinfo_endpoint;
  if (!endpoint) throw new TokenError(0, "unsupported", "the server has no userinfo_endpoint");
  const dpop = options.dpop && options.tokenType?.toLowerCase() === "dpop" ? options.dpop : undefined;
  const headers: Record<string, string> = { accept: "application/json", authorization: `${dpop ? "DPoP" : "Bearer"} ${accessToken}` };
  if (dpop) headers.dpop = await dpop.proof("GET", endpoint, accessToken);
  const response = await send(options.fetch ?? defaultFetch(), endpoint, { headers, cache: "no-store" });
  const body = await readJson(response);
  if (!response.ok) {
    const challenge = response.headers.get("www-authenticate") ?? "";
    const error = /error="([^"]+)"/.exec(challenge)?.[1];
    throw error ? new TokenError(response.status, error) : errorFrom(response, body);
  }
  if (!body || typeof body !== "object" || typeof (body as { sub?: unknown }).sub !== "string") {
    throw new TokenError(response.status, "invalid_response", "the UserInfo answer has no sub");
  }
  const claims = body as Record<string, unknown>;
  if (options.expectedSubject !== undefined && claims.sub !== options.expectedSubject) {
    throw new IdTokenError("subject", "UserInfo names another subject than the ID token");
  }
  return claims;
}

export interface SignOutOptions {
  clientId?: string;
  idTokenHint?: string;
  /** Must be registered exactly as a `post_logout_redirect_uris` entry of the application. */
  postLogoutRedirectUri?: string;
  state?: string;
}

/** The RP-initiated logout URL (OpenID Connect RP-Initiated Logout 1.0) to send the browser to. */
export function oauthSignOut(metadata: ServerMetadata, options: SignOutOptions = {}): string {
  if (!metadata.end_session_endpoint) throw new TokenError(0, "unsupported", "the server has no end_session_endpoint");
  const url = new URL(metadata.end_session_endpoint);
  if (options.idTokenHint) url.searchParams.set("id_token_hint", options.idTokenHint);
  if (options.postLogoutRedirectUri) url.searchParams.set("post_logout_redirect_uri", options.postLogoutRedirectUri);
  if (options.clientId) url.searchParams.set("client_id", options.clientId);
  if (options.state) url.searchParams.set("state", options.state);
  return url.toString();
}

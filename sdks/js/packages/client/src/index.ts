// The public surface of @svc/client: the stateful client and its factory, the stateless flow
// helpers, the errors, storage and the pieces tests and advanced callers need.

export { SvcClient, createSvcClient, isLoginPopup } from "./client.js";
export type { LoginOptions, LogoutOptions, SignInResult, SvcClientOptions } from "./client.js";
export { authStore } from "./store.js";
export type { AuthStartOptions, AuthState, AuthStore } from "./store.js";
export {
  callbackParams,
  createAuthorizationUrl,
  exchangeCode,
  fetchUserInfo,
  oauthSignOut,
  refreshTokens,
  revokeToken,
  validateCallback,
} from "./flow.js";
export type { AuthorizationUrlOptions, PendingLogin, SignOutOptions, TokenRequestOptions, TokenSet } from "./flow.js";
export { discover } from "./discovery.js";
export type { ServerMetadata } from "./discovery.js";
export { checkIdTokenClaims, validateIdToken } from "./idtoken.js";
export type { IdTokenClaims, IdTokenExpectations } from "./idtoken.js";
export { KeySet, decodeJwtClaims, parseJws } from "./jwt.js";
export type { Jwk, JwsHeader, SigningAlgorithm } from "./jwt.js";
export { codeChallengeS256, createCodeVerifier } from "./pkce.js";
export { base64urlDecode, base64urlEncode, randomToken } from "./encoding.js";
export { DPoPKey, serverOffersDPoP } from "./dpop.js";
export type { DPoPPublicJwk } from "./dpop.js";
export { MemoryStorage, defaultTransientStorage, webStorage } from "./storage.js";
export type { SvcStorage, WebStorageLike } from "./storage.js";
export {
  AuthorizationError,
  CallbackError,
  DiscoveryError,
  IdTokenError,
  IssuerMismatchError,
  LoginRequiredError,
  NetworkError,
  PopupError,
  StateMismatchError,
  SvcError,
  TokenError,
} from "./errors.js";
export type { CallbackRule, IdTokenRule } from "./errors.js";
export type { FetchLike } from "./http.js";

// The typed errors of @svc/client. Every failure the package reports is an SvcError, so an
// application can tell "sign in again" (LoginRequiredError, TokenError invalid_grant) from a
// hostile or broken callback (CallbackError) and from the network. Messages never contain a
// token, code, secret or claim value: they end up in logs and error trackers.

/** The base of every error this package throws. */
export class SvcError extends Error {
  /** A stable, machine-readable name of the failure (e.g. `state_mismatch`). */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The request never got an HTTP answer (offline, DNS, CORS refusal, aborted). */
export class NetworkError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("network_error", message, options);
  }
}

/** The discovery document could not be read, or it names another issuer (Discovery §4.3). */
export class DiscoveryError extends SvcError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("discovery_failed", message, options);
  }
}

/** The authorization server sent the browser back with `error=` (RFC 6749 §4.1.2.1). */
export class AuthorizationError extends SvcError {
  readonly error: string;
  readonly error_description: string | undefined;
  constructor(error: string, description?: string) {
    super(error, `the authorization request was refused: ${error}${description ? ` (${description})` : ""}`);
    this.error = error;
    this.error_description = description;
  }
}

/** An endpoint answered with an OAuth error body (RFC 6749 §5.2, RFC 7009, RFC 6750) or an unexpected status. */
export class TokenError extends SvcError {
  /** The OAuth `error` (`invalid_grant`, `invalid_client`…), or `http_<status>` when the body had none. */
  readonly error: string;
  readonly error_description: string | undefined;
  readonly status: number;
  constructor(status: number, error: string, description?: string) {
    super(error, `the server refused the request (${status} ${error}${description ? `: ${description}` : ""})`);
    this.error = error;
    this.error_description = description;
    this.status = status;
  }
}

/** Why a callback was refused before its code was used. */
export type CallbackRule =
  | "state_mismatch"
  | "issuer_mismatch"
  | "missing_code"
  | "repeated_parameter"
  | "no_pending_login";

/** The callback URL is not the answer to a login this client started, or is malformed. */
export class CallbackError extends SvcError {
  readonly rule: CallbackRule;
  constructor(rule: CallbackRule, message: string) {
    super(rule, message);
    this.rule = rule;
  }
}

/** The callback's `state` is not one this client issued (CSRF or a stale/forged link). */
export class StateMismatchError extends CallbackError {
  constructor() {
    super("state_mismatch", "the callback's state does not match a pending login");
  }
}

/** The callback's `iss` is missing or names another issuer: a mix-up attack (RFC 9207). */
export class IssuerMismatchError extends CallbackError {
  constructor() {
    super("issuer_mismatch", "the callback's iss is missing or is not the issuer (RFC 9207)");
  }
}

/** Which check of OpenID Connect Core §3.1.3.7 (or §12.2 for a refresh) an ID token failed. */
export type IdTokenRule =
  | "malformed"
  | "algorithm"
  | "type"
  | "key"
  | "signature"
  | "issuer"
  | "audience"
  | "azp"
  | "expired"
  | "issued_in_future"
  | "missing_claim"
  | "nonce"
  | "subject";

/** The ID token failed validation; `rule` says which check. */
export class IdTokenError extends SvcError {
  readonly rule: IdTokenRule;
  constructor(rule: IdTokenRule, message: string) {
    super("invalid_id_token", `the ID token is not valid: ${message}`);
    this.rule = rule;
  }
}

/** No usable session: there are no tokens, or the refresh token was refused. Call `login()`. */
export class LoginRequiredError extends SvcError {
  constructor(message = "no signed-in session: call login()", options?: { cause?: unknown }) {
    super("login_required", message, options);
  }
}

/** The sign-in popup was blocked, closed by the person, or timed out. */
export class PopupError extends SvcError {
  constructor(code: "popup_blocked" | "popup_closed" | "popup_timeout", message: string) {
    super(code, message);
  }
}

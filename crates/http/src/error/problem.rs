//! RFC 9457 `application/problem+json` (spec "Problem error body"): the [`Problem`] type, its
//! wire shape, and the mappings of `ManageError` and `KeyError` to it.
//!
//! Not for the OAuth protocol endpoints (`/oauth/*`, `/userinfo`), which answer in RFC 6749
//! §5.2 JSON instead (CONTRACTS.md "Errors", see `super::oauth`).
//!
//! `IntoResponse` cannot see the request, yet the body needs the request's problem-type base
//! (`{scheme}://{host}/problems`) and its request id. So [`Problem::into_response`] renders a
//! provisional body and stores the problem in the response extensions; the response middleware
//! (`middleware::response`, applied by [`crate::router`]) hands the response back to
//! `finish`, which re-renders it with the request's base and id and logs any attached
//! internal cause. Outside the stack (unit tests of other crates) the provisional body is still
//! a valid problem document with a relative `type`.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;

use crate::RequestId;

/// Media type of every problem body.
pub const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";

/// Base used when the request's host is unknown (relative URI reference, RFC 9457 §3.1.1).
pub(crate) const RELATIVE_TYPE_BASE: &str = "/problems";

/// Public detail of every 5xx problem: internal causes are logged, never sent
/// (CONTRACTS.md "Errors").
const SERVER_ERROR_DETAIL: &str =
    "the server could not complete the request; quote the request id when reporting it";

/// Shared, cloneable internal cause (response extensions require `Clone`).
type Source = Arc<dyn StdError + Send + Sync + 'static>;

/// An API error as the client sees it: status, a stable snake_case `error` code and a
/// human-readable `detail`.
///
/// The `type` URI is `{base}/{error in kebab-case}` and the `title` is fixed per code, so both
/// stay the same from occurrence to occurrence (RFC 9457 §3.1).
#[derive(Clone, Debug)]
pub struct Problem {
    status: StatusCode,
    error: &'static str,
    title: &'static str,
    detail: String,
    error_description: String,
    headers: HeaderMap,
    source: Option<Source>,
}

/// Marker stored in response extensions so the response middleware can re-render the body.
#[derive(Clone, Debug)]
pub(crate) struct ProblemExtension(pub(crate) Arc<Problem>);

impl Problem {
    /// A problem with any status and code, for classes that have no constructor here
    /// (`invalid_scope`, `insufficient_scope`, …). `title` must be fixed per `error`.
    ///
    /// For 5xx statuses `detail` is replaced by a generic text: server errors never carry
    /// internal detail; attach the cause with [`Problem::with_source`] instead.
    #[must_use]
    pub fn new(
        status: StatusCode,
        error: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        let detail = if status.is_server_error() {
            SERVER_ERROR_DETAIL.to_owned()
        } else {
            detail.into()
        };
        Self::raw(status, error, title, detail)
    }

    /// Builds without the 5xx detail rule; only for the fixed public texts in this module.
    fn raw(status: StatusCode, error: &'static str, title: &'static str, detail: String) -> Self {
        Self {
            status,
            error,
            title,
            error_description: detail.clone(),
            detail,
            headers: HeaderMap::new(),
            source: None,
        }
    }

    /// 400 `bad_request`: bad request shape, missing fields or unsupported input.
    #[must_use]
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "Bad Request",
            detail,
        )
    }

    /// 401 `unauthorized`: re-authenticate or refresh the token. Add the matching
    /// `WWW-Authenticate` challenge with [`Problem::with_header`].
    #[must_use]
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "Unauthorized",
            detail,
        )
    }

    /// 403 `forbidden`: tenant context, role or policy denies.
    #[must_use]
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden", detail)
    }

    /// 404 `not_found`: tenant context or resource id wrong.
    #[must_use]
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "Not Found", detail)
    }

    /// 405 `method_not_allowed`: the path exists but not with this method. The router keeps
    /// the `Allow` header that axum computes.
    #[must_use]
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "Method Not Allowed",
            "the request method is not supported for this resource",
        )
    }

    /// 409 `conflict`: retry idempotently or refresh local state.
    #[must_use]
    pub fn conflict(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", "Conflict", detail)
    }

    /// 412 `precondition_failed`: `If-Match` named a revision the resource no longer has.
    #[must_use]
    pub fn precondition_failed() -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "precondition_failed",
            "Precondition Failed",
            "the resource has changed since the revision named in If-Match; read it again and retry",
        )
    }

    /// 403 `insufficient_scope`: the token lacks the scope the operation requires. Add the
    /// matching `WWW-Authenticate` challenge with [`Problem::with_header`].
    #[must_use]
    pub fn insufficient_scope(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            "Insufficient Scope",
            detail,
        )
    }

    /// 413 `payload_too_large`: the request body is over `max_request_body_bytes`.
    #[must_use]
    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "Payload Too Large",
            "the request body is larger than this server accepts",
        )
    }

    /// 429 `rate_limited` with `Retry-After` in whole seconds (rounded up, at least 1), which
    /// clients must honour (spec "Other constants and rules").
    #[must_use]
    pub fn rate_limited(retry_after: Duration) -> Self {
        let secs = super::retry_after_secs(retry_after);
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "Too Many Requests",
            "too many requests; wait as long as Retry-After says",
        )
        .with_header(RETRY_AFTER, HeaderValue::from(secs))
    }

    /// 500 `server_error`. Attach the internal cause with [`Problem::with_source`]: it is logged
    /// with the request id and never serialised.
    #[must_use]
    pub fn server_error() -> Self {
        Self::raw(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "Server Error",
            SERVER_ERROR_DETAIL.to_owned(),
        )
    }

    /// 503 `server_error`: a dependency is unavailable; retry later with an idempotency key.
    #[must_use]
    pub fn service_unavailable() -> Self {
        Self::raw(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "Server Error",
            "the service is temporarily unavailable; retry later".to_owned(),
        )
    }

    /// 503 `server_error` with detail "request timed out": the handler ran past
    /// `request_timeout`.
    #[must_use]
    pub fn timed_out() -> Self {
        Self::raw(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "Server Error",
            "request timed out".to_owned(),
        )
    }

    /// Attaches the internal cause. It is logged (with the request id) by the response
    /// middleware and never serialised.
    #[must_use]
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        self.source = Some(Arc::from(source.into()));
        self
    }

    /// Adds a response header (`WWW-Authenticate`, `Retry-After`, …). Only this seam attaches
    /// headers, so every challenge is written in one place (see `super::bearer`).
    #[must_use]
    pub(in crate::error) fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Overrides `error_description` (defaults to `detail`). Ignored for 5xx, like `detail`.
    #[must_use]
    pub fn with_error_description(mut self, description: impl Into<String>) -> Self {
        if !self.status.is_server_error() {
            self.error_description = description.into();
        }
        self
    }

    /// HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Stable snake_case error code (`not_found`).
    #[must_use]
    pub fn error(&self) -> &'static str {
        self.error
    }

    /// Short summary, fixed per error code.
    #[must_use]
    pub fn title(&self) -> &'static str {
        self.title
    }

    /// Human-readable detail of this occurrence (never internal for 5xx).
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// OAuth-style description; equals `detail` unless overridden.
    #[must_use]
    pub fn error_description(&self) -> &str {
        &self.error_description
    }

    /// The attached internal cause, if any (for logging only).
    #[must_use]
    pub fn internal_source(&self) -> Option<&(dyn StdError + Send + Sync + 'static)> {
        self.source.as_deref()
    }

    /// `type` URI for `base` (trailing slashes trimmed): `{base}/{error in kebab-case}`.
    #[must_use]
    pub fn type_uri(&self, base: &str) -> String {
        format!(
            "{}/{}",
            base.trim_end_matches('/'),
            self.error.replace('_', "-")
        )
    }

    /// The JSON body for `base` and the request id.
    fn body(&self, base: &str, request_id: Option<&str>) -> Vec<u8> {
        let body = ProblemBody {
            kind: self.type_uri(base),
            title: self.title,
            status: self.status.as_u16(),
            detail: &self.detail,
            error: self.error,
            error_description: &self.error_description,
            request_id,
        };
        // Serialising a struct of strings and integers cannot fail; fall back to a fixed body
        // rather than panicking if it ever did.
        serde_json::to_vec(&body).unwrap_or_else(|_| {
            br#"{"type":"about:blank","title":"Server Error","status":500}"#.to_vec()
        })
    }

    /// A complete response with the body rendered for `base` and `request_id`.
    fn to_response(&self, base: &str, request_id: Option<&str>) -> Response {
        let mut res = Response::new(Body::from(self.body(base, request_id)));
        *res.status_mut() = self.status;
        let headers = res.headers_mut();
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(PROBLEM_CONTENT_TYPE));
        // Problems describe one occurrence; a shared cache must never replay them.
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        res
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.error,
            self.detail
        )
    }
}

impl StdError for Problem {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

impl IntoResponse for Problem {
    /// Renders a provisional body (relative `type`, no request id) and stores the problem in the
    /// response extensions, where the response middleware finds and re-renders it.
    fn into_response(self) -> Response {
        let mut res = self.to_response(RELATIVE_TYPE_BASE, None);
        res.extensions_mut()
            .insert(ProblemExtension(Arc::new(self)));
        res
    }
}

/// The second half of the response-extension pattern (see the module documentation): a problem
/// left in `res`'s extensions, or axum's bare plain-text 413 extractor rejection (so the body
/// limit answers in one format whichever layer noticed it), is rendered again for `base` (asked
/// only when there is a problem) and `request_id`, and its internal cause is logged. Other
/// responses pass through untouched.
pub(crate) fn finish(
    mut res: Response,
    base: impl FnOnce() -> String,
    request_id: Option<&RequestId>,
) -> Response {
    let problem = match res.extensions_mut().remove::<ProblemExtension>() {
        Some(ProblemExtension(problem)) => problem,
        // A hosted page renders its own 413 for a browser, SCIM its RFC 7644 error body; only
        // bare rejections become problems.
        None if res.status() == StatusCode::PAYLOAD_TOO_LARGE && !renders_its_own(&res) => {
            Arc::new(Problem::payload_too_large())
        }
        None => return res,
    };
    log_problem(&problem, request_id);
    let rendered = problem.to_response(&base(), request_id.map(RequestId::as_str));
    let (rendered_parts, body) = rendered.into_parts();
    let (mut parts, _provisional) = res.into_parts();
    // Keep headers others added on the way out (`Allow`, `x-request-id`, a challenge); replace
    // only what describes the body.
    parts.status = rendered_parts.status;
    parts.headers.remove(CONTENT_LENGTH);
    for name in [CONTENT_TYPE, CACHE_CONTROL] {
        if let Some(value) = rendered_parts.headers.get(&name) {
            parts.headers.insert(name, value.clone());
        }
    }
    for (name, value) in &rendered_parts.headers {
        if !parts.headers.contains_key(name) {
            parts.headers.insert(name.clone(), value.clone());
        }
    }
    Response::from_parts(parts, body)
}

/// Whether a response is an HTML page (a hosted page) or a SCIM error
/// (`application/scim+json`), which are never replaced by a problem.
fn renders_its_own(res: &Response) -> bool {
    res.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.starts_with("text/html") || v.starts_with(super::scim::SCIM_CONTENT_TYPE)
        })
}

/// Internal causes go to the logs with the request id, never to the client.
fn log_problem(problem: &Problem, request_id: Option<&RequestId>) {
    let request_id = request_id.map(RequestId::as_str);
    let cause = problem.internal_source().map(|source| {
        let mut chain = source.to_string();
        let mut next = source.source();
        while let Some(err) = next {
            chain.push_str(": ");
            chain.push_str(&err.to_string());
            next = err.source();
        }
        chain
    });
    if problem.status().is_server_error() {
        tracing::error!(
            request_id,
            status = problem.status().as_u16(),
            error = problem.error(),
            cause = cause.as_deref(),
            "request failed with a server error"
        );
    } else if let Some(cause) = cause {
        tracing::debug!(
            request_id,
            status = problem.status().as_u16(),
            error = problem.error(),
            cause,
            "request refused"
        );
    }
}

/// Wire shape (spec "Problem error body" plus the `request_id` extension member).
#[derive(Serialize)]
struct ProblemBody<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'a str,
    status: u16,
    detail: &'a str,
    error: &'a str,
    error_description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
}

/// Key-service failures: 503 while the database or the KMS is unavailable (retry later), 500
/// otherwise. The cause is logged with the request id, never shown.
impl From<svc_oauth::keys::KeyError> for Problem {
    fn from(error: svc_oauth::keys::KeyError) -> Self {
        let problem = if error.is_unavailable() {
            Self::service_unavailable()
        } else {
            Self::server_error()
        };
        problem.with_source(error)
    }
}

/// Management use-case failures (see each `ManageError` variant's documented status).
impl From<svc_manage::ManageError> for Problem {
    fn from(error: svc_manage::ManageError) -> Self {
        use svc_manage::ManageError as E;
        match error {
            E::Invalid { field, message } => Self::bad_request(format!("{field}: {message}")),
            E::NotFound => Self::not_found("no such resource in this tenant"),
            E::Conflict(message) => Self::conflict(message),
            E::Forbidden(message) => Self::forbidden(message),
            E::PreconditionFailed => Self::precondition_failed(),
            E::Unauthenticated(message) => Self::unauthorized(message),
            E::RateLimited(wait) => Self::rate_limited(wait),
            other @ (E::Unavailable(_) | E::PasswordCheckUnavailable) => {
                Self::service_unavailable().with_source(other)
            }
            other => Self::server_error().with_source(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use serde_json::Value;

    async fn json(res: Response) -> Value {
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn type_uri_is_kebab_case_of_the_error_code() {
        let p = Problem::method_not_allowed();
        assert_eq!(
            p.type_uri("https://id.example.com/problems/"),
            "https://id.example.com/problems/method-not-allowed"
        );
    }

    #[test]
    fn server_errors_never_carry_caller_detail() {
        let p = Problem::new(
            StatusCode::BAD_GATEWAY,
            "server_error",
            "Server Error",
            "connection to 10.0.0.5:5432 refused",
        )
        .with_error_description("pg password wrong");
        assert!(!p.detail().contains("10.0.0.5"));
        assert!(!p.error_description().contains("password"));
    }

    #[test]
    fn rate_limited_rounds_retry_after_up() {
        let p = Problem::rate_limited(Duration::from_millis(1500));
        assert_eq!(p.headers.get(RETRY_AFTER).unwrap(), "2");
        let p = Problem::rate_limited(Duration::ZERO);
        assert_eq!(p.headers.get(RETRY_AFTER).unwrap(), "1");
    }

    #[tokio::test]
    async fn into_response_outside_the_stack_is_a_valid_problem() {
        let res = Problem::not_found("no such application").into_response();
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_eq!(res.headers()[CONTENT_TYPE], PROBLEM_CONTENT_TYPE);
        assert_eq!(res.headers()[CACHE_CONTROL], "no-store");
        assert!(res.extensions().get::<ProblemExtension>().is_some());
        let body = json(res).await;
        assert_eq!(body["type"], "/problems/not-found");
        assert_eq!(body["status"], 404);
        assert_eq!(body["error"], "not_found");
        assert_eq!(body["detail"], "no such application");
        assert_eq!(body["error_description"], "no such application");
        assert!(body.get("request_id").is_none());
    }

    #[tokio::test]
    async fn source_is_kept_for_logs_but_not_serialised() {
        let p = Problem::server_error().with_source("db: relation \"users\" does not exist");
        assert!(p.internal_source().is_some());
        let body = json(p.to_response("https://h/problems", Some("rid-1"))).await;
        let text = body.to_string();
        assert!(!text.contains("relation"));
        assert_eq!(body["request_id"], "rid-1");
        assert_eq!(body["type"], "https://h/problems/server-error");
    }
}

//! `idempotency-key` on POSTs (spec "Retryable writes take idempotency-key"): the first request
//! with a key runs and its response is stored; a repeat with the same key and the same request
//! replays that response; the same key with a different request is 409 `conflict`. Only
//! successful responses are stored: a refused or failed request leaves the key free. Keys are
//! scoped to the caller and expire after 24 hours.

use crate::Problem;
use axum::body::{Body, to_bytes};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use sha2::{Digest, Sha256};
use std::future::Future;
use svc_manage::ManageContext;
use svc_manage::idempotency::{Begin, begin, complete, release};

const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// Largest response body stored for replay.
const MAX_STORED_BODY: usize = 256 * 1024;

/// Runs `handler` at most once per (`scope`, `idempotency-key`).
pub async fn idempotent<Fut>(
    ctx: &ManageContext,
    scope: &str,
    headers: &HeaderMap,
    request: (&Method, &str, &[u8]),
    handler: impl FnOnce() -> Fut,
) -> Response
where
    Fut: Future<Output = Response>,
{
    let Some(key) = headers.get(IDEMPOTENCY_KEY) else {
        return handler().await;
    };
    let Ok(key) = key.to_str() else {
        return Problem::bad_request("idempotency-key must be printable ASCII").into_response();
    };
    let (method, path, body) = request;
    let mut hasher = Sha256::new();
    hasher.update(method.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(path.as_bytes());
    hasher.update([0]);
    hasher.update(body);
    let fingerprint = hex(&hasher.finalize());
    match begin(ctx, scope, key, &fingerprint).await {
        Err(e) => Problem::from(e).into_response(),
        Ok(Begin::Replay { status, body }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            let mut response = (status, body).into_response();
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
                .headers_mut()
                .insert(REPLAYED, HeaderValue::from_static("true"));
            response
        }
        Ok(Begin::Fresh) => {
            let response = handler().await;
            let status = response.status();
            // Only a success is final and replayed. A refusal (4xx) changed nothing, and a server
            // error is not final: either way the client may retry with the same key, and a
            // refusal is answered afresh (as the problem+json it is, with its own request id).
            if !status.is_success() {
                let _ = release(ctx, scope, key).await;
                return response;
            }
            let (parts, body) = response.into_parts();
            let Ok(bytes) = to_bytes(body, MAX_STORED_BODY).await else {
                let _ = release(ctx, scope, key).await;
                return Problem::server_error().into_response();
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Err(e) = complete(ctx, scope, key, status.as_u16(), &text).await {
                tracing::warn!(error = %e, "could not store an idempotent response");
            }
            Response::from_parts(parts, Body::from(bytes))
        }
    }
}

/// A POST that creates, the way every management create answers: retried safely with an
/// `idempotency-key` ([`idempotent`]), the body read by `parse`, the resource made by `create`,
/// and `201 Created` with `Location` — found by `locate` in the answer's JSON, the same way for
/// a fresh answer and a replayed one (RFC 9110 §10.2.2), so the two can never disagree.
pub async fn create_idempotently<T, V, Fut>(
    ctx: &ManageContext,
    scope: &str,
    headers: &HeaderMap,
    (path, bytes): (&str, &[u8]),
    parse: impl FnOnce(&[u8]) -> Result<T, Problem>,
    create: impl FnOnce(T) -> Fut,
    locate: impl Fn(&serde_json::Value) -> Option<String>,
) -> Response
where
    Fut: Future<Output = Result<V, Problem>>,
    V: serde::Serialize,
{
    let response = idempotent(
        ctx,
        scope,
        headers,
        (&Method::POST, path, bytes),
        || async {
            let input = match parse(bytes) {
                Ok(input) => input,
                Err(problem) => return problem.into_response(),
            };
            let view = match create(input).await {
                Ok(view) => view,
                Err(problem) => return problem.into_response(),
            };
            let Ok(body) = serde_json::to_value(&view) else {
                return Problem::server_error().into_response();
            };
            match locate(&body) {
                Some(location) => crate::api::conventions::created(&location, body),
                None => (StatusCode::CREATED, axum::Json(body)).into_response(),
            }
        },
    )
    .await;
    crate::api::conventions::replayed_location(response, |body| locate(body)).await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

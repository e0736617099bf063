//! The conventions every management list and resource follows, written once:
//!
//! - lists take `limit` (1..=200, default 50), `after` (the `next_cursor` of the previous
//!   page) and `order` (`asc`: oldest first, `desc`: newest first; each list has its default)
//!   and answer `{"items": [...], "next_cursor": "…" | null}`;
//! - a created resource answers `201 Created` with `Location` (RFC 9110 §10.2.2);
//! - a mutable resource answers with a strong `ETag`, and an update or delete honours
//!   `If-Match` (RFC 9110 §13.1.1): `*`, or a list of tags one of which must be current,
//!   else `412 precondition_failed`.

use crate::Problem;
use axum::Json;
use axum::response::{IntoResponse, Response};
use http::header::{ETAG, IF_MATCH, LOCATION};
use http::{HeaderMap, HeaderValue, StatusCode};
use serde::{Deserialize, Serialize};
use svc_manage::{Precondition, Revision};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};

/// Which end of the creation order a list starts from (ids grow with creation time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

impl From<SortOrder> for svc_store::Order {
    fn from(order: SortOrder) -> Self {
        match order {
            SortOrder::Asc => Self::Ascending,
            SortOrder::Desc => Self::Descending,
        }
    }
}

/// The order a caller asked for, if any, in the store's terms.
#[must_use]
pub fn order(requested: Option<SortOrder>) -> Option<svc_store::Order> {
    requested.map(Into::into)
}

/// The `after` cursor of a list, parsed into the list's id type; a malformed one is 400 with
/// `what` saying what it should be ("not a user id").
///
/// # Errors
/// 400 `bad_request` when `raw` is not such an id.
pub fn after<T, E>(
    raw: Option<&str>,
    parse: impl FnOnce(&str) -> Result<T, E>,
    what: &str,
) -> Result<Option<T>, Problem> {
    raw.map(|raw| parse(raw).map_err(|_| Problem::bad_request(format!("after: {what}"))))
        .transpose()
}

/// Cursor pagination parameters of every list.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1..=200 (default 50; larger values are clamped).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// Return items after this cursor, in the list's order: the `next_cursor` of the previous
    /// page (taken with the same `order`).
    #[param(max_length = 64)]
    pub after: Option<String>,
    /// `asc` (oldest first) or `desc` (newest first); the operation says its default.
    #[param(inline)]
    pub order: Option<SortOrder>,
}

/// One page of a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    /// The items of this page, in the order asked for.
    pub items: Vec<T>,
    /// Pass as `after` to get the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

impl<T: ToSchema + Serialize> Page<T> {
    /// The JSON response of a page.
    pub fn respond(items: Vec<T>, next_cursor: Option<impl ToString>) -> Response {
        Json(Self {
            items,
            next_cursor: next_cursor.map(|c| c.to_string()),
        })
        .into_response()
    }
}

/// The precondition of an update or delete, from `If-Match`. Several headers and comma-separated
/// lists combine (RFC 9110 §5.3); tags that are not ours match nothing.
///
/// # Errors
/// 400 `bad_request` when the header is not visible ASCII.
pub fn precondition(headers: &HeaderMap) -> Result<Precondition, Problem> {
    let mut tags = Vec::new();
    for value in headers.get_all(IF_MATCH) {
        let text = value
            .to_str()
            .map_err(|_| Problem::bad_request("If-Match must be visible ASCII"))?;
        for tag in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if tag == "*" {
                return Ok(Precondition::Exists);
            }
            tags.push(Revision::parse_etag(tag));
        }
    }
    if tags.is_empty() {
        Ok(Precondition::None)
    } else {
        Ok(Precondition::OneOf(tags))
    }
}

/// Adds the `ETag` of a resource last changed at `updated_at`.
#[must_use]
pub fn with_etag(mut response: Response, updated_at: OffsetDateTime) -> Response {
    if let Ok(value) = HeaderValue::from_str(&Revision::of(updated_at).etag()) {
        response.headers_mut().insert(ETAG, value);
    }
    response
}

/// `201 Created` with `Location: location` and `body`.
#[must_use]
pub fn created(location: &str, body: impl Serialize) -> Response {
    let mut response = (StatusCode::CREATED, Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// Largest replayed body read back to find the id of a created resource.
const MAX_REPLAYED_BODY: usize = 256 * 1024;

/// A `201 Created` replayed for an `idempotency-key` carries the stored body only: gives it its
/// `Location` again, from the id `locate` finds in that body. Other responses pass unchanged.
pub async fn replayed_location(
    response: Response,
    locate: impl FnOnce(&serde_json::Value) -> Option<String>,
) -> Response {
    if response.status() != StatusCode::CREATED || response.headers().contains_key(LOCATION) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REPLAYED_BODY).await else {
        return Problem::server_error().into_response();
    };
    let found = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .as_ref()
        .and_then(locate)
        .and_then(|path| HeaderValue::from_str(&path).ok());
    if let Some(value) = found {
        parts.headers.insert(LOCATION, value);
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(IF_MATCH, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn if_match_reads_star_lists_and_foreign_tags() {
        let at = OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap();
        let tag = Revision::of(at).etag();
        assert_eq!(precondition(&headers(&[])).unwrap(), Precondition::None);
        assert_eq!(
            precondition(&headers(&["*"])).unwrap(),
            Precondition::Exists
        );
        let listed = precondition(&headers(&[&format!("\"other\", {tag}")])).unwrap();
        assert!(listed.holds_for(Revision::of(at)));
        let foreign = precondition(&headers(&["\"nope\""])).unwrap();
        assert!(!foreign.holds_for(Revision::of(at)));
        let split = precondition(&headers(&["\"nope\"", &tag])).unwrap();
        assert!(split.holds_for(Revision::of(at)), "headers combine");
        let mut bad = HeaderMap::new();
        bad.insert(IF_MATCH, HeaderValue::from_bytes(b"\"r1\xff\"").unwrap());
        assert_eq!(precondition(&bad).unwrap_err().status(), 400);
    }

    #[test]
    fn created_sets_location_and_etag_is_strong() {
        let res = created("/api/v1/applications/app_1", serde_json::json!({"id": 1}));
        assert_eq!(res.status(), StatusCode::CREATED);
        assert_eq!(res.headers()[LOCATION], "/api/v1/applications/app_1");
        let at = OffsetDateTime::from_unix_timestamp(5).unwrap();
        let res = with_etag(StatusCode::OK.into_response(), at);
        let etag = res.headers()[ETAG].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && !etag.starts_with("W/"), "{etag}");
    }
}

//! The SCIM Group resource type at `{issuer}/scim/v2/Groups` (RFC 7644 §3): thin handlers over
//! `svc_manage::scim::groups`, sharing the SCIM router's extractor ([`ScimAuth`]), body limit,
//! `If-Match` reading and error bodies (`super::scim`). Registered by `super::scim::router`.

use super::scim::{
    ScimAuth, ScimState, SearchRequest, base, body, integer, into_response, precondition,
    projection, resource, scim_json,
};
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use std::collections::HashMap;
use svc_manage::scim::{groups, sort};

/// `GET /Groups`: filter, sort, paging, projection.
pub(super) async fn list(
    State(state): State<ScimState>,
    auth: ScimAuth,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let page = groups::list(
                &state.manage,
                &state.settings,
                &auth.caller,
                &base(&auth),
                query.get("filter").map(String::as_str),
                sort::groups(
                    query.get("sortBy").map(String::as_str),
                    query.get("sortOrder").map(String::as_str),
                )?
                .as_ref(),
                integer(&query, "startIndex")?,
                integer(&query, "count")?,
                &projection(&query),
            )
            .await?;
            Ok(scim_json(StatusCode::OK, &page))
        }
        .await,
    )
}

/// `POST /Groups/.search` (RFC 7644 §3.4.3).
pub(super) async fn search(
    State(state): State<ScimState>,
    auth: ScimAuth,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    into_response(
        async {
            let search = SearchRequest::read(&body(&state.settings, &headers, &bytes)?)?;
            let page = groups::list(
                &state.manage,
                &state.settings,
                &auth.caller,
                &base(&auth),
                search.filter.as_deref(),
                sort::groups(search.sort_by.as_deref(), search.sort_order.as_deref())?.as_ref(),
                search.start_index,
                search.count,
                &search.projection,
            )
            .await?;
            Ok(scim_json(StatusCode::OK, &page))
        }
        .await,
    )
}

/// `POST /Groups`: 201 with `Location` and `ETag`.
pub(super) async fn create(
    State(state): State<ScimState>,
    auth: ScimAuth,
    headers: HeaderMap,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    bytes: Bytes,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let request = body(&state.settings, &headers, &bytes)?;
            let created = groups::create(
                &state.manage,
                &auth.caller,
                &auth.meta,
                &base(&auth),
                &request,
            )
            .await?;
            Ok(resource(StatusCode::CREATED, created, &projection(&query)))
        }
        .await,
    )
}

/// `GET /Groups/{id}`.
pub(super) async fn read(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let found = groups::get(&state.manage, &auth.caller, &base(&auth), &id).await?;
            Ok(resource(StatusCode::OK, found, &projection(&query)))
        }
        .await,
    )
}

/// `PUT /Groups/{id}`.
pub(super) async fn replace(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    bytes: Bytes,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let request = body(&state.settings, &headers, &bytes)?;
            let replaced = groups::replace(
                &state.manage,
                &auth.caller,
                &auth.meta,
                &base(&auth),
                &id,
                &request,
                &precondition(&headers),
            )
            .await?;
            Ok(resource(StatusCode::OK, replaced, &projection(&query)))
        }
        .await,
    )
}

/// `PATCH /Groups/{id}`: 200 with the group.
pub(super) async fn patch(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    bytes: Bytes,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let request = body(&state.settings, &headers, &bytes)?;
            let patched = groups::patch(
                &state.manage,
                &auth.caller,
                &auth.meta,
                &base(&auth),
                &id,
                &request,
                &precondition(&headers),
            )
            .await?;
            Ok(resource(StatusCode::OK, patched, &projection(&query)))
        }
        .await,
    )
}

/// `DELETE /Groups/{id}`: 204.
pub(super) async fn delete(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    into_response(
        async {
            groups::delete(
                &state.manage,
                &auth.caller,
                &auth.meta,
                &id,
                &precondition(&headers),
            )
            .await?;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        .await,
    )
}

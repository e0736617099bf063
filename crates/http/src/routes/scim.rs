//! SCIM 2.0 (RFC 7644) at `{issuer}/scim/v2`: discovery, and the User resource type (the
//! Group resource type's handlers are `super::scim_groups`). Thin handlers over
//! `svc_manage::scim`: the tenant from the host (as every protocol endpoint), the
//! SCIM token from `Authorization: Bearer` (the [`ScimAuth`] extractor, so no handler can
//! forget it), the body within `[scim].max_body_bytes`, and errors as RFC 7644 §3.12 bodies
//! through `crate::error::scim`. Every answer is `application/scim+json`.
//!
//! The runtime merges this router only when `[scim].enabled`; a disabled deployment answers the
//! router's plain 404. These paths are not in the OpenAPI document: SCIM describes itself
//! (`/ServiceProviderConfig`, `/Schemas`, `/ResourceTypes`).

use super::scim_groups;
use crate::error::scim::{SCIM_CONTENT_TYPE, response as scim_error};
use crate::tenancy::{CurrentTenant, TenantResolver};
use crate::{ClientContext, RequestId};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRef, FromRequestParts, Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, ETAG, IF_MATCH, LOCATION};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use std::collections::HashMap;
use svc_manage::scim::bulk as scim_bulk;
use svc_manage::scim::users::{self as scim_users, Represented};
use svc_manage::scim::{
    Projection, ScimCaller, ScimError, ScimSettings, discovery, search as scim_search,
    sort as scim_sort, tokens,
};
use svc_manage::{ManageContext, RequestMeta};

/// State of the SCIM routes.
#[derive(Clone)]
pub struct ScimState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The management use cases' dependencies (SCIM writes go through the users use cases).
    pub manage: ManageContext,
    /// `[scim]`.
    pub settings: ScimSettings,
}

impl FromRef<ScimState> for TenantResolver {
    fn from_ref(state: &ScimState) -> Self {
        state.tenants.clone()
    }
}

/// The SCIM routes under `/scim/v2`.
pub fn router(state: ScimState) -> Router {
    Router::new()
        .route(
            "/scim/v2/ServiceProviderConfig",
            get(service_provider_config),
        )
        .route("/scim/v2/ResourceTypes", get(resource_types))
        .route("/scim/v2/ResourceTypes/{id}", get(resource_type))
        .route("/scim/v2/Schemas", get(schemas))
        .route("/scim/v2/Schemas/{id}", get(schema))
        .route("/scim/v2/Users", get(list_users).post(create_user))
        .route("/scim/v2/Users/.search", post(search_users))
        // Searching from the root spans every resource type: Users, then Groups.
        .route("/scim/v2/.search", post(search_root))
        .route(
            "/scim/v2/Users/{id}",
            get(read_user)
                .put(replace_user)
                .patch(patch_user)
                .delete(delete_user),
        )
        .route(
            "/scim/v2/Groups",
            get(scim_groups::list).post(scim_groups::create),
        )
        .route("/scim/v2/Groups/.search", post(scim_groups::search))
        .route(
            "/scim/v2/Groups/{id}",
            get(scim_groups::read)
                .put(scim_groups::replace)
                .patch(scim_groups::patch)
                .delete(scim_groups::delete),
        )
        .route("/scim/v2/Me", any(not_offered))
        .route("/scim/v2/Me/{*rest}", any(not_offered))
        .route("/scim/v2/Bulk", post(bulk).fallback(bulk_method))
        .route("/scim/v2", any(unknown))
        .route("/scim/v2/{*rest}", any(unknown))
        .with_state(state)
}

/// An authenticated SCIM caller of the addressed tenant.
pub struct ScimAuth {
    /// The tenant (from the host) and its issuer.
    pub tenant: CurrentTenant,
    /// The token's reach.
    pub caller: ScimCaller,
    /// Request id and client address, for the audit log.
    pub meta: RequestMeta,
}

impl FromRequestParts<ScimState> for ScimAuth {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ScimState,
    ) -> Result<Self, Self::Rejection> {
        let tenant = CurrentTenant::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let presented = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let caller = tokens::authenticate(&state.manage, &tenant.tenant.id, presented)
            .await
            .map_err(scim_error)?;
        let client = ClientContext::from_request_parts(parts, state)
            .await
            .unwrap_or_else(|never| match never {});
        let request_id = parts.extensions.get::<RequestId>().map(ToString::to_string);
        Ok(Self {
            tenant,
            caller,
            meta: RequestMeta {
                request_id,
                client_ip: client.ip.map(|ip| ip.to_string()),
            },
        })
    }
}

pub(super) fn scim_json(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(SCIM_CONTENT_TYPE));
    response
}

/// A resource answer with its `ETag` (and `Location` when created).
pub(super) fn resource(
    status: StatusCode,
    represented: Represented,
    projection: &Projection,
) -> Response {
    let body = projection.apply(represented.resource);
    let mut response = scim_json(status, &body);
    let headers = response.headers_mut();
    if let Ok(tag) = HeaderValue::from_str(&represented.version) {
        headers.insert(ETAG, tag);
    }
    if status == StatusCode::CREATED
        && let Ok(location) = HeaderValue::from_str(&represented.location)
    {
        headers.insert(LOCATION, location);
    }
    response
}

/// The JSON body, within `[scim].max_body_bytes` (413 past it).
pub(super) fn body(
    settings: &ScimSettings,
    headers: &HeaderMap,
    bytes: &Bytes,
) -> Result<Value, ScimError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    if declared.is_some_and(|n| n > settings.max_body_bytes)
        || bytes.len() > settings.max_body_bytes
    {
        return Err(ScimError::TooLarge);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ScimError::InvalidSyntax(format!("the body is not JSON: {e}")))
}

pub(super) fn precondition(headers: &HeaderMap) -> svc_manage::Precondition {
    scim_users::if_match(
        headers
            .get_all(IF_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

pub(super) fn projection(query: &HashMap<String, String>) -> Projection {
    Projection::parse(
        query.get("attributes").map(String::as_str),
        query.get("excludedAttributes").map(String::as_str),
    )
}

pub(super) fn base(auth: &ScimAuth) -> String {
    scim_users::base(&auth.tenant.issuer)
}

pub(super) fn into_response(result: Result<Response, ScimError>) -> Response {
    result.unwrap_or_else(scim_error)
}

async fn service_provider_config(State(state): State<ScimState>, auth: ScimAuth) -> Response {
    scim_json(
        StatusCode::OK,
        &discovery::service_provider_config(&state.settings, &base(&auth)),
    )
}

async fn resource_types(auth: ScimAuth) -> Response {
    scim_json(StatusCode::OK, &discovery::resource_types(&base(&auth)))
}

async fn resource_type(auth: ScimAuth, Path(id): Path<String>) -> Response {
    match discovery::resource_type(&base(&auth), &id) {
        Some(found) => scim_json(StatusCode::OK, &found),
        None => scim_error(ScimError::NotFound),
    }
}

async fn schemas(auth: ScimAuth) -> Response {
    scim_json(StatusCode::OK, &discovery::schemas(&base(&auth)))
}

async fn schema(auth: ScimAuth, Path(id): Path<String>) -> Response {
    match discovery::schema(&base(&auth), &id) {
        Some(found) => scim_json(StatusCode::OK, &found),
        None => scim_error(ScimError::NotFound),
    }
}

/// A 1-based index or a count from the query: an integer, else `invalidValue`.
pub(super) fn integer(
    query: &HashMap<String, String>,
    name: &str,
) -> Result<Option<i64>, ScimError> {
    query
        .get(name)
        .map(|raw| {
            raw.trim()
                .parse::<i64>()
                .map_err(|_| ScimError::InvalidValue(format!("{name} must be an integer")))
        })
        .transpose()
}

async fn list_users(
    State(state): State<ScimState>,
    auth: ScimAuth,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let page = scim_users::list(
                &state.manage,
                &state.settings,
                &auth.caller,
                &base(&auth),
                query.get("filter").map(String::as_str),
                scim_sort::users(
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

/// A SearchRequest body (RFC 7644 §3.4.3): the query parameters of a GET, as JSON.
pub(super) struct SearchRequest {
    /// `filter`.
    pub filter: Option<String>,
    /// `sortBy`.
    pub sort_by: Option<String>,
    /// `sortOrder`.
    pub sort_order: Option<String>,
    /// `startIndex`.
    pub start_index: Option<i64>,
    /// `count`.
    pub count: Option<i64>,
    /// `attributes` / `excludedAttributes`.
    pub projection: Projection,
}

impl SearchRequest {
    /// Reads the body; a member of the wrong type is `invalidValue`.
    pub(super) fn read(request: &Value) -> Result<Self, ScimError> {
        let text = |name: &str| -> Result<Option<String>, ScimError> {
            match request.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(Value::Array(items)) => Ok(Some(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(","),
                )),
                Some(_) => Err(ScimError::InvalidValue(format!("{name} must be a string"))),
            }
        };
        let int = |name: &str| -> Result<Option<i64>, ScimError> {
            match request.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_i64()
                    .map(Some)
                    .ok_or_else(|| ScimError::InvalidValue(format!("{name} must be an integer"))),
            }
        };
        Ok(Self {
            filter: text("filter")?,
            sort_by: text("sortBy")?,
            sort_order: text("sortOrder")?,
            start_index: int("startIndex")?,
            count: int("count")?,
            projection: Projection::parse(
                text("attributes")?.as_deref(),
                text("excludedAttributes")?.as_deref(),
            ),
        })
    }
}

/// `POST /.search` (RFC 7644 §3.4.3): Users and Groups as one list.
async fn search_root(
    State(state): State<ScimState>,
    auth: ScimAuth,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    into_response(
        async {
            let search = SearchRequest::read(&body(&state.settings, &headers, &bytes)?)?;
            let query = scim_search::RootQuery {
                filter: search.filter.as_deref(),
                sort_by: search.sort_by.as_deref(),
                sort_order: search.sort_order.as_deref(),
                start_index: search.start_index,
                count: search.count,
            };
            let page = scim_search::search_all(
                &state.manage,
                &state.settings,
                &auth.caller,
                &base(&auth),
                query,
                &search.projection,
            )
            .await?;
            Ok(scim_json(StatusCode::OK, &page))
        }
        .await,
    )
}

/// `POST /Users/.search` (RFC 7644 §3.4.3): the query as a SearchRequest
/// body.
async fn search_users(
    State(state): State<ScimState>,
    auth: ScimAuth,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    into_response(
        async {
            let search = SearchRequest::read(&body(&state.settings, &headers, &bytes)?)?;
            let page = scim_users::list(
                &state.manage,
                &state.settings,
                &auth.caller,
                &base(&auth),
                search.filter.as_deref(),
                scim_sort::users(search.sort_by.as_deref(), search.sort_order.as_deref())?.as_ref(),
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

async fn create_user(
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
            let created = scim_users::create(
                &state.manage,
                &auth.tenant.tenant,
                &auth.tenant.issuer,
                &auth.caller,
                &auth.meta,
                &request,
            )
            .await?;
            Ok(resource(StatusCode::CREATED, created, &projection(&query)))
        }
        .await,
    )
}

async fn read_user(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or_default();
    into_response(
        async {
            let found = scim_users::get(&state.manage, &auth.caller, &base(&auth), &id).await?;
            Ok(resource(StatusCode::OK, found, &projection(&query)))
        }
        .await,
    )
}

async fn replace_user(
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
            let replaced = scim_users::replace(
                &state.manage,
                &auth.tenant.tenant,
                &auth.tenant.issuer,
                &auth.caller,
                &auth.meta,
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

async fn patch_user(
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
            let patched = scim_users::patch(
                &state.manage,
                &auth.tenant.tenant,
                &auth.tenant.issuer,
                &auth.caller,
                &auth.meta,
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

async fn delete_user(
    State(state): State<ScimState>,
    auth: ScimAuth,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    into_response(
        async {
            scim_users::delete(
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

/// `POST /Bulk` (RFC 7644 §3.7): the `BulkResponse` lists each operation that ran with its
/// `status` (a string), `location` and `version`, or the error body as its `response`. The
/// request as a whole answers 200 even when operations failed; only a malformed request is an
/// error (400 `invalidSyntax`, 413 past `maxOperations` or `maxPayloadSize`).
async fn bulk(
    State(state): State<ScimState>,
    auth: ScimAuth,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    into_response(
        async {
            let request = body(&state.settings, &headers, &bytes)?;
            let outcomes = scim_bulk::bulk(
                &state.manage,
                &auth.tenant.tenant,
                &auth.tenant.issuer,
                &auth.caller,
                &auth.meta,
                &request,
            )
            .await?;
            let operations: Vec<Value> = outcomes.into_iter().map(bulk_operation).collect();
            Ok(scim_json(
                StatusCode::OK,
                &serde_json::json!({
                    "schemas": [scim_bulk::BULK_RESPONSE],
                    "Operations": operations,
                }),
            ))
        }
        .await,
    )
}

/// One entry of a `BulkResponse` (RFC 7644 §3.7.3).
fn bulk_operation(outcome: scim_bulk::BulkOutcome) -> Value {
    let mut entry = serde_json::json!({ "method": outcome.method });
    if let Some(bulk_id) = outcome.bulk_id {
        entry["bulkId"] = bulk_id.into();
    }
    if let Some(location) = outcome.location {
        entry["location"] = location.into();
    }
    if let Some(version) = outcome.version {
        entry["version"] = version.into();
    }
    match outcome.result {
        Ok(status) => entry["status"] = status.to_string().into(),
        Err(error) => {
            let (status, body) = crate::error::scim::parts(error);
            entry["status"] = status.as_u16().to_string().into();
            entry["response"] = body;
        }
    }
    entry
}

/// `/Bulk` with another method than POST: a SCIM 405.
async fn bulk_method(_auth: ScimAuth) -> Response {
    let mut response = scim_error(ScimError::MethodNotAllowed(
        "/Bulk takes POST (RFC 7644 §3.7)".into(),
    ));
    response
        .headers_mut()
        .insert(http::header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// `/Me` (RFC 7644 §3.11): not offered.
async fn not_offered(_auth: ScimAuth) -> Response {
    scim_error(ScimError::NotImplemented(
        "this service provider does not offer this endpoint".into(),
    ))
}

/// Anything else under `/scim/v2`: a SCIM 404.
async fn unknown(_auth: ScimAuth) -> Response {
    scim_error(ScimError::NotFound)
}

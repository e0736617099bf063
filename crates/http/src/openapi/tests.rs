//! The document as a whole: every operation is identified once and can succeed, the protocol,
//! discovery and operational endpoints are there with their security and their refusals, every
//! reference resolves, and the schemas of the protocol answers accept what the engines and the
//! error seam really send.

use super::{ACCESS_TOKEN, CLIENT_BASIC, document, tags};
use axum::response::Response;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use svc_oauth::discovery::{self, DiscoverySettings, OptionalFeatures};
use svc_oauth::{ErrorCode, OAuthError};

const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];

fn doc() -> Value {
    serde_json::to_value(document()).expect("the document serialises")
}

/// `(path, method, operation)` of every operation.
fn operations(doc: &Value) -> Vec<(String, &'static str, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((path.clone(), method, op));
            }
        }
    }
    out
}

fn operation<'a>(doc: &'a Value, path: &str, method: &str) -> &'a Value {
    let op = &doc["paths"][path][method];
    assert!(op.is_object(), "{method} {path} is not documented");
    op
}

#[test]
fn operation_ids_are_unique_lower_camel_case_and_every_operation_can_succeed() {
    let doc = doc();
    let mut seen = BTreeMap::new();
    for (path, method, op) in operations(&doc) {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(
            id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id} is not lowerCamelCase"
        );
        if let Some(other) = seen.insert(id.to_owned(), format!("{method} {path}")) {
            panic!("{id} names both {other} and {method} {path}");
        }
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            responses
                .keys()
                .any(|s| s.starts_with('2') || s.starts_with('3')),
            "{method} {path} declares no 2xx/3xx response"
        );
        assert!(!responses.contains_key("default"), "{method} {path}");
    }
}

/// Security alternatives, each a list of scheme names (an empty list is "no credentials");
/// `None` when the operation declares no security at all.
type Security = Option<Vec<Vec<&'static str>>>;

/// What each operation outside `/api/v1` must be: id, tag and security.
#[test]
fn protocol_discovery_and_operational_endpoints_are_there_with_their_security() {
    let basic_or_body: Security = Some(vec![vec![CLIENT_BASIC], vec![]]);
    let bearer: Security = Some(vec![vec![ACCESS_TOKEN]]);
    let metrics: Security = Some(vec![vec![crate::health::METRICS_TOKEN]]);
    let p = tags::PROTOCOL;
    let d = tags::DISCOVERY;
    let o = tags::OPERATIONS;
    let rows: Vec<(&str, &str, &str, &str, Security)> = vec![
        (
            "/oauth/token",
            "post",
            "requestToken",
            p,
            basic_or_body.clone(),
        ),
        (
            "/oauth/introspect",
            "post",
            "introspectToken",
            p,
            basic_or_body.clone(),
        ),
        ("/oauth/revoke", "post", "revokeToken", p, basic_or_body),
        ("/userinfo", "get", "getUserInfo", p, bearer.clone()),
        ("/userinfo", "post", "postUserInfo", p, bearer),
        ("/oauth/authorize", "get", "authorize", p, None),
        ("/oauth/authorize", "post", "authorizeWithForm", p, None),
        ("/oauth/end-session", "get", "endSession", p, None),
        ("/oauth/end-session", "post", "endSessionWithForm", p, None),
        (
            "/.well-known/openid-configuration",
            "get",
            "getOpenIdConfiguration",
            d,
            None,
        ),
        (
            "/.well-known/oauth-authorization-server",
            "get",
            "getAuthorizationServerMetadata",
            d,
            None,
        ),
        (
            "/.well-known/oauth-protected-resource",
            "get",
            "getProtectedResourceMetadata",
            d,
            None,
        ),
        (
            "/.well-known/oauth-protected-resource/api/v1",
            "get",
            "getManagementApiResourceMetadata",
            d,
            None,
        ),
        ("/.well-known/jwks.json", "get", "getJwks", d, None),
        ("/health/live", "get", "getLiveness", o, None),
        ("/health/startup", "get", "getStartup", o, None),
        ("/health/ready", "get", "getReadiness", o, None),
        ("/metrics", "get", "getMetrics", o, metrics),
    ];
    let doc = doc();
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .expect("security schemes");
    for (path, method, id, tag, security) in rows {
        let op = operation(&doc, path, method);
        assert_eq!(op["operationId"], id, "{method} {path}");
        assert_eq!(op["tags"], json!([tag]), "{method} {path}");
        let declared = op.get("security").map(|alternatives| {
            alternatives
                .as_array()
                .expect("security is a list")
                .iter()
                .map(|requirement| {
                    requirement
                        .as_object()
                        .expect("a requirement is an object")
                        .keys()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(declared, security, "{method} {path}");
        for name in security.iter().flatten().flatten() {
            assert!(
                schemes.contains_key(*name),
                "{name} is not a security scheme"
            );
        }
    }
}

#[test]
fn protocol_operations_cite_their_rfc_and_point_to_discovery() {
    let doc = doc();
    let protocol: Vec<_> = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["tags"] == json!([tags::PROTOCOL]))
        .collect();
    assert_eq!(protocol.len(), 17);
    for (path, method, op) in protocol {
        let text = op["description"].as_str().unwrap_or_default();
        assert!(
            text.contains("`/.well-known/openid-configuration`")
                || text.contains("`/.well-known/oauth-authorization-server`"),
            "{method} {path} does not point to discovery"
        );
        assert!(
            text.contains("RFC ") || text.contains("OIDC Core") || text.contains("OpenID Connect"),
            "{method} {path} cites no specification"
        );
    }
}

/// Every status a request can meet is declared, with every media type it can carry: the
/// engine's RFC 6749 JSON and the prelude's and middleware's problems side by side.
#[test]
fn refusals_are_declared_with_each_body_they_can_carry() {
    let doc = doc();
    let media = |op: &Value, status: &str| -> BTreeSet<String> {
        op["responses"][status]["content"]
            .as_object()
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default()
    };
    let both: BTreeSet<String> = ["application/json", "application/problem+json"]
        .map(String::from)
        .into();
    for path in ["/oauth/token", "/oauth/introspect", "/oauth/revoke"] {
        let op = operation(&doc, path, "post");
        let statuses: Vec<_> = op["responses"].as_object().unwrap().keys().collect();
        assert_eq!(
            statuses,
            [
                "200", "400", "401", "403", "404", "413", "429", "500", "503"
            ],
            "{path}"
        );
        for status in ["400", "500", "503"] {
            assert_eq!(media(op, status), both, "{path} {status}");
        }
        assert!(op["responses"]["429"]["headers"]["Retry-After"].is_object());
        assert!(op["responses"]["401"]["headers"]["WWW-Authenticate"].is_object());
        assert_eq!(
            op["requestBody"]["content"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["application/x-www-form-urlencoded"]
        );
    }
    for method in ["get", "post"] {
        let op = operation(&doc, "/userinfo", method);
        assert!(
            op["responses"].get("429").is_none(),
            "UserInfo is not throttled"
        );
        assert_eq!(
            media(op, "401"),
            ["application/json", "text/plain"].map(String::from).into()
        );
        assert!(op["responses"]["401"]["headers"]["WWW-Authenticate"].is_object());
        assert_eq!(
            media(op, "403"),
            both,
            "insufficient_scope, or a suspended tenant"
        );
    }
    for (path, method) in [
        ("/oauth/authorize", "get"),
        ("/oauth/authorize", "post"),
        ("/oauth/end-session", "get"),
        ("/oauth/end-session", "post"),
    ] {
        let op = operation(&doc, path, method);
        assert!(op["responses"]["303"]["headers"]["Location"].is_object());
        for status in ["400", "500", "503"] {
            assert_eq!(
                media(op, status),
                ["application/problem+json", "text/html"]
                    .map(String::from)
                    .into(),
                "{method} {path} {status}"
            );
        }
        assert_eq!(
            media(op, "404"),
            ["application/problem+json".to_owned()].into()
        );
    }
    let jwks = operation(&doc, "/.well-known/jwks.json", "get");
    assert!(jwks["responses"]["304"].is_object());
    for path in ["/health/live", "/health/startup", "/health/ready"] {
        let op = operation(&doc, path, "get");
        assert!(
            op["responses"].get("400").is_none(),
            "{path}: no host check"
        );
        assert!(op["responses"].get("404").is_none(), "{path}: no tenant");
    }
    let metrics = operation(&doc, "/metrics", "get");
    assert_eq!(
        media(metrics, "200"),
        ["application/openmetrics-text".to_owned()].into()
    );
    for status in ["401", "403", "404"] {
        assert!(
            metrics["responses"][status].is_object(),
            "/metrics {status}"
        );
    }
}

/// Every `$ref` points at something in the document.
#[test]
fn every_reference_resolves() {
    fn walk<'a>(value: &'a Value, refs: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    refs.push(r);
                }
                map.values().for_each(|v| walk(v, refs));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, refs)),
            _ => {}
        }
    }
    let doc = doc();
    let mut refs = Vec::new();
    walk(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        let pointer = r.strip_prefix('#').expect("local reference");
        assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
    }
}

// --- The schemas against real answers ----------------------------------------------------------

/// A small JSON Schema check covering what the document uses: `$ref`, `allOf`, `oneOf`, `type`
/// (possibly a list), `enum`, `required`, `properties`, `items`, `maxLength`.
fn conforms(doc: &Value, schema: &Value, value: &Value) -> Result<(), String> {
    if let Some(r) = schema["$ref"].as_str() {
        let target = doc
            .pointer(r.trim_start_matches('#'))
            .ok_or_else(|| format!("{r} does not resolve"))?;
        return conforms(doc, target, value);
    }
    if let Some(all) = schema["allOf"].as_array() {
        for part in all {
            conforms(doc, part, value)?;
        }
    }
    if let Some(any) = schema["oneOf"].as_array() {
        let matching = any
            .iter()
            .filter(|s| conforms(doc, s, value).is_ok())
            .count();
        if matching != 1 {
            return Err(format!("{value} matches {matching} of oneOf"));
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let ok = types.iter().any(|t| match *t {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            "null" => value.is_null(),
            _ => false,
        });
        if !ok {
            return Err(format!("{value} is not of type {types:?}"));
        }
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        return Err(format!("{value} is not one of {allowed:?}"));
    }
    if let (Some(max), Some(text)) = (schema["maxLength"].as_u64(), value.as_str())
        && text.chars().count() as u64 > max
    {
        return Err(format!("{value} is longer than {max}"));
    }
    if let Some(object) = value.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            if !object.contains_key(name) {
                return Err(format!("`{name}` is required in {value}"));
            }
        }
        if let Some(properties) = schema["properties"].as_object() {
            for (name, member) in object {
                if let Some(property) = properties.get(name) {
                    conforms(doc, property, member).map_err(|e| format!("{name}: {e}"))?;
                }
            }
        }
    }
    if let (Some(items), Some(values)) = (schema.get("items"), value.as_array()) {
        for item in values {
            conforms(doc, items, item)?;
        }
    }
    Ok(())
}

/// The schema of `status`/`media` of an operation.
fn response_schema<'a>(
    doc: &'a Value,
    path: &str,
    method: &str,
    status: &str,
    media: &str,
) -> &'a Value {
    let schema = &operation(doc, path, method)["responses"][status]["content"][media]["schema"];
    assert!(
        schema.is_object(),
        "{method} {path} {status} {media} has no schema"
    );
    schema
}

async fn json_body(response: Response) -> Value {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).expect("a JSON body")
}

#[tokio::test]
async fn every_oauth_error_the_seam_renders_fits_the_error_schema() {
    let doc = doc();
    let schema = response_schema(&doc, "/oauth/token", "post", "400", "application/json");
    for code in crate::routes::token::OAUTH_ERROR_CODES {
        let rendered = crate::error::oauth::response(&OAuthError::new(code, "described"));
        let status = rendered.status().as_u16().to_string();
        let body = json_body(rendered).await;
        conforms(&doc, schema, &body).unwrap_or_else(|e| panic!("{code}: {e}"));
        // The status it gets is declared, with this schema, on an endpoint that answers it.
        let (path, method) = match code {
            ErrorCode::InvalidToken | ErrorCode::InsufficientScope => ("/userinfo", "get"),
            _ => ("/oauth/token", "post"),
        };
        let declared = response_schema(&doc, path, method, &status, "application/json");
        conforms(&doc, declared, &body).unwrap_or_else(|e| panic!("{code}: {e}"));
    }
}

#[test]
fn the_metadata_documents_fit_their_schemas() {
    let doc = doc();
    let settings = DiscoverySettings {
        access_token_alg: svc_domain::SigningAlg::Es256,
        features: OptionalFeatures {
            introspection: true,
            revocation: true,
            end_session: true,
            ..OptionalFeatures::default()
        },
    };
    let issuer = "https://acme.id.example.com";
    for (path, value) in [
        (
            "/.well-known/openid-configuration",
            discovery::openid_configuration(issuer, &settings),
        ),
        (
            "/.well-known/oauth-authorization-server",
            discovery::authorization_server_metadata(issuer, &settings),
        ),
        (
            "/.well-known/oauth-protected-resource",
            discovery::protected_resource_metadata(issuer, &settings),
        ),
        (
            "/.well-known/oauth-protected-resource/api/v1",
            discovery::protected_resource_metadata(issuer, &settings),
        ),
    ] {
        let schema = response_schema(&doc, path, "get", "200", "application/json");
        conforms(&doc, schema, &value).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    // Without the optional features the document still fits.
    let bare = DiscoverySettings {
        features: OptionalFeatures::default(),
        ..settings
    };
    let schema = response_schema(
        &doc,
        "/.well-known/openid-configuration",
        "get",
        "200",
        "application/json",
    );
    conforms(
        &doc,
        schema,
        &discovery::openid_configuration(issuer, &bare),
    )
    .unwrap();
}

/// The grants the token request documents are exactly the ones discovery advertises.
#[test]
fn the_token_request_documents_the_advertised_grants() {
    let doc = doc();
    let schema = &doc["components"]["schemas"]["TokenRequest"];
    let mut documented = BTreeSet::new();
    for branch in schema["oneOf"].as_array().expect("oneOf") {
        let target = doc
            .pointer(
                branch["$ref"]
                    .as_str()
                    .expect("a reference")
                    .trim_start_matches('#'),
            )
            .expect("resolves");
        let properties = target["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(std::iter::once(target))
            .find_map(|part| part["properties"]["grant_type"]["enum"].as_array())
            .expect("grant_type enum");
        documented.extend(
            properties
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned),
        );
    }
    let advertised = discovery::authorization_server_metadata(
        "https://acme.id.example.com",
        &DiscoverySettings {
            access_token_alg: svc_domain::SigningAlg::Es256,
            // The document describes every grant the deployment can enable.
            features: OptionalFeatures {
                device_authorization: true,
                ciba: true,
                token_exchange: true,
                agent_challenge: true,
                ..OptionalFeatures::default()
            },
        },
    );
    let advertised: BTreeSet<String> = advertised["grant_types_supported"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    assert_eq!(documented, advertised);
}

#[test]
fn token_introspection_and_userinfo_answers_fit_their_schemas() {
    let doc = doc();
    let token = response_schema(&doc, "/oauth/token", "post", "200", "application/json");
    for answer in [
        json!({"access_token": "a.b.c", "token_type": "Bearer", "expires_in": 900, "scope": ""}),
        json!({"access_token": "a.b.c", "token_type": "Bearer", "expires_in": 900,
               "scope": "offline_access openid", "refresh_token": "rt_x", "id_token": "d.e.f"}),
        json!({"access_token": "a.b.c", "token_type": "DPoP", "expires_in": 300,
               "scope": "orders:read",
               "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
    ] {
        conforms(&doc, token, &answer).unwrap();
    }
    let introspection =
        response_schema(&doc, "/oauth/introspect", "post", "200", "application/json");
    for answer in [
        json!({"active": false}),
        json!({"active": true, "token_type": "Bearer", "scope": "users:read",
               "client_id": "app_1", "sub": "app_1", "aud": "https://i/api/v1", "iss": "https://i",
               "exp": 2, "iat": 1, "nbf": 1, "jti": "j", "tenant_id": "ten_1",
               "subject_type": "system"}),
        json!({"active": true, "token_type": "refresh_token", "client_id": "app_1",
               "scope": "openid offline_access", "sub": "usr_1", "exp": 2, "iat": 1,
               "tenant_id": "ten_1"}),
    ] {
        conforms(&doc, introspection, &answer).unwrap();
    }
    let claims = response_schema(&doc, "/userinfo", "get", "200", "application/json");
    conforms(
        &doc,
        claims,
        &json!({"sub": "usr_1", "email": "a@example.com", "email_verified": false,
                "updated_at": 1_730_000_000, "name": "A"}),
    )
    .unwrap();
    assert!(conforms(&doc, claims, &json!({"email": "a@example.com"})).is_err());
}

#[tokio::test]
async fn health_answers_fit_their_schema() {
    let doc = doc();
    let schema = response_schema(&doc, "/health/live", "get", "200", "application/json");
    let body = json_body(crate::health::live().await).await;
    conforms(&doc, schema, &body).unwrap();
    let schema = response_schema(&doc, "/health/ready", "get", "503", "application/json");
    conforms(&doc, schema, &json!({"status": "unavailable"})).unwrap();
}

/// Every management scope the document's security scheme offers is described for what it
/// grants, and every tag an operation carries is declared with a description (the organization
/// routes included).
#[test]
fn management_scopes_and_tags_are_all_described() {
    let doc = doc();
    let flow = &doc["components"]["securitySchemes"][super::TENANT_TOKEN]["flows"]["clientCredentials"]
        ["scopes"];
    let scopes = flow.as_object().expect("scopes");
    let offered: BTreeSet<&str> = scopes.keys().map(String::as_str).collect();
    let served: BTreeSet<&str> = svc_domain::MANAGEMENT_API_SCOPES.into_iter().collect();
    assert_eq!(offered, served);
    for (scope, description) in scopes {
        assert_ne!(
            description, "A management scope.",
            "{scope} has no description of its own"
        );
    }
    assert!(offered.contains("organizations:read") && offered.contains("organizations:write"));

    let declared: BTreeMap<&str, &str> = doc["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().expect("a name"),
                t["description"].as_str().expect("a description"),
            )
        })
        .collect();
    let mut used = BTreeSet::new();
    for (path, method, op) in operations(&doc) {
        for tag in op["tags"].as_array().into_iter().flatten() {
            let tag = tag.as_str().expect("a tag name");
            assert!(
                declared.contains_key(tag),
                "{method} {path}: {tag} is not declared"
            );
            used.insert(tag.to_owned());
        }
    }
    assert!(used.contains(tags::ORGANIZATIONS));
    let organizations = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["tags"] == json!([tags::ORGANIZATIONS]))
        .count();
    assert_eq!(
        organizations, 25,
        "the organization, membership, claimed-domain, single sign-on and directory-group \
         operations"
    );
}

/// The API resource operations are there under their declared tag, each secured with the
/// applications scope its handler demands, and each answer they can meet is declared: 404 on
/// an id path, 409 on a write, 412 where `If-Match` is taken.
#[test]
fn api_resource_operations_are_documented_with_the_applications_scopes() {
    let doc = doc();
    let (one, all) = ("/api/v1/api-resources/{id}", "/api/v1/api-resources");
    let (r, w) = ("applications:read", "applications:write");
    let rows = [
        (all, "post", "createApiResource", w, "201"),
        (all, "get", "listApiResources", r, "200"),
        (one, "get", "getApiResource", r, "200"),
        (one, "patch", "updateApiResource", w, "200"),
        (one, "delete", "deleteApiResource", w, "204"),
    ];
    for (path, method, id, scope, success) in rows {
        let op = operation(&doc, path, method);
        assert_eq!(op["operationId"], id);
        assert_eq!(op["tags"], json!([tags::API_RESOURCES]), "{id}");
        assert_eq!(
            op["security"],
            json!([{ super::TENANT_TOKEN: [scope] }]),
            "{id}"
        );
        let responses = op["responses"].as_object().expect("responses");
        assert!(responses.contains_key(success), "{id}");
        assert_eq!(responses.contains_key("404"), path == one, "{id}");
        assert_eq!(responses.contains_key("409"), method != "get", "{id}");
        let changes = matches!(method, "patch" | "delete");
        assert_eq!(responses.contains_key("412"), changes, "{id}");
        for status in ["400", "401", "403", "413"] {
            assert!(responses.contains_key(status), "{id}: {status}");
        }
    }
    let documented = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["tags"] == json!([tags::API_RESOURCES]))
        .count();
    assert_eq!(documented, rows.len(), "no API resource operation more");
    let declared = doc["tags"].as_array().expect("tags");
    assert!(
        declared
            .iter()
            .any(|t| t["name"] == tags::API_RESOURCES && t["description"].is_string())
    );
}

/// The access-policy operations are there under their declared tag, each secured with the
/// policies scope its handler demands, with every answer they can meet: 404 on an id path, 409
/// on a write, 412 where `If-Match` is taken.
#[test]
fn policy_operations_are_documented_with_the_policies_scopes() {
    let doc = doc();
    let (one, all) = ("/api/v1/policies/{id}", "/api/v1/policies");
    let (r, w) = ("policies:read", "policies:write");
    let rows = [
        (all, "post", "createPolicy", w, "201"),
        (all, "get", "listPolicies", r, "200"),
        (one, "get", "getPolicy", r, "200"),
        (one, "patch", "updatePolicy", w, "200"),
        (one, "delete", "deletePolicy", w, "204"),
    ];
    for (path, method, id, scope, success) in rows {
        let op = operation(&doc, path, method);
        assert_eq!(op["operationId"], id);
        assert_eq!(op["tags"], json!([tags::POLICIES]), "{id}");
        assert_eq!(
            op["security"],
            json!([{ super::TENANT_TOKEN: [scope] }]),
            "{id}"
        );
        let responses = op["responses"].as_object().expect("responses");
        assert!(responses.contains_key(success), "{id}");
        assert_eq!(responses.contains_key("404"), path == one, "{id}");
        assert_eq!(responses.contains_key("409"), method != "get", "{id}");
        let changes = matches!(method, "patch" | "delete");
        assert_eq!(responses.contains_key("412"), changes, "{id}");
        for status in ["400", "401", "403", "413"] {
            assert!(responses.contains_key(status), "{id}: {status}");
        }
    }
    let documented = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["tags"] == json!([tags::POLICIES]))
        .count();
    assert_eq!(documented, rows.len(), "no policy operation more");
}

/// The role operations are there under their declared tag with the policies scopes, the
/// application-role operations under Applications with the applications scopes, and each answer
/// they can meet is declared: 404 on a key or id path, 409 on a write, 412 where `If-Match` is
/// taken.
#[test]
fn role_operations_are_documented_with_their_scopes() {
    let doc = doc();
    let (one, all) = ("/api/v1/roles/{key}", "/api/v1/roles");
    let app = "/api/v1/applications/{id}/roles";
    let (r, w) = ("policies:read", "policies:write");
    let rows = [
        (all, "post", "createRole", w, "201"),
        (all, "get", "listRoles", r, "200"),
        (one, "get", "getRole", r, "200"),
        (one, "patch", "updateRole", w, "200"),
        (one, "delete", "deleteRole", w, "204"),
        (
            app,
            "get",
            "getApplicationRoles",
            "applications:read",
            "200",
        ),
        (
            app,
            "put",
            "setApplicationRoles",
            "applications:write",
            "200",
        ),
    ];
    for (path, method, id, scope, success) in rows {
        let op = operation(&doc, path, method);
        assert_eq!(op["operationId"], id);
        let tag = if path == app {
            tags::APPLICATIONS
        } else {
            tags::ROLES
        };
        assert_eq!(op["tags"], json!([tag]), "{id}");
        assert_eq!(
            op["security"],
            json!([{ super::TENANT_TOKEN: [scope] }]),
            "{id}"
        );
        let responses = op["responses"].as_object().expect("responses");
        assert!(responses.contains_key(success), "{id}");
        assert_eq!(responses.contains_key("404"), path != all, "{id}");
        assert_eq!(responses.contains_key("409"), method != "get", "{id}");
        let changes = path == one && matches!(method, "patch" | "delete");
        assert_eq!(responses.contains_key("412"), changes, "{id}");
    }
    let documented = operations(&doc)
        .into_iter()
        .filter(|(_, _, op)| op["tags"] == json!([tags::ROLES]))
        .count();
    assert_eq!(documented, 5, "no role operation more");
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["RoleKind"]["enum"],
        json!(["tenant", "organization"])
    );
    for role in ["TenantRole", "OrganizationRole"] {
        assert_eq!(
            schemas[role]["pattern"],
            svc_manage::roles::ROLE_KEY_PATTERN,
            "{role}: custom roles are assignable too"
        );
    }
}

#[test]
fn switched_off_endpoints_leave_the_document() {
    let all = document();
    assert!(all.paths.paths.contains_key("/bc-authorize"));
    let fewer = super::document_without(&["/bc-authorize", "/oauth/device/code"]);
    assert!(!fewer.paths.paths.contains_key("/bc-authorize"));
    assert!(!fewer.paths.paths.contains_key("/oauth/device/code"));
    assert_eq!(fewer.paths.paths.len(), all.paths.paths.len() - 2);
}

//! Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-03 §4): the JSON a
//! client publishes at its URL `client_id`, read into the same [`ClientMetadata`] as dynamic
//! registration and so into the same [`ApplicationInput`] and rule set as `/api/v1/applications`.
//!
//! Rules on top of registration's, each refused as `invalid_client_metadata` naming the member:
//! 1. The document is a JSON object whose `client_id` is the URL it was fetched from, compared
//!    as strings (§4.1).
//! 2. No shared secret can exist between a client and every server that reads its document
//!    (§4.1): `token_endpoint_auth_method` is `none` (the default here, unlike RFC 7591's) or
//!    `private_key_jwt`; `client_secret` and `client_secret_expires_at` are refused.
//! 3. Only the grants a person approves at the authorization endpoint, `authorization_code`
//!    and `refresh_token`: anything that acts without a person needs a registration.
//! 4. `redirect_uris` is required (at least one), matched exactly like any other.
//! 5. Not taken from a document: `software_statement` (nobody vouches for a URL here) and the
//!    back- and front-channel logout URIs (a document must not make the server call or frame
//!    an address on a person's behalf without an administrator's registration).
//! 6. Members svc does not keep (`client_uri`, `logo_uri`, `contacts`, a server-specific
//!    extension, …) are ignored, unlike registration: the document is published for every
//!    server that reads it, not written for this one, and nothing here claims to keep them.
//! 7. `client_name`, when absent, is the URL's host: the consent page always names who asks.

use super::metadata::{ClientMetadata, Kept, in_metadata_terms};
use crate::applications::{ApplicationInput, adopt_in};
use crate::{ManageContext, ManageError};
use serde_json::{Map, Value};
use svc_domain::{Application, ClientIdUrl, GrantType, MetadataDocument, TenantId};
use time::OffsetDateTime;

/// The largest document accepted (the draft suggests 5 KiB; a document with a JWK Set inline
/// needs a little more).
pub const MAX_METADATA_DOCUMENT_BYTES: usize = 16 * 1024;

/// The members of [`ClientMetadata`] a document may set (rule 5 leaves the rest out).
const TAKEN: &[&str] = &[
    "redirect_uris",
    "post_logout_redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "client_name",
    "scope",
    "jwks",
    "jwks_uri",
    "id_token_signed_response_alg",
    "require_pushed_authorization_requests",
    "dpop_bound_access_tokens",
    "authorization_details_types",
];

/// Rule 5's members: refused by name rather than ignored, since the client expects them used.
const REFUSED: &[&str] = &[
    "software_statement",
    "backchannel_logout_uri",
    "backchannel_logout_session_required",
    "frontchannel_logout_uri",
    "frontchannel_logout_session_required",
];

fn invalid(field: &str, message: impl Into<String>) -> ManageError {
    ManageError::invalid(field, message)
}

/// The management API's input for the document `body` fetched from `url`, after rules 1–7; the
/// shared rules run when the caller validates the result.
pub fn document_input(url: &ClientIdUrl, body: &[u8]) -> Result<ApplicationInput, ManageError> {
    if body.len() > MAX_METADATA_DOCUMENT_BYTES {
        return Err(invalid(
            "client_id",
            "the client metadata document is larger than 16 KiB",
        ));
    }
    let Ok(Value::Object(document)) = serde_json::from_slice::<Value>(body) else {
        return Err(invalid(
            "client_id",
            "the client metadata document is not a JSON object",
        ));
    };
    // 1.
    if document.get("client_id").and_then(Value::as_str) != Some(url.as_str()) {
        return Err(invalid(
            "client_id",
            "the client metadata document's client_id is not the URL it was fetched from",
        ));
    }
    // 2. and 5.
    for member in ["client_secret", "client_secret_expires_at"]
        .iter()
        .chain(REFUSED)
    {
        if document.contains_key(*member) {
            return Err(invalid(
                member,
                format!("{member} is not accepted in a client metadata document"),
            ));
        }
    }
    // 6.
    let taken: Map<String, Value> = document
        .into_iter()
        .filter(|(key, _)| TAKEN.contains(&key.as_str()))
        .collect();
    let mut metadata: ClientMetadata = serde_json::from_value(Value::Object(taken))
        .map_err(|e| invalid("client_id", format!("client metadata document: {e}")))?;
    // 2.
    let method = metadata
        .token_endpoint_auth_method
        .get_or_insert_with(|| "none".to_owned());
    if method != "none" && method != "private_key_jwt" {
        return Err(invalid(
            "token_endpoint_auth_method",
            "a client identified by a metadata document authenticates with none or \
             private_key_jwt (it cannot share a secret with every server that reads it)",
        ));
    }
    // 3.
    let grants = metadata
        .grant_types
        .get_or_insert_with(|| vec![GrantType::AuthorizationCode.as_str().to_owned()]);
    let allowed = [
        GrantType::AuthorizationCode.as_str(),
        GrantType::RefreshToken.as_str(),
    ];
    if let Some(other) = grants.iter().find(|g| !allowed.contains(&g.as_str())) {
        return Err(invalid(
            "grant_types",
            format!(
                "{other} cannot be used by a client identified by a metadata document \
                 (authorization_code and refresh_token only)"
            ),
        ));
    }
    // 4.
    if metadata.redirect_uris.as_ref().is_none_or(Vec::is_empty) {
        return Err(invalid(
            "redirect_uris",
            "a client metadata document must list its redirect_uris",
        ));
    }
    // 7.
    metadata
        .client_name
        .get_or_insert_with(|| url.authority().to_owned());
    metadata
        .to_input(Kept::new_registration())
        .map_err(in_metadata_terms)
}

/// Reads the document `body`, fetched from `url`, into the application of `tenant` for that URL
/// (created the first time, refreshed afterwards; see `applications::document`), its reading
/// standing until `fresh_until`. `None` when the tenant does not accept metadata documents
/// (read again in the writing transaction, so a tenant that just turned them off gets none).
///
/// Errors: [`ManageError::Invalid`] naming the first member that breaks a rule (nothing is
/// written); [`ManageError::PreconditionFailed`] or the store's conflict when another instance
/// adopted the same document meanwhile (read again).
pub async fn adopt(
    ctx: &ManageContext,
    tenant: &TenantId,
    url: &ClientIdUrl,
    body: &[u8],
    fresh_until: OffsetDateTime,
) -> Result<Option<Application>, ManageError> {
    let valid = document_input(url, body)?
        .validate()
        .and_then(|valid| valid.offered_by(ctx))
        .map_err(in_metadata_terms)?;
    let mut tx = ctx.store.write().await?;
    if !tx.metadata_documents_accepted(tenant).await? {
        return Ok(None);
    }
    let document = MetadataDocument {
        url: url.clone(),
        fresh_until,
    };
    let application = adopt_in(tx.as_mut(), ctx, tenant, valid, document).await?;
    tx.commit().await?;
    ctx.changes.application_changed(tenant, &application.id);
    Ok(Some(application))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    const URL: &str = "https://client.example/oauth/metadata.json";

    fn url() -> ClientIdUrl {
        ClientIdUrl::parse(URL, false).unwrap()
    }

    fn input(document: Value) -> Result<ApplicationInput, ManageError> {
        document_input(&url(), document.to_string().as_bytes())
    }

    fn field_of(e: ManageError) -> String {
        match e {
            ManageError::Invalid { field, .. } => field,
            other => panic!("not a refusal naming a field: {other:?}"),
        }
    }

    #[test]
    fn a_public_client_document_becomes_an_application_under_the_shared_rules() {
        let made = input(json!({
            "client_id": URL,
            "client_name": "Example MCP client",
            "client_uri": "https://client.example",
            "logo_uri": "https://client.example/logo.png",
            "redirect_uris": ["http://127.0.0.1:33418/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": "openid offline_access",
            "x-vendor-extension": {"anything": true}
        }))
        .unwrap();
        assert_eq!(made.name, "Example MCP client");
        assert_eq!(made.token_endpoint_auth_method, "none", "rule 2's default");
        assert_eq!(made.grant_types, ["authorization_code", "refresh_token"]);
        assert_eq!(made.allowed_scopes, ["openid", "offline_access"]);
        assert!(!made.first_party);
        assert!(made.validate().is_ok());

        let unnamed =
            input(json!({"client_id": URL, "redirect_uris": ["https://client.example/cb"]}))
                .unwrap();
        assert_eq!(unnamed.name, "client.example", "rule 7");
        assert_eq!(unnamed.grant_types, ["authorization_code"]);
    }

    #[test]
    fn each_rule_refuses_naming_the_member() {
        let base = json!({"client_id": URL, "redirect_uris": ["https://client.example/cb"]});
        let with = |key: &str, value: Value| {
            let mut document = base.clone();
            document[key] = value;
            document
        };
        for (document, field) in [
            (
                with("client_id", json!("https://client.example/other")),
                "client_id",
            ),
            (with("client_id", json!(null)), "client_id"),
            (with("client_secret", json!("s3cret")), "client_secret"),
            (
                with("client_secret_expires_at", json!(0)),
                "client_secret_expires_at",
            ),
            (
                with("token_endpoint_auth_method", json!("client_secret_basic")),
                "token_endpoint_auth_method",
            ),
            (
                with("token_endpoint_auth_method", json!("client_secret_post")),
                "token_endpoint_auth_method",
            ),
            (
                with("grant_types", json!(["client_credentials"])),
                "grant_types",
            ),
            (
                with(
                    "grant_types",
                    json!(["urn:ietf:params:oauth:grant-type:device_code"]),
                ),
                "grant_types",
            ),
            (with("redirect_uris", json!([])), "redirect_uris"),
            (
                with("software_statement", json!("eyJ.x.y")),
                "software_statement",
            ),
            (
                with(
                    "backchannel_logout_uri",
                    json!("https://client.example/bcl"),
                ),
                "backchannel_logout_uri",
            ),
            (
                with(
                    "frontchannel_logout_uri",
                    json!("https://client.example/fcl"),
                ),
                "frontchannel_logout_uri",
            ),
            (with("scope", json!("openid applications:write")), "scope"),
            (with("client_name", json!("")), "client_name"),
            (
                with("redirect_uris", json!("https://client.example/cb")),
                "client_id",
            ),
        ] {
            let refused = input(document.clone())
                .and_then(|made| made.validate().map(|_| made).map_err(in_metadata_terms))
                .unwrap_err();
            assert_eq!(field_of(refused), field, "{document}");
        }
        let mut without = base.clone();
        without.as_object_mut().unwrap().remove("redirect_uris");
        assert_eq!(field_of(input(without).unwrap_err()), "redirect_uris");
    }

    #[test]
    fn what_is_not_a_json_object_or_too_large_is_refused() {
        for body in [&b"[1]"[..], b"not json", b"\"https://client.example\"", b""] {
            assert_eq!(
                field_of(document_input(&url(), body).unwrap_err()),
                "client_id"
            );
        }
        let padded = json!({
            "client_id": URL,
            "redirect_uris": ["https://client.example/cb"],
            "client_uri": "x".repeat(MAX_METADATA_DOCUMENT_BYTES),
        });
        match document_input(&url(), padded.to_string().as_bytes()).unwrap_err() {
            ManageError::Invalid { field, message } => {
                assert_eq!(field, "client_id");
                assert!(message.contains("16 KiB"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}

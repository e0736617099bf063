//! Client metadata as RFC 7591 §2 spells it, its translation into the management API's
//! [`ApplicationInput`] (so one rule set validates both surfaces), and the client information
//! response (RFC 7591 §3.2.1, RFC 7592 §3).
//!
//! Strict by choice: RFC 7591 §2 lets a server ignore metadata it does not understand, but a
//! client that sends `logo_uri` or `contacts` and gets them silently dropped believes they are
//! shown or kept. Every member not listed on [`ClientMetadata`] is refused as
//! `invalid_client_metadata`, naming it.

use crate::ManageError;
use crate::applications::ApplicationInput;
use serde::{Deserialize, Serialize};
use svc_domain::{Application, GrantType, MANAGEMENT_API_SCOPES};

/// `client_name` when the client sends none: the consent page always has something to show.
pub(super) const DEFAULT_CLIENT_NAME: &str = "Unnamed application";
/// `scope` when the client sends none.
pub(super) const DEFAULT_SCOPE: &str = "openid";

/// The client metadata a client registers (RFC 7591 §2) or replaces (RFC 7592 §2.2). Every member
/// is optional; absent ones take the RFC 7591 defaults (`grant_types` `["authorization_code"]`,
/// `response_types` `["code"]`, `token_endpoint_auth_method` `client_secret_basic`) or ours
/// (`client_name` "Unnamed application", `scope` `openid`). Unknown members are refused.
#[derive(Clone, Default, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "client_name": "Shop",
    "redirect_uris": ["https://shop.example/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "client_secret_basic",
    "scope": "openid profile email offline_access"
}))]
pub struct ClientMetadata {
    /// Redirect URIs, matched exactly (https, or a loopback / private-use URI for native
    /// apps; no fragment, no `javascript:`); at most 20.
    #[serde(default)]
    pub redirect_uris: Option<Vec<String>>,
    /// Where RP-initiated logout may return; at most 20.
    #[serde(default)]
    pub post_logout_redirect_uris: Option<Vec<String>>,
    /// Among `authorization_code`, `refresh_token`, `client_credentials`,
    /// `urn:ietf:params:oauth:grant-type:device_code`. Default `["authorization_code"]`.
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    /// `["code"]` (the default) with `authorization_code`, else empty: no other response type is
    /// offered.
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    /// `none`, `client_secret_basic` (default), `client_secret_post` or `private_key_jwt`.
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// Shown on the consent page; 1 to 200 characters.
    #[serde(default)]
    pub client_name: Option<String>,
    /// Space-separated scopes the client may be granted (default `openid`); management API
    /// scopes are refused.
    #[serde(default)]
    pub scope: Option<String>,
    /// Inline public JWK Set, for `private_key_jwt`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<serde_json::Value>,
    /// Where the public JWK Set is published (https, not an internal address), for
    /// `private_key_jwt`.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// `ES256`, `EdDSA` or `RS256` (default).
    #[serde(default)]
    pub id_token_signed_response_alg: Option<String>,
    /// RFC 9126 §6: authorization requests must be pushed first. Default false.
    #[serde(default)]
    pub require_pushed_authorization_requests: Option<bool>,
    /// RFC 9449 §5.2: every token request must carry a DPoP proof. Default false.
    #[serde(default)]
    pub dpop_bound_access_tokens: Option<bool>,
    /// Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed (needs
    /// `[logout].backchannel`).
    #[serde(default)]
    pub backchannel_logout_uri: Option<String>,
    /// Back-Channel Logout 1.0 §2.2: logout tokens must carry `sid`. Default false.
    #[serde(default)]
    pub backchannel_logout_session_required: Option<bool>,
    /// Front-Channel Logout 1.0 §2: rendered in an iframe when the session ends (needs
    /// `[logout].frontchannel`).
    #[serde(default)]
    pub frontchannel_logout_uri: Option<String>,
    /// Front-Channel Logout 1.0 §2: the iframe's URL carries `iss` and `sid`. Default false.
    #[serde(default)]
    pub frontchannel_logout_session_required: Option<bool>,
    /// RFC 9396 §10.2 `authorization_details_types`, each with its description and JSON Schema
    /// as the management API takes them (a bare type name is refused: svc validates every
    /// detail against its type's schema). Needs `[oidc].authorization_details`.
    #[serde(default)]
    pub authorization_details_types: Option<Vec<crate::applications::DetailTypeInput>>,
    /// RFC 7591 §2.3: a JWT signed by an issuer of
    /// `[dynamic_registration].software_statement_issuers`, whose metadata take precedence over
    /// the plain members; refused with `unapproved_software_statement` (another issuer) or
    /// `invalid_software_statement`.
    #[serde(default)]
    pub software_statement: Option<String>,
    /// RFC 7592 §2.2: on replacement, the client's own id (required there); refused on
    /// registration, where the server assigns it.
    #[serde(default)]
    pub client_id: Option<String>,
    /// RFC 7592 §2.2: on replacement, the current secret if sent (it cannot be changed);
    /// refused on registration.
    #[serde(default)]
    pub client_secret: Option<String>,
}

// By hand: a `client_secret` sent on replacement never reaches a log through `{:?}`.
impl std::fmt::Debug for ClientMetadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientMetadata")
            .field("client_name", &self.client_name)
            .field("redirect_uris", &self.redirect_uris)
            .field("grant_types", &self.grant_types)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// What an existing application keeps across a replacement that the registration metadata does
/// not carry (set by an administrator through the management API, never by the client).
pub(super) struct Kept {
    pub(super) api_audience: Option<String>,
    pub(super) first_party: bool,
    pub(super) minimum_acr: Option<String>,
    pub(super) organization_usage: Option<String>,
}

impl Kept {
    /// A new registration: third-party, no audience, no minimum, organizations allowed.
    pub(super) fn new_registration() -> Self {
        Self {
            api_audience: None,
            first_party: false,
            minimum_acr: None,
            organization_usage: None,
        }
    }

    /// What `app` keeps.
    pub(super) fn of(app: &Application) -> Self {
        Self {
            api_audience: app.api_audience.clone(),
            first_party: app.first_party,
            minimum_acr: app.minimum_acr.clone(),
            organization_usage: Some(app.organization_usage.as_str().to_owned()),
        }
    }
}

impl ClientMetadata {
    /// Sets every member `vouched` carries (a software statement's metadata, which take
    /// precedence, RFC 7591 §2.3).
    pub(super) fn overlay(&mut self, vouched: ClientMetadata) {
        macro_rules! take {
            ($($field:ident),*) => {
                $(if vouched.$field.is_some() {
                    self.$field = vouched.$field;
                })*
            };
        }
        take!(
            redirect_uris,
            post_logout_redirect_uris,
            grant_types,
            response_types,
            token_endpoint_auth_method,
            client_name,
            scope,
            jwks,
            jwks_uri,
            id_token_signed_response_alg,
            require_pushed_authorization_requests,
            dpop_bound_access_tokens,
            backchannel_logout_uri,
            backchannel_logout_session_required,
            frontchannel_logout_uri,
            frontchannel_logout_session_required,
            authorization_details_types
        );
    }

    /// The management API's input for this metadata, after the rules only registration has;
    /// the shared rules run when the caller validates the result.
    pub(super) fn to_input(&self, kept: Kept) -> Result<ApplicationInput, ManageError> {
        check_no_software_statement(self.software_statement.as_deref())?;
        let grant_types = self
            .grant_types
            .clone()
            .unwrap_or_else(|| vec![GrantType::AuthorizationCode.as_str().to_owned()]);
        check_response_types(self.response_types.as_deref(), &grant_types)?;
        let scopes = check_no_management_scope(self.scope.as_deref().unwrap_or(DEFAULT_SCOPE))?;
        Ok(ApplicationInput {
            name: self
                .client_name
                .clone()
                .unwrap_or_else(|| DEFAULT_CLIENT_NAME.to_owned()),
            redirect_uris: self.redirect_uris.clone().unwrap_or_default(),
            post_logout_redirect_uris: self.post_logout_redirect_uris.clone().unwrap_or_default(),
            grant_types,
            token_endpoint_auth_method: self
                .token_endpoint_auth_method
                .clone()
                .unwrap_or_else(|| "client_secret_basic".to_owned()),
            allowed_scopes: scopes,
            api_audience: kept.api_audience,
            first_party: kept.first_party,
            id_token_signed_response_alg: self.id_token_signed_response_alg.clone(),
            jwks: self.jwks.clone(),
            jwks_uri: self.jwks_uri.clone(),
            minimum_acr: kept.minimum_acr,
            organization_usage: kept.organization_usage,
            require_pushed_authorization_requests: self
                .require_pushed_authorization_requests
                .unwrap_or(false),
            dpop_bound_access_tokens: self.dpop_bound_access_tokens.unwrap_or(false),
            backchannel_logout_uri: self.backchannel_logout_uri.clone(),
            backchannel_logout_session_required: self
                .backchannel_logout_session_required
                .unwrap_or(false),
            frontchannel_logout_uri: self.frontchannel_logout_uri.clone(),
            frontchannel_logout_session_required: self
                .frontchannel_logout_session_required
                .unwrap_or(false),
            authorization_details_types: self
                .authorization_details_types
                .clone()
                .unwrap_or_default(),
        })
    }
}

/// Renames the management API's field names to the registration metadata's, so a refusal names
/// what the client sent.
pub(super) fn in_metadata_terms(error: ManageError) -> ManageError {
    match error {
        ManageError::Invalid { field, message } => {
            let field = match field.as_str() {
                "name" => "client_name".to_owned(),
                "allowed_scopes" => "scope".to_owned(),
                _ => field,
            };
            ManageError::Invalid { field, message }
        }
        other => other,
    }
}

/// Rule (RFC 7591 §2.3, §3.2.2): a software statement still here was not verified
/// (`ClientMetadata::vouched` consumes the ones it accepts): refused, never ignored.
fn check_no_software_statement(statement: Option<&str>) -> Result<(), ManageError> {
    match statement {
        None => Ok(()),
        Some(_) => Err(ManageError::invalid(
            "software_statement",
            "software statements are not accepted by this deployment",
        )),
    }
}

/// Rule (RFC 7591 §2.1): the only response type is `code`, registered exactly when the
/// `authorization_code` grant is; `response_types` absent means just that.
fn check_response_types(
    response_types: Option<&[String]>,
    grant_types: &[String],
) -> Result<(), ManageError> {
    let code_grant = grant_types
        .iter()
        .any(|g| g == GrantType::AuthorizationCode.as_str());
    let Some(types) = response_types else {
        return Ok(());
    };
    let consistent = if code_grant {
        types.len() == 1 && types[0] == "code"
    } else {
        types.is_empty()
    };
    if consistent {
        Ok(())
    } else {
        Err(ManageError::invalid(
            "response_types",
            "response_types must be [\"code\"] with the authorization_code grant and empty \
             without it (no other response type is offered)",
        ))
    }
}

/// Rule: a registered client never holds a management API scope: those are for the tenant's
/// own administrators and automation, granted through the management API alone. Returns the
/// scopes of the space-separated `scope`.
fn check_no_management_scope(scope: &str) -> Result<Vec<String>, ManageError> {
    let scopes: Vec<String> = scope
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    match scopes
        .iter()
        .find(|s| MANAGEMENT_API_SCOPES.contains(&s.as_str()))
    {
        Some(s) => Err(ManageError::invalid(
            "scope",
            format!("{s} is a management API scope and cannot be registered dynamically"),
        )),
        None => Ok(scopes),
    }
}

/// The client information response (RFC 7591 §3.2.1, RFC 7592 §3): the registered metadata as
/// stored, with the credentials issued by this very response.
#[derive(Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "client_id": "app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "client_secret": "cs_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5",
    "client_id_issued_at": 1790000000,
    "client_secret_expires_at": 0,
    "registration_access_token": "rat_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0cw",
    "registration_client_uri": "https://acme.id.example.com/oauth/register/app_01JB7Q3M2X8V6N4K0T5R9C1D2E",
    "client_name": "Shop",
    "redirect_uris": ["https://shop.example/callback"],
    "post_logout_redirect_uris": [],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "client_secret_basic",
    "scope": "offline_access openid",
    "id_token_signed_response_alg": "RS256",
    "require_pushed_authorization_requests": false,
    "dpop_bound_access_tokens": false,
    "backchannel_logout_session_required": false,
    "frontchannel_logout_session_required": false
}))]
pub struct ClientInformation {
    /// The client identifier.
    pub client_id: String,
    /// Its secret, for secret-based methods: only in the response that issued it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// When it was registered (seconds since the epoch).
    pub client_id_issued_at: i64,
    /// `0` (the secret does not expire), for secret-based methods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
    /// The credential of `registration_client_uri` (RFC 7592): only in the registration
    /// response; it is not rotated, and not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registration_access_token: Option<String>,
    /// Where the client reads, replaces or deletes its registration (RFC 7592).
    pub registration_client_uri: String,
    /// Display name.
    pub client_name: String,
    /// Redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Post-logout redirect URIs.
    pub post_logout_redirect_uris: Vec<String>,
    /// Grant types.
    pub grant_types: Vec<String>,
    /// `["code"]` with the authorization code grant, else empty.
    pub response_types: Vec<String>,
    /// Token endpoint authentication method.
    pub token_endpoint_auth_method: String,
    /// Space-separated allowed scopes.
    pub scope: String,
    /// Inline public JWK Set, when registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<serde_json::Value>,
    /// JWK Set URL, when registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// ID token signing algorithm.
    pub id_token_signed_response_alg: String,
    /// RFC 9126 §6.
    pub require_pushed_authorization_requests: bool,
    /// RFC 9449 §5.2.
    pub dpop_bound_access_tokens: bool,
    /// Back-Channel Logout 1.0, when registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    /// Back-Channel Logout 1.0 §2.2.
    pub backchannel_logout_session_required: bool,
    /// Front-Channel Logout 1.0, when registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontchannel_logout_uri: Option<String>,
    /// Front-Channel Logout 1.0 §2.
    pub frontchannel_logout_session_required: bool,
    /// RFC 9396 §10.2, when registered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authorization_details_types: Vec<crate::applications::DetailTypeInput>,
}

// By hand: the secret and token never reach a log through `{:?}`.
impl std::fmt::Debug for ClientInformation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientInformation")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl ClientInformation {
    /// The information of `app`, registered under `issuer`, with the credentials this response
    /// issues (if any).
    pub fn new(
        app: &Application,
        issuer: &str,
        client_secret: Option<String>,
        registration_access_token: Option<String>,
    ) -> Self {
        let code_grant = app.grant_types.contains(&GrantType::AuthorizationCode);
        let uris =
            |list: &[svc_domain::RedirectUri]| list.iter().map(|u| u.as_str().to_owned()).collect();
        Self {
            client_id: app.id.as_str().to_owned(),
            client_secret,
            client_id_issued_at: app.created_at.unix_timestamp(),
            client_secret_expires_at: app.token_endpoint_auth_method.uses_secret().then_some(0),
            registration_access_token,
            registration_client_uri: format!(
                "{}/oauth/register/{}",
                issuer.trim_end_matches('/'),
                app.id
            ),
            client_name: app.name.clone(),
            redirect_uris: uris(&app.redirect_uris),
            post_logout_redirect_uris: uris(&app.post_logout_redirect_uris),
            grant_types: app
                .grant_types
                .iter()
                .map(|g| g.as_str().to_owned())
                .collect(),
            response_types: if code_grant {
                vec!["code".to_owned()]
            } else {
                Vec::new()
            },
            token_endpoint_auth_method: app.token_endpoint_auth_method.as_str().to_owned(),
            scope: app.allowed_scopes.to_string(),
            jwks: app
                .jwks
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            jwks_uri: app.jwks_uri.clone(),
            id_token_signed_response_alg: app.id_token_signed_response_alg.as_str().to_owned(),
            require_pushed_authorization_requests: app.require_pushed_authorization_requests,
            dpop_bound_access_tokens: app.dpop_bound_access_tokens,
            backchannel_logout_uri: app.logout.backchannel_uri.clone(),
            backchannel_logout_session_required: app.logout.backchannel_session_required,
            frontchannel_logout_uri: app.logout.frontchannel_uri.clone(),
            frontchannel_logout_session_required: app.logout.frontchannel_session_required,
            authorization_details_types: app
                .authorization_details_types
                .iter()
                .map(Into::into)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(value: serde_json::Value) -> ClientMetadata {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn defaults_follow_rfc_7591_and_validate_with_the_shared_rules() {
        let input = metadata(json!({"redirect_uris": ["https://rp.example/cb"]}))
            .to_input(Kept::new_registration())
            .unwrap();
        assert_eq!(input.grant_types, ["authorization_code"]);
        assert_eq!(input.token_endpoint_auth_method, "client_secret_basic");
        assert_eq!(input.allowed_scopes, ["openid"]);
        assert_eq!(input.name, DEFAULT_CLIENT_NAME);
        assert!(!input.first_party);
        assert!(input.validate().is_ok());
    }

    #[test]
    fn unknown_metadata_is_refused_by_name() {
        let err =
            serde_json::from_value::<ClientMetadata>(json!({"logo_uri": "https://x"})).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `logo_uri`"),
            "{err}"
        );
    }

    #[test]
    fn registration_only_rules_refuse_with_the_metadata_name() {
        let field =
            |value: serde_json::Value| match metadata(value).to_input(Kept::new_registration()) {
                Err(ManageError::Invalid { field, .. }) => field,
                other => panic!("{other:?}"),
            };
        assert_eq!(
            field(json!({"software_statement": "eyJ"})),
            "software_statement"
        );
        assert_eq!(
            field(json!({"response_types": ["token"]})),
            "response_types"
        );
        assert_eq!(
            field(json!({"grant_types": ["client_credentials"], "response_types": ["code"]})),
            "response_types"
        );
        assert_eq!(
            field(json!({"scope": "openid applications:write"})),
            "scope"
        );
        assert!(
            metadata(json!({"grant_types": ["client_credentials"], "response_types": []}))
                .to_input(Kept::new_registration())
                .is_ok()
        );
    }

    #[test]
    fn shared_rule_refusals_are_renamed_to_metadata_terms() {
        let renamed = in_metadata_terms(ManageError::invalid("name", "bad"));
        assert!(matches!(renamed, ManageError::Invalid { field, .. } if field == "client_name"));
        let renamed = in_metadata_terms(ManageError::invalid("allowed_scopes", "bad"));
        assert!(matches!(renamed, ManageError::Invalid { field, .. } if field == "scope"));
        let kept = in_metadata_terms(ManageError::invalid("redirect_uris", "bad"));
        assert!(matches!(kept, ManageError::Invalid { field, .. } if field == "redirect_uris"));
    }
}

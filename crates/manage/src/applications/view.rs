//! The JSON shape of an application on the management API. It never carries the secret hash;
//! a plaintext secret appears only in [`CreatedApplicationView`], once.

use serde::Serialize;
use svc_domain::Application;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// An application as the management API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "client_id": "app_01jd3k2m4n5p6q7r8s9t0v1w2x",
    "name": "Shop",
    "redirect_uris": ["https://shop.example/callback"],
    "post_logout_redirect_uris": ["https://shop.example/signed-out"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "client_secret_basic",
    "allowed_scopes": ["email", "offline_access", "openid", "profile"],
    "api_audience": null,
    "first_party": false,
    "id_token_signed_response_alg": "RS256",
    "jwks": null,
    "jwks_uri": null,
    "is_management": false,
    "minimum_acr": null,
    "organization_usage": "allow",
    "require_pushed_authorization_requests": false,
    "dpop_bound_access_tokens": false,
    "backchannel_logout_uri": "https://shop.example/logout/backchannel",
    "backchannel_logout_session_required": true,
    "frontchannel_logout_uri": null,
    "frontchannel_logout_session_required": false,
    "authorization_details_types": [],
    "confidential": true,
    "created_at": "2026-11-23T09:14:07.123456Z",
    "updated_at": "2026-11-23T09:14:07.123456Z"
}))]
pub struct ApplicationView {
    /// The application's id (`app_…`), which is its OAuth `client_id`.
    pub client_id: String,
    /// Display name.
    pub name: String,
    /// Registered redirect URIs, matched exactly.
    pub redirect_uris: Vec<String>,
    /// Registered post-logout redirect URIs, matched exactly.
    pub post_logout_redirect_uris: Vec<String>,
    /// Allowed grants: `authorization_code`, `refresh_token`, `client_credentials`.
    #[schema(value_type = Vec<super::names::GrantTypeName>)]
    pub grant_types: Vec<String>,
    /// Registered client authentication method: `none`, `client_secret_basic`,
    /// `client_secret_post` or `private_key_jwt`.
    #[schema(value_type = super::names::AuthMethodName)]
    pub token_endpoint_auth_method: String,
    /// Scopes it may be granted, sorted.
    pub allowed_scopes: Vec<String>,
    /// Audience of its access tokens; `null` means the management API.
    #[schema(required = true)]
    pub api_audience: Option<String>,
    /// Whether consent is skipped.
    pub first_party: bool,
    /// ID token signing algorithm: `RS256`, `ES256` or `EdDSA`.
    #[schema(value_type = super::names::SigningAlgName)]
    pub id_token_signed_response_alg: String,
    /// Inline public JWK Set (`{"keys": [...]}`), for `private_key_jwt`; `null` when none.
    #[schema(value_type = Option<Object>, required = true)]
    pub jwks: Option<serde_json::Value>,
    /// Where its public JWK Set is published, for `private_key_jwt`; `null` when none.
    #[schema(required = true)]
    pub jwks_uri: Option<String>,
    /// Whether this is the tenant's management application (which cannot be deleted, and
    /// whose grants, scopes, authentication method and audience are fixed).
    pub is_management: bool,
    /// The least assurance every authorization for it must reach: `urn:svc:aal1` or
    /// `urn:svc:aal2`; `null` when it demands no minimum.
    #[schema(value_type = Option<super::names::AcrName>, required = true)]
    pub minimum_acr: Option<String>,
    /// `allow` (a request may name an organization) or `require` (every sign-in acts in one,
    /// picked on the hosted page when the request names none).
    #[schema(value_type = super::names::OrganizationUsageName)]
    pub organization_usage: String,
    /// Whether its authorization requests must be pushed to `/oauth/par` first (RFC 9126 §6).
    pub require_pushed_authorization_requests: bool,
    /// Whether it always receives DPoP-bound access tokens (RFC 9449 §5.2).
    pub dpop_bound_access_tokens: bool,
    /// Where logout tokens are POSTed (Back-Channel Logout 1.0), or `null`.
    #[schema(required = true)]
    pub backchannel_logout_uri: Option<String>,
    /// Whether logout tokens must carry `sid`.
    pub backchannel_logout_session_required: bool,
    /// Loaded in an iframe when a session ends on the signed-out page (Front-Channel Logout
    /// 1.0), or `null`.
    #[schema(required = true)]
    pub frontchannel_logout_uri: Option<String>,
    /// Whether the iframe's URL carries `iss` and `sid`.
    pub frontchannel_logout_session_required: bool,
    /// The RAR types (RFC 9396) it may request, with their descriptions and schemas.
    pub authorization_details_types: Vec<super::DetailTypeInput>,
    /// Whether it is a confidential client (authenticates at the token endpoint).
    pub confidential: bool,
    /// The URL of the client ID metadata document it is read from, which is its `client_id`
    /// on the wire (the management API cannot change such an application); `null` for
    /// registered applications.
    #[schema(required = true)]
    pub client_id_metadata_document: Option<String>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); its revision is the `ETag` of the application.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&Application> for ApplicationView {
    fn from(app: &Application) -> Self {
        Self {
            client_id: app.id.to_string(),
            name: app.name.clone(),
            redirect_uris: app
                .redirect_uris
                .iter()
                .map(|u| u.as_str().to_owned())
                .collect(),
            post_logout_redirect_uris: app
                .post_logout_redirect_uris
                .iter()
                .map(|u| u.as_str().to_owned())
                .collect(),
            grant_types: app
                .grant_types
                .iter()
                .map(|g| g.as_str().to_owned())
                .collect(),
            token_endpoint_auth_method: app.token_endpoint_auth_method.as_str().to_owned(),
            allowed_scopes: app
                .allowed_scopes
                .iter()
                .map(|s| s.as_str().to_owned())
                .collect(),
            api_audience: app.api_audience.clone(),
            first_party: app.first_party,
            id_token_signed_response_alg: app.id_token_signed_response_alg.as_str().to_owned(),
            // Stored only after validation as JSON text, so it always parses back.
            jwks: app
                .jwks
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            jwks_uri: app.jwks_uri.clone(),
            is_management: app.is_management,
            minimum_acr: app.minimum_acr.clone(),
            organization_usage: app.organization_usage.as_str().to_owned(),
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
            confidential: app.is_confidential(),
            client_id_metadata_document: app
                .metadata_document
                .as_ref()
                .map(|d| d.url.as_str().to_owned()),
            created_at: app.created_at,
            updated_at: app.updated_at,
        }
    }
}

/// An application just created, updated or given a new secret: the view plus, when one was
/// generated, the plaintext `client_secret`, shown this once and never again.
#[derive(Clone, PartialEq, Serialize, ToSchema)]
pub struct CreatedApplicationView {
    /// The application.
    #[serde(flatten)]
    pub application: ApplicationView,
    /// The new client secret (`cs_…`), shown this once: only its hash is stored. Absent when
    /// none was generated (a public or `private_key_jwt` client, or an update that kept the
    /// existing secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        nullable = false,
        example = "cs_4fJr0bqgWmT2xYkq7nB1vD8cZ5sH3eLa9uP6wN0tR2i"
    )]
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for CreatedApplicationView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedApplicationView")
            .field("application", &self.application)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl CreatedApplicationView {
    /// The view of `application` with the secret this call generated, if any.
    pub fn new(application: &Application, client_secret: Option<String>) -> Self {
        Self {
            application: ApplicationView::from(application),
            client_secret,
        }
    }
}

/// The answer to a secret rotation: the application's id and its new secret, shown this once.
#[derive(Clone, PartialEq, Serialize, ToSchema)]
pub struct RotatedSecretView {
    /// The application (`app_…`).
    #[schema(example = "app_01jd3k2m4n5p6q7r8s9t0v1w2x")]
    pub client_id: String,
    /// The new client secret (`cs_…`); the previous one stopped working.
    #[schema(example = "cs_4fJr0bqgWmT2xYkq7nB1vD8cZ5sH3eLa9uP6wN0tR2i")]
    pub client_secret: String,
}

impl std::fmt::Debug for RotatedSecretView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatedSecretView")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::management_application;
    use super::*;
    use svc_domain::{ManualClock, SeededRandom, TenantId};

    #[test]
    fn a_created_view_is_the_view_plus_the_secret_only_when_there_is_one() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(3);
        let tenant = TenantId::generate(&clock, &rng);
        let (app, _) = management_application(&clock, &rng, &tenant, OffsetDateTime::UNIX_EPOCH);
        let view = serde_json::to_value(ApplicationView::from(&app)).unwrap_or_default();
        let without = serde_json::to_value(CreatedApplicationView::new(&app, None));
        assert_eq!(without.ok(), Some(view.clone()), "no client_secret member");
        let with = serde_json::to_value(CreatedApplicationView::new(&app, Some("cs_x".into())))
            .unwrap_or_default();
        let mut expected = view;
        if let Some(map) = expected.as_object_mut() {
            map.insert("client_secret".into(), "cs_x".into());
        }
        assert_eq!(with, expected);
        assert!(
            !format!(
                "{:?}",
                CreatedApplicationView::new(&app, Some("cs_x".into()))
            )
            .contains("cs_x"),
            "never in logs"
        );
    }
}

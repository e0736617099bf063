//! The JSON shape of an application on the management API. It never carries the secret hash;
//! a plaintext secret appears only in [`CreatedApplicationView`], once.

use serde::Serialize;
use svc_domain::Application;
use time::OffsetDateTime;

/// An application as the management API shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApplicationView {
    /// The application's id, which is its OAuth `client_id`.
    pub client_id: String,
    /// Display name.
    pub name: String,
    /// Registered redirect URIs.
    pub redirect_uris: Vec<String>,
    /// Registered post-logout redirect URIs.
    pub post_logout_redirect_uris: Vec<String>,
    /// Allowed grants.
    pub grant_types: Vec<String>,
    /// Registered client authentication method.
    pub token_endpoint_auth_method: String,
    /// Scopes it may be granted, sorted.
    pub allowed_scopes: Vec<String>,
    /// Audience of its access tokens; `null` means the management API.
    pub api_audience: Option<String>,
    /// Whether consent is skipped.
    pub first_party: bool,
    /// ID token signing algorithm.
    pub id_token_signed_response_alg: String,
    /// Inline public JWK Set.
    pub jwks: Option<serde_json::Value>,
    /// Published JWK Set URL.
    pub jwks_uri: Option<String>,
    /// Whether this is the tenant's management application.
    pub is_management: bool,
    /// Whether it is a confidential client.
    pub confidential: bool,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
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
            confidential: app.is_confidential(),
            created_at: app.created_at,
            updated_at: app.updated_at,
        }
    }
}

/// An application just created, updated or given a new secret: the view plus, when one was
/// generated, the plaintext `client_secret`, shown this once and never again.
#[derive(Clone, PartialEq, Serialize)]
pub struct CreatedApplicationView {
    /// The application.
    #[serde(flatten)]
    pub application: ApplicationView,
    /// The new secret; absent when none was generated.
    #[serde(skip_serializing_if = "Option::is_none")]
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

//! `[dynamic_registration]`: dynamic client registration (RFC 7591) and its management protocol
//! (RFC 7592) — whether the deployment serves `/oauth/register`, and how many registrations one
//! address may make per tenant. Each tenant then decides for itself through its registration
//! policy (`/api/v1/registration-policy`, `disabled` until set).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Dynamic client registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicRegistrationConfig {
    /// Serve `POST /oauth/register` and `/oauth/register/{client_id}` (GET, PUT, DELETE). When
    /// false none of them exists and no discovery document advertises `registration_endpoint`;
    /// when true, a tenant's document advertises it while the tenant's registration policy is
    /// not `disabled`. Default: false.
    pub enabled: bool,
    /// Registrations one client address may attempt per tenant in an hour (refused ones count
    /// too); past it the endpoint answers 429 with `Retry-After`. Default: 20. Allowed range:
    /// 1..=10000.
    pub max_registrations_per_hour: u32,
    /// Authorities whose software statements (RFC 7591 §2.3) registrations may carry: each an
    /// `issuer` (the statement's `iss`) and `jwks`, its public JWK Set as JSON text (keys with
    /// `kid`; ES256, EdDSA, RS256 or PS256). A verified statement's metadata take precedence
    /// over the plain members; a statement of any other issuer is refused with
    /// `unapproved_software_statement`. In the environment: a JSON array of such objects.
    /// Default: none (every statement is refused).
    pub software_statement_issuers: Vec<SoftwareStatementIssuer>,
    /// Accept an `https` URL as `client_id` (client ID metadata documents, the IETF draft MCP
    /// clients use) in tenants that turn it on (`client_id_metadata_documents: true` on
    /// `/api/v1/registration-policy`), whatever their registration policy. The document is
    /// fetched through the outbound guard (in production: `https`, public addresses only; no
    /// redirects, 5 s, 16 KiB, a JSON content type), kept for its `Cache-Control: max-age`
    /// within 30 s..24 h (5 minutes when it says nothing), and read into an application with
    /// registration's rules. When false no tenant can turn it on and no discovery document
    /// advertises `client_id_metadata_document_supported`. Default: false.
    pub client_id_metadata_documents: bool,
    /// Client ID metadata documents one tenant may fetch in an hour (counted across instances;
    /// only real fetches count, not stored readings): a bound on how much outbound traffic
    /// strangers can make the service send. Past it, a client whose document is not already
    /// stored is refused until the hour's window ends. Default: 100. Allowed range:
    /// 1..=100000.
    pub max_document_fetches_per_hour: u32,
}

/// One authority trusted to sign software statements.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SoftwareStatementIssuer {
    /// The `iss` of its statements.
    pub issuer: String,
    /// Its public JWK Set (`{"keys":[…]}`) as JSON text.
    pub jwks: String,
}

impl Default for DynamicRegistrationConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_registrations_per_hour: 20,
            software_statement_issuers: Vec::new(),
            client_id_metadata_documents: false,
            max_document_fetches_per_hour: 100,
        }
    }
}

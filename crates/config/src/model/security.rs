//! `[security]`, `[openapi]` and `[tenant]`: the production switch, the API-reference switch,
//! and single-tenant mode.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Production mode and its escape hatch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SecurityConfig {
    /// Production mode: turns on every production guard (TLS, host allowlist, proxy trust, KMS,
    /// PostgreSQL with TLS, abuse controls, real delivery providers). Default: false.
    pub production: bool,
    /// Let webhook targets use ports other than 443 (not allowed in production). Default: false.
    pub webhook_allow_non_standard_ports: bool,
    /// DEVELOPMENT ONLY: start with a public bind address or public host names while
    /// `production = false`, printing a loud warning instead of refusing (e.g. a container that
    /// must bind 0.0.0.0). Not allowed with `production = true`. Default: false.
    pub allow_public_without_production: bool,
}

/// The OpenAPI document and UI on the control plane.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OpenApiConfig {
    /// Serve the API reference on the control plane: the OpenAPI 3.1 document at
    /// `/openapi.json`, an interactive UI at `/` and a page per problem type under `/problems/`
    /// (must be false in production). Default: false.
    pub enabled: bool,
}

/// Tenant resolution.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TenantConfig {
    /// Serve every host as this tenant, skipping subdomain resolution (single-tenant mode). A DNS
    /// label: 1 to 63 of a-z, 0-9 and "-", not starting or ending with "-". No default (with no
    /// `server.base_domain` either, non-production behaves as if it were "default").
    #[schemars(example = &"default")]
    pub default_tenant_slug: Option<String>,
}

//! Authentication and authorisation of the management surfaces, as extractors in handler
//! signatures so a handler cannot forget them (ARCHITECTURE.md rule 2):
//!
//! - [`Authorized<P>`] for `/api/v1/*`: the spec's access-token validation contract, all ten
//!   rules in order (tenant before scope) — signature against this tenant's own keys, then the
//!   claim rules shared with resource servers through `svc-sdk`.
//! - [`OperatorCaller`] for `/api/v1/control-plane/*`: a control-plane operator token.

mod auth;
pub mod conventions;
mod idempotency;

pub(crate) use auth::validated_access_token;
pub use auth::{
    AgentsRead, AgentsWrite, ApplicationsRead, ApplicationsWrite, AuditRead, Authorized,
    Credential, MetricsReadAuthorizer, OperatorCaller, OrgAuthorized, OrganizationsRead,
    OrganizationsWrite, Permission, PoliciesRead, PoliciesWrite, Reachable, TenantWide, UsersRead,
    UsersWrite, WebhooksRead, WebhooksWrite, WithinOrganization,
};
pub use idempotency::{create_idempotently, idempotent};

use crate::tenancy::TenantResolver;
use axum::extract::FromRef;
use std::sync::Arc;
use svc_domain::Clock;
use svc_manage::ManageContext;
use svc_oauth::keys::KeyService;

/// State of the management routes.
#[derive(Clone)]
pub struct ApiState {
    /// Host → tenant.
    pub tenants: TenantResolver,
    /// The tenants' keys, to verify access tokens locally.
    pub keys: Arc<KeyService>,
    /// Use cases.
    pub manage: ManageContext,
    /// Time, for token expiry.
    pub clock: Arc<dyn Clock>,
    /// The sign-in engine (password policy and hashing, invitation mail) for tenant users.
    pub authn: Arc<svc_authn::Authn>,
    /// Where webhook receivers may be and how many a tenant may have.
    pub webhook_rules: svc_manage::webhooks::WebhookRules,
    /// DPoP proofs for `Authorization: DPoP` tokens (RFC 9449 §7); `None` takes bearer tokens
    /// only.
    pub dpop: Option<Arc<svc_oauth::dpop::Dpop>>,
    /// API keys (`svck_…`); `None` while `[api_keys].enabled` is false: every key is refused.
    pub api_keys: Option<Arc<svc_manage::api_keys::ApiKeys>>,
}

impl FromRef<ApiState> for TenantResolver {
    fn from_ref(state: &ApiState) -> Self {
        state.tenants.clone()
    }
}

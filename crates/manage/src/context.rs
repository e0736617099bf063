//! What every use case receives: the store, the clock and the randomness (never globals), the
//! sign-in services the user use cases need, who is acting, and the request facts the audit log
//! records.

use crate::{ManageError, SignInServices};
use std::fmt;
use std::sync::Arc;
use svc_domain::{ApiKeyId, ClientId, Clock, OperatorTokenId, Rng, ScimTokenId, TenantId, UserId};
use svc_store::Store;
use time::OffsetDateTime;

/// Told after a change commits, so caches elsewhere in the process (the OAuth engine's
/// application cache) and in the other processes on the database forget what changed at once
/// rather than when their entries expire.
pub trait ChangeHook: Send + Sync {
    /// An application was changed, had its secret rotated, or was deleted.
    fn application_changed(&self, tenant: &TenantId, id: &ClientId);
    /// A tenant was changed, suspended, reactivated or deleted.
    fn tenant_changed(&self, tenant: &TenantId);
    /// An API key was revoked or rotated (its cached copy must not authenticate any more).
    fn api_key_changed(&self, tenant: &TenantId, id: &ApiKeyId);
}

/// No cache to tell.
struct NoCaches;

impl ChangeHook for NoCaches {
    fn application_changed(&self, _: &TenantId, _: &ClientId) {}
    fn tenant_changed(&self, _: &TenantId) {}
    fn api_key_changed(&self, _: &TenantId, _: &ApiKeyId) {}
}

/// The logout channels a deployment runs (`[logout]`). Default: none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogoutOffer {
    /// Back-channel logout runs, reaching targets under this egress policy; `None`: off.
    pub backchannel: Option<svc_domain::TargetPolicy>,
    /// Front-channel logout runs.
    pub frontchannel: bool,
    /// Front-channel URIs must use https (production).
    pub frontchannel_https_only: bool,
}

/// The dependencies of the management use cases; cheap to clone.
#[derive(Clone)]
pub struct ManageContext {
    /// The database, whichever backend the runtime chose.
    pub store: Arc<dyn Store>,
    /// The source of the current time.
    pub clock: Arc<dyn Clock>,
    /// The source of ids and secrets.
    pub rng: Arc<dyn Rng>,
    /// Who hears of committed changes.
    pub changes: Arc<dyn ChangeHook>,
    /// Password rules and invitation mail for the tenant-user use cases; `None` until
    /// [`ManageContext::with_sign_in`] (contexts that never touch users need none).
    pub sign_in: Option<SignInServices>,
    /// Whether the deployment offers second factors (`[two_factor].enabled`): a tenant may only
    /// choose a policy that needs them (`optional`, `required`) when it does.
    pub second_factors: bool,
    /// Whether the deployment binds tokens to DPoP proofs (`[dpop].enabled`): an application may
    /// only require DPoP-bound tokens (`dpop_bound_access_tokens`) when it does.
    pub dpop: bool,
    /// Which logout channels the deployment runs (`[logout]`): an application may only register
    /// a URI for one that is.
    pub logout: LogoutOffer,
    /// Whether the deployment takes RAR `authorization_details` (`[oidc].authorization_details`):
    /// an application may only register detail types when it does.
    pub authorization_details: bool,
    /// Whether the deployment accepts client ID metadata documents
    /// (`[dynamic_registration].client_id_metadata_documents`): a tenant may only turn them on
    /// when it does.
    pub metadata_documents: bool,
    /// Verifies software statements at registration (RFC 7591 §2.3); `None` refuses them all.
    pub software_statements: Option<Arc<dyn crate::registration::SoftwareStatementVerifier>>,
    /// Looks up the proofs of domain claims (DNS TXT records, HTTPS well-known files); `None`
    /// until [`ManageContext::with_domain_probe`] (verification then fails as a wiring error).
    pub domain_probe: Option<Arc<dyn crate::domains::DomainProbe>>,
    /// Reaches upstream providers and seals their secrets, while `[enterprise_sso]` is on;
    /// `None` otherwise (the single sign-on use cases then answer not found).
    pub sso: Option<crate::sso::SsoServices>,
    /// Reaches social providers and seals their secrets, while `[social]` is on; `None`
    /// otherwise (the social provider use cases then answer not found).
    pub social: Option<crate::social::SocialServices>,
}

impl ManageContext {
    /// Builds a context that tells no cache about changes.
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>, rng: Arc<dyn Rng>) -> Self {
        Self {
            store,
            clock,
            rng,
            changes: Arc::new(NoCaches),
            sign_in: None,
            second_factors: false,
            dpop: false,
            logout: LogoutOffer::default(),
            authorization_details: false,
            metadata_documents: false,
            software_statements: None,
            domain_probe: None,
            sso: None,
            social: None,
        }
    }

    /// The same context, configuring single sign-on through `services`.
    #[must_use]
    pub fn with_sso(mut self, services: crate::sso::SsoServices) -> Self {
        self.sso = Some(services);
        self
    }

    /// The same context, configuring social sign-in providers through `services`.
    #[must_use]
    pub fn with_social(mut self, services: crate::social::SocialServices) -> Self {
        self.social = Some(services);
        self
    }

    /// The same context, verifying domain claims through `probe`.
    #[must_use]
    pub fn with_domain_probe(mut self, probe: Arc<dyn crate::domains::DomainProbe>) -> Self {
        self.domain_probe = Some(probe);
        self
    }

    /// The same context on a deployment that offers second factors.
    #[must_use]
    pub fn with_second_factors(mut self, offered: bool) -> Self {
        self.second_factors = offered;
        self
    }

    /// The same context on a deployment that binds tokens to DPoP proofs.
    #[must_use]
    pub fn with_dpop(mut self, offered: bool) -> Self {
        self.dpop = offered;
        self
    }

    /// The same context on a deployment that runs the logout channels of `offer`.
    #[must_use]
    pub fn with_logout(mut self, offer: LogoutOffer) -> Self {
        self.logout = offer;
        self
    }

    /// The same context, accepting the software statements `verifier` accepts.
    #[must_use]
    pub fn with_software_statements(
        mut self,
        verifier: Arc<dyn crate::registration::SoftwareStatementVerifier>,
    ) -> Self {
        self.software_statements = Some(verifier);
        self
    }

    /// The same context on a deployment that takes RAR `authorization_details` or not.
    #[must_use]
    pub fn with_authorization_details(mut self, on: bool) -> Self {
        self.authorization_details = on;
        self
    }

    /// The same context on a deployment that accepts client ID metadata documents or not.
    #[must_use]
    pub fn with_metadata_documents(mut self, on: bool) -> Self {
        self.metadata_documents = on;
        self
    }

    /// The same context, telling `hook` about committed changes.
    #[must_use]
    pub fn with_change_hook(mut self, hook: Arc<dyn ChangeHook>) -> Self {
        self.changes = hook;
        self
    }

    /// The same context, checking, hashing and inviting through `services`.
    #[must_use]
    pub fn with_sign_in(mut self, services: SignInServices) -> Self {
        self.sign_in = Some(services);
        self
    }

    /// The sign-in services, or an internal error: a context that creates or changes users
    /// without them was wired wrongly, which no caller can fix.
    pub(crate) fn sign_in(&self) -> Result<&SignInServices, ManageError> {
        self.sign_in.as_ref().ok_or_else(|| {
            ManageError::Dependency("no sign-in services in this management context".into())
        })
    }

    /// The current time at whole microseconds: the finest precision every backend stores
    /// (PostgreSQL), so what a use case returns equals what a later read returns.
    pub(crate) fn now(&self) -> OffsetDateTime {
        let now = self.clock.now();
        let micros = now.nanosecond() / 1_000 * 1_000;
        now.replace_nanosecond(micros).unwrap_or(now)
    }
}

impl fmt::Debug for ManageContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManageContext")
            .field("store", &self.store.backend())
            .field("sign_in", &self.sign_in)
            .finish_non_exhaustive()
    }
}

/// Who performs a management action, as recorded in the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Actor {
    /// A control-plane operator, by the id of the operator token presented.
    Operator(OperatorTokenId),
    /// An OAuth client holding a management access token (e.g. client_credentials on the
    /// tenant's management application).
    Client(ClientId),
    /// A person (a human administrator) holding a management access token issued to them
    /// through a first-party application.
    User(UserId),
    /// A directory provisioning through SCIM, by the id of the SCIM token presented.
    Scim(ScimTokenId),
    /// A machine holding an API key (`svck_…`), by the key's id.
    ApiKey(ApiKeyId),
    /// The service itself or its local command line (`svc-runtime operator create-token`,
    /// bootstrap), acting without a presented credential.
    System,
}

impl Actor {
    /// The audit-log spelling: `operator:opt_…`, `client:app_…`, `user:usr_…`, `scim:scimt_…`,
    /// `api_key:apik_…` or `system`.
    pub fn as_audit_string(&self) -> String {
        match self {
            Self::Operator(id) => format!("operator:{id}"),
            Self::Client(id) => format!("client:{id}"),
            Self::User(id) => format!("user:{id}"),
            Self::Scim(id) => format!("scim:{id}"),
            Self::ApiKey(id) => format!("api_key:{id}"),
            Self::System => "system".to_owned(),
        }
    }

    /// The idempotency-key scope of this actor: keys of different callers never collide, and
    /// the same client acting in two tenants keeps two namespaces (`ten_…:client:app_…`).
    pub fn idempotency_scope(&self, tenant: Option<&TenantId>) -> String {
        match tenant {
            Some(tenant) => format!("{tenant}:{}", self.as_audit_string()),
            None => self.as_audit_string(),
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_audit_string())
    }
}

/// Facts about the HTTP request behind a use case, for the audit log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestMeta {
    /// The request's `x-request-id`.
    pub request_id: Option<String>,
    /// The client address, as established through trusted proxies only.
    pub client_ip: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SeededRandom};
    use time::Duration;

    #[test]
    fn actors_are_spelled_with_their_kind() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(3);
        let op = OperatorTokenId::generate(&clock, &rng);
        let app = ClientId::generate(&clock, &rng);
        let tenant = TenantId::generate(&clock, &rng);
        assert_eq!(
            Actor::Operator(op.clone()).as_audit_string(),
            format!("operator:{op}")
        );
        assert!(
            Actor::Client(app.clone())
                .as_audit_string()
                .starts_with("client:app_")
        );
        assert_eq!(
            Actor::Client(app.clone()).idempotency_scope(Some(&tenant)),
            format!("{tenant}:client:{app}")
        );
        assert_eq!(
            Actor::Operator(op.clone()).idempotency_scope(None),
            format!("operator:{op}")
        );
        assert_eq!(Actor::System.to_string(), "system");
    }
}

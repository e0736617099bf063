//! What the deployment (and each tenant's second-factor policy over it) lets the authorization
//! endpoint do: lifetimes, step-up and enrolment, recovery, pushed and signed requests.

use super::{PushedRequests, RequestObjects};
use std::time::Duration;
use svc_domain::{MfaPolicy, Tenant};

/// Lifetimes of the authorization flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizeSettings {
    /// `[oidc].authorization_code_lifetime_secs` (CONTRACTS.md default 60 s).
    pub code_lifetime: Duration,
    /// How long a person has to sign in and consent before starting over.
    pub interaction_lifetime: Duration,
    /// Whether sessions can be stepped up to `urn:svc:aal2` (second factors or passkeys on).
    pub step_up: bool,
    /// Whether a person can set a second factor up on the hosted pages (`[two_factor]`): only
    /// then is a person without one sent to do so; otherwise an unmet floor is refused.
    pub enrol: bool,
    /// `[two_factor].policy = "required"`: every request needs `urn:svc:aal2`; a person without
    /// a second factor is asked to set one up first.
    pub second_factor_required: bool,
    /// `[recovery]` is on: a person whose account was recovered by guardians sets up a new
    /// second factor before any application gets a code.
    pub recovery: bool,
    /// `[oidc].pushed_authorization_requests` (RFC 9126): whether `request_uri`s of `/oauth/par`
    /// are taken here, and whether plain requests are still accepted.
    pub pushed: PushedRequests,
    /// `[oidc].request_objects` (RFC 9101): whether signed request objects are taken, and
    /// whether unsigned requests still are.
    pub request_objects: RequestObjects,
    /// `[logout]` runs a channel: each code records that its session signed into the
    /// application, so ending the session can tell it (one more row per code otherwise not
    /// written).
    pub remember_session_clients: bool,
}

/// What second factors mean for one tenant's requests: the deployment's settings with the
/// tenant's own policy over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FactorRules {
    pub(super) step_up: bool,
    pub(super) enrol: bool,
    pub(super) required: bool,
}

impl AuthorizeSettings {
    /// The rules for `tenant`: `off` takes step-up and enrolment away, `optional` lifts the
    /// deployment's requirement, `required` adds one where a person can meet it (a stored
    /// `required` on a deployment that no longer offers enrolment requires nothing, rather
    /// than lock every person out).
    pub(super) fn factor_rules(&self, tenant: &Tenant) -> FactorRules {
        let deployment = FactorRules {
            step_up: self.step_up,
            enrol: self.enrol,
            required: self.second_factor_required,
        };
        match tenant.mfa_policy {
            MfaPolicy::Default => deployment,
            MfaPolicy::Off => FactorRules {
                step_up: false,
                enrol: false,
                required: false,
            },
            MfaPolicy::Optional => FactorRules {
                required: false,
                ..deployment
            },
            MfaPolicy::Required => FactorRules {
                required: self.enrol,
                ..deployment
            },
        }
    }
}

impl Default for AuthorizeSettings {
    fn default() -> Self {
        Self {
            code_lifetime: Duration::from_secs(60),
            interaction_lifetime: Duration::from_secs(30 * 60),
            step_up: false,
            enrol: false,
            second_factor_required: false,
            recovery: false,
            pushed: PushedRequests::default(),
            request_objects: RequestObjects::default(),
            remember_session_clients: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::Clock;

    #[test]
    fn a_tenant_policy_overrides_the_deployment_within_what_it_offers() {
        use svc_domain::{ManualClock, PairwiseSecret, SeededRandom, TenantId, TenantSlug};
        let clock = ManualClock::new(time::OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(1);
        let mut tenant = Tenant {
            id: TenantId::generate(&clock, &rng),
            slug: TenantSlug::parse("acme").unwrap(),
            display_name: "Acme".into(),
            status: svc_domain::TenantStatus::Active,
            signup_enabled: false,
            mfa_policy: MfaPolicy::Default,
            pairwise_secret: PairwiseSecret::generate(&rng),
            created_at: clock.now(),
            updated_at: clock.now(),
        };
        let offered = AuthorizeSettings {
            step_up: true,
            enrol: true,
            ..AuthorizeSettings::default()
        };
        let rules = |settings: &AuthorizeSettings, tenant: &Tenant| {
            let r = settings.factor_rules(tenant);
            (r.step_up, r.enrol, r.required)
        };
        assert_eq!(rules(&offered, &tenant), (true, true, false));
        tenant.mfa_policy = MfaPolicy::Required;
        assert_eq!(rules(&offered, &tenant), (true, true, true));
        tenant.mfa_policy = MfaPolicy::Off;
        assert_eq!(rules(&offered, &tenant), (false, false, false));
        let required = AuthorizeSettings {
            second_factor_required: true,
            ..offered.clone()
        };
        tenant.mfa_policy = MfaPolicy::Optional;
        assert_eq!(rules(&required, &tenant), (true, true, false));
        tenant.mfa_policy = MfaPolicy::Default;
        assert_eq!(rules(&required, &tenant), (true, true, true));
        // A stored `required` where nobody can enrol requires nothing rather than lock out.
        let passkeys_only = AuthorizeSettings {
            step_up: true,
            ..AuthorizeSettings::default()
        };
        tenant.mfa_policy = MfaPolicy::Required;
        assert_eq!(rules(&passkeys_only, &tenant), (true, false, false));
    }
}

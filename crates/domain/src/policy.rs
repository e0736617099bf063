//! Access-control policies (issue 17 item 6): named, typed rules a tenant sets on sign-in and
//! token issuance, and the one place that decides what they require of a grant.
//!
//! A policy has targets and rules. Targets say where it applies: to requests of some
//! applications, in some organizations, by people holding some roles; every list given must
//! match (AND across lists) and one entry of a list is enough (OR within it); no list at all
//! means every sign-in of the tenant. Rules say what such a grant needs:
//! - `require_acr`: the sign-in reached at least this level (`urn:svc:aal2`);
//! - `allowed_ip_ranges`: the person's address is in one of these networks;
//! - `sign_in_methods`: the sign-in used at least one of these methods (RFC 8176 `amr`
//!   values: `pwd`, `otp`, `hwk`, `swk`, `fed`);
//! - `max_session_age_secs`: the sign-in is at most this old.
//!
//! The rule language is closed on purpose: four typed checks, no expressions. Every policy
//! that applies must hold; the first that does not is named, with its reason, in the error the
//! client receives and in the audit log.

use crate::{ClientId, OrganizationId, PolicyId, RoleKey, TenantId, acr_rank};
use ipnet::IpNet;
use std::collections::BTreeSet;
use std::net::IpAddr;
use time::OffsetDateTime;

/// Most policies one tenant holds: every sign-in and refresh reads them all.
pub const MAX_POLICIES_PER_TENANT: usize = 50;
/// Most entries of one target list or of `allowed_ip_ranges`.
pub const MAX_POLICY_LIST_ENTRIES: usize = 50;
/// Longest policy name.
pub const MAX_POLICY_NAME_CHARS: usize = 100;
/// Longest policy description.
pub const MAX_POLICY_DESCRIPTION_CHARS: usize = 256;
/// Shortest `max_session_age_secs`: a minute (a shorter one could not even be met by a sign-in
/// that just happened, once the person has consented).
pub const MIN_SESSION_AGE_SECS: u64 = 60;
/// Longest `max_session_age_secs`: a year.
pub const MAX_SESSION_AGE_SECS: u64 = 366 * 24 * 3600;
/// The `amr` values a `sign_in_methods` rule may name: the ones this service records.
pub const POLICY_SIGN_IN_METHODS: [&str; 5] = ["pwd", "otp", "hwk", "swk", "fed"];

/// Where a policy applies. An empty list places no condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyTargets {
    /// Applications (`client_id`) whose requests it governs.
    pub applications: BTreeSet<ClientId>,
    /// Organizations: requests made in one of them (the `organization` parameter).
    pub organizations: BTreeSet<OrganizationId>,
    /// Roles: people holding one of them (a tenant role, or an organization role in the
    /// organization of the request).
    pub roles: BTreeSet<RoleKey>,
}

/// What a governed grant needs. At least one rule is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRules {
    /// The weakest `acr` accepted (one of [`crate::ACR_LEVELS`]).
    pub require_acr: Option<String>,
    /// Networks the person's address must be in.
    pub allowed_ip_ranges: Vec<IpNet>,
    /// `amr` values, one of which the sign-in must have used.
    pub sign_in_methods: BTreeSet<String>,
    /// How old the sign-in may be, in seconds.
    pub max_session_age_secs: Option<u64>,
}

/// One named policy of a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPolicy {
    /// Id (`pol_…`).
    pub id: PolicyId,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Unique in the tenant; named in refusals.
    pub name: String,
    /// For administrators.
    pub description: String,
    /// A disabled policy is kept but never applies.
    pub enabled: bool,
    /// Where it applies.
    pub targets: PolicyTargets,
    /// What it requires.
    pub rules: PolicyRules,
    /// Creation.
    pub created_at: OffsetDateTime,
    /// Last change: the revision `If-Match` compares.
    pub updated_at: OffsetDateTime,
}

/// Why rules were refused as a whole (the fields' own checks are the management API's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyRulesError {
    /// No rule: the policy would require nothing.
    #[error("a policy needs at least one rule")]
    Empty,
    /// `require_acr` is not a level this service issues.
    #[error("require_acr must be one of urn:svc:aal1, urn:svc:aal2")]
    UnknownAcr,
    /// A `sign_in_methods` entry is not an `amr` value this service records.
    #[error("sign_in_methods entries are among pwd, otp, hwk, swk, fed")]
    UnknownMethod,
    /// `max_session_age_secs` out of range.
    #[error("max_session_age_secs is between 60 and 31622400")]
    SessionAge,
    /// A list is longer than [`MAX_POLICY_LIST_ENTRIES`].
    #[error("a list holds at most 50 entries")]
    TooMany,
}

impl PolicyRules {
    /// The rules' own constraints (what does not need the tenant's data).
    pub fn check(&self) -> Result<(), PolicyRulesError> {
        if self.require_acr.is_none()
            && self.allowed_ip_ranges.is_empty()
            && self.sign_in_methods.is_empty()
            && self.max_session_age_secs.is_none()
        {
            return Err(PolicyRulesError::Empty);
        }
        if self
            .require_acr
            .as_deref()
            .is_some_and(|acr| acr_rank(acr).is_none())
        {
            return Err(PolicyRulesError::UnknownAcr);
        }
        if self
            .sign_in_methods
            .iter()
            .any(|m| !POLICY_SIGN_IN_METHODS.contains(&m.as_str()))
        {
            return Err(PolicyRulesError::UnknownMethod);
        }
        if self
            .max_session_age_secs
            .is_some_and(|s| !(MIN_SESSION_AGE_SECS..=MAX_SESSION_AGE_SECS).contains(&s))
        {
            return Err(PolicyRulesError::SessionAge);
        }
        if self.allowed_ip_ranges.len() > MAX_POLICY_LIST_ENTRIES
            || self.sign_in_methods.len() > MAX_POLICY_LIST_ENTRIES
        {
            return Err(PolicyRulesError::TooMany);
        }
        Ok(())
    }
}

/// Where a grant is asked for, and by whom: what targets match against.
#[derive(Debug, Clone, Copy)]
pub struct PolicyScope<'a> {
    /// The application.
    pub client: &'a ClientId,
    /// The organization of the request, if any.
    pub organization: Option<&'a OrganizationId>,
    /// The person's roles: tenant roles, and organization roles in that organization.
    pub roles: &'a BTreeSet<RoleKey>,
}

impl PolicyTargets {
    /// Whether a grant in `scope` is governed: every non-empty list has an entry that matches.
    pub fn matches(&self, scope: &PolicyScope<'_>) -> bool {
        (self.applications.is_empty() || self.applications.contains(scope.client))
            && (self.organizations.is_empty()
                || scope
                    .organization
                    .is_some_and(|org| self.organizations.contains(org)))
            && (self.roles.is_empty() || !self.roles.is_disjoint(scope.roles))
    }

    /// Whether matching needs the person's roles (read only then).
    pub fn needs_roles(&self) -> bool {
        !self.roles.is_empty()
    }
}

/// How the person signed in, and from where: what rules are checked against.
#[derive(Debug, Clone, Copy)]
pub struct SignInFacts<'a> {
    /// `acr` of the sign-in.
    pub acr: Option<&'a str>,
    /// `amr` of the sign-in.
    pub amr: &'a [String],
    /// When the person authenticated.
    pub auth_time: OffsetDateTime,
    /// Where the request comes from.
    pub origin: Origin,
    /// Now.
    pub now: OffsetDateTime,
}

/// Where a request comes from, for the network rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The person's own device, at this address: the authorization endpoint, or the token
    /// endpoint called by a public client (a browser or native app).
    Person(IpAddr),
    /// The person's device, at an address nobody could tell: the network rule refuses (a
    /// policy that names networks is never met by not knowing).
    Unknown,
    /// Not the person: a confidential client's back end at the token endpoint, whose address
    /// says nothing about where the person is; the network rule was checked when they signed
    /// in.
    NotThePerson,
}

/// Which rule refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyRule {
    /// `require_acr`.
    Acr,
    /// `allowed_ip_ranges`.
    Network,
    /// `sign_in_methods`.
    SignInMethod,
    /// `max_session_age_secs`.
    SessionAge,
}

impl PolicyRule {
    /// The rule's name in refusals and audit actions.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acr => "require_acr",
            Self::Network => "allowed_ip_ranges",
            Self::SignInMethod => "sign_in_methods",
            Self::SessionAge => "max_session_age_secs",
        }
    }
}

/// A policy that refused a grant, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDenial {
    /// The policy.
    pub policy: PolicyId,
    /// Its name.
    pub name: String,
    /// The rule not met.
    pub rule: PolicyRule,
}

impl PolicyDenial {
    /// The error description a client (and, through it, the person) reads.
    pub fn describe(&self) -> String {
        let why = match self.rule {
            PolicyRule::Acr => "the sign-in does not reach the assurance level it requires",
            PolicyRule::Network => "the request comes from a network it does not allow",
            PolicyRule::SignInMethod => "the sign-in did not use a method it allows",
            PolicyRule::SessionAge => "the sign-in is older than it allows; sign in again",
        };
        format!("access policy \"{}\": {why}", self.name)
    }
}

impl PolicyRule {
    /// Every rule, in the order they are checked.
    pub const ALL: [PolicyRule; 4] = [
        PolicyRule::Acr,
        PolicyRule::SignInMethod,
        PolicyRule::SessionAge,
        PolicyRule::Network,
    ];

    /// Whether `rules` set this rule and the sign-in `facts` do not meet it.
    pub fn unmet(self, rules: &PolicyRules, facts: &SignInFacts<'_>) -> bool {
        match self {
            Self::Acr => rules
                .require_acr
                .as_deref()
                .and_then(acr_rank)
                .is_some_and(|required| facts.acr.and_then(acr_rank).is_none_or(|r| r < required)),
            Self::SignInMethod => {
                !rules.sign_in_methods.is_empty()
                    && !facts.amr.iter().any(|m| rules.sign_in_methods.contains(m))
            }
            Self::SessionAge => rules.max_session_age_secs.is_some_and(|max| {
                (facts.now - facts.auth_time).whole_seconds()
                    > i64::try_from(max).unwrap_or(i64::MAX)
            }),
            Self::Network => {
                !rules.allowed_ip_ranges.is_empty()
                    && match facts.origin {
                        Origin::Person(ip) => {
                            !rules.allowed_ip_ranges.iter().any(|net| net.contains(&ip))
                        }
                        Origin::Unknown => true,
                        Origin::NotThePerson => false,
                    }
            }
        }
    }
}

/// Which rule of `rules` the sign-in `facts` do not meet, if any (in [`PolicyRule::ALL`]
/// order).
pub fn unmet_rule(rules: &PolicyRules, facts: &SignInFacts<'_>) -> Option<PolicyRule> {
    PolicyRule::ALL
        .into_iter()
        .find(|rule| rule.unmet(rules, facts))
}

/// The first of `policies` (already known to govern the grant) that one of `checked` refuses
/// for the sign-in `facts`: a caller that handles some rules otherwise (a step-up for `acr`)
/// checks the others alone.
pub fn denial_among(
    policies: &[AccessPolicy],
    facts: &SignInFacts<'_>,
    checked: &[PolicyRule],
) -> Option<PolicyDenial> {
    policies.iter().find_map(|p| {
        checked
            .iter()
            .copied()
            .find(|rule| rule.unmet(&p.rules, facts))
            .map(|rule| PolicyDenial {
                policy: p.id.clone(),
                name: p.name.clone(),
                rule,
            })
    })
}

/// The policies of `policies` that govern a grant in `scope` (enabled, targets matching).
pub fn governing<'p>(
    policies: &'p [AccessPolicy],
    scope: &PolicyScope<'_>,
) -> impl Iterator<Item = &'p AccessPolicy> {
    policies
        .iter()
        .filter(move |p| p.enabled && p.targets.matches(scope))
}

/// The first policy of `policies` governing `scope` whose rules `facts` do not meet.
pub fn first_denial(
    policies: &[AccessPolicy],
    scope: &PolicyScope<'_>,
    facts: &SignInFacts<'_>,
) -> Option<PolicyDenial> {
    governing(policies, scope).find_map(|p| {
        unmet_rule(&p.rules, facts).map(|rule| PolicyDenial {
            policy: p.id.clone(),
            name: p.name.clone(),
            rule,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ACR_AAL1, ACR_AAL2};
    /// 2026-11-24 10:00 UTC.
    const NOW: OffsetDateTime = match OffsetDateTime::from_unix_timestamp(1_795_514_400) {
        Ok(t) => t,
        Err(_) => panic!(),
    };

    fn client() -> ClientId {
        ClientId::parse("app_01jd0000000000000000000000").unwrap()
    }

    fn org() -> OrganizationId {
        OrganizationId::parse("org_01jd0000000000000000000000").unwrap()
    }

    fn policy(targets: PolicyTargets, rules: PolicyRules) -> AccessPolicy {
        AccessPolicy {
            id: PolicyId::parse("pol_01jd0000000000000000000000").unwrap(),
            tenant_id: TenantId::parse("ten_01jd0000000000000000000000").unwrap(),
            name: "finance".into(),
            description: String::new(),
            enabled: true,
            targets,
            rules,
            created_at: NOW,
            updated_at: NOW,
        }
    }

    fn facts<'a>(acr: Option<&'a str>, amr: &'a [String], ip: Option<IpAddr>) -> SignInFacts<'a> {
        SignInFacts {
            acr,
            amr,
            auth_time: NOW - time::Duration::minutes(10),
            origin: ip.map_or(Origin::NotThePerson, Origin::Person),
            now: NOW,
        }
    }

    #[test]
    fn rules_need_one_rule_and_known_values() {
        assert_eq!(PolicyRules::default().check(), Err(PolicyRulesError::Empty));
        let acr = PolicyRules {
            require_acr: Some("urn:other:gold".into()),
            ..Default::default()
        };
        assert_eq!(acr.check(), Err(PolicyRulesError::UnknownAcr));
        let methods = PolicyRules {
            sign_in_methods: ["sms".to_owned()].into(),
            ..Default::default()
        };
        assert_eq!(methods.check(), Err(PolicyRulesError::UnknownMethod));
        for secs in [0, 59, MAX_SESSION_AGE_SECS + 1] {
            let age = PolicyRules {
                max_session_age_secs: Some(secs),
                ..Default::default()
            };
            assert_eq!(age.check(), Err(PolicyRulesError::SessionAge), "{secs}");
        }
        let ranges = PolicyRules {
            allowed_ip_ranges: vec!["10.0.0.0/8".parse().unwrap(); 51],
            ..Default::default()
        };
        assert_eq!(ranges.check(), Err(PolicyRulesError::TooMany));
        let fine = PolicyRules {
            require_acr: Some(ACR_AAL2.into()),
            max_session_age_secs: Some(60),
            ..Default::default()
        };
        assert_eq!(fine.check(), Ok(()));
    }

    #[test]
    fn targets_are_and_across_lists_and_or_within() {
        let roles: BTreeSet<RoleKey> = [RoleKey::parse("accountant").unwrap()].into();
        let none = BTreeSet::new();
        let in_org = PolicyScope {
            client: &client(),
            organization: Some(&org()),
            roles: &roles,
        };
        let everywhere = PolicyTargets::default();
        assert!(everywhere.matches(&in_org));
        let org_and_role = PolicyTargets {
            organizations: [org()].into(),
            roles: [
                RoleKey::parse("auditor").unwrap(),
                RoleKey::parse("accountant").unwrap(),
            ]
            .into(),
            ..Default::default()
        };
        assert!(org_and_role.matches(&in_org));
        assert!(!org_and_role.matches(&PolicyScope {
            organization: None,
            ..in_org
        }));
        assert!(!org_and_role.matches(&PolicyScope {
            roles: &none,
            ..in_org
        }));
        let other_app = PolicyTargets {
            applications: [ClientId::parse("app_01jd0000000000000000000001").unwrap()].into(),
            ..Default::default()
        };
        assert!(!other_app.matches(&in_org));
    }

    #[test]
    fn each_rule_refuses_what_it_names() {
        let pwd = vec!["pwd".to_owned()];
        let passkey = vec!["hwk".to_owned(), "user".to_owned()];
        let acr = PolicyRules {
            require_acr: Some(ACR_AAL2.into()),
            ..Default::default()
        };
        assert_eq!(
            unmet_rule(&acr, &facts(Some(ACR_AAL1), &pwd, None)),
            Some(PolicyRule::Acr)
        );
        assert_eq!(
            unmet_rule(&acr, &facts(None, &pwd, None)),
            Some(PolicyRule::Acr)
        );
        assert_eq!(
            unmet_rule(&acr, &facts(Some("urn:x"), &pwd, None)),
            Some(PolicyRule::Acr)
        );
        assert_eq!(unmet_rule(&acr, &facts(Some(ACR_AAL2), &pwd, None)), None);

        let methods = PolicyRules {
            sign_in_methods: ["hwk".to_owned(), "swk".to_owned()].into(),
            ..Default::default()
        };
        assert_eq!(
            unmet_rule(&methods, &facts(Some(ACR_AAL1), &pwd, None)),
            Some(PolicyRule::SignInMethod)
        );
        assert_eq!(
            unmet_rule(&methods, &facts(Some(ACR_AAL2), &passkey, None)),
            None
        );

        let age = PolicyRules {
            max_session_age_secs: Some(600),
            ..Default::default()
        };
        assert_eq!(
            unmet_rule(&age, &facts(None, &pwd, None)),
            None,
            "exactly 600 s old"
        );
        let older = SignInFacts {
            auth_time: NOW - time::Duration::seconds(601),
            ..facts(None, &pwd, None)
        };
        assert_eq!(unmet_rule(&age, &older), Some(PolicyRule::SessionAge));

        let network = PolicyRules {
            allowed_ip_ranges: vec![
                "10.0.0.0/8".parse().unwrap(),
                "2001:db8::/32".parse().unwrap(),
            ],
            ..Default::default()
        };
        let inside: IpAddr = "10.1.2.3".parse().unwrap();
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        let outside: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(unmet_rule(&network, &facts(None, &pwd, Some(inside))), None);
        assert_eq!(unmet_rule(&network, &facts(None, &pwd, Some(v6))), None);
        assert_eq!(
            unmet_rule(&network, &facts(None, &pwd, Some(outside))),
            Some(PolicyRule::Network)
        );
        assert_eq!(
            unmet_rule(&network, &facts(None, &pwd, None)),
            None,
            "not the person's address: checked at sign-in instead"
        );
        let unknown = SignInFacts {
            origin: Origin::Unknown,
            ..facts(None, &pwd, None)
        };
        assert_eq!(
            unmet_rule(&network, &unknown),
            Some(PolicyRule::Network),
            "an unknown address is never inside"
        );
    }

    #[test]
    fn disabled_and_untargeted_policies_never_refuse() {
        let rules = PolicyRules {
            require_acr: Some(ACR_AAL2.into()),
            ..Default::default()
        };
        let roles = BTreeSet::new();
        let scope = PolicyScope {
            client: &client(),
            organization: None,
            roles: &roles,
        };
        let pwd = vec!["pwd".to_owned()];
        let weak = facts(Some(ACR_AAL1), &pwd, None);
        let mut off = policy(PolicyTargets::default(), rules.clone());
        off.enabled = false;
        assert_eq!(first_denial(&[off], &scope, &weak), None);
        let elsewhere = policy(
            PolicyTargets {
                organizations: [org()].into(),
                ..Default::default()
            },
            rules.clone(),
        );
        assert_eq!(first_denial(&[elsewhere], &scope, &weak), None);
        let denial = first_denial(&[policy(PolicyTargets::default(), rules)], &scope, &weak)
            .expect("refused");
        assert_eq!(denial.rule, PolicyRule::Acr);
        assert!(
            denial.describe().contains("\"finance\""),
            "{}",
            denial.describe()
        );
    }
}

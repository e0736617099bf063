//! Events: the catalog of event types (dotted strings, spec "Events"), a typed payload for every
//! type this version emits, and the envelope every webhook body carries (CONTRACTS.md
//! "Webhooks": `{"id", "type", "tenant_id", "occurred_at", "data"}`).
//!
//! An event is built where the state change happens and written to the outbox in the same
//! transaction; its envelope is serialised once, then delivered byte for byte on every attempt,
//! so signatures over retries cover the same body.

mod catalog;
mod data;

pub use catalog::EventType;
pub use data::{
    BruteForceScope, EventData, LoginFailureReason, LogoutReason, RevocationReason,
    RevokedTokenKind,
};

use crate::{Clock, EventId, Rng, TenantId};
use serde::Serialize;
use time::OffsetDateTime;

/// One event, as recorded in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Unique, time-ordered id (`evt_…`).
    pub id: EventId,
    /// The catalog type; always one this version emits.
    pub event_type: EventType,
    /// The tenant whose subscriptions may receive it.
    pub tenant_id: TenantId,
    /// When the change happened.
    pub occurred_at: OffsetDateTime,
    /// The payload.
    pub data: EventData,
}

#[derive(Serialize)]
struct Envelope<'a> {
    id: &'a EventId,
    #[serde(rename = "type")]
    event_type: EventType,
    tenant_id: &'a TenantId,
    #[serde(with = "time::serde::rfc3339")]
    occurred_at: OffsetDateTime,
    data: &'a EventData,
}

impl Event {
    /// An event of `event_type` for `tenant`, stamped now with a fresh id. The time is cut to
    /// whole microseconds, the finest every backend stores.
    pub fn new(
        clock: &dyn Clock,
        rng: &dyn Rng,
        tenant: &TenantId,
        event_type: EventType,
        data: EventData,
    ) -> Self {
        let now = clock.now();
        let occurred_at = now
            .replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
            .unwrap_or(now);
        Self {
            id: EventId::generate(clock, rng),
            event_type,
            tenant_id: tenant.clone(),
            occurred_at,
            data,
        }
    }

    /// The webhook body: the JSON envelope of CONTRACTS.md, serialised once.
    pub fn envelope(&self) -> String {
        let envelope = Envelope {
            id: &self.id,
            event_type: self.event_type,
            tenant_id: &self.tenant_id,
            occurred_at: self.occurred_at,
            data: &self.data,
        };
        // Every field is a string, number, bool or null: serialisation cannot fail.
        serde_json::to_string(&envelope).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserId;
    use crate::{ManualClock, SeededRandom};
    use std::collections::HashSet;
    use time::Duration;

    #[test]
    fn the_catalog_has_every_name_of_the_spec_once_and_parses_exactly() {
        let names: HashSet<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names.len(), EventType::ALL.len(), "duplicate wire names");
        for spec_name in [
            "auth.login.success",
            "auth.login.failure",
            "auth.logout",
            "auth.token.issued",
            "auth.token.revoked",
            "auth.mfa.challenge",
            "auth.mfa.verify",
            "auth.adaptive_mfa.triggered",
            "tenant_user.invited",
            "tenant_user.activated",
            "tenant_user.suspended",
            "tenant_user.removed",
            "admin.user.created",
            "admin.agent.registered",
            "admin.delegation.revoked",
            "vault.credential.created",
            "vault.grant.revoked",
            "vault.credential.accessed",
            "wallet.tx.signed",
            "wallet.tx.rejected",
            "wallet.budget.exceeded",
            "chain.ownership.changed",
            "chain.reputation.updated",
            "chain.metadata.changed",
            "sso.configured",
            "sso.login.success",
            "sso.login.failed",
            "sso.user.provisioned",
            "org.created",
            "org.member.added",
            "org.member.role_changed",
            "commerce.payment.pending",
            "commerce.payment.succeeded",
            "commerce.payment.failed",
            "commerce.payment.refunded",
            "commerce.settlement.created",
            "commerce.settlement.held",
            "commerce.settlement.released",
            "commerce.dispute.opened",
            "commerce.dispute.closed",
            "commerce.payout.submitted",
            "commerce.payout.paid",
            "commerce.payout.failed",
            "commerce.statement.created",
            "security.brute_force.detected",
            "security.refresh_token.reuse",
            "security.suspicious_activity",
        ] {
            assert!(names.contains(spec_name), "{spec_name} missing");
        }
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
            assert!(!t.description().is_empty(), "{t} has no description");
        }
        for hostile in [
            "",
            "AUTH.LOGIN.SUCCESS",
            "auth.login.success ",
            "auth.*",
            "*",
            "auth.login",
            "auth.login.success\0",
        ] {
            assert_eq!(EventType::parse(hostile), None, "{hostile:?}");
        }
    }

    #[test]
    fn the_envelope_carries_id_type_tenant_time_and_typed_data() {
        let clock = ManualClock::new(
            OffsetDateTime::UNIX_EPOCH + Duration::days(20_000) + Duration::nanoseconds(1_234_567),
        );
        let rng = SeededRandom::new(9);
        let tenant = TenantId::generate(&clock, &rng);
        let user = UserId::generate(&clock, &rng);
        let event = Event::new(
            &clock,
            &rng,
            &tenant,
            EventType::TenantUserSuspended,
            EventData::TenantUser {
                user_id: user.clone(),
                email: "ada@example.com".into(),
                status: "suspended".into(),
                actor: "client:app_x".into(),
            },
        );
        assert_eq!(event.occurred_at.nanosecond() % 1_000, 0);
        let body: serde_json::Value = serde_json::from_str(&event.envelope()).unwrap();
        assert_eq!(body["id"], event.id.as_str());
        assert!(body["id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(body["type"], "tenant_user.suspended");
        assert_eq!(body["tenant_id"], tenant.as_str());
        assert_eq!(body["occurred_at"], "2024-10-04T00:00:00.001234Z");
        assert_eq!(body["data"]["user_id"], user.as_str());
        assert_eq!(body["data"]["status"], "suspended");
        assert_eq!(body.as_object().unwrap().len(), 5);
    }

    #[test]
    fn tenant_role_changes_carry_the_roles_before_and_after() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(11);
        let tenant = TenantId::generate(&clock, &rng);
        let user = UserId::generate(&clock, &rng);
        let event = Event::new(
            &clock,
            &rng,
            &tenant,
            EventType::TenantUserRolesChanged,
            EventData::TenantUserRoles {
                user_id: user.clone(),
                roles: vec![],
                previous_roles: vec!["tenant_admin".into()],
                actor: "user:usr_x".into(),
            },
        );
        let body: serde_json::Value = serde_json::from_str(&event.envelope()).unwrap();
        assert_eq!(body["type"], "tenant_user.roles_changed");
        assert_eq!(
            body["data"],
            serde_json::json!({
                "user_id": user.as_str(),
                "roles": [],
                "previous_roles": ["tenant_admin"],
                "actor": "user:usr_x",
            })
        );
    }

    #[test]
    fn event_types_serialise_as_their_wire_names() {
        let json =
            serde_json::to_string(&[EventType::LoginSuccess, EventType::WebhookTest]).unwrap();
        assert_eq!(json, r#"["auth.login.success","webhook.test"]"#);
        let back: Vec<EventType> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, vec![EventType::LoginSuccess, EventType::WebhookTest]);
        assert!(serde_json::from_str::<EventType>(r#""auth.nope""#).is_err());
    }
}

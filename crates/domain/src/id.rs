//! Public identifiers: opaque, prefixed and sortable (`ten_01j…`), per CONTRACTS.md "Identifiers".
//! Never sequential integers on the wire. The body is a ULID (48-bit millisecond time + 80 random
//! bits) in lowercase Crockford base32, built from the injected clock and randomness.

use crate::{Clock, Rng};
use std::fmt;
use ulid::Ulid;

/// Why a string is not a valid identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The string does not start with the expected prefix.
    #[error("expected an id starting with `{expected}`")]
    WrongPrefix {
        /// The prefix the id type requires.
        expected: &'static str,
    },
    /// The part after the prefix is not a well-formed id body.
    #[error("malformed id")]
    Malformed,
}

macro_rules! prefixed_id {
    ($(#[$meta:meta])* $name:ident, $prefix:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The wire prefix of this id type.
            pub const PREFIX: &'static str = $prefix;

            /// A fresh id from the given time and randomness.
            pub fn generate(clock: &dyn Clock, rng: &dyn Rng) -> Self {
                let millis = (clock.now().unix_timestamp_nanos() / 1_000_000).max(0) as u64;
                let ulid = Ulid::from_parts(millis, rng.next_u128());
                Self(format!("{}{}", $prefix, ulid.to_string().to_ascii_lowercase()))
            }

            /// Parses an id received from outside (a URL, a token, a database row).
            pub fn parse(s: &str) -> Result<Self, IdError> {
                let body = s
                    .strip_prefix($prefix)
                    .ok_or(IdError::WrongPrefix { expected: $prefix })?;
                // 26 lowercase Crockford characters; the first carries only 3 bits (128-bit range).
                let well_formed = body.len() == 26
                    && body.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
                    && body.as_bytes().first().is_some_and(|b| (b'0'..=b'7').contains(b));
                if !well_formed {
                    return Err(IdError::Malformed);
                }
                Ulid::from_string(body).map_err(|_| IdError::Malformed)?;
                Ok(Self(s.to_owned()))
            }

            /// The id as it appears on the wire.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The 128 bits of the body (a WebAuthn user handle is built from a user's).
            pub fn to_u128(&self) -> u128 {
                self.0
                    .get($prefix.len()..)
                    .and_then(|body| Ulid::from_string(body).ok())
                    .map_or(0, u128::from)
            }

            /// The smallest id generated at or after `at`: ids are time-ordered, so every id
            /// made before `at` sorts below it (a purge bound).
            pub fn floor(at: time::OffsetDateTime) -> Self {
                let millis = (at.unix_timestamp_nanos() / 1_000_000).max(0) as u64;
                let ulid = Ulid::from_parts(millis, 0);
                Self(format!("{}{}", $prefix, ulid.to_string().to_ascii_lowercase()))
            }

            /// The id whose body is `bits` (the inverse of [`Self::to_u128`]).
            pub fn from_u128(bits: u128) -> Self {
                Self(format!(
                    "{}{}",
                    $prefix,
                    Ulid::from(bits).to_string().to_ascii_lowercase()
                ))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

prefixed_id!(
    /// Identifies a tenant, the isolation boundary of every record (`ten_…`).
    TenantId,
    "ten_"
);

prefixed_id!(
    /// Identifies an application; it is also its OAuth `client_id` (`app_…`).
    ClientId,
    "app_"
);

prefixed_id!(
    /// Identifies a control-plane operator token (`opt_…`); the token itself is a secret.
    OperatorTokenId,
    "opt_"
);

prefixed_id!(
    /// Identifies an audit-log entry (`aud_…`).
    AuditEntryId,
    "aud_"
);

prefixed_id!(
    /// Identifies a record of a person's login history (`lgn_…`).
    LoginRecordId,
    "lgn_"
);

prefixed_id!(
    /// Identifies a person's second factor (`mfa_…`), e.g. one TOTP authenticator.
    FactorId,
    "mfa_"
);

prefixed_id!(
    /// Identifies a person's passkey (`pky_…`), one discoverable WebAuthn credential.
    PasskeyId,
    "pky_"
);

prefixed_id!(
    /// Identifies a recovery guardian a person named by email (`gdn_…`).
    GuardianId,
    "gdn_"
);

prefixed_id!(
    /// Identifies one social-recovery request of a person (`rcv_…`).
    RecoveryId,
    "rcv_"
);

prefixed_id!(
    /// Identifies an organization of a tenant (`org_…`): a customer company of a B2B tenant,
    /// whose members hold organization roles.
    OrganizationId,
    "org_"
);

prefixed_id!(
    /// Identifies an invitation to join a tenant or one of its organizations (`inv_…`); the
    /// secret of its mailed link is another value, stored only as a hash.
    InvitationId,
    "inv_"
);

prefixed_id!(
    /// Identifies a domain an organization claimed (`dom_…`), pending or verified.
    DomainId,
    "dom_"
);

prefixed_id!(
    /// Identifies a tenant user, a person who signs in (`usr_…`). Email is an attribute, never
    /// the key.
    UserId,
    "usr_"
);

prefixed_id!(
    /// Identifies a browser sign-in session (`ses_…`); the `sid` of ID tokens.
    SessionId,
    "ses_"
);

prefixed_id!(
    /// Identifies a refresh-token family (`rtf_…`): every token rotated from one grant.
    RefreshFamilyId,
    "rtf_"
);

prefixed_id!(
    /// Identifies a backchannel authentication request (OpenID CIBA) on the approval page and
    /// API (`cib_…`); the client's `auth_req_id` is another value, stored only as a hash.
    BackchannelRequestId,
    "cib_"
);

prefixed_id!(
    /// Identifies a registered agent (`agt_…`): the `sub` of its tokens.
    AgentId,
    "agt_"
);

prefixed_id!(
    /// Identifies a delegation a person granted an agent (`dlg_…`).
    DelegationId,
    "dlg_"
);

prefixed_id!(
    /// Identifies a pending authorization request while the person signs in (`int_…`).
    InteractionId,
    "int_"
);

prefixed_id!(
    /// Identifies an event recorded in the outbox (`evt_…`); the `id` of a webhook envelope.
    EventId,
    "evt_"
);

prefixed_id!(
    /// Identifies an API resource a tenant protects (`res_…`).
    ApiResourceId,
    "res_"
);

prefixed_id!(
    /// Identifies an access-control policy of a tenant (`pol_…`).
    PolicyId,
    "pol_"
);

prefixed_id!(
    /// Identifies a webhook subscription of a tenant (`whk_…`).
    WebhookId,
    "whk_"
);

prefixed_id!(
    /// Identifies an initial access token of a tenant (`iat_…`, RFC 7591 §3): the handle it is
    /// listed and deleted by, never the token itself.
    InitialAccessTokenId,
    "iat_"
);

prefixed_id!(
    /// Identifies a SCIM bearer token of a tenant or organization (`scimt_…`): the handle it is
    /// listed and revoked by, never the token itself.
    ScimTokenId,
    "scimt_"
);

prefixed_id!(
    /// Identifies an API key of a tenant (`apik_…`): the handle it is listed, rotated and
    /// revoked by, and the actor the audit log names (`api_key:apik_…`); never the key itself.
    ApiKeyId,
    "apik_"
);

prefixed_id!(
    /// Identifies a SCIM group (RFC 7643 §4.2) of a tenant or organization (`scimg_…`).
    ScimGroupId,
    "scimg_"
);

prefixed_id!(
    /// Identifies one delivery of one event to one subscription (`dlv_…`); the
    /// `X-SVC-Delivery` header, the same on every retry.
    DeliveryId,
    "dlv_"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, SeededRandom};
    use time::{Duration, OffsetDateTime};

    #[test]
    fn the_floor_of_a_time_sorts_between_earlier_and_later_ids() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(5);
        let earlier = LoginRecordId::generate(&clock, &rng);
        clock.advance(Duration::milliseconds(1));
        let floor = LoginRecordId::floor(clock.now());
        let later = LoginRecordId::generate(&clock, &rng);
        assert!(
            earlier < floor && floor <= later,
            "{earlier} {floor} {later}"
        );
        assert_eq!(LoginRecordId::parse(floor.as_str()), Ok(floor));
    }

    #[test]
    fn generated_ids_round_trip_and_sort_by_time() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(1);
        let first = TenantId::generate(&clock, &rng);
        clock.advance(Duration::milliseconds(1));
        let second = TenantId::generate(&clock, &rng);
        assert!(first.as_str().starts_with("ten_"));
        assert_eq!(first.as_str().len(), 4 + 26);
        assert_eq!(TenantId::parse(first.as_str()), Ok(first.clone()));
        assert!(first < second, "ids must sort by creation time");
    }

    #[test]
    fn the_128_bits_of_an_id_give_the_same_id_back() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH + Duration::days(20_000));
        let rng = SeededRandom::new(3);
        let user = UserId::generate(&clock, &rng);
        let other = UserId::generate(&clock, &rng);
        assert_ne!(user.to_u128(), other.to_u128());
        assert_eq!(UserId::from_u128(user.to_u128()), user);
        assert_eq!(
            UserId::parse(UserId::from_u128(7).as_str()),
            Ok(UserId::from_u128(7))
        );
    }

    #[test]
    fn hostile_or_foreign_ids_are_refused() {
        assert_eq!(
            TenantId::parse("app_01jd0000000000000000000000"),
            Err(IdError::WrongPrefix { expected: "ten_" })
        );
        assert_eq!(TenantId::parse("ten_"), Err(IdError::Malformed));
        assert_eq!(
            TenantId::parse("ten_01JD0000000000000000000000"),
            Err(IdError::Malformed)
        );
        assert_eq!(
            TenantId::parse("ten_01jd000000000000000000000'"),
            Err(IdError::Malformed)
        );
        assert_eq!(TenantId::parse("ten_1"), Err(IdError::Malformed));
        // 26 valid characters but above the ULID range (first char > 7).
        assert_eq!(
            TenantId::parse("ten_zzzzzzzzzzzzzzzzzzzzzzzzzz"),
            Err(IdError::Malformed)
        );
    }
}

//! The device authorization grant (RFC 8628): the user code a person types on a second device,
//! and the pending authorization a device polls for.
//!
//! User codes follow CONTRACTS.md: 8 characters of `BCDFGHJKLMNPQRSTVWXZ` (no vowels, so no
//! words; no look-alike digits), shown `XXXX-XXXX`, entered in any case with or without the dash
//! (RFC 8628 §6.1). 20^8 ≈ 2.6·10^10 codes, so with attempts limited per address and codes
//! living 10 minutes a guess has a negligible chance (RFC 8628 §5.1). Only hashes of the device
//! code and of the user code are stored.

use crate::{ClientId, Rng, ScopeSet, SecretHash, TenantId, UserId};
use std::fmt;
use time::OffsetDateTime;

/// Prefix of device codes (RFC 8628 §3.2 `device_code`): a leaked string says what it is.
pub const DEVICE_CODE_PREFIX: &str = "dc_";

/// The characters of a user code (CONTRACTS.md "Devices, CIBA, PAR, DPoP, exchange").
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Characters in a user code, the dash not counted.
pub const USER_CODE_LENGTH: usize = 8;

/// A user code in its normal form: eight characters of [`USER_CODE_ALPHABET`], no dash.
#[derive(Clone, PartialEq, Eq)]
pub struct UserCode(String);

impl UserCode {
    /// A fresh code, each character drawn uniformly (rejection sampling: 256 is not a multiple
    /// of 20, and a plain modulo would favour the first 16 characters).
    pub fn generate(rng: &dyn Rng) -> Self {
        let mut code = String::with_capacity(USER_CODE_LENGTH);
        let mut byte = [0u8; 1];
        while code.len() < USER_CODE_LENGTH {
            rng.fill(&mut byte);
            // 240 = 12 × 20: bytes at or above it would skew the draw.
            if byte[0] < 240 {
                code.push(char::from(USER_CODE_ALPHABET[usize::from(byte[0] % 20)]));
            }
        }
        Self(code)
    }

    /// What a person typed, if it can be a code: case-insensitive, dashes and spaces ignored
    /// (RFC 8628 §6.1 "the authorization server should be forgiving").
    pub fn parse(input: &str) -> Option<Self> {
        if input.len() > 32 {
            return None;
        }
        let code: String = input
            .chars()
            .filter(|c| *c != '-' && !c.is_whitespace())
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let valid =
            code.len() == USER_CODE_LENGTH && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b));
        valid.then_some(Self(code))
    }

    /// How it is shown and sent: `XXXX-XXXX`.
    pub fn display(&self) -> String {
        format!("{}-{}", &self.0[..4], &self.0[4..])
    }

    /// What is stored and looked up.
    pub fn hash(&self) -> SecretHash {
        SecretHash::of(&self.0)
    }
}

impl fmt::Debug for UserCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A pending code approves a device: never in logs.
        f.write_str("UserCode(…)")
    }
}

/// Where a device authorization stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceStatus {
    /// Nobody has decided yet (`authorization_pending`).
    Pending,
    /// A person approved; the device's next poll gets tokens once.
    Approved,
    /// A person declined, or the request was refused for them (`access_denied`).
    Denied,
}

impl DeviceStatus {
    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
        }
    }

    /// Parses a stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "approved" => Some(Self::Approved),
            "denied" => Some(Self::Denied),
            _ => None,
        }
    }
}

/// A device authorization request (RFC 8628 §3.1–3.2), from its start until it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAuthorization {
    /// Hash of the device code.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The client that started it, the only one that may poll.
    pub client_id: ClientId,
    /// Hash of the user code (unique among the tenant's live ones).
    pub user_code: SecretHash,
    /// The scopes asked for.
    pub scope: ScopeSet,
    /// The RAR details asked for (RFC 9396), validated against the client's types when asked.
    pub authorization_details: Option<crate::AuthorizationDetails>,
    /// Where it stands.
    pub status: DeviceStatus,
    /// Who decided, once someone did.
    pub user_id: Option<UserId>,
    /// Seconds the device must wait between polls; grows by 5 at each `slow_down`
    /// (RFC 8628 §3.5).
    pub interval_secs: u32,
    /// The last poll.
    pub last_polled_at: Option<OffsetDateTime>,
    /// Start.
    pub created_at: OffsetDateTime,
    /// After this the device code is `expired_token` and the user code unknown.
    pub expires_at: OffsetDateTime,
}

/// What a poll found, recorded as it happened (the poll time is stored, the interval grown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePoll {
    /// The authorization after the poll.
    pub authorization: DeviceAuthorization,
    /// The poll came sooner than the interval after the previous one: `slow_down`, and the
    /// interval has grown by 5 s.
    pub too_fast: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SeededRandom;

    #[test]
    fn generated_codes_use_the_alphabet_and_parse_back_in_any_form() {
        let rng = SeededRandom::new(3);
        for _ in 0..200 {
            let code = UserCode::generate(&rng);
            let shown = code.display();
            assert_eq!(shown.len(), 9);
            assert_eq!(&shown[4..5], "-");
            assert!(
                shown
                    .bytes()
                    .filter(|b| *b != b'-')
                    .all(|b| USER_CODE_ALPHABET.contains(&b))
            );
            assert_eq!(UserCode::parse(&shown), Some(code.clone()));
            assert_eq!(UserCode::parse(&shown.to_lowercase()), Some(code.clone()));
            assert_eq!(UserCode::parse(&shown.replace('-', "")), Some(code.clone()));
            assert_eq!(
                UserCode::parse(&format!(" {} ", shown.replace('-', " "))),
                Some(code)
            );
        }
    }

    #[test]
    fn every_character_is_drawn() {
        let rng = SeededRandom::new(11);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..100 {
            seen.extend(UserCode::generate(&rng).0.into_bytes());
        }
        assert_eq!(seen.len(), USER_CODE_ALPHABET.len());
    }

    #[test]
    fn what_cannot_be_a_code_is_refused() {
        for input in [
            "",
            "BCDF-GHJ",
            "BCDF-GHJKL",
            "ABCD-EFGH",
            "BCDF-GHJ1",
            "BCDF_GHJK",
            "BCDFGHJKBCDFGHJKBCDFGHJKBCDFGHJKBCDF",
            "ВCDF-GHJK",
        ] {
            assert_eq!(UserCode::parse(input), None, "{input}");
        }
    }

    #[test]
    fn the_debug_form_hides_the_code() {
        let code = UserCode::parse("BCDF-GHJK").unwrap();
        assert!(!format!("{code:?}").contains("BCDF"));
    }

    #[test]
    fn no_redirect_uri_can_be_the_device_binding() {
        // The store tells a device-approved code by this value in its `redirect_uri` column.
        assert!(crate::RedirectUri::parse(crate::DEVICE_CODE_GRANT).is_err());
        assert!(crate::RedirectUri::parse(crate::CIBA_GRANT).is_err());
    }

    #[test]
    fn statuses_round_trip() {
        for status in [
            DeviceStatus::Pending,
            DeviceStatus::Approved,
            DeviceStatus::Denied,
        ] {
            assert_eq!(DeviceStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(DeviceStatus::parse("redeemed"), None);
    }
}

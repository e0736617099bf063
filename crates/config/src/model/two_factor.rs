//! `[two_factor]`: second factors on the hosted pages (TOTP authenticators, WebAuthn security
//! keys and backup codes),
//! the `urn:svc:aal2` assurance level they reach, and step-up.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Second factors: when enabled, a person may enrol a TOTP authenticator and WebAuthn security
/// keys (with a set of single-use backup codes) on `/auth/account/two-factor`; from then on every sign-in asks for
/// a code after the password, the session reaches `acr` `urn:svc:aal2` with `amr`
/// `["pwd","otp","mfa"]`, and an authorization request asking for `urn:svc:aal2`
/// (`acr_values` or an essential `acr` claim) steps an `urn:svc:aal1` session up. Wrong codes
/// count against `[auth].brute_force_max_attempts` per account and lock the second step for
/// `[auth].brute_force_lockout_secs`, like passwords.
///
/// TOTP secrets are sealed at rest (AES-256-GCM) under a data key that `svc-kms` wraps: there
/// is no key to configure here. Without `[kms]` (development only) the data key lives in
/// memory, so authenticators enrolled then stop working when the process restarts.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TwoFactorConfig {
    /// Offer second factors and step-up. Default: false.
    pub enabled: bool,
    /// "optional": people choose whether to set up a second factor; applications may ask for
    /// `urn:svc:aal2`. "required": every authorization needs `urn:svc:aal2`, so a person
    /// without a second factor is asked to set one up before any application gets a code
    /// (`prompt=none`: `interaction_required`). Needs `enabled`. Default: "optional".
    pub policy: TwoFactorPolicy,
    /// Seconds a person has, after a correct password, to give the second factor before
    /// starting again. Default: 300. Allowed range: 60..=1800.
    pub challenge_lifetime_secs: u32,
    /// The account page warns when fewer unused backup codes than this remain. Default: 3.
    /// Allowed range: 0..=10.
    pub backup_codes_warn_below: u32,
    /// Days a browser stays trusted when the person ticks "don't ask again on this device" on
    /// the second step: sign-ins there skip the code (the session still reaches
    /// `urn:svc:aal2`, `amr` `["pwd","mfa"]`) unless `[adaptive_mfa]` finds them risky.
    /// 0 hides the choice. Default: 30. Allowed range: 0..=365.
    pub trusted_device_days: u32,
    /// Mail the person (and record `auth.device.new`) when they sign in from a browser never
    /// seen for them before. Default: true.
    pub notify_new_device: bool,
}

/// `[adaptive_mfa]`: risk-based step-up. At each correct password of a person with a second
/// factor on a trusted browser, the signals the service has are scored; at or above
/// `threshold` the second factor is asked for anyway and `auth.adaptive_mfa.triggered` is
/// recorded. Signals: no earlier successful sign-in of the person came from this address
/// (`new_ip_score`), the account had at least `failure_burst` failed sign-ins in the current
/// `[auth].brute_force_lockout_secs` window (`failure_burst_score`). A new browser needs no
/// score: trust belongs to a known browser, so a new one is always asked. Impossible travel
/// needs geolocation data the service does not have, so it is not a signal. Needs
/// `[two_factor].enabled`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveMfaConfig {
    /// Score sign-ins and step up risky ones. Default: false.
    pub enabled: bool,
    /// Score at or above which the second factor is asked for. Default: 50. Allowed range:
    /// 1..=1000.
    pub threshold: u32,
    /// Score of an address no earlier successful sign-in came from. Default: 50. Allowed
    /// range: 0..=1000.
    pub new_ip_score: u32,
    /// Score of a burst of failed sign-ins on the account. Default: 50. Allowed range:
    /// 0..=1000.
    pub failure_burst_score: u32,
    /// Failed sign-ins in the lockout window that make a burst. Default: 2. Allowed range:
    /// 1..=100.
    pub failure_burst: u32,
}

impl Default for AdaptiveMfaConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            threshold: 50,
            new_ip_score: 50,
            failure_burst_score: 50,
            failure_burst: 2,
        }
    }
}

impl Default for TwoFactorConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            policy: TwoFactorPolicy::Optional,
            challenge_lifetime_secs: 300,
            backup_codes_warn_below: 3,
            trusted_device_days: 30,
            notify_new_device: true,
        }
    }
}

/// Whether a second factor is up to each person or required of everyone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TwoFactorPolicy {
    /// People choose; applications may ask for `urn:svc:aal2`.
    #[default]
    Optional,
    /// Every authorization needs `urn:svc:aal2`.
    Required,
}

/// `[recovery]`: a person whose second factors are lost gets their account back with the
/// help of people they trust. On `/auth/account/recovery` a person names guardians by email;
/// anyone can then ask, on `/auth/recovery`, to recover the account of an address: each
/// guardian is mailed a single-use approval link and the owner a link that cancels. Once
/// `approvals_required` guardians approved, a waiting period of `waiting_period_secs` starts
/// (the owner is mailed again and can still cancel); after it the browser that asked sets a new
/// password, the lost factors and passkeys are removed, every session ends, and the person must
/// set up a new second factor before any application gets a code. Needs `[two_factor].enabled`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryConfig {
    /// Offer social recovery. Default: false.
    pub enabled: bool,
    /// Guardian approvals a recovery needs (M of N). Default: 2. Allowed range: 1..=10, and at
    /// most `max_guardians`.
    pub approvals_required: u32,
    /// Most guardians a person may name (N). Default: 5. Allowed range: 1..=20.
    pub max_guardians: u32,
    /// Seconds between the last approval needed and the moment the new password can be set,
    /// during which the owner can cancel. Default: 86400 (24 h). Allowed range: 0..=2592000;
    /// at least 3600 with `security.production = true`.
    pub waiting_period_secs: u32,
    /// Seconds guardians have to approve (their links expire then). Default: 604800 (7 days).
    /// Allowed range: 600..=2592000.
    pub request_lifetime_secs: u32,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            approvals_required: 2,
            max_guardians: 5,
            waiting_period_secs: 86_400,
            request_lifetime_secs: 604_800,
        }
    }
}

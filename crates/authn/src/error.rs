//! The one error type of the sign-in engine, in its own terms. It never carries a secret
//! (password, cookie value, link token); `svc-http` maps it to responses in one place.

use std::time::Duration;
use svc_store::StoreError;

/// Why a sign-in operation did not take effect.
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    /// Wrong address or password, or the account may not sign in. One answer for all, so the
    /// answer never reveals whether an account exists.
    #[error("the email address or password is not correct")]
    InvalidCredentials,
    /// Too many failed sign-ins for this account; try again after `retry_after`. Unknown
    /// addresses lock the same way.
    #[error("too many failed sign-ins; try again later")]
    Locked {
        /// How long until the lock ends.
        retry_after: Duration,
    },
    /// Too many attempts from this client address; try again after `retry_after`.
    #[error("too many attempts from this address; try again later")]
    RateLimited {
        /// How long until the window ends.
        retry_after: Duration,
    },
    /// The tenant does not allow self-service sign-up.
    #[error("sign-up is not open for this tenant")]
    SignupClosed,
    /// The address is not `local@domain`.
    #[error("an email address is local@domain, at most 254 characters")]
    InvalidEmail,
    /// The password breaks the policy; the text says which rule.
    #[error("{0}")]
    WeakPassword(String),
    /// The password appears in a known data breach.
    #[error("this password appears in a known data breach; choose another")]
    BreachedPassword,
    /// The breached-password check is unavailable and the deployment fails closed.
    #[error("passwords cannot be checked right now; try again later")]
    BreachCheckUnavailable,
    /// The form needs a solved CAPTCHA and carries none.
    #[error("complete the captcha to continue")]
    CaptchaRequired,
    /// The CAPTCHA token was refused: forged, expired, used before, for another site or
    /// action, or scored too low (one answer for all).
    #[error("the captcha could not be verified; try again")]
    CaptchaFailed,
    /// The CAPTCHA provider cannot be reached and the deployment fails closed; the text is
    /// for logs.
    #[error("the captcha cannot be checked right now; try again later ({0})")]
    CaptchaUnavailable(String),
    /// The link is unknown, used, expired or for something else (one answer for all).
    #[error("this link is not valid; it may have expired or been used already")]
    InvalidLink,
    /// The code (TOTP or backup code) is wrong, was used already, or is not current. One
    /// answer for all.
    #[error("the code is not correct")]
    InvalidCode,
    /// The second step of a sign-in is unknown, used or expired: start again from the
    /// password.
    #[error("this sign-in has expired; sign in again")]
    ChallengeExpired,
    /// The password was right and a second factor is owed (only [`crate::Authn::sign_in`]
    /// answers this; the hosted pages get the challenge).
    #[error("a second factor is required")]
    SecondFactorRequired,
    /// Second factors are not enabled in this deployment (`[two_factor]`).
    #[error("second factors are not enabled")]
    TwoFactorOff,
    /// The person has no confirmed second factor to give.
    #[error("no second factor is set up for this account")]
    NoSecondFactor,
    /// This change to the person's factors needs a session verified with a second factor.
    #[error("confirm with your second factor first")]
    StepUpRequired,
    /// No such factor or pending enrolment of this person (or it expired).
    #[error("this authenticator is not known or its setup expired; start again")]
    UnknownFactor,
    /// A TOTP authenticator is already set up; remove it first.
    #[error("an authenticator app is already set up; remove it first")]
    AlreadyEnrolled,
    /// Passkeys are not enabled in this deployment (`[passkey]`).
    #[error("passkeys are not enabled")]
    PasskeysOff,
    /// A passkey answer did not check out (unknown credential, another person, bad signature,
    /// no user verification, a cloned authenticator…). One answer for all.
    #[error("the passkey could not be verified")]
    PasskeyRefused,
    /// The passkey ceremony is unknown, used, expired, or another person's: start again.
    #[error("this passkey request has expired; try again")]
    CeremonyExpired,
    /// This authenticator's credential is registered already.
    #[error("this passkey is registered already")]
    PasskeyAlreadyRegistered,
    /// No such passkey of this person.
    #[error("no such passkey")]
    UnknownPasskey,
    /// A passkey name is 1 to 64 printable characters.
    #[error("a passkey name is 1 to 64 characters")]
    InvalidPasskeyName,
    /// Social recovery is not enabled in this deployment (`[recovery]`).
    #[error("account recovery with guardians is not enabled")]
    RecoveryOff,
    /// A guardian cannot be named; the text says why.
    #[error("{0}")]
    GuardianRefused(&'static str),
    /// No such guardian of this person.
    #[error("this guardian is not known")]
    UnknownGuardian,
    /// The owner of an account tried to approve its recovery themselves.
    #[error("a recovery is approved by the guardians of the account, not by its owner")]
    OwnRecovery,
    /// The recovery is still collecting approvals or waiting: the new password cannot be set
    /// yet.
    #[error("this recovery is not ready yet")]
    RecoveryNotReady,
    /// Enterprise single sign-on is not enabled in this deployment (`[enterprise_sso]`).
    #[error("single sign-on is not enabled")]
    SsoOff,
    /// No organization with single sign-on verified the address's domain.
    #[error("single sign-on is not set up for this address")]
    NoSsoConnection,
    /// The address's organization signs its people in through single sign-on only.
    #[error("this address signs in through its organization's single sign-on")]
    SsoRequired,
    /// The return from the provider matches no attempt of this browser (unknown, used,
    /// expired, or another browser's): start again.
    #[error("this single sign-on has expired; start again")]
    SsoExpired,
    /// The provider refused, or its answer did not check out; the reason is for logs only
    /// (recorded as `sso.login.failed`).
    #[error("the identity provider's answer was refused ({0})")]
    SsoRefused(String),
    /// The provider could not be reached; the reason is for logs.
    #[error("the identity provider cannot be reached ({0})")]
    SsoUnreachable(String),
    /// Social sign-in is not enabled in this deployment (`[social]`).
    #[error("social sign-in is not enabled")]
    SocialOff,
    /// The tenant offers no enabled provider by that name.
    #[error("this sign-in provider is not offered")]
    NoSocialProvider,
    /// The return from the provider (or a link to confirm) matches nothing of this browser
    /// (unknown, used, expired, or another browser's): start again.
    #[error("this sign-in has expired; start again")]
    SocialExpired,
    /// The provider refused, or its answer did not check out; the reason is for logs only
    /// (recorded as `social.login.failed`).
    #[error("the sign-in provider's answer was refused ({0})")]
    SocialRefused(String),
    /// The provider could not be reached; the reason is for logs.
    #[error("the sign-in provider cannot be reached ({0})")]
    SocialUnreachable(String),
    /// An account already uses the address and the provider does not vouch for it: the
    /// person signs in to that account and connects the provider from there.
    #[error("an account already uses this address; sign in to it and connect the provider there")]
    SocialAccountExists,
    /// The upstream account is already connected to another person, or this person already
    /// has an account of that provider connected.
    #[error("this account of the provider is already connected")]
    SocialAlreadyLinked,
    /// The link to confirm is for another account than the one signed in.
    #[error("this link is for another account; sign in to that account to confirm it")]
    SocialWrongAccount,
    /// Disconnecting would leave the person no way to sign in.
    #[error("set a password or add a passkey before disconnecting your last way to sign in")]
    SocialLastMethod,
    /// The person has no account of that provider connected.
    #[error("no such connected account")]
    UnknownSocialLink,
    /// No such user in this tenant (another tenant's user looks the same).
    #[error("no such user")]
    UnknownUser,
    /// The database failed.
    #[error("storage: {0}")]
    Store(#[from] StoreError),
    /// A bug or an unusable dependency (hashing failed); details are for logs only.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<svc_domain::HasherError> for AuthnError {
    fn from(e: svc_domain::HasherError) -> Self {
        Self::Internal(e.to_string())
    }
}

impl From<svc_domain::PasswordError> for AuthnError {
    fn from(e: svc_domain::PasswordError) -> Self {
        Self::WeakPassword(e.to_string())
    }
}

impl AuthnError {
    /// Whether this is a CAPTCHA refusal (required, failed or unavailable).
    pub fn is_captcha(&self) -> bool {
        matches!(
            self,
            Self::CaptchaRequired | Self::CaptchaFailed | Self::CaptchaUnavailable(_)
        )
    }
}

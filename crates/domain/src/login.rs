//! A person's login history: one record per sign-in attempt on an existing account (spec
//! "Second factors and recovery": login history with time, address, user agent, method and
//! result), shown to the person and to the tenant's administrators. Attempts that name no
//! account are not anybody's history and are left to the events and the brute-force counters.

use crate::{LoginRecordId, TenantId, UserId};
use std::fmt;
use time::OffsetDateTime;

/// Longest user agent kept (longer ones are cut at a character boundary).
pub const MAX_LOGIN_USER_AGENT_CHARS: usize = 256;

/// One sign-in attempt on an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginRecord {
    /// `lgn_…`, time-ordered.
    pub id: LoginRecordId,
    /// The tenant of the account.
    pub tenant_id: TenantId,
    /// The account the attempt named.
    pub user_id: UserId,
    /// When it happened.
    pub occurred_at: OffsetDateTime,
    /// How the person tried to sign in.
    pub method: LoginMethod,
    /// What came of it.
    pub result: LoginResult,
    /// The client address, established through trusted proxies only.
    pub client_ip: Option<String>,
    /// The `User-Agent` the browser sent, at most [`MAX_LOGIN_USER_AGENT_CHARS`] characters.
    pub user_agent: Option<String>,
}

/// The sign-in methods this version has: the first step (the password, a passkey, a provider),
/// alone or with what answered the second step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginMethod {
    /// Address and password on the hosted sign-in page.
    Password,
    /// The password, then a code from an authenticator app (TOTP).
    PasswordTotp,
    /// The password, then a single-use backup code.
    PasswordBackupCode,
    /// The password on a browser trusted to skip the second step.
    PasswordTrustedDevice,
    /// The password, then a WebAuthn security key.
    PasswordSecurityKey,
    /// A passkey alone (user-verified WebAuthn, no password).
    Passkey,
    /// The organization's own OpenID provider (enterprise single sign-on).
    Sso,
    /// A social provider of the tenant (Google, GitHub, …).
    Social,
    /// A social provider, then a code from an authenticator app.
    SocialTotp,
    /// A social provider, then a single-use backup code.
    SocialBackupCode,
    /// A social provider, then a WebAuthn security key.
    SocialSecurityKey,
}

/// What came of a sign-in attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginResult {
    /// The person signed in and got a session.
    Success,
    /// The password was wrong, or the account may not sign in.
    InvalidCredentials,
    /// The account was locked after repeated failures; the password was not checked.
    Locked,
    /// The password was right, but the second-factor code was wrong.
    InvalidSecondFactor,
    /// The second step was locked after repeated wrong codes; the code was not checked.
    SecondFactorLocked,
}

/// A stored method or result this version does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLoginValue(pub String);

impl fmt::Display for UnknownLoginValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown login history value {:?}", self.0)
    }
}

impl std::error::Error for UnknownLoginValue {}

impl LoginMethod {
    /// Every method, in the order of [`LoginMethod`]'s variants.
    pub const ALL: [Self; 11] = [
        Self::Password,
        Self::PasswordTotp,
        Self::PasswordBackupCode,
        Self::PasswordTrustedDevice,
        Self::PasswordSecurityKey,
        Self::Passkey,
        Self::Sso,
        Self::Social,
        Self::SocialTotp,
        Self::SocialBackupCode,
        Self::SocialSecurityKey,
    ];

    /// The wire and storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::PasswordTotp => "password_totp",
            Self::PasswordBackupCode => "password_backup_code",
            Self::PasswordTrustedDevice => "password_trusted_device",
            Self::PasswordSecurityKey => "password_security_key",
            Self::Passkey => "passkey",
            Self::Sso => "sso",
            Self::Social => "social",
            Self::SocialTotp => "social_totp",
            Self::SocialBackupCode => "social_backup_code",
            Self::SocialSecurityKey => "social_security_key",
        }
    }

    /// Parses the spelling of [`LoginMethod::as_str`].
    ///
    /// # Errors
    /// [`UnknownLoginValue`] for anything else.
    pub fn parse(s: &str) -> Result<Self, UnknownLoginValue> {
        match s {
            "password" => Ok(Self::Password),
            "password_totp" => Ok(Self::PasswordTotp),
            "password_backup_code" => Ok(Self::PasswordBackupCode),
            "password_trusted_device" => Ok(Self::PasswordTrustedDevice),
            "password_security_key" => Ok(Self::PasswordSecurityKey),
            "passkey" => Ok(Self::Passkey),
            "sso" => Ok(Self::Sso),
            "social" => Ok(Self::Social),
            "social_totp" => Ok(Self::SocialTotp),
            "social_backup_code" => Ok(Self::SocialBackupCode),
            "social_security_key" => Ok(Self::SocialSecurityKey),
            _ => Err(UnknownLoginValue(s.to_owned())),
        }
    }
}

impl LoginResult {
    /// Every result, in the order of [`LoginResult`]'s variants.
    pub const ALL: [Self; 5] = [
        Self::Success,
        Self::InvalidCredentials,
        Self::Locked,
        Self::InvalidSecondFactor,
        Self::SecondFactorLocked,
    ];

    /// The wire and storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::InvalidCredentials => "invalid_credentials",
            Self::Locked => "locked",
            Self::InvalidSecondFactor => "invalid_second_factor",
            Self::SecondFactorLocked => "second_factor_locked",
        }
    }

    /// Parses the spelling of [`LoginResult::as_str`].
    ///
    /// # Errors
    /// [`UnknownLoginValue`] for anything else.
    pub fn parse(s: &str) -> Result<Self, UnknownLoginValue> {
        match s {
            "success" => Ok(Self::Success),
            "invalid_credentials" => Ok(Self::InvalidCredentials),
            "locked" => Ok(Self::Locked),
            "invalid_second_factor" => Ok(Self::InvalidSecondFactor),
            "second_factor_locked" => Ok(Self::SecondFactorLocked),
            _ => Err(UnknownLoginValue(s.to_owned())),
        }
    }
}

/// A user agent as the history keeps it: at most [`MAX_LOGIN_USER_AGENT_CHARS`] characters,
/// control characters dropped (it is shown on a page and in JSON), empty as `None`.
#[must_use]
pub fn login_user_agent(raw: Option<&str>) -> Option<String> {
    let kept: String = raw?
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_LOGIN_USER_AGENT_CHARS)
        .collect();
    let kept = kept.trim().to_owned();
    (!kept.is_empty()).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_and_nothing_else_parses() {
        for r in LoginResult::ALL {
            assert_eq!(LoginResult::parse(r.as_str()), Ok(r));
        }
        for m in LoginMethod::ALL {
            assert_eq!(LoginMethod::parse(m.as_str()), Ok(m));
        }
        let results: Vec<&str> = LoginResult::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            results,
            [
                "success",
                "invalid_credentials",
                "locked",
                "invalid_second_factor",
                "second_factor_locked"
            ],
            "the values the login_history_result_check constraint allows"
        );
        let methods: Vec<&str> = LoginMethod::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(
            methods,
            [
                "password",
                "password_totp",
                "password_backup_code",
                "password_trusted_device",
                "password_security_key",
                "passkey",
                "sso",
                "social",
                "social_totp",
                "social_backup_code",
                "social_security_key"
            ],
            "the values the login_history_method_check constraint allows"
        );
        assert!(LoginResult::parse("Success").is_err());
        assert!(LoginResult::parse("second_factor").is_err());
        assert!(LoginMethod::parse("sms").is_err());
        assert!(LoginMethod::parse("Passkey").is_err());
        assert!(LoginMethod::parse("totp").is_err());
    }

    #[test]
    fn user_agents_are_cut_and_cleaned() {
        assert_eq!(login_user_agent(None), None);
        assert_eq!(login_user_agent(Some("  \u{7}  ")), None);
        assert_eq!(
            login_user_agent(Some("Mozilla/5.0\r\nX-Evil: 1")).as_deref(),
            Some("Mozilla/5.0X-Evil: 1")
        );
        let long = "é".repeat(1000);
        assert_eq!(
            login_user_agent(Some(&long)).map(|s| s.chars().count()),
            Some(MAX_LOGIN_USER_AGENT_CHARS)
        );
    }
}

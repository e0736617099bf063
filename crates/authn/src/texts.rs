//! The wording of the mails the engine sends. Plain text only, one link each; the link is also
//! carried separately in [`Mail::link`] so delivery providers and tests need not parse bodies.

use crate::mail::Mail;
use std::time::Duration;
use svc_domain::{Email, UserTokenPurpose};

/// "24 hours", "7 days", "1 hour", "30 minutes": how long a link works, for the body.
fn lifetime_text(lifetime: Duration) -> String {
    let secs = lifetime.as_secs();
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if secs > 86_400 && secs.is_multiple_of(86_400) {
        plural(secs / 86_400, "day")
    } else if secs >= 3_600 && secs.is_multiple_of(3_600) {
        plural(secs / 3_600, "hour")
    } else {
        plural(secs.div_ceil(60).max(1), "minute")
    }
}

/// The mail carrying a one-time `link` for `purpose` to `to`.
pub(crate) fn link_mail(
    purpose: UserTokenPurpose,
    to: &Email,
    tenant_name: &str,
    link: String,
    lifetime: Duration,
) -> Mail {
    let valid = lifetime_text(lifetime);
    let (subject, text) = match purpose {
        UserTokenPurpose::VerifyEmail => (
            format!("Verify your email address for {tenant_name}"),
            format!(
                "Confirm that {to} is your address by opening this link:\n\n{link}\n\n\
                 The link works once, for {valid}. If you did not create an account, ignore \
                 this message."
            ),
        ),
        UserTokenPurpose::ResetPassword => (
            format!("Reset your {tenant_name} password"),
            format!(
                "Someone asked to reset the password of {to}. To choose a new password, open \
                 this link:\n\n{link}\n\nThe link works once, for {valid}. If you did not ask, \
                 ignore this message: your password stays as it is."
            ),
        ),
        UserTokenPurpose::Invitation => (
            format!("You are invited to {tenant_name}"),
            format!(
                "You have been invited to sign in to {tenant_name} as {to}. To accept and \
                 choose a password, open this link:\n\n{link}\n\nThe link works once, for \
                 {valid}."
            ),
        ),
    };
    Mail {
        to: to.clone(),
        subject,
        text,
        link: Some(link),
    }
}

/// The notice to the owner of an address someone tried to sign up with. It carries no
/// one-time link: the person already has an account.
pub(crate) fn sign_up_notice(to: &Email, tenant_name: &str, issuer: &str) -> Mail {
    let issuer = issuer.trim_end_matches('/');
    Mail {
        to: to.clone(),
        subject: format!("Someone tried to sign up to {tenant_name} with your address"),
        text: format!(
            "Someone tried to create an account on {tenant_name} with {to}, which already has \
             an account.\n\nIf it was you, sign in at {issuer}/auth/sign-in, or reset your \
             password at {issuer}/auth/forgot-password.\n\nIf it was not you, you can ignore \
             this message: nothing changed on your account."
        ),
        link: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lifetimes_read_naturally() {
        assert_eq!(lifetime_text(Duration::from_secs(86_400)), "24 hours");
        assert_eq!(lifetime_text(Duration::from_secs(7 * 86_400)), "7 days");
        assert_eq!(lifetime_text(Duration::from_secs(3_600)), "1 hour");
        assert_eq!(lifetime_text(Duration::from_secs(90)), "2 minutes");
    }

    #[test]
    fn every_mail_carries_its_link_in_the_body_too() {
        let to = Email::parse("ada@example.com").unwrap();
        for purpose in [
            UserTokenPurpose::VerifyEmail,
            UserTokenPurpose::ResetPassword,
            UserTokenPurpose::Invitation,
        ] {
            let link = "https://acme.example/auth/x?token=abc".to_owned();
            let mail = link_mail(
                purpose,
                &to,
                "Acme",
                link.clone(),
                Duration::from_secs(3600),
            );
            assert!(mail.text.contains(&link));
            assert_eq!(mail.link.as_deref(), Some(link.as_str()));
            assert!(mail.subject.contains("Acme"));
        }
    }
}

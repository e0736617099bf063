//! The wording of the mails the engine sends, as a catalogue: one [`MailTexts`] per language,
//! selected like the hosted pages' strings (`svc-http`'s `Strings`). Plain text only, one link
//! at most; the link is also carried separately in [`Mail::link`] so delivery providers and
//! tests need not parse bodies.
//!
//! Texts are templates with named holes (`{tenant}`, `{email}`, `{link}`, `{valid}`,
//! `{issuer}`), filled in one pass ([`fill`]): a value is never searched for holes again, so a
//! tenant name or address that contains `{link}` stays literal.

use crate::mail::Mail;
use std::time::Duration;
use svc_domain::{Email, UserTokenPurpose};

/// One language's mail texts.
#[derive(Debug, PartialEq, Eq)]
pub struct MailTexts {
    /// BCP 47 tag.
    pub lang: &'static str,
    /// Subject of the verification mail (`{tenant}`).
    pub verify_subject: &'static str,
    /// Body of the verification mail (`{email}`, `{link}`, `{valid}`).
    pub verify_body: &'static str,
    /// Subject of the password-reset mail (`{tenant}`).
    pub reset_subject: &'static str,
    /// Body of the password-reset mail (`{email}`, `{link}`, `{valid}`).
    pub reset_body: &'static str,
    /// Subject of the invitation (`{tenant}`).
    pub invitation_subject: &'static str,
    /// Body of the invitation (`{tenant}`, `{email}`, `{link}`, `{valid}`).
    pub invitation_body: &'static str,
    /// Subject of an invitation to join the tenant or one of its organizations (`{target}`:
    /// the organization's name, or the tenant's).
    pub join_subject: &'static str,
    /// Body of that invitation (`{target}`, `{tenant}`, `{email}`, `{link}`, `{valid}`).
    pub join_body: &'static str,
    /// Subject of the notice to the owner of an address someone tried to sign up with
    /// (`{tenant}`).
    pub sign_up_notice_subject: &'static str,
    /// Body of that notice (`{tenant}`, `{email}`, `{issuer}`).
    pub sign_up_notice_body: &'static str,
    /// Subject of the notice of a sign-in from a new browser (`{tenant}`).
    pub new_device_subject: &'static str,
    /// Body of that notice (`{tenant}`, `{email}`, `{browser}`, `{address}`, `{time}`).
    pub new_device_body: &'static str,
    /// Subject of the notice that an administrator removed the person's second factors
    /// (`{tenant}`).
    pub factors_reset_subject: &'static str,
    /// Body of that notice (`{tenant}`, `{email}`, `{issuer}`).
    pub factors_reset_body: &'static str,
    /// Stands for a browser or address the service does not know.
    pub unknown: &'static str,
    /// Units of a link's lifetime, singular then plural: day, hour, minute.
    pub units: [(&'static str, &'static str); 3],
}

/// English.
pub(crate) static EN: MailTexts = MailTexts {
    lang: "en",
    verify_subject: "Verify your email address for {tenant}",
    verify_body: "Confirm that {email} is your address by opening this link:\n\n{link}\n\n\
                  The link works once, for {valid}. If you did not create an account, ignore \
                  this message.",
    reset_subject: "Reset your {tenant} password",
    reset_body: "Someone asked to reset the password of {email}. To choose a new password, \
                 open this link:\n\n{link}\n\nThe link works once, for {valid}. If you did not \
                 ask, ignore this message: your password stays as it is.",
    invitation_subject: "You are invited to {tenant}",
    invitation_body: "You have been invited to sign in to {tenant} as {email}. To accept and \
                      choose a password, open this link:\n\n{link}\n\nThe link works once, \
                      for {valid}.",
    join_subject: "You are invited to join {target}",
    join_body: "You have been invited to join {target} on {tenant} as {email}. To accept, open \
                this link (you can create your account there if you have none yet):\n\n{link}\n\n\
                The link works once, for {valid}. If you do not expect this invitation, ignore \
                this message.",
    sign_up_notice_subject: "Someone tried to sign up to {tenant} with your address",
    sign_up_notice_body: "Someone tried to create an account on {tenant} with {email}, which \
                          already has an account.\n\nIf it was you, sign in at \
                          {issuer}/auth/sign-in, or reset your password at \
                          {issuer}/auth/forgot-password.\n\nIf it was not you, you can ignore \
                          this message: nothing changed on your account.",
    new_device_subject: "New sign-in to {tenant}",
    new_device_body: "Your account {email} on {tenant} was just signed in to from a browser \
                      it was not used from before:\n\nBrowser: {browser}\nAddress: \
                      {address}\nTime: {time}\n\nIf it was you, there is nothing to do. If it \
                      was not, change your password now and sign out the sessions you do not \
                      recognise from your account page.",
    factors_reset_subject: "Your two-step verification on {tenant} was reset",
    factors_reset_body: "An administrator of {tenant} removed the two-step verification of \
                         {email}: your authenticator app and backup codes no longer work, and \
                         no browser is trusted any more. Signing in now needs only your \
                         password.\n\nSet up two-step verification again from your account \
                         page at {issuer}/auth/account/two-factor.\n\nIf you did not ask for \
                         this, contact your administrator and change your password now.",
    unknown: "unknown",
    units: [("day", "days"), ("hour", "hours"), ("minute", "minutes")],
};

impl MailTexts {
    /// The catalogue for a BCP 47 language tag (primary subtag compared); English when none
    /// matches. One catalogue so far; a language is one more `static` and one more arm.
    pub fn for_language(_tag: Option<&str>) -> &'static MailTexts {
        &EN
    }

    /// "24 hours", "7 days", "1 hour", "30 minutes": how long a link works.
    pub(crate) fn lifetime(&self, lifetime: Duration) -> String {
        let secs = lifetime.as_secs();
        let [day, hour, minute] = self.units;
        let count =
            |n: u64, (one, many): (&str, &str)| format!("{n} {}", if n == 1 { one } else { many });
        if secs > 86_400 && secs.is_multiple_of(86_400) {
            count(secs / 86_400, day)
        } else if secs >= 3_600 && secs.is_multiple_of(3_600) {
            count(secs / 3_600, hour)
        } else {
            count(secs.div_ceil(60).max(1), minute)
        }
    }

    /// The mail carrying a one-time `link` for `purpose` to `to`.
    pub(crate) fn link_mail(
        &self,
        purpose: UserTokenPurpose,
        to: &Email,
        tenant_name: &str,
        link: String,
        lifetime: Duration,
    ) -> Mail {
        let valid = self.lifetime(lifetime);
        let (subject, body) = match purpose {
            UserTokenPurpose::VerifyEmail => (self.verify_subject, self.verify_body),
            UserTokenPurpose::ResetPassword => (self.reset_subject, self.reset_body),
            UserTokenPurpose::Invitation => (self.invitation_subject, self.invitation_body),
        };
        let values = [
            ("tenant", tenant_name),
            ("email", to.as_str()),
            ("link", link.as_str()),
            ("valid", valid.as_str()),
        ];
        Mail {
            to: to.clone(),
            subject: fill(subject, &values),
            text: fill(body, &values),
            link: Some(link),
        }
    }

    /// The notice to the owner of an address someone tried to sign up with. It carries no
    /// one-time link: the person already has an account.
    pub(crate) fn sign_up_notice(&self, to: &Email, tenant_name: &str, issuer: &str) -> Mail {
        let values = [
            ("tenant", tenant_name),
            ("email", to.as_str()),
            ("issuer", issuer.trim_end_matches('/')),
        ];
        Mail {
            to: to.clone(),
            subject: fill(self.sign_up_notice_subject, &values),
            text: fill(self.sign_up_notice_body, &values),
            link: None,
        }
    }
}

impl MailTexts {
    /// The notice of a sign-in from a browser not seen for the person before. It carries no
    /// link: a mail that asks to click is what phishing looks like.
    pub(crate) fn new_device_notice(
        &self,
        to: &Email,
        tenant_name: &str,
        browser: Option<&str>,
        address: Option<&str>,
        at: time::OffsetDateTime,
    ) -> Mail {
        let time = utc_minute(at);
        let values = [
            ("tenant", tenant_name),
            ("email", to.as_str()),
            ("browser", browser.unwrap_or(self.unknown)),
            ("address", address.unwrap_or(self.unknown)),
            ("time", time.as_str()),
        ];
        Mail {
            to: to.clone(),
            subject: fill(self.new_device_subject, &values),
            text: fill(self.new_device_body, &values),
            link: None,
        }
    }
}

impl MailTexts {
    /// The invitation to join `organization` (or, without one, the tenant) through `link`.
    pub(crate) fn join_mail(
        &self,
        to: &Email,
        (tenant_name, organization): (&str, Option<&str>),
        link: String,
        lifetime: Duration,
    ) -> Mail {
        let valid = self.lifetime(lifetime);
        let values = [
            ("target", organization.unwrap_or(tenant_name)),
            ("tenant", tenant_name),
            ("email", to.as_str()),
            ("link", link.as_str()),
            ("valid", valid.as_str()),
        ];
        Mail {
            to: to.clone(),
            subject: fill(self.join_subject, &values),
            text: fill(self.join_body, &values),
            link: Some(link),
        }
    }

    /// The notice that an administrator reset the person's second factors. Like the new-device
    /// notice it carries no link to click, only the address to type.
    pub(crate) fn factors_reset_notice(&self, to: &Email, tenant_name: &str, issuer: &str) -> Mail {
        let values = [
            ("tenant", tenant_name),
            ("email", to.as_str()),
            ("issuer", issuer),
        ];
        Mail {
            to: to.clone(),
            subject: fill(self.factors_reset_subject, &values),
            text: fill(self.factors_reset_body, &values),
            link: None,
        }
    }
}

/// "2026-11-23 09:14 UTC": a time as mails show it.
pub(crate) fn utc_minute(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    )
}

/// `template` with every `{name}` among `values` replaced, in a single pass over the template
/// (inserted values are never scanned); unknown holes stay as written.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hole = after
            .find('}')
            .map(|close| (&after[..close], &after[close + 1..]));
        match hole.and_then(|(name, tail)| {
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v, tail))
        }) {
            Some((value, tail)) => {
                out.push_str(value);
                rest = tail;
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lifetimes_read_naturally() {
        assert_eq!(EN.lifetime(Duration::from_secs(86_400)), "24 hours");
        assert_eq!(EN.lifetime(Duration::from_secs(7 * 86_400)), "7 days");
        assert_eq!(EN.lifetime(Duration::from_secs(3_600)), "1 hour");
        assert_eq!(EN.lifetime(Duration::from_secs(90)), "2 minutes");
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
            let mail = EN.link_mail(
                purpose,
                &to,
                "Acme",
                link.clone(),
                Duration::from_secs(3600),
            );
            assert!(mail.text.contains(&link));
            assert!(mail.text.contains("1 hour"));
            assert!(!mail.text.contains('{'), "every hole filled: {}", mail.text);
            assert_eq!(mail.link.as_deref(), Some(link.as_str()));
            assert!(mail.subject.contains("Acme"));
        }
    }

    #[test]
    fn values_are_inserted_once_and_never_read_as_holes() {
        assert_eq!(
            fill(
                "{tenant}: {link} {unknown} {",
                &[("tenant", "{link}"), ("link", "L")]
            ),
            "{link}: L {unknown} {"
        );
        let notice = EN.sign_up_notice(
            &Email::parse("ada@example.com").unwrap(),
            "Acme {issuer}",
            "https://acme.example/",
        );
        assert_eq!(
            notice.subject,
            "Someone tried to sign up to Acme {issuer} with your address"
        );
        assert!(
            notice
                .text
                .contains("https://acme.example/auth/forgot-password")
        );
        assert!(notice.link.is_none());
    }

    #[test]
    fn english_is_the_fallback_for_any_language() {
        for tag in [None, Some("fr"), Some("")] {
            assert_eq!(MailTexts::for_language(tag).lang, "en");
        }
    }
}

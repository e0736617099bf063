//! The wording of the social-recovery mails, beside the other mail texts ([`MailTexts`]) and
//! filled the same way (named holes, one pass). Only the approval and cancel mails carry a
//! link: they exist to be acted on; the notices name the address to type instead.
//!
//! [`MailTexts`]: crate::MailTexts

use crate::mail::Mail;
use crate::texts::fill;
use svc_domain::{Email, User};
use time::OffsetDateTime;

/// One language's recovery mail texts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RecoveryTexts {
    /// To a new guardian (`{tenant}`, `{owner}`).
    guardian_named: (&'static str, &'static str),
    /// To each guardian when a recovery starts (`{tenant}`, `{owner}`, `{link}`, `{valid}`).
    approval: (&'static str, &'static str),
    /// To the owner when a recovery starts (`{tenant}`, `{email}`, `{link}`).
    requested: (&'static str, &'static str),
    /// To the owner when the waiting period starts (`{tenant}`, `{email}`, `{time}`,
    /// `{issuer}`).
    waiting: (&'static str, &'static str),
    /// To the owner when the account was recovered (`{tenant}`, `{email}`).
    completed: (&'static str, &'static str),
}

static EN: RecoveryTexts = RecoveryTexts {
    guardian_named: (
        "You are a recovery guardian on {tenant}",
        "{owner} named you a recovery guardian of their account on {tenant}. If they ever lose \
         their sign-in factors, you may be asked to confirm that they want their account back.\n\n\
         Only ever confirm a recovery that {owner} asked you for themselves, in person or by a \
         channel you trust. Nothing is needed from you now.",
    ),
    approval: (
        "{owner} asks for your help to recover their {tenant} account",
        "Someone asked to recover the account of {owner} on {tenant}, and you are one of its \
         guardians. Approve only if {owner} asked you themselves, in person or by a channel you \
         trust: an approval helps hand the account over.\n\nTo approve, open this link:\n\n\
         {link}\n\nThe link works once, for {valid}. If you did not expect this, ignore it.",
    ),
    requested: (
        "Recovery of your {tenant} account was requested",
        "Someone asked the guardians of your account {email} on {tenant} to help recover it. If \
         it was you, there is nothing to do.\n\nIf it was not you, stop it now by opening this \
         link:\n\n{link}",
    ),
    waiting: (
        "Your {tenant} account will be recovered on {time}",
        "The guardians of your account {email} on {tenant} approved its recovery. From {time} \
         whoever asked can set a new password, and your current second factors will be removed.\n\n\
         If it was not you, stop it before then with the link of our earlier message, or sign in \
         and cancel it at {issuer}/auth/account/recovery.",
    ),
    completed: (
        "Your {tenant} account was recovered",
        "Your account {email} on {tenant} was recovered with the help of its guardians: it has a \
         new password, its earlier second factors were removed and every session was signed \
         out.\n\nIf you did not do this, contact your administrator now.",
    ),
};

impl RecoveryTexts {
    /// The catalogue for a language tag; English when none matches, like [`crate::MailTexts`].
    pub(crate) fn for_language(_tag: Option<&str>) -> &'static RecoveryTexts {
        &EN
    }

    fn mail(to: &Email, (subject, body): (&str, &str), values: &[(&str, &str)]) -> Mail {
        let link = values
            .iter()
            .find(|(name, _)| *name == "link")
            .map(|(_, v)| (*v).to_owned());
        Mail {
            to: to.clone(),
            subject: fill(subject, values),
            text: fill(body, values),
            link,
        }
    }

    pub(crate) fn guardian_named(&self, to: &Email, owner: &User, tenant: &str) -> Mail {
        let owner = owner_name(owner);
        Self::mail(
            to,
            self.guardian_named,
            &[("tenant", tenant), ("owner", &owner)],
        )
    }

    pub(crate) fn approval(
        &self,
        to: &Email,
        owner: &User,
        tenant: &str,
        link: &str,
        valid: &str,
    ) -> Mail {
        let owner = owner_name(owner);
        Self::mail(
            to,
            self.approval,
            &[
                ("tenant", tenant),
                ("owner", &owner),
                ("link", link),
                ("valid", valid),
            ],
        )
    }

    pub(crate) fn requested(&self, owner: &User, tenant: &str, link: &str) -> Mail {
        Self::mail(
            &owner.email,
            self.requested,
            &[
                ("tenant", tenant),
                ("email", owner.email.as_str()),
                ("link", link),
            ],
        )
    }

    pub(crate) fn waiting(
        &self,
        owner: &User,
        tenant: &str,
        at: OffsetDateTime,
        issuer: &str,
    ) -> Mail {
        let time = crate::texts::utc_minute(at);
        Self::mail(
            &owner.email,
            self.waiting,
            &[
                ("tenant", tenant),
                ("email", owner.email.as_str()),
                ("time", &time),
                ("issuer", issuer.trim_end_matches('/')),
            ],
        )
    }

    pub(crate) fn completed(&self, owner: &User, tenant: &str) -> Mail {
        Self::mail(
            &owner.email,
            self.completed,
            &[("tenant", tenant), ("email", owner.email.as_str())],
        )
    }
}

/// "Ada Lovelace <ada@example.com>", or the address alone: guardians know the person, and the
/// address tells two people of the same name apart.
fn owner_name(owner: &User) -> String {
    match owner.name.as_deref() {
        Some(name) => format!("{name} <{}>", owner.email),
        None => owner.email.as_str().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_the_approval_and_requested_mails_carry_a_link() {
        let to = Email::parse("grace@example.com").unwrap();
        let texts = RecoveryTexts::for_language(None);
        let link = "https://acme.example/auth/recovery/approve?token=gda_x";
        let user = crate::recovery::flow::tests_support::user();
        let approval = texts.approval(&to, &user, "Acme", link, "7 days");
        assert_eq!(approval.link.as_deref(), Some(link));
        assert!(approval.text.contains(link));
        assert!(approval.subject.contains("Ada Lovelace <ada@example.com>"));
        assert!(texts.guardian_named(&to, &user, "Acme").link.is_none());
        assert!(texts.completed(&user, "Acme").link.is_none());
        let waiting = texts.waiting(
            &user,
            "Acme",
            OffsetDateTime::UNIX_EPOCH,
            "https://acme.example/",
        );
        assert!(waiting.link.is_none());
        assert!(
            waiting
                .text
                .contains("https://acme.example/auth/account/recovery")
        );
        assert!(waiting.subject.contains("1970-01-01 00:00 UTC"));
    }
}

//! The backchannel notifier of the composition root: a CIBA request mails its person a link to
//! the approval page (`/auth/ciba`), through the sign-in engine's outbox.
//!
//! The start's answer must not tell a real person from a decoy by its timing (spec: "same
//! response shape and timing"), and a mail costs work (writing it, or talking to a relay) on
//! the same two cores that answer. So both kinds do the same here: the message is composed (for
//! a decoy, without an address) and handed to a task that waits [`DELAY`] before sending
//! it (a decoy's is dropped then). The sending lands well after the answer, among whatever
//! requests are running then, rather than inside the answer of the request that caused it.

use std::sync::Arc;
use std::time::Duration;
use svc_authn::{Authn, Mail};
use svc_domain::{Tenant, User};
use svc_http::hosted::strings::EN;
use svc_oauth::backchannel::{APPROVAL_PATH, Asker, BackchannelNotifier};

/// How long after the start the mail leaves.
const DELAY: Duration = Duration::from_millis(150);

/// Mails the approval link.
pub(super) struct CibaMail {
    pub(super) authn: Arc<Authn>,
}

impl BackchannelNotifier for CibaMail {
    fn notify(
        &self,
        tenant: &Tenant,
        issuer: &str,
        person: Option<&User>,
        asker: Asker<'_>,
        binding_message: Option<&str>,
    ) {
        let s = EN.ciba;
        let (subject, intro, name) = match asker {
            Asker::Application(name) => (s.mail_subject, s.mail_intro, name),
            Asker::Agent(name) => (s.mail_agent_subject, s.mail_agent_intro, name),
        };
        let link = format!("{}{APPROVAL_PATH}", issuer.trim_end_matches('/'));
        let mut text = format!("{intro}\n\n  {name} ({})\n\n", tenant.display_name);
        if let Some(message) = binding_message {
            text.push_str(&format!("{}\n\n  {message}\n\n", s.mail_binding));
        }
        text.push_str(&format!(
            "{}\n\n  {link}\n\n{}\n",
            s.mail_link, s.mail_ignore
        ));
        // A decoy's text is composed as well, then dropped when the task wakes.
        let mail = person.map(|person| Mail {
            to: person.email.clone(),
            subject: subject.to_owned(),
            text: text.clone(),
            link: Some(link.clone()),
        });
        let authn = Arc::clone(&self.authn);
        tokio::spawn(async move {
            tokio::time::sleep(DELAY).await;
            drop(text);
            if let Some(mail) = mail {
                authn.deliver(mail);
            }
        });
    }
}

//! SMTP delivery through a relay (lettre, rustls on aws-lc-rs; never OpenSSL).
//!
//! With `starttls` the connection must upgrade to TLS before credentials or mail are sent
//! (lettre's `Tls::Required`), and production refuses anything else (spec "Production mode
//! requirements": `email.smtp.starttls` true). Without it the relay is spoken to in plain text,
//! which only a local development relay should accept.

use crate::mail::{Mail, MailError, Mailer};
use async_trait::async_trait;
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::fmt;
use std::time::Duration;

/// How to reach the relay.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpSettings {
    /// Relay host name.
    pub host: String,
    /// Relay port (587 for submission with STARTTLS).
    pub port: u16,
    /// Login user name, when the relay needs one.
    pub username: Option<String>,
    /// Login password.
    pub password: Option<String>,
    /// Require STARTTLS.
    pub starttls: bool,
    /// Sender, e.g. `Example <no-reply@example.com>`.
    pub from: String,
}

impl fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("starttls", &self.starttls)
            .field("from", &self.from)
            .finish()
    }
}

/// Sends mail through an SMTP relay.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// A mailer for `settings`; no connection is made until the first message.
    pub fn new(settings: &SmtpSettings) -> Result<Self, MailError> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|e: lettre::address::AddressError| {
                MailError::Address(format!("email.from: {e}"))
            })?;
        let builder = if settings.starttls {
            AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&settings.host)
                .map_err(|e| MailError::Smtp(e.to_string()))?
        } else {
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(settings.host.clone())
        };
        let mut builder = builder
            .port(settings.port)
            .timeout(Some(Duration::from_secs(10)));
        if let Some(user) = &settings.username {
            builder = builder.credentials(Credentials::new(
                user.clone(),
                settings.password.clone().unwrap_or_default(),
            ));
        }
        Ok(Self {
            transport: builder.build(),
            from,
        })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let to: Mailbox = mail
            .to
            .as_str()
            .parse()
            .map_err(|e: lettre::address::AddressError| MailError::Address(e.to_string()))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(mail.text.clone())
            .map_err(|e| MailError::Address(e.to_string()))?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| MailError::Smtp(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn settings() -> SmtpSettings {
        SmtpSettings {
            host: "smtp.example.com".to_owned(),
            port: 587,
            username: Some("svc".to_owned()),
            password: Some("hunter2-secret".to_owned()),
            starttls: true,
            from: "Example <no-reply@example.com>".to_owned(),
        }
    }

    #[tokio::test]
    async fn builds_without_connecting_and_hides_the_password() {
        let mailer = SmtpMailer::new(&settings()).unwrap();
        assert!(format!("{mailer:?}").contains("no-reply@example.com"));
        assert!(!format!("{:?}", settings()).contains("hunter2"));
        let plain = SmtpMailer::new(&SmtpSettings {
            starttls: false,
            ..settings()
        });
        assert!(plain.is_ok());
    }

    #[test]
    fn a_bad_sender_is_refused() {
        let err = SmtpMailer::new(&SmtpSettings {
            from: "not an address".to_owned(),
            ..settings()
        })
        .unwrap_err();
        assert!(matches!(err, MailError::Address(m) if m.starts_with("email.from")));
    }
}

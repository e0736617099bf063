//! Outgoing mail: the [`Mailer`] seam and its development provider, [`LogMailer`].
//!
//! The log provider writes each message as one JSON object per line (JSON Lines):
//!
//! ```json
//! {"to":"ada@example.com","subject":"Verify your email address","text":"…","link":"https://acme.example.com/auth/verify-email?token=…","sent_at":"2026-11-22T10:00:00Z"}
//! ```
//!
//! `to`, `subject` and `text` are strings, `link` is a string or `null`, `sent_at` is RFC 3339
//! UTC. The end-to-end tests and the interop suite read links from a `file:` sink, so this shape
//! is a contract: add members if needed, never rename or remove one. The sink holds working
//! links, which is why the provider is for development only (spec "Production mode
//! requirements": `email.provider` not `log`).
//!
//! SMTP delivery lives in [`crate::smtp`].
//!
//! Mail leaves through an [`Outbox`]: each message is sent by a background task, so no answer
//! waits for the relay, and whether a mail was sent (an account exists) never shows in how
//! long an answer takes.

use async_trait::async_trait;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use svc_domain::{Clock, Email};
use time::format_description::well_known::Rfc3339;
use tokio::io::AsyncWriteExt;
use tokio::sync::{Mutex, Notify};

/// One message to one person.
#[derive(Clone, PartialEq, Eq)]
pub struct Mail {
    /// Recipient.
    pub to: Email,
    /// Subject line.
    pub subject: String,
    /// Plain-text body (includes the link, when there is one).
    pub text: String,
    /// The one-time link the message carries, if any.
    pub link: Option<String>,
}

impl fmt::Debug for Mail {
    /// The body and link carry working one-time tokens: never print them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mail")
            .field("to", &self.to)
            .field("subject", &self.subject)
            .field("text", &"<redacted>")
            .field("link", &self.link.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Why a message was not handed over for delivery. The text never contains the message body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// Writing to the log sink failed.
    #[error("could not write the mail log: {0}")]
    Io(String),
    /// An address could not be used (the sender in configuration, or the recipient).
    #[error("invalid mail address: {0}")]
    Address(String),
    /// The SMTP relay refused the message or could not be reached.
    #[error("SMTP delivery failed: {0}")]
    Smtp(String),
}

/// Sends mail. Implementations must not log bodies or links.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    /// Hands `mail` over for delivery.
    async fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

/// Sends mail in the background through a [`Mailer`] and keeps count of what is in flight.
pub struct Outbox {
    mailer: Arc<dyn Mailer>,
    in_flight: Arc<InFlight>,
}

#[derive(Default)]
struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

impl fmt::Debug for Outbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox")
            .field("in_flight", &self.in_flight.count.load(Ordering::SeqCst))
            .finish_non_exhaustive()
    }
}

impl Outbox {
    /// An outbox sending through `mailer`.
    pub fn new(mailer: Arc<dyn Mailer>) -> Self {
        Self {
            mailer,
            in_flight: Arc::new(InFlight::default()),
        }
    }

    /// Hands `mail` to a background task and returns at once. A failure is logged (subject
    /// only, never the body or link): the change that caused the mail has committed, and its
    /// answer must depend neither on the relay nor on whether there was anything to send.
    pub fn send(&self, mail: Mail) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(subject = %mail.subject, "mail dropped: no async runtime to send it");
            return;
        };
        self.in_flight.count.fetch_add(1, Ordering::SeqCst);
        let (mailer, in_flight) = (self.mailer.clone(), self.in_flight.clone());
        runtime.spawn(async move {
            if let Err(e) = mailer.send(&mail).await {
                tracing::warn!(error = %e, subject = %mail.subject, "mail could not be sent");
            }
            if in_flight.count.fetch_sub(1, Ordering::SeqCst) == 1 {
                in_flight.idle.notify_waiters();
            }
        });
    }

    /// Waits until every mail handed to [`Outbox::send`] so far was sent or failed (tests;
    /// a graceful shutdown).
    pub async fn settled(&self) {
        loop {
            let idle = self.in_flight.idle.notified();
            tokio::pin!(idle);
            // Registered before the check, so a notification in between is not missed.
            idle.as_mut().enable();
            if self.in_flight.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

/// Where [`LogMailer`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogSink {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// Append to this file (created when missing).
    File(PathBuf),
}

impl LogSink {
    /// Parses `stdout`, `stderr` or `file:<path>` (the `[email.log].sink` spelling).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "stdout" => Some(Self::Stdout),
            "stderr" => Some(Self::Stderr),
            _ => s
                .strip_prefix("file:")
                .filter(|p| !p.is_empty())
                .map(|p| Self::File(PathBuf::from(p))),
        }
    }
}

/// The development provider: every message as one JSON line on a [`LogSink`] (format in the
/// module docs).
pub struct LogMailer {
    sink: LogSink,
    clock: Arc<dyn Clock>,
    /// One line at a time, so concurrent messages never interleave.
    lock: Mutex<()>,
}

impl fmt::Debug for LogMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogMailer")
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

/// The wire shape of one line.
#[derive(Serialize)]
struct LogLine<'a> {
    to: &'a str,
    subject: &'a str,
    text: &'a str,
    link: Option<&'a str>,
    sent_at: String,
}

impl LogMailer {
    /// A mailer writing to `sink`, stamping lines with `clock`.
    pub fn new(sink: LogSink, clock: Arc<dyn Clock>) -> Self {
        Self {
            sink,
            clock,
            lock: Mutex::new(()),
        }
    }

    /// The JSON line (with its newline) for `mail`.
    fn line(&self, mail: &Mail) -> Result<Vec<u8>, MailError> {
        let sent_at = self
            .clock
            .now()
            .format(&Rfc3339)
            .map_err(|e| MailError::Io(e.to_string()))?;
        let line = LogLine {
            to: mail.to.as_str(),
            subject: &mail.subject,
            text: &mail.text,
            link: mail.link.as_deref(),
            sent_at,
        };
        let mut bytes = serde_json::to_vec(&line).map_err(|e| MailError::Io(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[async_trait]
impl Mailer for LogMailer {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let bytes = self.line(mail)?;
        let io = |e: std::io::Error| MailError::Io(e.to_string());
        let _one_at_a_time = self.lock.lock().await;
        match &self.sink {
            LogSink::Stdout => {
                let mut out = tokio::io::stdout();
                out.write_all(&bytes).await.map_err(io)?;
                out.flush().await.map_err(io)
            }
            LogSink::Stderr => {
                let mut out = tokio::io::stderr();
                out.write_all(&bytes).await.map_err(io)?;
                out.flush().await.map_err(io)
            }
            LogSink::File(path) => {
                // Opened per message so a rotated or deleted file is simply created again.
                let mut file = tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .await
                    .map_err(io)?;
                file.write_all(&bytes).await.map_err(io)?;
                file.flush().await.map_err(io)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use svc_domain::ManualClock;
    use time::OffsetDateTime;

    fn mail(n: u32) -> Mail {
        Mail {
            to: Email::parse("Ada@Example.com").unwrap(),
            subject: format!("Message {n}"),
            text: format!("Open https://acme.example/auth/verify-email?token=t{n}\n\"quoted\""),
            link: Some(format!("https://acme.example/auth/verify-email?token=t{n}")),
        }
    }

    #[test]
    fn sinks_parse_like_the_configuration() {
        assert_eq!(LogSink::parse("stdout"), Some(LogSink::Stdout));
        assert_eq!(LogSink::parse("stderr"), Some(LogSink::Stderr));
        assert_eq!(
            LogSink::parse("file:/tmp/mail.jsonl"),
            Some(LogSink::File("/tmp/mail.jsonl".into()))
        );
        assert_eq!(LogSink::parse("file:"), None);
        assert_eq!(LogSink::parse("syslog"), None);
    }

    #[tokio::test]
    async fn the_file_sink_appends_one_json_object_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mail.jsonl");
        let start = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_780);
        let mailer = LogMailer::new(
            LogSink::File(path.clone()),
            Arc::new(ManualClock::new(start)),
        );
        mailer.send(&mail(1)).await.unwrap();
        let mut no_link = mail(2);
        no_link.link = None;
        mailer.send(&no_link).await.unwrap();

        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let first = lines[0].as_object().unwrap();
        let mut keys: Vec<&str> = first.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["link", "sent_at", "subject", "text", "to"]);
        assert_eq!(first["to"], "ada@example.com");
        assert_eq!(first["subject"], "Message 1");
        assert!(first["text"].as_str().unwrap().contains("\"quoted\""));
        assert_eq!(
            first["link"],
            "https://acme.example/auth/verify-email?token=t1"
        );
        assert_eq!(first["sent_at"], "2026-11-23T00:00:00Z");
        assert!(lines[1]["link"].is_null());
    }

    /// A relay that takes its time, to show that the outbox does not wait for it.
    struct Slow(LogMailer);

    #[async_trait]
    impl Mailer for Slow {
        async fn send(&self, mail: &Mail) -> Result<(), MailError> {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            self.0.send(mail).await
        }
    }

    #[tokio::test]
    async fn the_outbox_returns_at_once_and_settles_once_everything_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mail.jsonl");
        let clock = Arc::new(ManualClock::new(OffsetDateTime::UNIX_EPOCH));
        let outbox = Outbox::new(Arc::new(Slow(LogMailer::new(
            LogSink::File(path.clone()),
            clock,
        ))));
        let started = std::time::Instant::now();
        outbox.send(mail(1));
        outbox.send(mail(2));
        assert!(started.elapsed() < std::time::Duration::from_millis(100));
        assert!(!path.exists(), "nothing sent yet");
        outbox.settled().await;
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        outbox.settled().await; // nothing in flight: returns at once
    }

    #[test]
    fn debug_hides_the_body_and_link() {
        let shown = format!("{:?}", mail(7));
        assert!(!shown.contains("token=t7"), "{shown}");
        assert!(shown.contains("ada@example.com"));
    }
}

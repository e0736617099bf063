//! SMTP delivery against a real SMTP listener on loopback, written here (RFC 5321 minimal
//! server: greeting, EHLO, MAIL, RCPT, DATA, QUIT): the message arrives with its subject,
//! recipient and link; and with `starttls = true` a relay that does not offer STARTTLS gets
//! nothing, not even the envelope (no plaintext fallback).

use std::sync::{Arc, Mutex};
use svc_authn::{Mail, MailError, Mailer, SmtpMailer, SmtpSettings};
use svc_domain::Email;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// What the listener saw: every command line, and the message text of each DATA.
#[derive(Debug, Default)]
struct Transcript {
    commands: Vec<String>,
    messages: Vec<String>,
}

/// A minimal SMTP server on 127.0.0.1 (never offering STARTTLS); its port and transcript.
async fn smtp_listener() -> (u16, Arc<Mutex<Transcript>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let transcript = Arc::new(Mutex::new(Transcript::default()));
    let seen = transcript.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                write.write_all(b"220 test.local ESMTP\r\n").await.unwrap();
                while let Ok(Some(line)) = lines.next_line().await {
                    seen.lock().unwrap().commands.push(line.clone());
                    let verb = line
                        .split(' ')
                        .next()
                        .unwrap_or_default()
                        .to_ascii_uppercase();
                    let reply: &[u8] = match verb.as_str() {
                        "EHLO" | "HELO" => b"250 test.local\r\n",
                        "MAIL" | "RCPT" | "RSET" | "NOOP" => b"250 OK\r\n",
                        "DATA" => {
                            write
                                .write_all(b"354 end with <CRLF>.<CRLF>\r\n")
                                .await
                                .unwrap();
                            let mut message = Vec::new();
                            while let Ok(Some(data)) = lines.next_line().await {
                                if data == "." {
                                    break;
                                }
                                message.push(data);
                            }
                            seen.lock().unwrap().messages.push(message.join("\n"));
                            b"250 OK queued\r\n"
                        }
                        "QUIT" => {
                            write.write_all(b"221 bye\r\n").await.unwrap();
                            break;
                        }
                        _ => b"502 not implemented\r\n",
                    };
                    if write.write_all(reply).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, transcript)
}

fn settings(port: u16, starttls: bool) -> SmtpSettings {
    SmtpSettings {
        host: "127.0.0.1".to_owned(),
        port,
        username: None,
        password: None,
        starttls,
        from: "Acme <no-reply@acme.example>".to_owned(),
    }
}

fn reset_mail() -> Mail {
    let link = "https://acme.example/auth/reset-password?token=rst_abc123".to_owned();
    Mail {
        to: Email::parse("ada@example.com").unwrap(),
        subject: "Reset your Acme password".to_owned(),
        text: format!("To choose a new password, open this link:\n\n{link}\n"),
        link: Some(link),
    }
}

#[tokio::test]
async fn a_message_arrives_at_the_relay_with_subject_recipient_and_link() {
    let (port, transcript) = smtp_listener().await;
    let mailer = SmtpMailer::new(&settings(port, false)).unwrap();
    mailer.send(&reset_mail()).await.unwrap();

    let seen = transcript.lock().unwrap();
    assert!(
        seen.commands
            .iter()
            .any(|c| c == "MAIL FROM:<no-reply@acme.example>"),
        "{seen:?}"
    );
    assert!(
        seen.commands
            .iter()
            .any(|c| c == "RCPT TO:<ada@example.com>"),
        "{seen:?}"
    );
    assert_eq!(seen.messages.len(), 1, "{seen:?}");
    let message = &seen.messages[0];
    assert!(
        message.contains("Subject: Reset your Acme password"),
        "{message}"
    );
    assert!(message.contains("To: ada@example.com"), "{message}");
    assert!(
        message.contains("From: Acme <no-reply@acme.example>"),
        "{message}"
    );
    assert!(
        message.contains("https://acme.example/auth/reset-password?token=rst_abc123"),
        "{message}"
    );
}

#[tokio::test]
async fn with_starttls_required_a_relay_without_starttls_gets_nothing() {
    let (port, transcript) = smtp_listener().await;
    let mailer = SmtpMailer::new(&settings(port, true)).unwrap();
    let error = mailer.send(&reset_mail()).await.unwrap_err();
    assert!(matches!(error, MailError::Smtp(_)), "{error:?}");
    let seen = transcript.lock().unwrap();
    assert!(
        seen.commands.iter().any(|c| c.starts_with("EHLO")),
        "it did talk to the relay: {seen:?}"
    );
    assert!(
        !seen
            .commands
            .iter()
            .any(|c| c.starts_with("MAIL") || c.starts_with("RCPT")),
        "no plaintext fallback: {seen:?}"
    );
    assert!(seen.messages.is_empty());
}

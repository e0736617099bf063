//! The breached-password check against a tiny range-API server on loopback, and what an
//! unreachable API means in each fail mode.

use crate::support::{ISSUER, client, harness_with, test_settings};
use std::sync::{Arc, Mutex};
use svc_authn::{AuthnError, FailMode, HibpClient, HibpSettings};
use svc_domain::{BreachedPasswords, Password};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// SHA-1("password") = 5BAA6 1E4C9B93F3F0682250B6CF8331B7EE68FD8.
const BREACHED: &str = "password";

/// Serves `GET /range/{prefix}` on loopback: known suffixes for prefix 5BAA6, padding for any
/// other. Records each request's head.
async fn range_api() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let body = if head.starts_with("GET /range/5BAA6 ") {
                    "0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n\
                     1E4C9B93F3F0682250B6CF8331B7EE68FD8:3861493\r\n\
                     FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0"
                } else {
                    "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0"
                };
                log.lock().unwrap().push(head);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

/// A loopback address with nothing listening.
async fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

#[tokio::test]
async fn breached_passwords_are_found_with_only_a_hash_prefix_sent() {
    let (url, seen) = range_api().await;
    let hibp = HibpClient::new(&HibpSettings::new(url, FailMode::Closed)).unwrap();
    let breached = Password::parse(BREACHED).unwrap();
    assert_eq!(hibp.is_breached(&breached).await, Ok(true));
    let fine = Password::parse("a long and unusual passphrase").unwrap();
    assert_eq!(hibp.is_breached(&fine).await, Ok(false));

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0].starts_with("GET /range/5BAA6 HTTP/1.1\r\n"),
        "{}",
        seen[0]
    );
    for head in &seen {
        assert!(
            head.to_ascii_lowercase().contains("add-padding: true"),
            "{head}"
        );
        assert!(!head.contains("1E4C9B93"), "the suffix never leaves");
        assert!(!head.contains(BREACHED));
    }
}

#[tokio::test]
async fn an_unreachable_api_fails_open_or_closed_as_configured() {
    let url = closed_port().await;
    let pw = Password::parse("a long and unusual passphrase").unwrap();
    let open = HibpClient::new(&HibpSettings::new(url.clone(), FailMode::Open)).unwrap();
    assert_eq!(open.is_breached(&pw).await, Ok(false));
    let closed = HibpClient::new(&HibpSettings::new(url, FailMode::Closed)).unwrap();
    assert!(closed.is_breached(&pw).await.is_err());
}

#[tokio::test]
async fn sign_up_refuses_breached_passwords_and_fails_closed() {
    let (url, _) = range_api().await;
    let hibp = Arc::new(HibpClient::new(&HibpSettings::new(url, FailMode::Closed)).unwrap());
    let h = harness_with(test_settings(), Some(hibp), true).await;
    let c = client("198.51.100.1");
    let err = h
        .authn
        .sign_up(&h.tenant, ISSUER, "ada@example.com", BREACHED, None, &c)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::BreachedPassword), "{err:?}");
    h.authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            "a long and unusual passphrase",
            None,
            &c,
        )
        .await
        .unwrap();

    let down = Arc::new(
        HibpClient::new(&HibpSettings::new(closed_port().await, FailMode::Closed)).unwrap(),
    );
    let h = harness_with(test_settings(), Some(down), true).await;
    let err = h
        .authn
        .sign_up(
            &h.tenant,
            ISSUER,
            "ada@example.com",
            "a long and unusual passphrase",
            None,
            &c,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, AuthnError::BreachCheckUnavailable), "{err:?}");
}

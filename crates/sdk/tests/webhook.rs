//! The receiver rules against deliveries signed by the server's own signer (svc-crypto, a
//! separate implementation), and against a vector computed with openssl.

use std::time::Duration;
use svc_sdk::{WebhookError, WebhookVerifier, verify_webhook_at};

const SECRET: &str = "whsec_Zm9yIHRlc3RzIG9ubHk7IG5vdCBhIHJlYWwgc2VjcmV0IGF0IGFsbC4=";
const BODY: &[u8] = br#"{"id":"evt_01","type":"auth.login.success","data":{"user_id":"usr_1"}}"#;
const NOW: i64 = 1_800_000_000;

fn headers(secrets: &[&str], id: &str, ts: i64, body: &[u8]) -> Vec<(&'static str, String)> {
    vec![
        ("X-SVC-Signature-Suite", "svc-webhook-v1".into()),
        (
            "X-SVC-Signature-256",
            svc_crypto::webhook_signature_header(secrets, id, ts, body),
        ),
        ("X-SVC-Signature-Max-Age", "300".into()),
        ("X-SVC-Timestamp", ts.to_string()),
        ("X-SVC-Event", "auth.login.success".into()),
        ("X-SVC-Delivery", id.into()),
        ("Content-Type", "application/json".into()),
    ]
}

fn borrowed<'a>(h: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    h.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

fn replace(h: &mut [(&'static str, String)], name: &str, value: &str) {
    for (k, v) in h.iter_mut() {
        if k.eq_ignore_ascii_case(name) {
            *v = value.to_owned();
        }
    }
}

fn verify(h: &[(&'static str, String)], body: &[u8], now: i64) -> Result<String, WebhookError> {
    let h = borrowed(h);
    verify_webhook_at(h.as_slice(), body, &[SECRET], Duration::from_secs(600), now)
        .map(|v| v.delivery_id)
}

#[test]
fn a_delivery_signed_by_the_server_verifies_and_names_its_delivery_and_event() {
    let h = headers(&[SECRET], "dlv_1", NOW - 5, BODY);
    let b = borrowed(&h);
    let ok =
        verify_webhook_at(b.as_slice(), BODY, &[SECRET], Duration::from_secs(600), NOW).unwrap();
    assert_eq!(ok.delivery_id, "dlv_1");
    assert_eq!(ok.event_type.as_deref(), Some("auth.login.success"));
    assert_eq!(ok.timestamp, NOW - 5);
    assert_eq!(ok.body, BODY);
    // Header names are case-insensitive; an http::HeaderMap works the same.
    let mut map = http::HeaderMap::new();
    for (k, v) in &h {
        map.insert(*k, v.parse().unwrap());
    }
    assert!(verify_webhook_at(&map, BODY, &[SECRET], Duration::from_secs(600), NOW).is_ok());
}

#[test]
fn an_independently_computed_signature_verifies() {
    // printf 'dlv_1.1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_test' -hex
    let h = vec![
        ("x-svc-signature-suite", "svc-webhook-v1"),
        (
            "x-svc-signature-256",
            "sha256=7c721ed1b96ad5d5863449300f91aaa85cbefadf3bcedaff27d83ddc45c5db26",
        ),
        ("x-svc-timestamp", "1700000000"),
        ("x-svc-delivery", "dlv_1"),
    ];
    let ok = verify_webhook_at(
        h.as_slice(),
        br#"{"a":1}"#,
        &["whsec_test"],
        Duration::from_secs(300),
        1_700_000_010,
    );
    assert_eq!(ok.unwrap().delivery_id, "dlv_1");
}

#[test]
fn tampering_with_body_id_timestamp_or_secret_fails() {
    let h = headers(&[SECRET], "dlv_1", NOW, BODY);
    let mut body = BODY.to_vec();
    body[10] ^= 1;
    assert_eq!(verify(&h, &body, NOW), Err(WebhookError::SignatureMismatch));
    let mut spaced = BODY.to_vec();
    spaced.push(b' ');
    assert_eq!(
        verify(&h, &spaced, NOW),
        Err(WebhookError::SignatureMismatch),
        "re-serialised JSON fails"
    );
    let mut other_id = h.clone();
    replace(&mut other_id, "x-svc-delivery", "dlv_2");
    assert_eq!(
        verify(&other_id, BODY, NOW),
        Err(WebhookError::SignatureMismatch)
    );
    let mut other_ts = h.clone();
    replace(&mut other_ts, "x-svc-timestamp", &(NOW - 1).to_string());
    assert_eq!(
        verify(&other_ts, BODY, NOW),
        Err(WebhookError::SignatureMismatch)
    );
    let wrong = headers(&["whsec_another"], "dlv_1", NOW, BODY);
    assert_eq!(
        verify(&wrong, BODY, NOW),
        Err(WebhookError::SignatureMismatch)
    );
}

#[test]
fn suites_headers_and_formats_are_checked_first() {
    let h = headers(&[SECRET], "dlv_1", NOW, BODY);
    let mut other = h.clone();
    replace(&mut other, "x-svc-signature-suite", "svc-webhook-v2");
    assert_eq!(
        verify(&other, BODY, NOW),
        Err(WebhookError::UnsupportedSuite("svc-webhook-v2".into()))
    );
    for missing in [
        "X-SVC-Signature-Suite",
        "X-SVC-Delivery",
        "X-SVC-Timestamp",
        "X-SVC-Signature-256",
    ] {
        let without: Vec<_> = h.iter().filter(|(k, _)| *k != missing).cloned().collect();
        assert!(
            matches!(
                verify(&without, BODY, NOW),
                Err(WebhookError::MissingHeader(_))
            ),
            "{missing}"
        );
    }
    for bad in ["sha1=abc", "sha256=xyz", "sha256=", "v1,abcd", ""] {
        let mut malformed = h.clone();
        replace(&mut malformed, "x-svc-signature-256", bad);
        assert_eq!(
            verify(&malformed, BODY, NOW),
            Err(WebhookError::BadSignatureFormat),
            "{bad}"
        );
    }
    let mut ts = h.clone();
    replace(&mut ts, "x-svc-timestamp", "yesterday");
    assert_eq!(verify(&ts, BODY, NOW), Err(WebhookError::BadTimestamp));
    let huge = vec![b'x'; svc_sdk::MAX_WEBHOOK_BODY_BYTES + 1];
    let big = headers(&[SECRET], "dlv_1", NOW, &huge);
    assert_eq!(verify(&big, &huge, NOW), Err(WebhookError::TooLarge));
}

#[test]
fn the_smaller_of_sender_and_receiver_windows_applies_and_future_timestamps_fail() {
    let h = headers(&[SECRET], "dlv_1", NOW - 301, BODY);
    // Sender says 300 s, receiver allows 600 s: 301 s is too old.
    assert_eq!(
        verify(&h, BODY, NOW),
        Err(WebhookError::Stale {
            age_secs: 301,
            window_secs: 300
        })
    );
    // Receiver ceiling 120 s below the sender's 300 s.
    let fresh = headers(&[SECRET], "dlv_1", NOW - 121, BODY);
    let b = borrowed(&fresh);
    assert!(matches!(
        verify_webhook_at(b.as_slice(), BODY, &[SECRET], Duration::from_secs(120), NOW),
        Err(WebhookError::Stale {
            window_secs: 120,
            ..
        })
    ));
    let ahead = headers(&[SECRET], "dlv_1", NOW + 61, BODY);
    assert_eq!(verify(&ahead, BODY, NOW), Err(WebhookError::FromTheFuture));
    let skewed = headers(&[SECRET], "dlv_1", NOW + 30, BODY);
    assert!(
        verify(&skewed, BODY, NOW).is_ok(),
        "small clock skew is tolerated"
    );
}

#[test]
fn during_rotation_either_secret_verifies() {
    let h = headers(&["whsec_new_one", SECRET], "dlv_9", NOW, BODY);
    assert!(
        verify(&h, BODY, NOW).is_ok(),
        "the old secret's value matches"
    );
    let b = borrowed(&h);
    assert!(
        verify_webhook_at(
            b.as_slice(),
            BODY,
            &["whsec_new_one"],
            Duration::from_secs(600),
            NOW
        )
        .is_ok()
    );
}

#[test]
fn the_verifier_refuses_a_replay_of_an_accepted_delivery_within_the_window() {
    let verifier =
        WebhookVerifier::new(SECRET, Duration::from_secs(300)).with_previous_secret("whsec_old");
    let h = headers(&[SECRET], "dlv_7", NOW, BODY);
    let b = borrowed(&h);
    let first = verifier.verify_at(b.as_slice(), BODY, NOW).unwrap();
    assert_eq!(first.delivery_id, "dlv_7");
    // Not accepted yet (the receiver answered 5xx): the retry is welcome.
    assert!(verifier.verify_at(b.as_slice(), BODY, NOW + 1).is_ok());
    verifier.accepted_at("dlv_7", NOW + 1);
    assert_eq!(
        verifier.verify_at(b.as_slice(), BODY, NOW + 10),
        Err(WebhookError::Replayed("dlv_7".into()))
    );
    // Once the window is over the signature is stale anyway.
    assert!(matches!(
        verifier.verify_at(b.as_slice(), BODY, NOW + 400),
        Err(WebhookError::Stale { .. })
    ));
    let other = headers(&[SECRET], "dlv_8", NOW, BODY);
    let o = borrowed(&other);
    assert!(verifier.verify_at(o.as_slice(), BODY, NOW + 10).is_ok());
    // A forged delivery never enters the memory (it cannot block the real one).
    let forged = headers(&["whsec_attacker"], "dlv_9", NOW, BODY);
    let f = borrowed(&forged);
    assert_eq!(
        verifier.verify_at(f.as_slice(), BODY, NOW),
        Err(WebhookError::SignatureMismatch)
    );
    let real = headers(&[SECRET], "dlv_9", NOW, BODY);
    let r = borrowed(&real);
    assert!(verifier.verify_at(r.as_slice(), BODY, NOW).is_ok());
    let old = headers(&["whsec_old"], "dlv_10", NOW, BODY);
    let o = borrowed(&old);
    assert!(
        verifier.verify_at(o.as_slice(), BODY, NOW).is_ok(),
        "the previous secret is accepted"
    );
}

//! The webhook signature suite `svc-webhook-v1` (CONTRACTS.md "Webhooks"), sender side.
//!
//! The signed string is `{delivery id}.{unix timestamp}.{raw body}` (the Standard Webhooks
//! order, so the receiver's dedup key and the timestamp are both bound by the signature). The
//! HMAC key is the UTF-8 bytes of the whole subscription secret, prefix included. The header
//! value is `sha256=<lowercase hex>`, one per signing secret, space-separated, newest first
//! (during a rotation both the new and the old secret sign).

use crate::digest::hmac_sha256;

/// The value of `X-SVC-Signature-Suite`.
pub const SIGNATURE_SUITE: &str = "svc-webhook-v1";

/// `sha256=<hex HMAC-SHA256(secret, "{delivery_id}.{timestamp}.{body}")>`.
pub fn webhook_signature(secret: &str, delivery_id: &str, timestamp: i64, body: &[u8]) -> String {
    let prefix = format!("{delivery_id}.{timestamp}.");
    let mut signed = Vec::with_capacity(prefix.len() + body.len());
    signed.extend_from_slice(prefix.as_bytes());
    signed.extend_from_slice(body);
    let mac = hmac_sha256(secret.as_bytes(), &signed);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256=");
    for byte in mac {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// The `X-SVC-Signature-256` header: one signature per secret, in the order given.
pub fn webhook_signature_header(
    secrets: &[&str],
    delivery_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| webhook_signature(secret, delivery_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_id_timestamp_and_body_in_lowercase_hex() {
        // Computed independently: printf 'dlv_1.1700000000.{"a":1}' |
        //   openssl dgst -sha256 -hmac 'whsec_test' -hex
        assert_eq!(
            webhook_signature("whsec_test", "dlv_1", 1_700_000_000, br#"{"a":1}"#),
            "sha256=7c721ed1b96ad5d5863449300f91aaa85cbefadf3bcedaff27d83ddc45c5db26"
        );
    }

    #[test]
    fn every_input_changes_the_signature_and_rotation_sends_both() {
        let base = webhook_signature("k1", "dlv_1", 1, b"body");
        assert_ne!(base, webhook_signature("k2", "dlv_1", 1, b"body"));
        assert_ne!(base, webhook_signature("k1", "dlv_2", 1, b"body"));
        assert_ne!(base, webhook_signature("k1", "dlv_1", 2, b"body"));
        assert_ne!(base, webhook_signature("k1", "dlv_1", 1, b"bodY"));
        assert_eq!(
            webhook_signature_header(&["k2", "k1"], "dlv_1", 1, b"body"),
            format!("{} {base}", webhook_signature("k2", "dlv_1", 1, b"body"))
        );
        assert_eq!(base.len(), 7 + 64);
        assert!(
            base[7..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
}

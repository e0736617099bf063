//! Retryable writes take an `idempotency-key` (spec "Limits"; errors table: "5xx: retry only with
//! an idempotency key"). The first request with a key claims it; a retry of the same request gets
//! the first response replayed; the same key with another request, or while the first is still
//! running, is a conflict. Keys are forgotten 24 hours after first use.
//!
//! The HTTP layer drives it: [`begin`], then run the use case, then [`complete`] with the response
//! (or [`release`] when the request failed in a way worth retrying, so the retry runs afresh).

use crate::{ManageContext, ManageError};
use sha2::{Digest, Sha256};
use svc_store::{IdempotencyRecord, StoreError};
use time::Duration;

/// How long a key is remembered after its first use.
pub const KEY_LIFETIME: Duration = Duration::hours(24);
/// Longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

/// What the caller should do with a request carrying an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// The key is claimed for this request: run it, then call [`complete`] (or [`release`]).
    Fresh,
    /// The same request already finished: send this response again without running it.
    Replay {
        /// The first response's status.
        status: u16,
        /// The first response's body.
        body: String,
    },
}

/// Rule: a key is 1 to 255 printable ASCII characters (space through `~`).
pub fn check_key(key: &str) -> Result<(), ManageError> {
    let ok =
        (1..=MAX_KEY_LEN).contains(&key.len()) && key.bytes().all(|b| (0x20..=0x7e).contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ManageError::invalid(
            "idempotency-key",
            format!("idempotency-key must be 1 to {MAX_KEY_LEN} printable ASCII characters"),
        ))
    }
}

/// The fingerprint of a request: SHA-256 (lowercase hex) of its method, path and body, so a key
/// reused with a different request is recognised.
pub fn fingerprint(method: &str, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    for part in [method.as_bytes(), path.as_bytes()] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    hasher.update(body);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Claims `key` in `scope` for a request with `fingerprint`, or says to replay the response of
/// the request that already used it.
///
/// Errors: [`ManageError::Invalid`] for a malformed key; [`ManageError::Conflict`] when the key
/// was used with a different request, or when that request is still in progress.
pub async fn begin(
    ctx: &ManageContext,
    scope: &str,
    key: &str,
    fingerprint: &str,
) -> Result<Begin, ManageError> {
    check_key(key)?;
    let now = ctx.now();
    let mut tx = ctx.store.write().await?;
    if let Some(existing) = tx.idempotency_record(scope, key, now).await? {
        return replay_of(&existing, fingerprint);
    }
    let claim = IdempotencyRecord {
        scope: scope.to_owned(),
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        status: None,
        body: None,
        created_at: now,
        expires_at: now + KEY_LIFETIME,
    };
    match tx.claim_idempotency(&claim).await {
        Ok(()) => {}
        // Another instance claimed it between our read and our write.
        Err(StoreError::Conflict { .. }) => return Err(in_progress()),
        Err(e) => return Err(e.into()),
    }
    tx.commit().await?;
    Ok(Begin::Fresh)
}

/// Stores the response of the request that claimed `key`, for replay to its retries.
pub async fn complete(
    ctx: &ManageContext,
    scope: &str,
    key: &str,
    status: u16,
    body: &str,
) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    tx.complete_idempotency(scope, key, status, body).await?;
    tx.commit().await?;
    Ok(())
}

/// Forgets the claim on `key` after its request failed before producing a response worth
/// replaying (e.g. the database was unavailable), so a retry runs afresh.
pub async fn release(ctx: &ManageContext, scope: &str, key: &str) -> Result<(), ManageError> {
    let mut tx = ctx.store.write().await?;
    tx.release_idempotency(scope, key).await?;
    tx.commit().await?;
    Ok(())
}

/// Rule: a live record replays only for the same request, and only once it has finished.
fn replay_of(existing: &IdempotencyRecord, fingerprint: &str) -> Result<Begin, ManageError> {
    if existing.fingerprint != fingerprint {
        return Err(ManageError::Conflict(
            "idempotency key reused with a different request".to_owned(),
        ));
    }
    match existing.status {
        Some(status) => Ok(Begin::Replay {
            status,
            body: existing.body.clone().unwrap_or_default(),
        }),
        None => Err(in_progress()),
    }
}

fn in_progress() -> ManageError {
    ManageError::Conflict("a request with this idempotency key is still in progress".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::OffsetDateTime;

    #[test]
    fn keys_are_1_to_255_printable_ascii() {
        for good in [
            "a",
            "8e0f-4c1a",
            "key with spaces",
            "~!@#$%^&*()",
            &"k".repeat(255),
        ] {
            assert!(check_key(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "tab\there",
            "new\nline",
            "é",
            "\u{7f}",
            &"k".repeat(256),
        ] {
            let err = check_key(bad).unwrap_err();
            assert!(
                matches!(&err, ManageError::Invalid { field, message } if field == "idempotency-key" && message.contains("printable ASCII")),
                "{bad:?}: {err:?}"
            );
        }
    }

    #[test]
    fn fingerprints_bind_method_path_and_body() {
        let base = fingerprint("POST", "/api/v1/applications", b"{}");
        assert_eq!(base.len(), 64);
        assert!(
            base.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(base, fingerprint("POST", "/api/v1/applications", b"{}"));
        assert_ne!(base, fingerprint("PUT", "/api/v1/applications", b"{}"));
        assert_ne!(base, fingerprint("POST", "/api/v1/application", b"s{}"));
        assert_ne!(base, fingerprint("POST", "/api/v1/applications", b"{ }"));
    }

    fn record(fingerprint: &str, status: Option<u16>) -> IdempotencyRecord {
        let at = OffsetDateTime::UNIX_EPOCH;
        IdempotencyRecord {
            scope: "s".to_owned(),
            key: "k".to_owned(),
            fingerprint: fingerprint.to_owned(),
            status,
            body: status.map(|_| "{\"ok\":true}".to_owned()),
            created_at: at,
            expires_at: at + KEY_LIFETIME,
        }
    }

    #[test]
    fn a_live_record_replays_only_the_same_finished_request() {
        assert_eq!(
            replay_of(&record("f1", Some(201)), "f1").unwrap(),
            Begin::Replay {
                status: 201,
                body: "{\"ok\":true}".to_owned()
            }
        );
        let other = replay_of(&record("f1", Some(201)), "f2").unwrap_err();
        assert!(matches!(other, ManageError::Conflict(m) if m.contains("different request")));
        let running = replay_of(&record("f1", None), "f1").unwrap_err();
        assert!(matches!(running, ManageError::Conflict(m) if m.contains("in progress")));
    }
}

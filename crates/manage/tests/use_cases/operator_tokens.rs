//! Operator tokens: creation, authentication, and refusal of non-tokens without a lookup.

use crate::support::harness;
use svc_manage::ManageError;
use svc_manage::control_plane::{authenticate_operator, create_operator_token};

#[tokio::test]
async fn an_operator_token_authenticates_only_itself() {
    let h = harness().await;
    let (record, plaintext) = create_operator_token(&h.ctx, " ci pipeline ")
        .await
        .unwrap();
    assert!(plaintext.starts_with("svcop_"));
    assert_eq!(record.name, "ci pipeline");
    assert!(record.token_hash.verify(&plaintext));

    let found = authenticate_operator(&h.ctx, &plaintext).await.unwrap();
    assert_eq!(found, Some(record.clone()));

    let (_, second) = create_operator_token(&h.ctx, "other").await.unwrap();
    assert_ne!(
        authenticate_operator(&h.ctx, &second).await.unwrap(),
        Some(record)
    );

    let mut wrong = plaintext.clone();
    wrong.pop();
    wrong.push(if plaintext.ends_with('A') { 'B' } else { 'A' });
    assert_eq!(authenticate_operator(&h.ctx, &wrong).await.unwrap(), None);
    assert_eq!(
        authenticate_operator(&h.ctx, "svcop_nope").await.unwrap(),
        None
    );
}

#[tokio::test]
async fn strings_without_the_prefix_are_refused_without_touching_the_store() {
    let h = harness().await;
    let (_, plaintext) = create_operator_token(&h.ctx, "ci").await.unwrap();
    let before = h.store.transactions();
    for presented in [
        "",
        plaintext.trim_start_matches("svcop_"),
        &format!("cs_{}", plaintext.trim_start_matches("svcop_")),
        "eyJhbGciOiJFUzI1NiJ9.e30.c2ln",
        &format!(" {plaintext}"),
    ] {
        assert_eq!(
            authenticate_operator(&h.ctx, presented).await.unwrap(),
            None,
            "{presented:?}"
        );
    }
    assert_eq!(h.store.transactions(), before, "no store access");
}

#[tokio::test]
async fn operator_token_names_are_validated() {
    let h = harness().await;
    let err = create_operator_token(&h.ctx, "  ").await.unwrap_err();
    assert!(matches!(err, ManageError::Invalid { field, .. } if field == "name"));
    let err = create_operator_token(&h.ctx, &"x".repeat(201))
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::Invalid { field, .. } if field == "name"));
}

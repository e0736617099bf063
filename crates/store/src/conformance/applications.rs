//! Conformance: the application and operator-token repositories, and tenant deletion.

use super::tenant_fixture;
use crate::{Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    Application, ClientId, GrantType, ManualClock, OperatorToken, OperatorTokenId, RedirectUri,
    ScopeSet, SecretHash, SeededRandom, SigningAlg, Tenant, TokenEndpointAuthMethod,
};
use time::Duration;

/// A confidential application of `tenant` with every optional field set, timestamps at whole
/// microseconds. The redirect URIs, name and JWKS carry quotes, backslashes and non-ASCII text so
/// a round trip also proves the list encoding.
pub fn application_fixture(tenant: &Tenant, seed: u64) -> Application {
    let at = tenant.created_at + Duration::microseconds(seed as i64 * 1_003);
    let clock = ManualClock::new(at);
    let uri = |s: &str| RedirectUri::parse(s).unwrap_or_else(|e| panic!("fixture uri {s}: {e}"));
    Application {
        id: ClientId::generate(&clock, &SeededRandom::new(seed)),
        tenant_id: tenant.id.clone(),
        name: format!("App {seed} \"Café\" \\ ü"),
        redirect_uris: vec![
            uri("https://app.example.com/callback"),
            uri("http://127.0.0.1:4000/cb?next=caf\u{e9}&q=\"x\""),
            uri("com.example.app:/oauth2redirect"),
        ],
        post_logout_redirect_uris: vec![
            uri("https://app.example.com/signed-out?from=\"caf\u{e9}\""),
            uri("com.example.app:/logout"),
        ],
        grant_types: vec![
            GrantType::RefreshToken,
            GrantType::AuthorizationCode,
            GrantType::ClientCredentials,
        ],
        token_endpoint_auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
        allowed_scopes: ScopeSet::parse("openid profile applications:read users:write")
            .expect("fixture scopes"),
        secret_hash: Some(SecretHash::of(&format!("cs_secret_{seed}"))),
        api_audience: Some("https://api.example.com/v1".into()),
        first_party: true,
        id_token_signed_response_alg: SigningAlg::Es256,
        jwks: Some(
            r#"{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k\"1"}]}"#
                .into(),
        ),
        jwks_uri: Some("https://app.example.com/.well-known/jwks.json".into()),
        is_management: false,
        created_at: at,
        updated_at: at + Duration::seconds(1),
    }
}

/// A public application of `tenant` with every optional field empty.
pub fn public_application_fixture(tenant: &Tenant, seed: u64) -> Application {
    Application {
        redirect_uris: Vec::new(),
        post_logout_redirect_uris: Vec::new(),
        grant_types: Vec::new(),
        token_endpoint_auth_method: TokenEndpointAuthMethod::None,
        allowed_scopes: ScopeSet::default(),
        secret_hash: None,
        api_audience: None,
        first_party: false,
        id_token_signed_response_alg: SigningAlg::Rs256,
        jwks: None,
        jwks_uri: None,
        ..application_fixture(tenant, seed)
    }
}

async fn stored_tenant(store: &Arc<dyn Store>, slug: &str, seed: u64) -> Tenant {
    let tenant = tenant_fixture(slug, seed);
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&tenant).await.expect("insert tenant");
    tx.commit().await.expect("commit");
    tenant
}

async fn insert_app(store: &Arc<dyn Store>, app: &Application) -> Result<(), StoreError> {
    let mut tx = store.write().await?;
    tx.insert_application(app).await?;
    tx.commit().await
}

fn constraint_of(result: Result<(), StoreError>) -> Option<String> {
    match result {
        Err(StoreError::Conflict { constraint }) => Some(constraint),
        _ => None,
    }
}

/// Every field reads back identically, within the writing transaction and after commit.
pub async fn application_round_trips(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let full = application_fixture(&acme, 10);
    let mut management = public_application_fixture(&acme, 11);
    management.is_management = true;
    let mut tx = store.write().await.expect("write");
    tx.insert_application(&full).await.expect("insert full");
    tx.insert_application(&management)
        .await
        .expect("insert public");
    assert_eq!(
        tx.application(&acme.id, &full.id).await.expect("own write"),
        Some(full.clone())
    );
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &full.id).await.expect("read"),
        Some(full.clone())
    );
    assert_eq!(
        read.application(&acme.id, &management.id)
            .await
            .expect("read"),
        Some(management.clone())
    );
    let missing = ClientId::generate(&ManualClock::new(acme.created_at), &SeededRandom::new(999));
    assert_eq!(
        read.application(&acme.id, &missing).await.expect("read"),
        None
    );
    let mut expected = vec![full, management];
    expected.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(
        read.list_applications(&acme.id, None, 10)
            .await
            .expect("list"),
        expected
    );
    read.finish().await.expect("finish");
}

/// Another tenant's application id reads as absent, and cannot be changed or deleted through
/// the wrong tenant; ids are global, so reusing one under another tenant is a conflict.
pub async fn applications_are_isolated_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let app = application_fixture(&acme, 10);
    insert_app(&store, &app).await.expect("insert");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&other.id, &app.id).await.expect("read"),
        None
    );
    assert!(
        read.list_applications(&other.id, None, 10)
            .await
            .expect("list")
            .is_empty()
    );
    read.finish().await.expect("finish");

    let mut hijack = app.clone();
    hijack.tenant_id = other.id.clone();
    hijack.name = "Hijacked".into();
    let mut tx = store.write().await.expect("write");
    assert!(matches!(
        tx.update_application(&hijack).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        tx.delete_application(&other.id, &app.id).await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");

    assert_eq!(
        constraint_of(insert_app(&store, &hijack).await).as_deref(),
        Some("applications_pkey"),
        "application ids are global (they are OAuth client ids)"
    );
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &app.id).await.expect("read"),
        Some(app),
        "unchanged"
    );
    assert_eq!(
        read.application(&other.id, &hijack.id).await.expect("read"),
        None
    );
    read.finish().await.expect("finish");
}

/// An application needs an existing tenant; a taken id is a conflict.
pub async fn application_conflicts_name_the_constraint(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let app = application_fixture(&acme, 10);
    insert_app(&store, &app).await.expect("insert");
    let mut again = public_application_fixture(&acme, 10);
    again.name = "Second".into();
    assert_eq!(
        constraint_of(insert_app(&store, &again).await).as_deref(),
        Some("applications_pkey")
    );
    let nobody = tenant_fixture("nobody", 2);
    let orphan = application_fixture(&nobody, 11);
    assert_eq!(
        constraint_of(insert_app(&store, &orphan).await).as_deref(),
        Some("applications_tenant_id_fkey")
    );
}

/// Listing pages through one tenant's applications once each, in id order, with no overlap and
/// nothing of another tenant.
pub async fn list_applications_paginates_in_id_order(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let mut all = Vec::new();
    for i in 0..7u64 {
        let app = application_fixture(&acme, 100 + i);
        insert_app(&store, &app).await.expect("insert");
        all.push(app.id);
        insert_app(&store, &application_fixture(&other, 200 + i))
            .await
            .expect("insert other");
    }
    all.sort();
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let mut read = store.read().await.expect("read");
        let page = read
            .list_applications(&acme.id, cursor.as_ref(), 3)
            .await
            .expect("list");
        read.finish().await.expect("finish");
        assert!(page.len() <= 3);
        if page.is_empty() {
            break;
        }
        assert!(page.iter().all(|a| a.tenant_id == acme.id));
        cursor = page.last().map(|a| a.id.clone());
        seen.extend(page.into_iter().map(|a| a.id));
    }
    assert_eq!(seen, all);
}

/// An update replaces every mutable field (clearing optional ones too) and never id, tenant,
/// created_at or is_management; updating a missing application is NotFound.
pub async fn update_application_changes_mutable_fields_only(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let original = application_fixture(&acme, 10);
    insert_app(&store, &original).await.expect("insert");

    let mut changed = public_application_fixture(&acme, 10);
    changed.name = "Renamed".into();
    changed.redirect_uris = vec![RedirectUri::parse("https://new.example.com/cb").expect("uri")];
    changed.post_logout_redirect_uris =
        vec![RedirectUri::parse("https://new.example.com/bye").expect("uri")];
    changed.grant_types = vec![GrantType::AuthorizationCode];
    changed.allowed_scopes = ScopeSet::parse("openid").expect("scopes");
    changed.id_token_signed_response_alg = SigningAlg::EdDsa;
    changed.token_endpoint_auth_method = TokenEndpointAuthMethod::PrivateKeyJwt;
    changed.jwks_uri = Some("https://new.example.com/jwks".into());
    changed.updated_at = original.updated_at + Duration::minutes(5);
    changed.created_at += Duration::days(3); // must be ignored
    changed.is_management = true; // must be ignored
    let mut tx = store.write().await.expect("write");
    tx.update_application(&changed).await.expect("update");
    tx.commit().await.expect("commit");

    let expected = Application {
        created_at: original.created_at,
        is_management: original.is_management,
        ..changed.clone()
    };
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &original.id)
            .await
            .expect("read"),
        Some(expected)
    );
    read.finish().await.expect("finish");

    let mut tx = store.write().await.expect("write");
    let ghost = application_fixture(&acme, 11);
    assert!(matches!(
        tx.update_application(&ghost).await,
        Err(StoreError::NotFound)
    ));
}

/// Deleting removes exactly one application; a second delete is NotFound.
pub async fn delete_application_is_scoped(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let gone = application_fixture(&acme, 10);
    let kept = application_fixture(&acme, 11);
    insert_app(&store, &gone).await.expect("insert");
    insert_app(&store, &kept).await.expect("insert");
    let mut tx = store.write().await.expect("write");
    tx.delete_application(&acme.id, &gone.id)
        .await
        .expect("delete");
    assert!(matches!(
        tx.delete_application(&acme.id, &gone.id).await,
        Err(StoreError::NotFound)
    ));
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &gone.id).await.expect("read"),
        None
    );
    assert_eq!(
        read.list_applications(&acme.id, None, 10)
            .await
            .expect("list"),
        vec![kept]
    );
    read.finish().await.expect("finish");
}

fn operator_token_fixture(seed: u64, secret: &str) -> OperatorToken {
    let at = tenant_fixture("ops", seed).created_at;
    OperatorToken {
        id: OperatorTokenId::generate(&ManualClock::new(at), &SeededRandom::new(seed)),
        name: format!("deploy bot {seed}"),
        token_hash: SecretHash::of(secret),
        created_at: at,
    }
}

/// Operator tokens are found by the hash of the presented token only; ids and hashes are unique.
pub async fn operator_tokens_are_found_by_hash(store: Arc<dyn Store>) {
    let first = operator_token_fixture(1, "svcop_first");
    let second = operator_token_fixture(2, "svcop_second");
    let mut tx = store.write().await.expect("write");
    tx.insert_operator_token(&first).await.expect("insert");
    tx.insert_operator_token(&second).await.expect("insert");
    tx.commit().await.expect("commit");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.operator_token_by_hash(&SecretHash::of("svcop_first"))
            .await
            .expect("lookup"),
        Some(first.clone())
    );
    assert_eq!(
        read.operator_token_by_hash(&SecretHash::of("svcop_second"))
            .await
            .expect("lookup"),
        Some(second)
    );
    assert_eq!(
        read.operator_token_by_hash(&SecretHash::of("svcop_unknown"))
            .await
            .expect("lookup"),
        None
    );
    read.finish().await.expect("finish");

    let insert = |token: OperatorToken| {
        let store = store.clone();
        async move {
            let mut tx = store.write().await?;
            tx.insert_operator_token(&token).await?;
            tx.commit().await
        }
    };
    let same_hash = operator_token_fixture(3, "svcop_first");
    assert_eq!(
        constraint_of(insert(same_hash).await).as_deref(),
        Some("operator_tokens_token_hash_key")
    );
    let same_id = OperatorToken {
        token_hash: SecretHash::of("svcop_third"),
        ..first
    };
    assert_eq!(
        constraint_of(insert(same_id).await).as_deref(),
        Some("operator_tokens_pkey")
    );
}

//! Conformance: the application and operator-token repositories, and tenant deletion.

use super::{assert_refused_by_check, tenant_fixture};
use crate::{Store, StoreError, UpdateOutcome};
use std::sync::Arc;
use svc_domain::{
    ACR_AAL1, ACR_AAL2, Application, ClientId, GrantType, ManualClock, OperatorToken,
    OperatorTokenId, RedirectUri, ScopeSet, SecretHash, SeededRandom, SigningAlg, Tenant,
    TokenEndpointAuthMethod,
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
        minimum_acr: Some(ACR_AAL2.into()),
        organization_usage: svc_domain::OrganizationUsage::Require,
        require_pushed_authorization_requests: true,
        dpop_bound_access_tokens: true,
        logout: Default::default(),
        authorization_details_types: Vec::new(),
        metadata_document: None,
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
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        logout: Default::default(),
        authorization_details_types: Vec::new(),
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
        read.list_applications(&acme.id, None, crate::Order::Ascending, 10)
            .await
            .expect("list"),
        expected
    );
    read.finish().await.expect("finish");
}

/// The minimum `acr` reads back as written (either level, or none), an update sets, changes and
/// clears it, and the schema refuses any other value on insert and on update
/// (`applications_minimum_acr_check`), changing nothing.
pub async fn application_minimum_acr_round_trips_and_is_checked(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let levels = [Some(ACR_AAL1), Some(ACR_AAL2), None];
    let mut apps = Vec::new();
    for (seed, level) in (10u64..).zip(levels) {
        let app = Application {
            minimum_acr: level.map(str::to_owned),
            ..application_fixture(&acme, seed)
        };
        insert_app(&store, &app).await.expect("insert");
        apps.push(app);
    }
    let read_back = |store: Arc<dyn Store>, app: Application| async move {
        let mut read = store.read().await.expect("read");
        let stored = read
            .application(&app.tenant_id, &app.id)
            .await
            .expect("read")
            .expect("stored");
        read.finish().await.expect("finish");
        stored
    };
    for app in &apps {
        assert_eq!(
            read_back(store.clone(), app.clone()).await,
            *app,
            "{:?}",
            app.minimum_acr
        );
    }

    // Each one moves to the next level: aal1 -> aal2, aal2 -> none, none -> aal1.
    for (i, app) in apps.iter_mut().enumerate() {
        let changed = Application {
            minimum_acr: levels[(i + 1) % levels.len()].map(str::to_owned),
            updated_at: app.updated_at + Duration::seconds(1),
            ..app.clone()
        };
        let mut tx = store.write().await.expect("write");
        assert_eq!(
            tx.update_application(&changed, app.updated_at)
                .await
                .expect("update"),
            UpdateOutcome::Applied
        );
        tx.commit().await.expect("commit");
        assert_eq!(read_back(store.clone(), changed.clone()).await, changed);
        *app = changed;
    }

    for bad in ["urn:svc:aal3", "", "URN:SVC:AAL2", "aal2"] {
        let refused = Application {
            minimum_acr: Some(bad.to_owned()),
            ..application_fixture(&acme, 20)
        };
        // Each write in its own transaction: on PostgreSQL a failed statement aborts it.
        assert_refused_by_check(
            insert_app(&store, &refused).await,
            "applications_minimum_acr_check",
        );
        let mut tx = store.write().await.expect("write");
        let target = &apps[0];
        assert_refused_by_check(
            tx.update_application(
                &Application {
                    minimum_acr: Some(bad.to_owned()),
                    updated_at: target.updated_at + Duration::seconds(1),
                    ..target.clone()
                },
                target.updated_at,
            )
            .await,
            "applications_minimum_acr_check",
        );
    }
    for app in &apps {
        assert_eq!(
            read_back(store.clone(), app.clone()).await,
            *app,
            "unchanged"
        );
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.list_applications(&acme.id, None, crate::Order::Ascending, 10)
            .await
            .expect("list")
            .len(),
        apps.len(),
        "nothing refused was stored"
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
        read.list_applications(&other.id, None, crate::Order::Ascending, 10)
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
        tx.update_application(&hijack, app.updated_at).await,
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

/// An application read from a client ID metadata document keeps its URL and freshness, is
/// found by URL in its tenant only, takes a new freshness on update, and a second application of
/// the tenant with the same URL is a conflict (another tenant may hold the same URL).
pub async fn metadata_document_applications_are_found_by_url_per_tenant(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let other = stored_tenant(&store, "other", 2).await;
    let url = "https://client.example/oauth/other.json";
    let document = |fresh_until| {
        Some(svc_domain::MetadataDocument {
            url: svc_domain::ClientIdUrl::parse(
                "https://client.example/oauth/metadata.json",
                false,
            )
            .expect("url"),
            fresh_until,
        })
    };
    let mut app = public_application_fixture(&acme, 10);
    app.metadata_document = document(acme.created_at + Duration::seconds(30));
    insert_app(&store, &app).await.expect("insert");
    let mut elsewhere = public_application_fixture(&other, 11);
    elsewhere.metadata_document = app.metadata_document.clone();
    insert_app(&store, &elsewhere)
        .await
        .expect("the same URL in another tenant");

    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application_by_metadata_url(&acme.id, "https://client.example/oauth/metadata.json")
            .await
            .expect("by url"),
        Some(app.clone())
    );
    assert_eq!(
        read.application_by_metadata_url(&acme.id, url)
            .await
            .expect("by another url"),
        None
    );
    assert_eq!(
        read.application(&acme.id, &app.id).await.expect("by id"),
        Some(app.clone())
    );
    assert_eq!(
        read.application_by_metadata_url(&other.id, "https://client.example/oauth/metadata.json")
            .await
            .expect("other tenant")
            .map(|a| a.id),
        Some(elsewhere.id.clone())
    );
    read.finish().await.expect("finish");

    let mut refreshed = app.clone();
    refreshed.metadata_document = document(acme.created_at + Duration::hours(2));
    refreshed.updated_at = app.updated_at + Duration::seconds(1);
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_application(&refreshed, app.updated_at)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &app.id).await.expect("read"),
        Some(refreshed.clone())
    );
    read.finish().await.expect("finish");

    let mut twin = public_application_fixture(&acme, 12);
    twin.metadata_document = app.metadata_document.clone();
    assert!(
        constraint_of(insert_app(&store, &twin).await).is_some(),
        "a second application of one tenant for the same URL"
    );
}

/// Listing pages through one tenant's applications once each, in id order both ways, with no
/// overlap and nothing of another tenant.
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
    for order in [crate::Order::Ascending, crate::Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let mut read = store.read().await.expect("read");
            let page = read
                .list_applications(&acme.id, cursor.as_ref(), order, 3)
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
        if order == crate::Order::Descending {
            seen.reverse();
        }
        assert_eq!(seen, all, "{order:?}");
    }
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
    changed.minimum_acr = Some(ACR_AAL1.into());
    changed.updated_at = original.updated_at + Duration::minutes(5);
    changed.created_at += Duration::days(3); // must be ignored
    changed.is_management = true; // must be ignored
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_application(&changed, original.updated_at)
            .await
            .expect("update"),
        UpdateOutcome::Applied
    );
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
        tx.update_application(&ghost, ghost.updated_at).await,
        Err(StoreError::NotFound)
    ));
}

/// An update names the revision it read (`updated_at`): once another write committed, an update
/// carrying the old revision is refused as stale and changes nothing, whichever revision the
/// caller names that is not the stored one (older, newer, or off by a microsecond).
pub async fn update_application_refuses_a_stale_revision(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let original = application_fixture(&acme, 10);
    insert_app(&store, &original).await.expect("insert");
    let read_at = original.updated_at;

    // Another writer commits a change after our read.
    let first = Application {
        name: "First writer".into(),
        updated_at: read_at + Duration::seconds(1),
        ..original.clone()
    };
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_application(&first, read_at).await.expect("first"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");

    // Our write, based on what we read before it: refused, for every revision but the stored one.
    let second = Application {
        name: "Second writer".into(),
        updated_at: read_at + Duration::seconds(2),
        ..original.clone()
    };
    for stale in [
        read_at,
        first.updated_at - Duration::microseconds(1),
        first.updated_at + Duration::microseconds(1),
    ] {
        let mut tx = store.write().await.expect("write");
        assert_eq!(
            tx.update_application(&second, stale).await.expect("stale"),
            UpdateOutcome::Stale,
            "{stale}"
        );
        tx.commit().await.expect("commit");
    }
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &original.id)
            .await
            .expect("read"),
        Some(first.clone()),
        "the first writer's change stands"
    );
    read.finish().await.expect("finish");

    // Named with the current revision, the same write applies.
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.update_application(&second, first.updated_at)
            .await
            .expect("current"),
        UpdateOutcome::Applied
    );
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &original.id)
            .await
            .expect("read"),
        Some(second)
    );
    read.finish().await.expect("finish");
}

/// Writers racing on one application, each writing back what it read with its own change: every
/// update that applies was based on the revision current at that moment, so none is lost. The
/// applied ones form a chain from the original revision and the stored application is the last
/// of them; the others are refused as stale. (PostgreSQL runs them concurrently under READ
/// COMMITTED; SQLite one at a time.)
pub async fn racing_application_updates_lose_nothing(store: Arc<dyn Store>) {
    let acme = stored_tenant(&store, "acme", 1).await;
    let original = application_fixture(&acme, 10);
    insert_app(&store, &original).await.expect("insert");
    let attempts = (0..4i64).map(|i| {
        let store = store.clone();
        let (tenant, id) = (acme.id.clone(), original.id.clone());
        async move {
            let mut tx = store.write().await?;
            let read = tx
                .application(&tenant, &id)
                .await?
                .ok_or(StoreError::NotFound)?;
            let changed = Application {
                name: format!("Writer {i}"),
                updated_at: read.updated_at + Duration::milliseconds(i + 1),
                ..read.clone()
            };
            let outcome = tx.update_application(&changed, read.updated_at).await?;
            tx.commit().await?;
            Ok::<_, StoreError>((read.updated_at, changed, outcome))
        }
    });
    let results = futures_util::future::join_all(attempts).await;
    let mut applied = Vec::new();
    for result in results {
        match result {
            Ok((read_at, changed, UpdateOutcome::Applied)) => applied.push((read_at, changed)),
            Ok((_, _, UpdateOutcome::Stale)) => {}
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
    let mut revision = original.updated_at;
    let mut last = None;
    while let Some(next) = applied.iter().position(|(read_at, _)| *read_at == revision) {
        let (_, changed) = applied.swap_remove(next);
        revision = changed.updated_at;
        last = Some(changed);
    }
    assert!(
        applied.is_empty(),
        "an update applied over a revision another writer had replaced: {applied:?}"
    );
    let mut read = store.read().await.expect("read");
    assert_eq!(
        read.application(&acme.id, &original.id)
            .await
            .expect("read"),
        Some(last.expect("at least one writer applies"))
    );
    read.finish().await.expect("finish");
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
        read.list_applications(&acme.id, None, crate::Order::Ascending, 10)
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

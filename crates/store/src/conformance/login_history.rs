//! Conformance: a person's login history (records per user and tenant, both orders, paging,
//! every method and result), and the migration that widened its checks.

use super::{tenant_fixture, user_fixture};
use crate::{Order, Store, StoreError};
use std::sync::Arc;
use svc_domain::{
    LoginMethod, LoginRecord, LoginRecordId, LoginResult, ManualClock, SeededRandom, User,
};
use time::Duration;

/// A record of `user` at whole microseconds, `n` milliseconds after the user's creation.
fn record(user: &User, n: u64, result: LoginResult) -> LoginRecord {
    let at = user.created_at + Duration::milliseconds(n as i64);
    LoginRecord {
        id: LoginRecordId::generate(&ManualClock::new(at), &SeededRandom::new(n)),
        tenant_id: user.tenant_id.clone(),
        user_id: user.id.clone(),
        occurred_at: at,
        method: LoginMethod::Password,
        result,
        client_ip: n.is_multiple_of(2).then(|| format!("203.0.113.{n}")),
        user_agent: n
            .is_multiple_of(3)
            .then(|| format!("Mozilla/5.0 \"n{n}\" ü")),
    }
}

/// Records round-trip, list per user and tenant only, newest or oldest first, page with the
/// cursor both ways, and a record for an unknown tenant names the foreign key.
pub async fn login_history_pages_per_user_both_ways(store: Arc<dyn Store>) {
    let acme = tenant_fixture("acme", 1);
    let other = tenant_fixture("other", 2);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let results = [
        LoginResult::InvalidCredentials,
        LoginResult::Locked,
        LoginResult::Success,
    ];
    let mut mine = Vec::new();
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("acme");
    tx.insert_tenant(&other).await.expect("other");
    for user in [&ada, &bob, &eve] {
        tx.insert_user(user).await.expect("user");
    }
    for n in 0..5u64 {
        let r = record(&ada, 10 + n, results[(n % 3) as usize]);
        tx.insert_login_record(&r).await.expect("ada's record");
        mine.push(r);
        tx.insert_login_record(&record(&bob, 20 + n, LoginResult::Success))
            .await
            .expect("bob's record");
        tx.insert_login_record(&record(&eve, 30 + n, LoginResult::Success))
            .await
            .expect("eve's record");
    }
    tx.commit().await.expect("commit");
    mine.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    let mut read = store.read().await.expect("read");
    for order in [Order::Ascending, Order::Descending] {
        let mut seen = Vec::new();
        let mut cursor: Option<LoginRecordId> = None;
        loop {
            let page = read
                .login_history(&acme.id, &ada.id, cursor.as_ref(), order, 2)
                .await
                .expect("page");
            assert!(page.len() <= 2);
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|r| r.id.clone());
            seen.extend(page);
        }
        if order == Order::Descending {
            seen.reverse();
        }
        assert_eq!(
            seen, mine,
            "{order:?}: every record once, exactly as written"
        );
    }
    assert!(
        read.login_history(&other.id, &ada.id, None, Order::Descending, 10)
            .await
            .expect("cross-tenant")
            .is_empty(),
        "another tenant sees nothing of ada's history"
    );
    read.finish().await.expect("finish");

    let mut orphan = record(&ada, 99, LoginResult::Success);
    orphan.tenant_id = tenant_fixture("ghost", 9).id;
    let mut tx = store.write().await.expect("write");
    match tx.insert_login_record(&orphan).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "login_history_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
}

/// The retention purge deletes every tenant's records made before the bound, and only those.
pub async fn login_history_purge_keeps_what_is_younger_than_the_retention(store: Arc<dyn Store>) {
    let acme = tenant_fixture("acme", 1);
    let other = tenant_fixture("other", 2);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let eve = user_fixture(&other, 3, "eve@example.com");
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("acme");
    tx.insert_tenant(&other).await.expect("other");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_user(&eve).await.expect("eve");
    for n in [10u64, 20, 30, 40] {
        tx.insert_login_record(&record(&ada, n, LoginResult::Success))
            .await
            .expect("ada's record");
        tx.insert_login_record(&record(&eve, n, LoginResult::Success))
            .await
            .expect("eve's record");
    }
    tx.commit().await.expect("commit");
    // Records at +10 and +20 ms of each user's creation go; +30 and +40 stay.
    let bound = ada.created_at.max(eve.created_at) + Duration::milliseconds(25);
    let mut tx = store.write().await.expect("write");
    // One round of one record, then the rest.
    let first = tx.purge_login_history(bound, 1).await.expect("purge");
    assert_eq!(first, 1, "at most the limit");
    let purged = first
        + tx.purge_login_history(bound, u64::MAX)
            .await
            .expect("the rest");
    tx.commit().await.expect("commit");
    let mut read = store.read().await.expect("read");
    let mut kept = 0;
    for (tenant, user) in [(&acme, &ada), (&other, &eve)] {
        let left = read
            .login_history(&tenant.id, &user.id, None, Order::Ascending, 10)
            .await
            .expect("history");
        assert!(
            left.iter()
                .all(|r| r.occurred_at >= bound - Duration::milliseconds(1)),
            "{left:?}"
        );
        kept += left.len();
    }
    read.finish().await.expect("finish");
    assert_eq!(purged as usize + kept, 8);
    assert!(purged >= 2 && kept >= 2, "purged {purged}, kept {kept}");
    let mut tx = store.write().await.expect("write");
    assert_eq!(
        tx.purge_login_history(bound, u64::MAX)
            .await
            .expect("again"),
        0
    );
    tx.commit().await.expect("commit");
}

/// Every method and every result the domain knows is stored and read back as written (the
/// `login_history_method_check` and `login_history_result_check` constraints admit each one),
/// in every combination.
pub async fn login_history_keeps_every_method_and_result(store: Arc<dyn Store>) {
    let acme = tenant_fixture("acme", 1);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let mut written = Vec::new();
    let mut n = 0u64;
    for method in LoginMethod::ALL {
        for result in LoginResult::ALL {
            n += 1;
            written.push(LoginRecord {
                method,
                ..record(&ada, n, result)
            });
        }
    }
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("acme");
    tx.insert_user(&ada).await.expect("ada");
    for r in &written {
        tx.insert_login_record(r)
            .await
            .unwrap_or_else(|e| panic!("{} / {}: {e:?}", r.method.as_str(), r.result.as_str()));
    }
    tx.commit().await.expect("commit");
    written.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    let mut read = store.read().await.expect("read");
    let stored = read
        .login_history(&acme.id, &ada.id, None, Order::Ascending, 100)
        .await
        .expect("history");
    read.finish().await.expect("finish");
    assert_eq!(stored, written);
}

/// The assurance migration (`20261123000004_assurance`), given a store migrated only up to the
/// version before it: the login history written before it (every method and result that
/// version allowed) reads back unchanged and in order afterwards — SQLite rebuilds the table
/// to widen its checks — still keyed, tied to its tenant (the foreign key is named, and deleting
/// the tenant deletes the history), and the new second-factor values are accepted.
pub async fn login_history_survives_the_assurance_migration(store: Arc<dyn Store>) {
    let acme = tenant_fixture("acme", 1);
    let ada = user_fixture(&acme, 1, "ada@example.com");
    let bob = user_fixture(&acme, 2, "bob@example.com");
    let before = [
        LoginResult::Success,
        LoginResult::InvalidCredentials,
        LoginResult::Locked,
    ];
    let mut ada_before = Vec::new();
    let mut tx = store.write().await.expect("write");
    tx.insert_tenant(&acme).await.expect("acme");
    tx.insert_user(&ada).await.expect("ada");
    tx.insert_user(&bob).await.expect("bob");
    for n in 0..6u64 {
        let r = record(&ada, 10 + n, before[(n % 3) as usize]);
        tx.insert_login_record(&r).await.expect("ada's record");
        ada_before.push(r);
        tx.insert_login_record(&record(&bob, 30 + n, LoginResult::Success))
            .await
            .expect("bob's record");
    }
    tx.commit().await.expect("commit");
    ada_before.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));

    store.migrate().await.expect("the remaining migrations");

    let history = |store: Arc<dyn Store>, user: User, order: Order| async move {
        let mut read = store.read().await.expect("read");
        let rows = read
            .login_history(&user.tenant_id, &user.id, None, order, 100)
            .await
            .expect("history");
        read.finish().await.expect("finish");
        rows
    };
    assert_eq!(
        history(store.clone(), ada.clone(), Order::Ascending).await,
        ada_before,
        "every record survives, exactly as written"
    );
    let mut newest_first = ada_before.clone();
    newest_first.reverse();
    assert_eq!(
        history(store.clone(), ada.clone(), Order::Descending).await,
        newest_first
    );
    assert_eq!(
        history(store.clone(), bob.clone(), Order::Ascending)
            .await
            .len(),
        6
    );

    // The new values are admitted; the key and the foreign key still hold.
    let second_step = LoginRecord {
        method: LoginMethod::PasswordTotp,
        ..record(&ada, 50, LoginResult::SecondFactorLocked)
    };
    let mut tx = store.write().await.expect("write");
    tx.insert_login_record(&second_step)
        .await
        .expect("a second-factor record");
    tx.commit().await.expect("commit");
    let mut tx = store.write().await.expect("write");
    match tx.insert_login_record(&ada_before[0]).await {
        Err(StoreError::Conflict { constraint }) => assert_eq!(constraint, "login_history_pkey"),
        other => panic!("expected the key, got {other:?}"),
    }
    drop(tx);
    let mut orphan = record(&ada, 99, LoginResult::Success);
    orphan.tenant_id = tenant_fixture("ghost", 9).id;
    let mut tx = store.write().await.expect("write");
    match tx.insert_login_record(&orphan).await {
        Err(StoreError::Conflict { constraint }) => {
            assert_eq!(constraint, "login_history_tenant_id_fkey");
        }
        other => panic!("expected the foreign key, got {other:?}"),
    }
    drop(tx);

    let mut tx = store.write().await.expect("write");
    tx.delete_tenant(&acme.id).await.expect("delete tenant");
    tx.commit().await.expect("commit");
    assert!(
        history(store.clone(), ada, Order::Ascending)
            .await
            .is_empty(),
        "the history goes with its tenant"
    );
}

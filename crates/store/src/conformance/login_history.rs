//! Conformance: a person's login history (records per user and tenant, both orders, paging).

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

use super::*;
use std::time::Duration;

fn tenant(n: u8) -> TenantId {
    TenantId::parse(&format!(
        "ten_01jd2n4k6m8p0r2t4v6x8z0b2{}",
        char::from(b'a' + n)
    ))
    .unwrap()
}

fn listening(set: &RevocationSet) {
    set.listening(Instant::now() + Duration::from_secs(60));
}

/// Checks `jti` and, when asked to load, loads `rows`.
fn check_loading(set: &RevocationSet, t: &TenantId, jti: &str, rows: &[(&str, i64)]) -> bool {
    match set.check(t, jti, 100) {
        Check::Known(revoked) => revoked,
        Check::Load(loading) => {
            let rows: Vec<_> = rows.iter().map(|(j, e)| ((*j).to_owned(), *e)).collect();
            let revoked = rows.iter().any(|(j, _)| j == jti);
            set.loaded(loading, t, rows);
            revoked
        }
        Check::Ask => panic!("asked the database"),
    }
}

#[test]
fn nothing_is_trusted_before_its_process_listens() {
    let set = RevocationSet::default();
    assert!(!set.trusted());
    assert_eq!(set.check(&tenant(0), "j1", 100), Check::Ask);
    set.revoked(&tenant(0), "j1", 200);
    assert_eq!(set.check(&tenant(0), "j1", 100), Check::Ask);
}

#[test]
fn a_tenant_is_loaded_once_then_answered_from_memory() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    assert!(check_loading(&set, &t, "j1", &[("j1", 200)]));
    assert_eq!(set.check(&t, "j1", 100), Check::Known(true));
    assert_eq!(set.check(&t, "j2", 100), Check::Known(false));
    set.revoked(&t, "j2", 200);
    assert_eq!(set.check(&t, "j2", 100), Check::Known(true));
    // Another tenant is its own load: nothing crosses.
    assert!(!check_loading(&set, &tenant(1), "j1", &[]));
    assert_eq!(set.check(&tenant(1), "j1", 100), Check::Known(false));
    assert_eq!(set.size(), (2, 2));
}

#[test]
fn a_revocation_announced_while_the_tenant_loads_is_kept() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    let Check::Load(loading) = set.check(&t, "j1", 100) else {
        panic!("expected a load");
    };
    // Meanwhile another request asks the database, and an announcement arrives that the
    // load's snapshot predates.
    assert_eq!(set.check(&t, "j1", 100), Check::Ask);
    set.revoked(&t, "late", 300);
    set.loaded(loading, &t, vec![("early".into(), 200)]);
    assert_eq!(set.check(&t, "late", 100), Check::Known(true));
    assert_eq!(set.check(&t, "early", 100), Check::Known(true));
    assert_eq!(set.check(&t, "j1", 100), Check::Known(false));
}

#[test]
fn a_revocation_announced_before_the_tenant_is_checked_comes_with_its_load() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    set.revoked(&t, "j1", 200); // not held: the load reads it
    assert!(check_loading(&set, &t, "j1", &[("j1", 200)]));
}

#[test]
fn a_load_begun_before_the_set_started_over_is_discarded() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    let Check::Load(stale) = set.check(&t, "j1", 100) else {
        panic!("expected a load");
    };
    // The listener was lost and listens again: announcements may have been missed, and this
    // load may predate them.
    listening(&set);
    set.loaded(stale, &t, vec![]);
    let Check::Load(fresh) = set.check(&t, "j1", 100) else {
        panic!("the stale load was kept");
    };
    set.loaded(fresh, &t, vec![("j1".into(), 200)]);
    assert_eq!(set.check(&t, "j1", 100), Check::Known(true));
}

#[test]
fn starting_over_forgets_every_tenant() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    assert!(!check_loading(&set, &t, "j1", &[]));
    listening(&set);
    assert!(matches!(set.check(&t, "j1", 100), Check::Load(_)));
    assert_eq!(set.size(), (0, 0));
}

#[test]
fn an_unheard_or_stale_set_is_not_trusted() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    assert!(!check_loading(&set, &t, "j1", &[]));
    set.unheard();
    assert_eq!(set.check(&t, "j1", 100), Check::Ask);
    // A heartbeat while not listening does not make it trusted.
    set.heard_through(Instant::now());
    assert_eq!(set.check(&t, "j1", 100), Check::Ask);

    // Listening, but the last heartbeat heard is older than FRESH: its trust lapsed.
    set.listening(Instant::now() - Duration::from_millis(1));
    assert!(!set.trusted());
    assert_eq!(set.check(&t, "j1", 100), Check::Ask);
    // A heartbeat heard back restores trust for FRESH after it was sent.
    set.heard_through(Instant::now());
    assert!(set.trusted());
    // An old heartbeat never shortens it.
    set.heard_through(Instant::now() - FRESH * 2);
    assert!(set.trusted());
}

#[test]
fn a_tenant_with_more_revocations_than_fit_is_asked_of_the_database() {
    let set = RevocationSet::with_capacity(2, 100);
    listening(&set);
    let (t0, t1) = (tenant(0), tenant(1));
    // Loaded over capacity.
    let Check::Load(loading) = set.check(&t0, "j1", 100) else {
        panic!("expected a load");
    };
    set.loaded(
        loading,
        &t0,
        vec![("a".into(), 200), ("b".into(), 200), ("c".into(), 200)],
    );
    assert_eq!(set.check(&t0, "a", 100), Check::Ask);
    // Grown over capacity by announcements.
    assert!(!check_loading(&set, &t1, "j1", &[("a", 200), ("b", 200)]));
    set.revoked(&t1, "c", 200);
    assert_eq!(set.check(&t1, "c", 100), Check::Ask);
    assert_eq!(set.size(), (0, 0));
}

#[test]
fn expired_revocations_are_shed_when_a_tenant_fills_up() {
    let set = RevocationSet::with_capacity(4, 100);
    listening(&set);
    let t = tenant(0);
    assert!(check_loading(
        &set,
        &t,
        "old1",
        &[("old1", 50), ("old2", 60), ("new", 500)]
    ));
    // At half capacity a check sheds what expired before `now` (100).
    assert_eq!(set.check(&t, "old1", 100), Check::Known(false));
    assert_eq!(set.size(), (1, 1));
    assert_eq!(set.check(&t, "new", 100), Check::Known(true));
    // Not again within a minute: a revocation expired meanwhile is still held (and answered,
    // harmlessly: its token is refused for its lifetime anyway).
    set.revoked(&t, "mid", 120);
    assert_eq!(set.check(&t, "mid", 130), Check::Known(true));
    assert_eq!(set.size(), (1, 2));
    assert_eq!(set.check(&t, "mid", 160), Check::Known(false));
    assert_eq!(set.size(), (1, 1));
}

#[test]
fn the_total_capacity_bounds_every_tenant_together() {
    let set = RevocationSet::with_capacity(10, 3);
    listening(&set);
    assert!(check_loading(
        &set,
        &tenant(0),
        "a",
        &[("a", 200), ("b", 200)]
    ));
    // Two more would make four: this tenant is asked of the database instead.
    let Check::Load(loading) = set.check(&tenant(1), "c", 100) else {
        panic!("expected a load");
    };
    set.loaded(
        loading,
        &tenant(1),
        vec![("c".into(), 200), ("d".into(), 200)],
    );
    assert_eq!(set.check(&tenant(1), "c", 100), Check::Ask);
    assert_eq!(set.size(), (1, 2));
    set.revoked(&tenant(0), "e", 200);
    assert_eq!(set.size(), (1, 3));
    set.revoked(&tenant(0), "f", 200);
    assert_eq!(
        set.check(&tenant(0), "a", 100),
        Check::Ask,
        "full: no longer held"
    );
}

#[test]
fn a_failed_or_abandoned_load_is_tried_again() {
    let set = RevocationSet::default();
    listening(&set);
    let t = tenant(0);
    let failed = block_on(check_through(
        &set,
        &t,
        "j1",
        OffsetDateTime::UNIX_EPOCH,
        |_| async { Err(StoreError::Unavailable("down".into())) },
        || async { panic!("asked instead of loading") },
    ));
    assert!(failed.is_err());
    assert!(
        matches!(set.check(&t, "j1", 100), Check::Load(_)),
        "loads again"
    );

    // A load whose request went away (its future dropped before completing).
    set.listening(Instant::now() + Duration::from_secs(60));
    {
        let abandoned = check_through(
            &set,
            &t,
            "j1",
            OffsetDateTime::UNIX_EPOCH,
            |_| std::future::pending::<Result<Vec<(String, i64)>, StoreError>>(),
            || async { Ok(false) },
        );
        let mut abandoned = Box::pin(abandoned);
        assert!(poll_once(abandoned.as_mut()).is_none());
    }
    assert!(
        matches!(set.check(&t, "j1", 100), Check::Load(_)),
        "loads again"
    );
}

#[test]
fn a_load_answers_from_what_it_read_and_asks_for_one_more_than_fits() {
    let set = RevocationSet::with_capacity(5, 100);
    listening(&set);
    let t = tenant(0);
    let revoked = block_on(check_through(
        &set,
        &t,
        "j1",
        OffsetDateTime::UNIX_EPOCH,
        |limit| async move {
            assert_eq!(limit, 6);
            Ok(vec![("j1".to_owned(), 200)])
        },
        || async { panic!("asked instead of loading") },
    ))
    .unwrap();
    assert!(revoked);
    assert_eq!(set.check(&t, "j1", 100), Check::Known(true));
}

#[test]
fn revocation_messages_survive_the_wire_and_nothing_else_parses() {
    let t = tenant(0);
    for jti in ["01jd2n4k6m8p0r2t4v6x8z0b2d", "with space", "ü"] {
        let message = revocation_message(&t, jti, 1_700_000_000);
        assert_eq!(
            parse_revocation_message(&message),
            Some((t.clone(), jti.to_owned(), 1_700_000_000)),
            "{message}"
        );
    }
    for message in [
        String::new(),
        "- revoked".into(),
        format!("- revoked {t}"),
        format!("- revoked {t} 12"),
        format!("- revoked {t} 12 "),
        format!("- revoked {t} soon j1"),
        "- revoked not-a-tenant 12 j1".into(),
        format!("a1b2 revoked {t} 12 j1"),
        format!("- app {t} 12 j1"),
    ] {
        assert_eq!(parse_revocation_message(&message), None, "{message}");
    }
}

/// Runs a future that never waits on anything but itself.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = Box::pin(future);
    loop {
        if let Some(out) = poll_once(future.as_mut()) {
            return out;
        }
    }
}

fn poll_once<F: std::future::Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Option<F::Output> {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    match future.poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

//! Step boundaries of the rotation planner, one second before and at each threshold, plus the
//! repairs and the forced rotation. The multi-year simulation is in `tests/rotation_cycle.rs`.

use super::*;

const ALG: SigningAlg = SigningAlg::Es256;

fn t0() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
}

fn policy() -> RotationPolicy {
    RotationPolicy::default()
}

const SECOND: Duration = Duration::SECOND;

fn key(
    kid: &str,
    state: KeyState,
    created_at: OffsetDateTime,
    activates_at: OffsetDateTime,
) -> KeyMeta {
    KeyMeta {
        kid: kid.to_owned(),
        alg: ALG,
        state,
        created_at,
        activates_at,
        retired_at: None,
        remove_after: None,
    }
}

fn active(kid: &str, since: OffsetDateTime) -> KeyMeta {
    key(kid, KeyState::Active, since, since)
}

fn retired(kid: &str, retired_at: OffsetDateTime, remove_after: OffsetDateTime) -> KeyMeta {
    KeyMeta {
        retired_at: Some(retired_at),
        remove_after: Some(remove_after),
        ..key(
            kid,
            KeyState::Retired,
            retired_at - Duration::days(30),
            retired_at - Duration::days(30),
        )
    }
}

fn plan(keys: &[KeyMeta], now: OffsetDateTime) -> Vec<RotationStep> {
    plan_rotation(ALG, keys, now, &policy())
}

#[test]
fn defaults_follow_the_contract() {
    let p = RotationPolicy::default();
    assert_eq!(p.rotation_period(), Duration::days(30));
    assert_eq!(p.publish_lead(), Duration::DAY);
    assert_eq!(p.retire_overlap(), Duration::DAY + Duration::seconds(900));
    assert_eq!(
        RotationPolicy::for_lifetimes(Duration::days(30), Duration::seconds(900)).unwrap(),
        p
    );
    // key_rotation_days = 1: the lead shrinks to half a day so it stays under the period.
    let short = RotationPolicy::for_lifetimes(Duration::DAY, Duration::DAY).unwrap();
    assert_eq!(short.publish_lead(), Duration::hours(12));
    assert_eq!(short.retire_overlap(), Duration::days(2));
}

#[test]
fn contradictory_policies_are_refused() {
    let d = Duration::DAY;
    assert!(RotationPolicy::new(d, d, d).is_err(), "lead == period");
    assert!(RotationPolicy::new(d, Duration::ZERO, d).is_err());
    assert!(RotationPolicy::new(Duration::ZERO, d, d).is_err());
    assert!(RotationPolicy::new(d * 2, d, Duration::ZERO).is_err());
    assert!(RotationPolicy::new(d * 2, d, d).is_ok());
    assert!(RotationPolicy::for_lifetimes(d, -SECOND).is_err());
}

#[test]
fn bootstrap_creates_an_active_key() {
    assert_eq!(plan(&[], t0()), [RotationStep::CreateActive]);
}

#[test]
fn next_key_is_created_publish_lead_before_the_period_ends() {
    let keys = [active("a", t0())];
    let due = t0() + Duration::days(29);
    assert_eq!(plan(&keys, due - SECOND), []);
    assert_eq!(
        plan(&keys, due),
        [RotationStep::CreateNext {
            activates_at: t0() + Duration::days(30)
        }]
    );
}

#[test]
fn a_late_next_key_still_gets_the_full_publish_lead() {
    let keys = [active("a", t0())];
    let now = t0() + Duration::days(45); // the worker was down
    assert_eq!(
        plan(&keys, now),
        [RotationStep::CreateNext {
            activates_at: now + Duration::DAY
        }]
    );
}

#[test]
fn next_key_is_promoted_at_its_activation_time() {
    let switch = t0() + Duration::days(30);
    let keys = [
        active("a", t0()),
        key("n", KeyState::Next, switch - Duration::DAY, switch),
    ];
    assert_eq!(plan(&keys, switch - SECOND), []);
    assert_eq!(
        plan(&keys, switch),
        [RotationStep::Promote {
            next_kid: "n".into(),
            retire_kid: Some("a".into()),
            remove_after: switch + policy().retire_overlap(),
        }]
    );
}

#[test]
fn a_next_key_never_signs_before_it_was_published_for_the_lead() {
    // Planned under an older, shorter lead: activation waits until created_at + lead.
    let created = t0() + Duration::days(30);
    let keys = [
        active("a", t0()),
        key("n", KeyState::Next, created, created + Duration::hours(1)),
    ];
    assert_eq!(plan(&keys, created + Duration::DAY - SECOND), []);
    assert!(matches!(
        plan(&keys, created + Duration::DAY).as_slice(),
        [RotationStep::Promote { .. }]
    ));
}

#[test]
fn retired_key_is_removed_at_remove_after() {
    let remove_after = t0() + Duration::days(2);
    let keys = [active("b", t0()), retired("a", t0(), remove_after)];
    assert_eq!(plan(&keys, remove_after - SECOND), []);
    assert_eq!(
        plan(&keys, remove_after),
        [RotationStep::Remove { kid: "a".into() }]
    );
}

#[test]
fn retired_key_without_remove_after_is_repaired_not_dropped() {
    let overlap = policy().retire_overlap();
    let mut known = retired("a", t0(), t0());
    known.remove_after = None;
    let keys = [active("b", t0()), known.clone()];
    assert_eq!(plan(&keys, t0() + overlap - SECOND), []);
    assert_eq!(
        plan(&keys, t0() + overlap),
        [RotationStep::Remove { kid: "a".into() }]
    );

    known.retired_at = None;
    let keys = [active("b", t0()), known];
    let now = t0() + Duration::days(3);
    assert_eq!(
        plan(&keys, now),
        [RotationStep::Retire {
            kid: "a".into(),
            remove_after: now + overlap
        }]
    );
}

#[test]
fn no_next_key_while_two_retired_keys_are_still_published() {
    let now = t0() + Duration::days(29);
    let keys = [
        active("c", t0()),
        retired("a", t0() - Duration::days(2), now + SECOND),
        retired("b", t0(), now + Duration::days(5)),
    ];
    assert_eq!(plan(&keys, now), []);
    // One second later "a" goes, and the successor is announced in the same plan; it still
    // gets its full publish lead, so the switch slips by that second.
    assert_eq!(
        plan(&keys, now + SECOND),
        [
            RotationStep::Remove { kid: "a".into() },
            RotationStep::CreateNext {
                activates_at: t0() + Duration::days(30) + SECOND
            },
        ]
    );
}

#[test]
fn surplus_active_and_next_keys_are_repaired_deterministically() {
    let overlap = policy().retire_overlap();
    let now = t0() + Duration::days(1);
    let n1 = key("n1", KeyState::Next, now, now + Duration::days(40));
    let n2 = key("n2", KeyState::Next, now, now + Duration::days(35));
    let keys = vec![active("old", t0()), active("new", t0() + SECOND), n1, n2];
    let expected = [
        RotationStep::Remove { kid: "n1".into() },
        RotationStep::Retire {
            kid: "old".into(),
            remove_after: now + overlap,
        },
    ];
    assert_eq!(plan(&keys, now), expected);
    let mut reversed = keys.clone();
    reversed.reverse();
    assert_eq!(
        plan(&reversed, now),
        expected,
        "input order must not matter"
    );
}

#[test]
fn a_next_key_without_an_active_one_is_promoted_at_once() {
    let keys = [key("n", KeyState::Next, t0(), t0() + Duration::days(5))];
    assert_eq!(
        plan(&keys, t0() + SECOND),
        [RotationStep::Promote {
            next_kid: "n".into(),
            retire_kid: None,
            remove_after: t0() + SECOND + policy().retire_overlap(),
        }]
    );
}

#[test]
fn other_algorithms_are_ignored() {
    let mut rsa = active("r", t0());
    rsa.alg = SigningAlg::Rs256;
    assert_eq!(plan(&[rsa.clone()], t0()), [RotationStep::CreateActive]);
    assert_eq!(
        plan_rotation(SigningAlg::Rs256, &[rsa], t0(), &policy()),
        []
    );
}

#[test]
fn forced_rotation_replaces_the_active_key_and_discards_the_next_one() {
    let now = t0() + Duration::days(29) + Duration::hours(3);
    let overlap = policy().retire_overlap();
    let mut keys = vec![
        retired("r", t0(), t0() + Duration::days(1)),
        active("a", t0()),
        key(
            "n",
            KeyState::Next,
            t0() + Duration::days(29),
            t0() + Duration::days(30),
        ),
    ];
    let steps = plan_forced_rotation(ALG, &keys, now, &policy());
    assert_eq!(
        steps,
        [
            RotationStep::Remove { kid: "r".into() },
            RotationStep::Remove { kid: "n".into() },
            RotationStep::Retire {
                kid: "a".into(),
                remove_after: now + overlap
            },
            RotationStep::CreateActive,
        ]
    );
    apply_plan(&mut keys, ALG, &steps, now, || "f".into()).unwrap();
    assert_eq!(keys.len(), 2);
    let old = keys.iter().find(|k| k.kid == "a").unwrap();
    assert_eq!(
        (old.state, old.retired_at, old.remove_after),
        (KeyState::Retired, Some(now), Some(now + overlap))
    );
    let new = keys.iter().find(|k| k.kid == "f").unwrap();
    assert_eq!((new.state, new.activates_at), (KeyState::Active, now));
    assert_eq!(
        plan(&keys, now),
        [],
        "the scheduled planner is content afterwards"
    );
}

#[test]
fn forced_rotation_bootstraps_an_empty_set() {
    assert_eq!(
        plan_forced_rotation(ALG, &[], t0(), &policy()),
        [RotationStep::CreateActive]
    );
}

#[test]
fn apply_plan_implements_each_step() {
    let now = t0();
    let mut keys = Vec::new();
    apply_plan(&mut keys, ALG, &[RotationStep::CreateActive], now, || {
        "a".into()
    })
    .unwrap();
    assert_eq!(keys, [active("a", now)]);

    let later = now + Duration::days(29);
    let at = later + Duration::DAY;
    apply_plan(
        &mut keys,
        ALG,
        &[RotationStep::CreateNext { activates_at: at }],
        later,
        || "n".into(),
    )
    .unwrap();
    assert_eq!(keys.last(), Some(&key("n", KeyState::Next, later, at)));

    let promote = RotationStep::Promote {
        next_kid: "n".into(),
        retire_kid: Some("a".into()),
        remove_after: at + Duration::DAY,
    };
    apply_plan(
        &mut keys,
        ALG,
        std::slice::from_ref(&promote),
        at,
        || unreachable!(),
    )
    .unwrap();
    assert_eq!(keys[0].state, KeyState::Retired);
    assert_eq!(keys[0].retired_at, Some(at));
    assert_eq!(keys[1].state, KeyState::Active);
    assert_eq!(keys[1].activates_at, at);

    // Replaying a plan someone else already applied fails instead of corrupting the set.
    assert!(matches!(
        apply_plan(&mut keys, ALG, &[promote], at, || unreachable!()),
        Err(CryptoError::UnknownKey(kid)) if kid == "a"
    ));
    apply_plan(
        &mut keys,
        ALG,
        &[RotationStep::Remove { kid: "a".into() }],
        at,
        || unreachable!(),
    )
    .unwrap();
    assert_eq!(keys.len(), 1);
    assert!(
        apply_plan(
            &mut keys,
            ALG,
            &[RotationStep::Remove { kid: "n".into() }],
            at,
            || unreachable!()
        )
        .is_err(),
        "an Active key is never removed"
    );
}

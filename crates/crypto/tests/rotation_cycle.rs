//! Multi-year rotation cycles on a simulated clock (pure: no sleeping). At every tick the worker
//! plans and applies, and the invariants of `rotation/mod.rs` are checked:
//! - exactly one Active key after bootstrap;
//! - a key is published as Next at least `publish_lead` before it signs;
//! - a retired key stays published at least `retire_overlap` after it last signed, and every
//!   token signed at a tick stays verifiable (its key published) until it expires;
//! - retired keys are removed once due, so none lingers;
//! - at most 3 keys are published per algorithm;
//! - planning is deterministic and a fixpoint: planning again at the same instant yields nothing;
//! - keys actually rotate: each key signs for at least the period and at most
//!   `max(period, overlap + lead)` plus tick granularity.

// clippy.toml allows these inside `#[test]` functions only; the shared helpers here are test code too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, VecDeque};
use svc_crypto::{
    KeyMeta, KeyState, RotationPolicy, RotationStep, SigningAlg, apply_plan, plan_forced_rotation,
    plan_rotation,
};
use svc_domain::{Rng, SeededRandom};
use time::{Duration, OffsetDateTime};

const ALG: SigningAlg = SigningAlg::Es256;

fn start() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
}

/// What the simulation remembers about each key beyond the key set itself.
#[derive(Debug, Default)]
struct History {
    activated: Option<OffsetDateTime>,
    retired: Option<OffsetDateTime>,
}

struct Simulation {
    policy: RotationPolicy,
    /// The longest token lifetime the policy was derived for.
    token_lifetime: Duration,
    keys: Vec<KeyMeta>,
    /// Other algorithms' keys ride along and must never be touched.
    bystander: KeyMeta,
    history: BTreeMap<String, History>,
    /// Tokens signed so far that have not expired: (kid, expires_at).
    tokens: VecDeque<(String, OffsetDateTime)>,
    minted: u64,
    rotations: u64,
    forced: bool,
}

impl Simulation {
    fn new(policy: RotationPolicy, token_lifetime: Duration) -> Self {
        Self {
            policy,
            token_lifetime,
            keys: Vec::new(),
            bystander: KeyMeta {
                kid: "rsa-bystander".into(),
                alg: SigningAlg::Rs256,
                state: KeyState::Active,
                created_at: start(),
                activates_at: start(),
                retired_at: None,
                remove_after: None,
            },
            history: BTreeMap::new(),
            tokens: VecDeque::new(),
            minted: 0,
            rotations: 0,
            forced: false,
        }
    }

    fn all_keys(&self) -> Vec<KeyMeta> {
        let mut all = self.keys.clone();
        all.push(self.bystander.clone());
        all
    }

    fn apply(&mut self, steps: &[RotationStep], now: OffsetDateTime) {
        let mut all = self.all_keys();
        let minted = &mut self.minted;
        apply_plan(&mut all, ALG, steps, now, || {
            *minted += 1;
            format!("k{minted}")
        })
        .unwrap();
        let bystander = all.iter().position(|k| k.alg != ALG).unwrap();
        assert_eq!(
            all.remove(bystander),
            self.bystander,
            "another algorithm's key was touched"
        );
        self.keys = all;
    }

    /// One tick of the worker at `now`, then every invariant.
    fn tick(&mut self, now: OffsetDateTime) {
        let before = self.keys.clone();
        let steps = plan_rotation(ALG, &self.all_keys(), now, &self.policy);
        assert_eq!(
            steps,
            plan_rotation(ALG, &self.all_keys(), now, &self.policy),
            "deterministic"
        );
        self.apply(&steps, now);
        let again = plan_rotation(ALG, &self.all_keys(), now, &self.policy);
        assert!(
            again.is_empty(),
            "not a fixpoint at {now}: {again:?} after {steps:?}"
        );
        self.record(&before, now);
        // The schedule never grows the set past 3 (only forced rotations can, temporarily).
        assert!(
            self.keys.len() <= before.len().max(3),
            "{} keys published at {now}",
            self.keys.len()
        );
        self.check(now);
    }

    fn force_rotation(&mut self, now: OffsetDateTime) {
        let before = self.keys.clone();
        let steps = plan_forced_rotation(ALG, &self.all_keys(), now, &self.policy);
        self.apply(&steps, now);
        self.forced = true;
        self.record(&before, now);
        self.check(now);
        self.forced = false;
    }

    /// Notes activations, retirements and removals, checking the timing rules as they happen.
    fn record(&mut self, before: &[KeyMeta], now: OffsetDateTime) {
        let bootstrap = before.is_empty();
        for key in &self.keys {
            let was = before.iter().find(|k| k.kid == key.kid).map(|k| k.state);
            let history = self.history.entry(key.kid.clone()).or_default();
            if key.state == KeyState::Active && was != Some(KeyState::Active) {
                history.activated = Some(now);
                if !bootstrap && !self.forced {
                    self.rotations += 1;
                    assert_eq!(
                        was,
                        Some(KeyState::Next),
                        "{} signed without being announced",
                        key.kid
                    );
                    assert!(
                        now - key.created_at >= self.policy.publish_lead(),
                        "{} signs {} after publication",
                        key.kid,
                        now - key.created_at
                    );
                }
            }
            if key.state == KeyState::Retired && was == Some(KeyState::Active) {
                history.retired = Some(now);
                let remove_after = key.remove_after.unwrap();
                assert!(remove_after - now >= self.policy.retire_overlap());
            }
        }
        for gone in before
            .iter()
            .filter(|k| !self.keys.iter().any(|n| n.kid == k.kid))
        {
            let history = &self.history[&gone.kid];
            match gone.state {
                KeyState::Retired => {
                    let last_signed = history.retired.unwrap();
                    assert!(
                        now - last_signed >= self.policy.retire_overlap(),
                        "{} removed {} after it last signed",
                        gone.kid,
                        now - last_signed
                    );
                }
                KeyState::Next => assert!(self.forced, "a Next key was dropped by the schedule"),
                KeyState::Active => unreachable!("an Active key was removed"),
            }
        }
    }

    fn check(&mut self, now: OffsetDateTime) {
        let active: Vec<&KeyMeta> = self
            .keys
            .iter()
            .filter(|k| k.state == KeyState::Active)
            .collect();
        assert_eq!(active.len(), 1, "exactly one Active key at {now}");
        let signer = active[0].kid.clone();
        for key in self.keys.iter().filter(|k| k.state == KeyState::Retired) {
            assert!(
                now < key.remove_after.unwrap(),
                "{} lingers past remove_after",
                key.kid
            );
        }
        // Every unexpired token must still verify: its key is in the JWKS.
        while self.tokens.front().is_some_and(|(_, exp)| *exp <= now) {
            self.tokens.pop_front();
        }
        for (kid, exp) in &self.tokens {
            assert!(
                self.keys.iter().any(|k| k.kid == *kid),
                "token signed by {kid} (expires {exp}) unverifiable at {now}"
            );
        }
        self.tokens.push_back((signer, now + self.token_lifetime));
    }

    /// Each completed signing span (activation to retirement) within the expected bounds.
    fn check_spans(&self, longest_tick: Duration) {
        let p = self.policy;
        let upper = p
            .rotation_period()
            .max(p.retire_overlap() + p.publish_lead())
            + longest_tick * 2;
        let mut spans = 0;
        for (kid, h) in &self.history {
            if let (Some(on), Some(off)) = (h.activated, h.retired) {
                let span = off - on;
                assert!(span >= p.rotation_period(), "{kid} signed only {span}");
                assert!(span <= upper, "{kid} signed {span}, over {upper}");
                spans += 1;
            }
        }
        assert!(spans > 0, "no key completed a signing span");
    }
}

/// Hourly ticks for `years`; returns the simulation for further checks.
fn run_hourly(policy: RotationPolicy, token_lifetime: Duration, years: i64) -> Simulation {
    let mut sim = Simulation::new(policy, token_lifetime);
    let end = start() + Duration::days(365 * years);
    let mut now = start();
    while now < end {
        sim.tick(now);
        now += Duration::HOUR;
    }
    sim.check_spans(Duration::HOUR);
    sim
}

#[test]
fn default_policy_rotates_monthly_for_three_years() {
    let sim = run_hourly(RotationPolicy::default(), Duration::seconds(900), 3);
    // 3 × 365 days / 30 days = 36 full periods; the first key is the bootstrap.
    assert_eq!(sim.rotations, 36);
}

#[test]
fn daily_rotation_with_short_tokens_for_two_years() {
    let lifetime = Duration::seconds(900);
    let policy = RotationPolicy::for_lifetimes(Duration::DAY, lifetime).unwrap();
    let sim = run_hourly(policy, lifetime, 2);
    // The previous retired key leaves 15 minutes into each day, long before the successor is
    // announced 12 hours in, so the cap never binds and keys rotate daily.
    assert!((729..=730).contains(&sim.rotations), "{}", sim.rotations);
}

#[test]
fn daily_rotation_with_day_long_tokens_waits_for_retired_keys() {
    let lifetime = Duration::DAY;
    let policy = RotationPolicy::for_lifetimes(Duration::DAY, lifetime).unwrap();
    let sim = run_hourly(policy, lifetime, 2);
    // Spans alternate between 1 and 1.5 days: a successor is announced only once the older of
    // two retired keys (2-day overlap) has left the JWKS.
    assert!((560..=600).contains(&sim.rotations), "{}", sim.rotations);
}

#[test]
fn yearly_rotation_for_five_years() {
    let lifetime = Duration::DAY;
    let policy = RotationPolicy::for_lifetimes(Duration::days(365), lifetime).unwrap();
    let sim = run_hourly(policy, lifetime, 5);
    assert_eq!(sim.rotations, 4);
}

#[test]
fn long_overlap_short_period_custom_policy() {
    let policy =
        RotationPolicy::new(Duration::days(7), Duration::days(3), Duration::days(10)).unwrap();
    run_hourly(policy, Duration::days(9), 3);
}

/// Irregular ticks (a busy worker, then outages of up to three days) and occasional forced
/// rotations: the safety invariants hold regardless, only the schedule slips.
#[test]
fn irregular_ticks_outages_and_forced_rotations() {
    for seed in 0..8 {
        let rng = SeededRandom::new(seed);
        let lifetime = Duration::seconds(3600);
        let period = Duration::days(1 + (rng.next_u128() % 30) as i64);
        let policy = RotationPolicy::for_lifetimes(period, lifetime).unwrap();
        let mut sim = Simulation::new(policy, lifetime);
        let mut now = start();
        let end = start() + Duration::days(2 * 365);
        while now < end {
            if rng.next_u128().is_multiple_of(500) && !sim.keys.is_empty() {
                sim.force_rotation(now);
            } else {
                sim.tick(now);
            }
            let gap_minutes = match rng.next_u128() % 100 {
                0 => 60 * 24 * 3,
                1..=4 => 60 * 7,
                _ => 1 + (rng.next_u128() % 120) as i64,
            };
            now += Duration::minutes(gap_minutes);
        }
        assert!(sim.rotations > 0, "seed {seed}: never rotated");
    }
}

//! The signing-key rotation policy, as pure functions of the key set and the time: no clock, no
//! store, no randomness. The async worker (and `svc-runtime keys rotate`) reads one tenant's
//! keys under the store's rotation lock, asks [`plan_rotation`] (or [`plan_forced_rotation`])
//! what to do, generates keys for the `Create*` steps, and applies the steps in order in one
//! transaction. [`apply_plan`] is the reference semantics of each step, on an in-memory set.
//!
//! The lifecycle of a key, per tenant and algorithm (RFC 7517 §5; the publish-before-sign and
//! keep-after-retire rules are the usual JWKS rotation practice, see research §7.4):
//!
//! ```text
//!   CreateNext ──► Next ──Promote──► Active ──Promote (successor) / Retire──► Retired ──Remove──► gone
//!   CreateActive ──────────────────► Active      (bootstrap or forced: nothing to pre-publish)
//! ```
//!
//! Guarantees of the scheduled cycle, checked hour by hour over years in `tests/rotation_cycle.rs`:
//! - after bootstrap there is exactly one Active key;
//! - a key is published as Next for at least `publish_lead` before it signs, so verifiers whose
//!   JWKS cache is younger than that already know it;
//! - a retired key stays published for at least `retire_overlap` after it last signed
//!   (CONTRACTS.md: the longest token lifetime + 1 day), then is removed;
//! - at most 3 keys are published per algorithm: a Next key is only created while at most one
//!   retired key remains, so with a long overlap and a short period rotation waits (the
//!   effective period becomes `max(rotation_period, retire_overlap + publish_lead)`);
//! - planning is deterministic and a fixpoint: applying a plan and planning again at the same
//!   instant yields nothing, so racing instances agree and the store's exactly-once checks
//!   (unique `next`/`active` per tenant and algorithm, optimistic transitions) suffice.

use crate::CryptoError;
use svc_domain::{KeyState, SigningAlg, SigningKeyRecord};
use time::{Duration, OffsetDateTime};

#[cfg(test)]
mod tests;

/// What the planner needs to know about one key: the store's columns minus the key material.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMeta {
    /// JWK `kid`.
    pub kid: String,
    /// Algorithm; keys of other algorithms are ignored by a plan for one algorithm.
    pub alg: SigningAlg,
    /// Rotation state.
    pub state: KeyState,
    /// When the key was created, which is when it was first published.
    pub created_at: OffsetDateTime,
    /// When it starts (Next) or started (Active, Retired) signing.
    pub activates_at: OffsetDateTime,
    /// When it stopped signing, once retired.
    pub retired_at: Option<OffsetDateTime>,
    /// When it may leave the JWKS, once retired.
    pub remove_after: Option<OffsetDateTime>,
}

impl From<&SigningKeyRecord> for KeyMeta {
    fn from(record: &SigningKeyRecord) -> Self {
        Self {
            kid: record.kid.clone(),
            alg: record.alg,
            state: record.state,
            created_at: record.created_at,
            activates_at: record.activates_at,
            retired_at: record.retired_at,
            remove_after: record.remove_after,
        }
    }
}

/// How often keys rotate and how long they overlap. Build it with [`RotationPolicy::new`] or
/// [`RotationPolicy::for_lifetimes`]; both refuse contradictory values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotationPolicy {
    rotation_period: Duration,
    publish_lead: Duration,
    retire_overlap: Duration,
}

impl RotationPolicy {
    /// The default rotation period (`jwt.key_rotation_days` = 30).
    pub const DEFAULT_ROTATION_PERIOD: Duration = Duration::days(30);
    /// The longest publish lead [`RotationPolicy::for_lifetimes`] picks: a day is far beyond
    /// any sane JWKS `Cache-Control` max-age (we serve minutes).
    pub const MAX_DEFAULT_PUBLISH_LEAD: Duration = Duration::DAY;
    /// The margin added to the longest token lifetime (CONTRACTS.md "signing-key overlap after
    /// rotation": longest token lifetime + 1 day). It also absorbs verifier clock skew and
    /// instances that keep signing with a cached key for a few minutes after it was retired.
    pub const RETIRE_MARGIN: Duration = Duration::DAY;
    /// The longest token lifetime with the default configuration (human access tokens, 900 s).
    pub const DEFAULT_LONGEST_TOKEN_LIFETIME: Duration = Duration::seconds(900);

    /// A policy from explicit values. `rotation_period` is how long a key signs before its
    /// successor takes over; `publish_lead` how long a successor is published before it signs
    /// (must exceed the JWKS cache max-age; must be shorter than the period, or every key
    /// would be due for replacement the moment it starts signing); `retire_overlap` how long a
    /// retired key stays published after it last signed.
    pub fn new(
        rotation_period: Duration,
        publish_lead: Duration,
        retire_overlap: Duration,
    ) -> Result<Self, CryptoError> {
        if !rotation_period.is_positive() {
            return Err(CryptoError::InvalidPolicy(
                "rotation period must be positive",
            ));
        }
        if !publish_lead.is_positive() || publish_lead >= rotation_period {
            return Err(CryptoError::InvalidPolicy(
                "publish lead must be positive and shorter than the rotation period",
            ));
        }
        if !retire_overlap.is_positive() {
            return Err(CryptoError::InvalidPolicy(
                "retire overlap must be positive",
            ));
        }
        Ok(Self {
            rotation_period,
            publish_lead,
            retire_overlap,
        })
    }

    /// The policy for `jwt.key_rotation_days` and the longest lifetime of any token the keys
    /// sign (access and ID tokens; refresh tokens are opaque): `publish_lead` =
    /// min(1 day, period / 2) and `retire_overlap` = longest lifetime + 1 day.
    pub fn for_lifetimes(
        rotation_period: Duration,
        longest_token_lifetime: Duration,
    ) -> Result<Self, CryptoError> {
        if longest_token_lifetime.is_negative() {
            return Err(CryptoError::InvalidPolicy(
                "token lifetime must not be negative",
            ));
        }
        Self::new(
            rotation_period,
            Self::MAX_DEFAULT_PUBLISH_LEAD.min(rotation_period / 2),
            longest_token_lifetime.saturating_add(Self::RETIRE_MARGIN),
        )
    }

    /// How long a key signs before its successor takes over (at least; see the module docs).
    pub fn rotation_period(&self) -> Duration {
        self.rotation_period
    }

    /// How long a successor is published before it signs.
    pub fn publish_lead(&self) -> Duration {
        self.publish_lead
    }

    /// How long a retired key stays published after it last signed.
    pub fn retire_overlap(&self) -> Duration {
        self.retire_overlap
    }
}

impl Default for RotationPolicy {
    /// 30-day rotation, 1-day publish lead, 1 day + 900 s overlap.
    fn default() -> Self {
        Self {
            rotation_period: Self::DEFAULT_ROTATION_PERIOD,
            publish_lead: Self::MAX_DEFAULT_PUBLISH_LEAD,
            retire_overlap: Self::DEFAULT_LONGEST_TOKEN_LIFETIME
                .saturating_add(Self::RETIRE_MARGIN),
        }
    }
}

/// One change to a tenant's key set for one algorithm. Every step happens "at `now`", the
/// instant the plan was made for; see [`apply_plan`] for the exact effect on the stored fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RotationStep {
    /// Generate a key and make it Active at once (`created_at` = `activates_at` = now). Only
    /// when nothing signs (bootstrap) or on a forced rotation: there is nothing to pre-publish.
    CreateActive,
    /// Generate a key and publish it as Next, to start signing at `activates_at`.
    CreateNext {
        /// When it is due to sign; always at least `publish_lead` after now.
        activates_at: OffsetDateTime,
    },
    /// Retire `retire_kid` (if any) with `remove_after`, then make `next_kid` Active with
    /// `activates_at` = now (retire first: the store allows one Active key at a time).
    Promote {
        /// The Next key that starts signing.
        next_kid: String,
        /// The Active key it replaces; `None` only when repairing a set without one.
        retire_kid: Option<String>,
        /// When the retired key may leave the JWKS (now + `retire_overlap`).
        remove_after: OffsetDateTime,
    },
    /// Retire a key without a successor taking over in the same step: the old key of a forced
    /// rotation, a surplus Active key, or a Retired key missing its `remove_after`.
    /// Sets `retired_at` = now unless already set.
    Retire {
        /// The key to retire.
        kid: String,
        /// When it may leave the JWKS (now + `retire_overlap`).
        remove_after: OffsetDateTime,
    },
    /// Delete a key: a Retired key past `remove_after`, or a Next key being discarded (it never
    /// signed, so nothing depends on it).
    Remove {
        /// The key to delete.
        kid: String,
    },
}

/// The keys of one algorithm, sorted into what a plan needs.
struct Census<'a> {
    /// Removals and repairs of retired keys, in kid order.
    housekeeping: Vec<RotationStep>,
    /// Retired keys that stay published after `housekeeping`.
    retired_left: usize,
    /// Active keys, the one that started signing last first.
    actives: Vec<&'a KeyMeta>,
    /// Next keys, the one due first first.
    nexts: Vec<&'a KeyMeta>,
}

/// When a Next key may start signing: its planned time, but never before it has been published
/// for `publish_lead` (guards against a policy whose lead grew after the key was planned).
fn promotable_at(next: &KeyMeta, policy: &RotationPolicy) -> OffsetDateTime {
    next.activates_at
        .max(next.created_at.saturating_add(policy.publish_lead))
}

fn census<'a>(
    alg: SigningAlg,
    keys: &'a [KeyMeta],
    now: OffsetDateTime,
    policy: &RotationPolicy,
) -> Census<'a> {
    let mut mine: Vec<&KeyMeta> = keys.iter().filter(|key| key.alg == alg).collect();
    // Input order must not matter: racing instances may read the rows in different orders.
    mine.sort_by(|a, b| (a.created_at, &a.kid).cmp(&(b.created_at, &b.kid)));
    let mut census = Census {
        housekeeping: Vec::new(),
        retired_left: 0,
        actives: Vec::new(),
        nexts: Vec::new(),
    };
    for key in mine {
        match key.state {
            KeyState::Active => census.actives.push(key),
            KeyState::Next => census.nexts.push(key),
            KeyState::Retired => {
                let remove_after = key.remove_after.or_else(|| {
                    key.retired_at
                        .map(|at| at.saturating_add(policy.retire_overlap))
                });
                match remove_after {
                    Some(at) if now >= at => census.housekeeping.push(RotationStep::Remove {
                        kid: key.kid.clone(),
                    }),
                    Some(_) => census.retired_left += 1,
                    // Unknown last signing moment: count it as retiring now, the safe side.
                    None => {
                        census.housekeeping.push(RotationStep::Retire {
                            kid: key.kid.clone(),
                            remove_after: now.saturating_add(policy.retire_overlap),
                        });
                        census.retired_left += 1;
                    }
                }
            }
        }
    }
    census.actives.sort_by(|a, b| {
        (b.activates_at, b.created_at, &b.kid).cmp(&(a.activates_at, a.created_at, &a.kid))
    });
    census.nexts.sort_by(|a, b| {
        (promotable_at(a, policy), a.created_at, &a.kid).cmp(&(
            promotable_at(b, policy),
            b.created_at,
            &b.kid,
        ))
    });
    census
}

/// What to do now for one tenant and algorithm under the scheduled policy. `keys` may include
/// other algorithms' keys; they are ignored. An empty result means nothing is due.
///
/// Steps come in the order to apply them (removals and retirements before promotions and
/// creations) and should be applied together, in one transaction. Besides the scheduled
/// rotation the plan repairs sets a crash or a bug could leave behind: surplus Active keys are
/// retired (the one that started signing last stays), surplus Next keys are removed (the one due
/// first stays), and a Next key with no Active key is promoted at once.
pub fn plan_rotation(
    alg: SigningAlg,
    keys: &[KeyMeta],
    now: OffsetDateTime,
    policy: &RotationPolicy,
) -> Vec<RotationStep> {
    let Census {
        housekeeping: mut steps,
        mut retired_left,
        actives,
        nexts,
    } = census(alg, keys, now, policy);
    let retire_until = now.saturating_add(policy.retire_overlap);

    let mut nexts = nexts.into_iter();
    let next = nexts.next();
    steps.extend(nexts.map(|surplus| RotationStep::Remove {
        kid: surplus.kid.clone(),
    }));
    let mut actives = actives.into_iter();
    let active = actives.next();
    for surplus in actives {
        steps.push(RotationStep::Retire {
            kid: surplus.kid.clone(),
            remove_after: retire_until,
        });
        retired_left += 1;
    }

    match (active, next) {
        (None, None) => steps.push(RotationStep::CreateActive),
        // Nothing signs, but a published successor exists: it is the best key to sign with.
        (None, Some(next)) => steps.push(RotationStep::Promote {
            next_kid: next.kid.clone(),
            retire_kid: None,
            remove_after: retire_until,
        }),
        (Some(active), Some(next)) => {
            if now >= promotable_at(next, policy) {
                steps.push(RotationStep::Promote {
                    next_kid: next.kid.clone(),
                    retire_kid: Some(active.kid.clone()),
                    remove_after: retire_until,
                });
            }
        }
        (Some(active), None) => {
            let due = active
                .activates_at
                .saturating_add(policy.rotation_period - policy.publish_lead);
            // At most one retired key may remain, so that after the next promotion at most
            // two retired + the active key are published.
            if now >= due && retired_left <= 1 {
                let activates_at = active
                    .activates_at
                    .saturating_add(policy.rotation_period)
                    .max(now.saturating_add(policy.publish_lead));
                steps.push(RotationStep::CreateNext { activates_at });
            }
        }
    }
    steps
}

/// `svc-runtime keys rotate`: replace the signing key now, whatever the schedule says.
///
/// The current Active key is retired (still published for `retire_overlap`, so its tokens stay
/// verifiable) and a new key signs immediately. A pending Next key is discarded rather than kept
/// or promoted: a forced rotation usually means the stored keys are suspect, the Next key was
/// sealed and stored the same way as the Active one, and keeping it would trigger a second
/// rotation shortly after this one. Verifiers that cached the JWKS will not know the new key
/// until they refetch (most refetch on an unknown `kid`); that is the price of "now".
///
/// Unlike [`plan_rotation`] this is not a fixpoint (calling it again rotates again), and
/// repeated forced rotations can leave more than 3 keys published until the retired ones expire.
/// Callers guard against double submission, e.g. by checking the Active `kid` they saw.
pub fn plan_forced_rotation(
    alg: SigningAlg,
    keys: &[KeyMeta],
    now: OffsetDateTime,
    policy: &RotationPolicy,
) -> Vec<RotationStep> {
    let Census {
        housekeeping,
        actives,
        nexts,
        ..
    } = census(alg, keys, now, policy);
    let retire_until = now.saturating_add(policy.retire_overlap);
    let mut steps = housekeeping;
    steps.extend(nexts.into_iter().map(|next| RotationStep::Remove {
        kid: next.kid.clone(),
    }));
    steps.extend(actives.into_iter().map(|active| RotationStep::Retire {
        kid: active.kid.clone(),
        remove_after: retire_until,
    }));
    steps.push(RotationStep::CreateActive);
    steps
}

/// Applies a plan made for `alg` at `now` to an in-memory key set: the reference semantics of
/// each [`RotationStep`] that a store implements with inserts, transitions and deletes.
/// `mint_kid` names each key a `Create*` step generates (in production: the new key's kid).
///
/// Fails with [`CryptoError::UnknownKey`] when a step names a key not in the expected state
/// (someone else applied a plan first); steps before it stay applied, so use a copy if the
/// set must stay intact.
pub fn apply_plan(
    keys: &mut Vec<KeyMeta>,
    alg: SigningAlg,
    steps: &[RotationStep],
    now: OffsetDateTime,
    mut mint_kid: impl FnMut() -> String,
) -> Result<(), CryptoError> {
    fn find<'k>(
        keys: &'k mut [KeyMeta],
        kid: &str,
        states: &[KeyState],
    ) -> Result<&'k mut KeyMeta, CryptoError> {
        keys.iter_mut()
            .find(|key| key.kid == kid && states.contains(&key.state))
            .ok_or_else(|| CryptoError::UnknownKey(kid.to_owned()))
    }
    let retire = |key: &mut KeyMeta, remove_after: OffsetDateTime| {
        key.state = KeyState::Retired;
        key.retired_at = key.retired_at.or(Some(now));
        key.remove_after = Some(remove_after);
    };
    for step in steps {
        match step {
            RotationStep::CreateActive | RotationStep::CreateNext { .. } => {
                let (state, activates_at) = match step {
                    RotationStep::CreateNext { activates_at } => (KeyState::Next, *activates_at),
                    _ => (KeyState::Active, now),
                };
                keys.push(KeyMeta {
                    kid: mint_kid(),
                    alg,
                    state,
                    created_at: now,
                    activates_at,
                    retired_at: None,
                    remove_after: None,
                });
            }
            RotationStep::Promote {
                next_kid,
                retire_kid,
                remove_after,
            } => {
                if let Some(old) = retire_kid {
                    retire(find(keys, old, &[KeyState::Active])?, *remove_after);
                }
                let next = find(keys, next_kid, &[KeyState::Next])?;
                next.state = KeyState::Active;
                next.activates_at = now;
            }
            RotationStep::Retire { kid, remove_after } => retire(
                find(keys, kid, &[KeyState::Active, KeyState::Retired])?,
                *remove_after,
            ),
            RotationStep::Remove { kid } => {
                find(keys, kid, &[KeyState::Next, KeyState::Retired])?;
                keys.retain(|key| key.kid != *kid);
            }
        }
    }
    Ok(())
}

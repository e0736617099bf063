//! The users of `signin-totp`: their TOTP keys and the next time step each may still use.
//!
//! svc accepts a TOTP code (RFC 6238: SHA-1, 6 digits, 30 s steps) for the steps now-1, now
//! and now+1, and once per factor: the step must be later than the last one it accepted
//! (RFC 6238 §5.2; a replay gets 401). So one user signs in at most once per step, and a code
//! for an older step is refused after a newer one went through. The pool never replays:
//! - each user has a *next step*; an iteration takes a user that no other iteration holds and
//!   whose next step is at most now+1, uses step max(next, now) and moves next past it;
//! - a user is held by one iteration at a time, so its steps reach svc in increasing order;
//! - the least recently advanced users go first, which spreads the load over every user;
//! - with no user available the iteration waits (outside its timing) for a user to be let go
//!   or for the next step, and the wait is counted (`TOTP … waits=`), never failed.
//!
//! Steps now-1 are not used: a code for the previous step stops working at the next step
//! boundary, which a request in flight may cross. A step is reserved when the iteration starts
//! (before the password), so it must reach svc within 30 s: the step is now or now+1 when it is
//! reserved and svc still accepts it as now-1.
//!
//! Enrolment happens once per user, and a run's spent steps stay spent for the next one, so
//! every driver run against one server (probe, warm-up, load runs) shares the pool through a
//! state file (`--totp-state`: `user<TAB>key<TAB>next step` lines).

use anyhow::{Context, anyhow};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;
use totp_rs::{Builder, Secret, Totp};

/// RFC 6238's time step, svc's too.
const STEP_SECS: u64 = 30;

/// Time since the Unix epoch (also the `iat` of DPoP proofs).
#[allow(clippy::disallowed_methods)] // an authenticator app (a DPoP client) reads the wall clock, like svc does
pub(crate) fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// The current time step.
pub(crate) fn current_step() -> u64 {
    unix_now().as_secs() / STEP_SECS
}

/// How long until the next time step starts (a few ms after it).
fn until_next_step() -> Duration {
    let step = Duration::from_secs(STEP_SECS);
    let into = Duration::from_millis(
        u64::try_from(unix_now().as_millis() % step.as_millis()).unwrap_or(0),
    );
    step.saturating_sub(into) + Duration::from_millis(5)
}

/// One authenticator: the key the setup page showed.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    base32: String,
    totp: Totp,
}

impl Key {
    /// The key as the setup page shows it (base32 in groups of four).
    pub(crate) fn parse(shown: &str) -> anyhow::Result<Self> {
        let base32: String = shown.chars().filter(|c| !c.is_whitespace()).collect();
        let secret = Secret::try_from_base32(&base32).map_err(|e| anyhow!("key {base32}: {e}"))?;
        Ok(Self {
            totp: Builder::new().with_secret(secret).build_noncompliant(),
            base32,
        })
    }

    /// The code of time step `step`.
    pub(crate) fn code(&self, step: u64) -> String {
        self.totp.generate(step * STEP_SECS).to_string()
    }
}

#[derive(Debug)]
struct User {
    key: Key,
    /// The first step this user may still use.
    next: u64,
    /// An iteration holds it.
    busy: bool,
}

/// Every enrolled user of one server, by user number (1-based, as in `--email`).
#[derive(Debug)]
pub(crate) struct Pool {
    users: Mutex<BTreeMap<usize, User>>,
    freed: Notify,
    state: Option<PathBuf>,
    /// Iterations that had to wait for a user, and for how long in total.
    waits: AtomicU64,
    waited_us: AtomicU64,
}

/// One iteration's user and step; lets the user go when dropped.
#[derive(Debug)]
pub(crate) struct Lease {
    pool: Arc<Pool>,
    pub(crate) user: usize,
    pub(crate) step: u64,
    key: Key,
}

impl Lease {
    /// The code of the reserved step.
    pub(crate) fn code(&self) -> String {
        self.key.code(self.step)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(user) = self.pool.lock().get_mut(&self.user) {
            user.busy = false;
        }
        self.pool.freed.notify_waiters();
    }
}

impl Pool {
    /// The pool saved in `state` (empty when there is no file yet or no `state`).
    pub(crate) fn load(state: Option<&Path>) -> anyhow::Result<Self> {
        let mut users = BTreeMap::new();
        if let Some(path) = state
            && path.exists()
        {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            for (n, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let bad = || {
                    anyhow!(
                        "{}:{}: expected user<TAB>key<TAB>step",
                        path.display(),
                        n + 1
                    )
                };
                let mut fields = line.split('\t');
                let (Some(user), Some(key), Some(next), None) =
                    (fields.next(), fields.next(), fields.next(), fields.next())
                else {
                    return Err(bad());
                };
                users.insert(
                    user.parse().map_err(|_| bad())?,
                    User {
                        key: Key::parse(key)?,
                        next: next.parse().map_err(|_| bad())?,
                        busy: false,
                    },
                );
            }
        }
        Ok(Self {
            users: Mutex::new(users),
            freed: Notify::new(),
            state: state.map(Path::to_path_buf),
            waits: AtomicU64::new(0),
            waited_us: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<usize, User>> {
        self.users
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Users among 1..=`count` that have no key yet.
    pub(crate) fn missing(&self, count: usize) -> Vec<usize> {
        let users = self.lock();
        (1..=count).filter(|u| !users.contains_key(u)).collect()
    }

    /// Records a user just enrolled with a code of step `used`.
    pub(crate) fn enrolled(&self, user: usize, key: Key, used: u64) {
        self.lock().insert(
            user,
            User {
                key,
                next: used + 1,
                busy: false,
            },
        );
    }

    /// Writes the pool to the state file, if any (through a temporary file and a rename).
    pub(crate) fn save(&self) -> anyhow::Result<()> {
        let Some(path) = &self.state else {
            return Ok(());
        };
        let mut text = String::new();
        for (user, u) in self.lock().iter() {
            let _ = writeln!(text, "{user}\t{}\t{}", u.key.base32, u.next);
        }
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        std::fs::write(&tmp, text).with_context(|| format!("writing {}", path.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
    }

    /// A free user among 1..=`limit` with a usable step at step `now`, reserved.
    fn try_take(self: &Arc<Self>, limit: usize, now: u64) -> Option<Lease> {
        let mut users = self.lock();
        let (&user, chosen) = users
            .range_mut(1..=limit)
            .filter(|(_, u)| !u.busy && u.next <= now + 1)
            .min_by_key(|(_, u)| u.next.max(now))?;
        let step = chosen.next.max(now);
        chosen.next = step + 1;
        chosen.busy = true;
        Some(Lease {
            pool: self.clone(),
            user,
            step,
            key: chosen.key.clone(),
        })
    }

    /// A user among 1..=`limit` and its step, waiting for one if need be; `None` when none is
    /// available before `deadline`.
    pub(crate) async fn take(self: &Arc<Self>, limit: usize, deadline: Instant) -> Option<Lease> {
        let mut waited_since = None;
        let lease = loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(lease) = self.try_take(limit, current_step()) {
                break Some(lease);
            }
            let now = Instant::now();
            if now >= deadline {
                break None;
            }
            waited_since.get_or_insert(now);
            let wake = deadline.min(now + until_next_step());
            tokio::select! {
                () = &mut freed => {}
                () = tokio::time::sleep_until(tokio::time::Instant::from_std(wake)) => {}
            }
        };
        if let Some(since) = waited_since {
            self.waits.fetch_add(1, Ordering::Relaxed);
            self.waited_us.fetch_add(
                u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX),
                Ordering::Relaxed,
            );
        }
        lease
    }

    /// `TOTP users=… waits=… waited_ms=…`: how often iterations had to wait for a user.
    pub(crate) fn summary(&self, limit: usize) -> String {
        format!(
            "TOTP users={} waits={} waited_ms={}",
            self.lock().range(1..=limit).count(),
            self.waits.load(Ordering::Relaxed),
            self.waited_us.load(Ordering::Relaxed) / 1000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 60_000_000;

    /// `users` users enrolled with a code of step `used`.
    fn pool(users: usize, used: u64) -> Arc<Pool> {
        let pool = Pool::load(None).unwrap();
        for user in 1..=users {
            pool.enrolled(user, Key::parse("JBSW Y3DP EHPK 3PXP").unwrap(), used);
        }
        Arc::new(pool)
    }

    #[test]
    fn rfc6238_sha1_vector() {
        // RFC 6238 appendix B, T = 59 s, truncated to 6 digits; the key is "12345678901234567890".
        let key = Key::parse("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").unwrap();
        assert_eq!(key.code(59 / STEP_SECS), "287082");
    }

    #[test]
    fn a_user_spends_now_then_now_plus_one_one_iteration_at_a_time() {
        let pool = pool(1, NOW - 10);
        let first = pool.try_take(1, NOW).unwrap();
        assert_eq!(first.step, NOW, "an old next step starts at now");
        assert!(pool.try_take(1, NOW).is_none(), "held by an iteration");
        drop(first);
        assert_eq!(pool.try_take(1, NOW).unwrap().step, NOW + 1);
        assert!(
            pool.try_take(1, NOW).is_none(),
            "nothing left before now + 2"
        );
        // One step later, one more: a user signs in once per step.
        assert_eq!(pool.try_take(1, NOW + 1).unwrap().step, NOW + 2);
        assert!(pool.try_take(1, NOW + 1).is_none());
    }

    #[test]
    fn the_least_advanced_user_goes_first_and_users_beyond_the_limit_are_left_alone() {
        let pool = pool(3, NOW - 1);
        let a = pool.try_take(2, NOW).unwrap();
        assert_eq!(a.user, 1);
        drop(a);
        assert_eq!(pool.try_take(2, NOW).unwrap().user, 2);
        assert_eq!(pool.try_take(2, NOW).unwrap().user, 1);
        assert_eq!(pool.try_take(2, NOW).unwrap().user, 2);
        assert!(
            pool.try_take(2, NOW).is_none(),
            "user 3 is beyond the limit"
        );
    }

    #[test]
    fn the_state_file_keeps_keys_and_spent_steps() {
        let path = std::env::temp_dir().join(format!("svc-bench-totp-{}.tsv", std::process::id()));
        let pool = Arc::new(Pool::load(Some(&path)).unwrap());
        pool.enrolled(2, Key::parse("JBSWY3DPEHPK3PXP").unwrap(), NOW);
        pool.save().unwrap();
        let again = Arc::new(Pool::load(Some(&path)).unwrap());
        std::fs::remove_file(&path).unwrap();
        assert_eq!(again.missing(3), vec![1, 3]);
        let lease = again.try_take(3, NOW).unwrap();
        assert_eq!((lease.user, lease.step), (2, NOW + 1));
        assert_eq!(
            lease.code(),
            Key::parse("JBSWY3DPEHPK3PXP").unwrap().code(NOW + 1)
        );
    }
}

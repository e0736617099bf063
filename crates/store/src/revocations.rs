//! The revocation set: which access tokens of a tenant are revoked, held in memory so the
//! resource servers svc runs itself (introspection, UserInfo, the management API) answer
//! without a database read on every request (issue 21 item 3).
//!
//! The set is a copy of `revoked_access_tokens`, and a copy may only be trusted while it is
//! provably current. It is, because:
//! - a backend that offers a set (PostgreSQL) announces every revocation on its change feed in
//!   the statement that writes it, so the announcement commits with the row and reaches every
//!   listening process; the process that commits it adds it at once ([`RevocationSet::revoked`]);
//! - the set is trusted only from the moment its process listens ([`RevocationSet::listening`],
//!   which also starts it over empty) and only as long as the process keeps hearing its own
//!   heartbeats on the feed ([`RevocationSet::heard_through`]): a heartbeat heard proves every
//!   announcement committed before it was heard too, so a silent connection (a network
//!   partition no error reports) stops the set being trusted within [`FRESH`];
//! - whatever is not trusted, loading or too large is asked of the database, as before.
//!
//! A tenant's revocations are loaded on its first check after the set starts over; revocations
//! announced while that load runs are kept and merged, and a load begun before the set started
//! over is discarded.

use crate::StoreError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use svc_domain::TenantId;
use time::OffsetDateTime;

/// How long a heartbeat heard keeps the set trusted (the bound of issue 21: a revocation is
/// refused everywhere within a second, even when its announcement is lost without an error).
pub const FRESH: Duration = Duration::from_secs(1);
/// Revocations remembered for one tenant; a tenant with more is asked of the database.
pub(crate) const TENANT_CAPACITY: usize = 10_000;
/// Revocations remembered for every tenant together.
pub(crate) const TOTAL_CAPACITY: usize = 1_000_000;
/// Seconds between two sheddings of a tenant's expired revocations (each is a pass over them).
const SHED_EVERY: i64 = 60;

/// What the set knows about one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The set is current for the tenant: revoked or not.
    Known(bool),
    /// Ask the database, then hand the tenant's revocations to [`RevocationSet::loaded`].
    Load(Loading),
    /// Ask the database (not trusted now, the tenant is loading, or it has too many).
    Ask,
}

/// A load of one tenant's revocations, valid only in the set's generation that began it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loading {
    generation: u64,
}

/// The access tokens revoked per tenant, in memory; see the module documentation.
#[derive(Debug)]
pub struct RevocationSet {
    state: Mutex<State>,
    tenant_capacity: usize,
    total_capacity: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Bumped whenever the set starts over, so a load begun before is discarded.
    generation: u64,
    /// Until when the set may be trusted; `None` while its process does not listen.
    trusted_until: Option<Instant>,
    tenants: HashMap<TenantId, Tenant>,
    /// Revocations held over every tenant.
    total: usize,
}

#[derive(Debug)]
enum Tenant {
    /// Being read from the database; holds what was announced meanwhile.
    Loading(HashMap<String, i64>),
    /// Current.
    Loaded(Held),
    /// More than the set holds: asked of the database until the set starts over.
    TooMany,
}

/// A current tenant's revocations.
#[derive(Debug)]
struct Held {
    /// Every revoked `jti` with its token's expiry (Unix seconds).
    jtis: HashMap<String, i64>,
    /// When expired ones were last shed (Unix seconds).
    shed_at: i64,
}

impl Default for RevocationSet {
    fn default() -> Self {
        Self::with_capacity(TENANT_CAPACITY, TOTAL_CAPACITY)
    }
}

impl RevocationSet {
    /// An empty set, not trusted until its process listens.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// An empty set holding at most `tenant` revocations per tenant and `total` in all.
    pub fn with_capacity(tenant: usize, total: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            tenant_capacity: tenant,
            total_capacity: total,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The process listens (again) from now on: every revocation committed from here on
    /// reaches it, so the set starts over empty and is trusted until `fresh_until`.
    pub fn listening(&self, fresh_until: Instant) {
        let mut state = self.state();
        state.start_over();
        state.trusted_until = Some(fresh_until);
    }

    /// A heartbeat sent at `sent` was heard back: everything committed before it was heard
    /// too, so the set stays trusted until `sent` + [`FRESH`]. Ignored while not listening.
    pub fn heard_through(&self, sent: Instant) {
        let mut state = self.state();
        if let Some(until) = state.trusted_until.as_mut() {
            *until = (*until).max(sent + FRESH);
        }
    }

    /// The process stopped listening: nothing held may be trusted.
    pub fn unheard(&self) {
        let mut state = self.state();
        state.start_over();
        state.trusted_until = None;
    }

    /// Whether the set may answer now.
    pub fn trusted(&self) -> bool {
        self.state().is_trusted(Instant::now())
    }

    /// The access token `jti` of `tenant`, expiring at `exp` (Unix seconds), was revoked and
    /// the revocation committed.
    pub fn revoked(&self, tenant: &TenantId, jti: &str, exp: i64) {
        let mut state = self.state();
        let state = &mut *state;
        let full = state.total >= self.total_capacity;
        let Some(entry) = state.tenants.get_mut(tenant) else {
            return; // read in full when the tenant is first checked
        };
        let (Tenant::Loading(jtis) | Tenant::Loaded(Held { jtis, .. })) = entry else {
            return;
        };
        if let Some(known) = jtis.get_mut(jti) {
            *known = (*known).max(exp);
            return;
        }
        if full || jtis.len() >= self.tenant_capacity {
            state.total -= jtis.len();
            *entry = Tenant::TooMany;
            return;
        }
        jtis.insert(jti.to_owned(), exp);
        state.total += 1;
    }

    /// What the set knows about `jti` of `tenant` at `now` (Unix seconds).
    pub fn check(&self, tenant: &TenantId, jti: &str, now: i64) -> Check {
        let mut state = self.state();
        if !state.is_trusted(Instant::now()) {
            return Check::Ask;
        }
        let state = &mut *state;
        match state.tenants.get_mut(tenant) {
            Some(Tenant::Loaded(held)) => {
                // Expired revocations only take room: once the tenant fills up, shed them (at
                // most every SHED_EVERY, so a tenant that stays full costs no pass per check).
                if held.jtis.len() >= self.tenant_capacity / 2
                    && now.saturating_sub(held.shed_at) >= SHED_EVERY
                {
                    let before = held.jtis.len();
                    held.jtis.retain(|_, exp| *exp > now);
                    held.shed_at = now;
                    state.total -= before - held.jtis.len();
                }
                Check::Known(held.jtis.contains_key(jti))
            }
            Some(Tenant::Loading(_) | Tenant::TooMany) => Check::Ask,
            None => {
                state
                    .tenants
                    .insert(tenant.clone(), Tenant::Loading(HashMap::new()));
                Check::Load(Loading {
                    generation: state.generation,
                })
            }
        }
    }

    /// The load `loading` of `tenant` read `rows` (each `jti` with its expiry): the tenant is
    /// current from here on, unless the set started over meanwhile. `rows` longer than the
    /// tenant's capacity means "more than fit".
    pub fn loaded(&self, loading: Loading, tenant: &TenantId, rows: Vec<(String, i64)>) {
        let mut state = self.state();
        let state = &mut *state;
        if state.generation != loading.generation {
            return;
        }
        let Some(entry) = state.tenants.get_mut(tenant) else {
            return;
        };
        let Tenant::Loading(early) = entry else {
            return;
        };
        let mut jtis = std::mem::take(early);
        state.total -= jtis.len();
        for (jti, exp) in rows {
            let known = jtis.entry(jti).or_insert(exp);
            *known = (*known).max(exp);
        }
        if jtis.len() > self.tenant_capacity || state.total + jtis.len() > self.total_capacity {
            *entry = Tenant::TooMany;
        } else {
            state.total += jtis.len();
            *entry = Tenant::Loaded(Held {
                jtis,
                shed_at: i64::MIN,
            });
        }
    }

    /// The load `loading` of `tenant` failed or was abandoned: the next check loads again.
    pub fn load_failed(&self, loading: Loading, tenant: &TenantId) {
        let mut state = self.state();
        if state.generation != loading.generation {
            return;
        }
        if let Some(Tenant::Loading(early)) = state.tenants.get(tenant) {
            let held = early.len();
            state.tenants.remove(tenant);
            state.total -= held;
        }
    }

    /// How many tenants are current in memory, and how many revocations they hold.
    pub fn size(&self) -> (usize, usize) {
        let state = self.state();
        let loaded = state
            .tenants
            .values()
            .filter(|t| matches!(t, Tenant::Loaded(_)))
            .count();
        (loaded, state.total)
    }
}

impl State {
    fn start_over(&mut self) {
        self.generation += 1;
        self.tenants.clear();
        self.total = 0;
    }

    fn is_trusted(&self, now: Instant) -> bool {
        self.trusted_until.is_some_and(|until| now < until)
    }
}

/// Whether the access token `jti` of `tenant` is revoked at `now`: from `set` when it knows,
/// else from the database (`read`: every revocation of the tenant still in force at `now`, at
/// most `limit`). A load abandoned half-way (the request dropped) is undone by a guard.
pub(crate) async fn check_through<F, Fut, A, AFut>(
    set: &RevocationSet,
    tenant: &TenantId,
    jti: &str,
    now: OffsetDateTime,
    load: F,
    ask: A,
) -> Result<bool, StoreError>
where
    F: FnOnce(usize) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<(String, i64)>, StoreError>>,
    A: FnOnce() -> AFut,
    AFut: std::future::Future<Output = Result<bool, StoreError>>,
{
    match set.check(tenant, jti, now.unix_timestamp()) {
        Check::Known(revoked) => Ok(revoked),
        Check::Ask => ask().await,
        Check::Load(loading) => {
            let guard = LoadGuard {
                set,
                tenant,
                loading: Some(loading),
            };
            // One more than fits, so "too many" is seen.
            let rows = load(set.tenant_capacity + 1).await?;
            let revoked = rows.iter().any(|(j, _)| j == jti);
            guard.done(rows);
            Ok(revoked)
        }
    }
}

/// Undoes a tenant's load unless it completed.
struct LoadGuard<'a> {
    set: &'a RevocationSet,
    tenant: &'a TenantId,
    loading: Option<Loading>,
}

impl LoadGuard<'_> {
    fn done(mut self, rows: Vec<(String, i64)>) {
        if let Some(loading) = self.loading.take() {
            self.set.loaded(loading, self.tenant, rows);
        }
    }
}

impl Drop for LoadGuard<'_> {
    fn drop(&mut self) {
        if let Some(loading) = self.loading.take() {
            self.set.load_failed(loading, self.tenant);
        }
    }
}

/// The change-feed message announcing that `jti` of `tenant`, expiring at `exp` (Unix
/// seconds), was revoked: `- revoked {tenant} {exp} {jti}` (`-`: sent by the database, not by
/// a process; the `jti` last, as whatever text it is).
pub fn revocation_message(tenant: &TenantId, jti: &str, exp: i64) -> String {
    format!("- revoked {tenant} {exp} {jti}")
}

/// The tenant, `jti` and expiry of a [`revocation_message`]; `None` for any other text.
pub fn parse_revocation_message(message: &str) -> Option<(TenantId, String, i64)> {
    let rest = message.strip_prefix("- revoked ")?;
    let mut parts = rest.splitn(3, ' ');
    let tenant = TenantId::parse(parts.next()?).ok()?;
    let exp = parts.next()?.parse().ok()?;
    let jti = parts.next().filter(|j| !j.is_empty())?;
    Some((tenant, jti.to_owned(), exp))
}

#[cfg(test)]
mod tests;

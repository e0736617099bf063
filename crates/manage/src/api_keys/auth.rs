//! Authentication with an API key: the presented `svck_…` value is shape-checked, hashed under
//! the deployment key bound to the addressed tenant, looked up by that hash within the tenant,
//! compared again in constant time, and must be live (not revoked, not expired). Unknown,
//! revoked, expired and another tenant's keys all end in the same `None`, after the same one
//! lookup, so neither the answer nor its timing tells them apart.
//!
//! A short positive cache ([`CACHE_TTL`], keyed by the keyed hash) spares the database on
//! repeated calls: only keys that authenticated are kept, and the expiry is checked against the
//! clock on every hit. Revoking or rotating a key through this process forgets it at once; on
//! other instances a revoked key is honoured for at most [`CACHE_TTL`] more (the documented
//! cross-instance bound).
//!
//! `last_used_at` is written at most once a minute per key and process ([`TOUCH_EVERY`]), not
//! on every request: a read with a key must cost about what a read with a JWT costs.

use super::ApiKeys;
use crate::{ManageContext, ManageError};
use std::collections::HashMap;
use std::sync::Mutex;
use svc_domain::{ApiKey, ApiKeyId, KeyReach, SecretHash, TenantId, looks_like_api_key};
use time::{Duration, OffsetDateTime};

/// How long an authenticated key is served from memory before the store is read again: the
/// most another instance's revocation can lag here.
pub const CACHE_TTL: Duration = Duration::seconds(5);
/// How often `last_used_at` is written for one key, at most.
pub const TOUCH_EVERY: Duration = Duration::minutes(1);
/// Most keys the cache holds; beyond, it starts over (a burst of distinct keys costs lookups,
/// never memory).
const CACHE_CAPACITY: usize = 10_000;

struct Cached {
    key: ApiKey,
    read_at: OffsetDateTime,
}

/// Keys that authenticated recently, by tenant and keyed hash.
#[derive(Default)]
pub(crate) struct KeyCache {
    entries: Mutex<HashMap<(TenantId, SecretHash), Cached>>,
}

impl KeyCache {
    fn get(&self, tenant: &TenantId, hash: &SecretHash, now: OffsetDateTime) -> Option<ApiKey> {
        let entries = self.entries.lock().ok()?;
        entries
            .get(&(tenant.clone(), hash.clone()))
            .filter(|c| now - c.read_at < CACHE_TTL && c.read_at <= now)
            .map(|c| c.key.clone())
    }

    fn put(&self, key: &ApiKey, now: OffsetDateTime) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_CAPACITY {
                entries.clear();
            }
            entries.insert(
                (key.tenant_id.clone(), key.hash.clone()),
                Cached {
                    key: key.clone(),
                    read_at: now,
                },
            );
        }
    }

    /// Forgets the key `id` of `tenant` (revoked or rotated here).
    pub(crate) fn forget(&self, tenant: &TenantId, id: &ApiKeyId) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(t, _), c| !(t == tenant && &c.key.id == id));
        }
    }

    pub(crate) fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }

    /// Notes a write of `last_used_at` in the cached copy, so the next hit does not write again.
    fn touched(&self, key: &ApiKey, at: OffsetDateTime) {
        if let Ok(mut entries) = self.entries.lock()
            && let Some(cached) = entries.get_mut(&(key.tenant_id.clone(), key.hash.clone()))
        {
            cached.key.last_used_at = Some(at);
        }
    }
}

impl ApiKeys {
    /// The live management key of `tenant` that `presented` is, if any (see the module
    /// documentation); a key for another API is `None` like an unknown one.
    /// Records the use when `last_used_at` is a minute old or more.
    ///
    /// Errors: [`ManageError::Unavailable`] when the store cannot be read.
    pub async fn authenticate(
        &self,
        ctx: &ManageContext,
        tenant: &TenantId,
        presented: &str,
    ) -> Result<Option<ApiKey>, ManageError> {
        if !looks_like_api_key(presented) {
            return Ok(None);
        }
        let now = ctx.now();
        let hash = self.hasher.hash(tenant, presented);
        let (key, read) = match self.cache.get(tenant, &hash, now) {
            Some(key) => (Some(key), false),
            None => {
                let mut tx = ctx.store.read_once().await?;
                let found = tx.api_key_by_hash(tenant, &hash).await?;
                tx.finish().await?;
                let found = found.filter(|k| {
                    k.tenant_id == *tenant && self.hasher.verify(tenant, presented, &k.hash)
                });
                (found, true)
            }
        };
        // A key acting as a person or an agent is for its API's resource servers (through
        // introspection), never for the management API.
        let Some(key) = key.filter(|k| k.is_live(now) && k.reach == KeyReach::Management) else {
            return Ok(None);
        };
        // Only a key read from the store starts a cache period: refreshing it on every hit
        // would keep a key revoked on another instance alive for as long as it is used.
        if read {
            self.cache.put(&key, now);
        }
        let due = key.last_used_at.is_none_or(|at| now - at >= TOUCH_EVERY);
        if due {
            // Best effort: a key that works is not refused because its use could not be noted.
            if self.touch(ctx, &key, now).await.is_ok() {
                self.cache.touched(&key, now);
            }
        }
        Ok(Some(key))
    }

    async fn touch(
        &self,
        ctx: &ManageContext,
        key: &ApiKey,
        now: OffsetDateTime,
    ) -> Result<(), ManageError> {
        let mut tx = ctx.store.write().await?;
        tx.touch_api_key(&key.tenant_id, &key.id, now).await?;
        tx.commit().await?;
        Ok(())
    }
}

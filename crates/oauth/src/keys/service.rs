//! [`KeyService`]: per-tenant signing keys, cached for hot paths and rotated by the planner.

use super::{KeyError, KeyWrapper};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use svc_crypto::rotation::{
    KeyMeta, RotationPolicy, RotationStep, plan_forced_rotation, plan_rotation,
};
use svc_crypto::{Jwks, PublicJwk, SigningKey, open_private_key, seal_private_key, sealed_key_aad};
use svc_domain::{
    Clock, KeyState, SealedPrivateKey, SigningAlg, SigningKeyRecord, Tenant, TenantId,
};
use svc_store::{KeyTransition, Store, StoreError, WriteTx};
use time::OffsetDateTime;

/// Where private keys live.
#[derive(Clone)]
pub enum Custody {
    /// In this process only (development without `[kms]`): tokens die with the process.
    Ephemeral,
    /// Sealed in the database under data keys wrapped by svc-kms.
    Kms(Arc<dyn KeyWrapper>),
}

/// Settings the runtime derives from `[jwt]`.
#[derive(Debug, Clone)]
pub struct KeyServiceSettings {
    /// `jwt.default_algorithm`: the access-token algorithm.
    pub access_token_alg: SigningAlg,
    /// Rotation timing.
    pub policy: RotationPolicy,
    /// How long a tenant's cached keys are served before the store is read again. Must be far
    /// below the policy's publish lead so every instance signs with a key long published.
    pub refresh_after: Duration,
}

/// A tenant's published key set: the rendered document, its entity tag, and the same keys
/// parsed once for verifying this tenant's tokens (introspection, the management API) without
/// re-parsing JSON per request.
#[derive(Debug, Clone)]
pub struct PublishedJwks {
    /// `{"keys":[...]}` with public members only.
    pub json: String,
    /// Changes whenever the key set changes.
    pub etag: String,
    /// The keys, parsed for `svc_crypto::verify_jwt_signature`.
    pub keys: Jwks,
    /// The keys, parsed for jsonwebtoken (the claim rules shared with `svc-sdk`).
    pub jwk_set: jsonwebtoken::jwk::JwkSet,
    /// Access tokens already verified against exactly these keys.
    pub(crate) verified: Arc<crate::access_token::VerifiedTokens>,
}

/// What one rotation pass did for one tenant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RotationReport {
    /// Keys created (bootstrap or next).
    pub created: Vec<String>,
    /// Keys that started signing.
    pub promoted: Vec<String>,
    /// Keys that stopped signing.
    pub retired: Vec<String>,
    /// Keys removed from JWKS.
    pub removed: Vec<String>,
}

impl RotationReport {
    /// Whether anything changed.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.promoted.is_empty()
            && self.retired.is_empty()
            && self.removed.is_empty()
    }
}

/// A key as this service holds it: record metadata plus, when known, the parsed private key.
#[derive(Clone)]
struct HeldKey {
    meta: KeyMeta,
    public: PublicJwk,
    signer: Option<Arc<SigningKey>>,
}

struct TenantKeys {
    loaded_at: Instant,
    active: HashMap<SigningAlg, Arc<SigningKey>>,
    jwks: Arc<PublishedJwks>,
}

/// Per-tenant signing keys. One per process, shared by every plane in it.
pub struct KeyService {
    store: Arc<dyn Store>,
    custody: Custody,
    clock: Arc<dyn Clock>,
    settings: KeyServiceSettings,
    cache: Mutex<HashMap<TenantId, Arc<TenantKeys>>>,
    /// Parsed private keys by (tenant, kid): unsealing costs a KMS round trip, so it happens once.
    unsealed: Mutex<HashMap<(TenantId, String), Arc<SigningKey>>>,
    /// The whole key set in ephemeral custody.
    memory: tokio::sync::Mutex<HashMap<TenantId, Vec<HeldKey>>>,
    /// Told after a rotation changed a tenant's keys, so other processes reload theirs.
    rotated: OnceLock<RotationListener>,
}

/// Called with the tenant whose key set a rotation changed.
pub type RotationListener = Arc<dyn Fn(&TenantId) + Send + Sync>;

impl KeyService {
    /// A key service over `store`.
    pub fn new(
        store: Arc<dyn Store>,
        custody: Custody,
        clock: Arc<dyn Clock>,
        settings: KeyServiceSettings,
    ) -> Self {
        Self {
            store,
            custody,
            clock,
            settings,
            cache: Mutex::new(HashMap::new()),
            unsealed: Mutex::new(HashMap::new()),
            memory: tokio::sync::Mutex::new(HashMap::new()),
            rotated: OnceLock::new(),
        }
    }

    /// Sets who is told after a rotation changes a tenant's keys (once; later calls are
    /// ignored): the runtime announces it to the other instances on the database.
    pub fn on_rotation(&self, listener: RotationListener) {
        let _ = self.rotated.set(listener);
    }

    /// Forgets `tenant`'s cached keys (another instance rotated them): the next use reads the
    /// store. In ephemeral custody the keys live only here, so nothing is lost.
    pub fn forget(&self, tenant: &TenantId) {
        self.invalidate(tenant);
    }

    /// Forgets every tenant's cached keys.
    pub fn forget_all(&self) {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Whether keys survive a restart.
    pub fn is_ephemeral(&self) -> bool {
        matches!(self.custody, Custody::Ephemeral)
    }

    /// Readiness: the KMS answers (always true in ephemeral custody).
    pub async fn check_custody(&self) -> Result<(), KeyError> {
        match &self.custody {
            Custody::Ephemeral => Ok(()),
            Custody::Kms(kms) => kms.ping().await.map_err(KeyError::Kms),
        }
    }

    /// The tenant's JWKS: next, active and retired public keys.
    pub async fn published_jwks(&self, tenant: &Tenant) -> Result<Arc<PublishedJwks>, KeyError> {
        Ok(self.tenant_keys(&tenant.id).await?.jwks.clone())
    }

    /// The service's clock (token lifetimes checked against the same time as key states).
    pub(crate) fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// The key that currently signs `alg` tokens for `tenant`.
    pub async fn signer(
        &self,
        tenant: &TenantId,
        alg: SigningAlg,
    ) -> Result<Arc<SigningKey>, KeyError> {
        let keys = self.tenant_keys(tenant).await?;
        if let Some(key) = keys.active.get(&alg) {
            return Ok(key.clone());
        }
        // A new algorithm or a racing bootstrap: load once more without the cache.
        self.invalidate(tenant);
        let keys = self.tenant_keys(tenant).await?;
        keys.active
            .get(&alg)
            .cloned()
            .ok_or_else(|| KeyError::Store(StoreError::NotFound))
    }

    /// The access-token signing key (`jwt.default_algorithm`).
    pub async fn access_token_signer(
        &self,
        tenant: &TenantId,
    ) -> Result<Arc<SigningKey>, KeyError> {
        self.signer(tenant, self.settings.access_token_alg).await
    }

    fn invalidate(&self, tenant: &TenantId) {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tenant);
    }

    async fn tenant_keys(&self, tenant: &TenantId) -> Result<Arc<TenantKeys>, KeyError> {
        if let Some(keys) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tenant)
            && keys.loaded_at.elapsed() < self.settings.refresh_after
        {
            return Ok(keys.clone());
        }
        let mut held = self.held_keys(tenant).await?;
        if SigningAlg::ALL.iter().any(|alg| {
            !held
                .iter()
                .any(|k| k.meta.alg == *alg && k.meta.state == KeyState::Active)
        }) {
            // First use of this tenant (or of an algorithm): create what is missing, exactly once.
            self.rotate(tenant).await?;
            held = self.held_keys(tenant).await?;
        }
        let now = self.clock.now();
        let mut active = HashMap::new();
        for key in &held {
            if key.meta.state == KeyState::Active {
                active.insert(key.meta.alg, self.private_key(tenant, key).await?);
            }
        }
        let published: Vec<&PublicJwk> = held
            .iter()
            .filter(|k| {
                k.meta.state != KeyState::Retired || k.meta.remove_after.is_none_or(|t| t > now)
            })
            .map(|k| &k.public)
            .collect();
        let parsed = Jwks::new(published.iter().map(|k| (*k).clone()))?;
        let json = Jwks::render(published);
        let etag = etag_of(&json);
        let jwk_set = serde_json::from_str(&json).map_err(|_| {
            KeyError::Crypto(svc_crypto::CryptoError::InvalidJwk(
                "the rendered JWKS does not parse",
            ))
        })?;
        let keys = Arc::new(TenantKeys {
            loaded_at: Instant::now(),
            active,
            jwks: Arc::new(PublishedJwks {
                json,
                etag,
                keys: parsed,
                jwk_set,
                verified: Arc::default(),
            }),
        });
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tenant.clone(), keys.clone());
        Ok(keys)
    }

    /// Every key of a tenant with its public half (private halves loaded lazily).
    async fn held_keys(&self, tenant: &TenantId) -> Result<Vec<HeldKey>, KeyError> {
        match &self.custody {
            Custody::Ephemeral => Ok(self
                .memory
                .lock()
                .await
                .get(tenant)
                .cloned()
                .unwrap_or_default()),
            Custody::Kms(_) => {
                let mut read = self.store.read().await?;
                let records = read.signing_keys(tenant).await?;
                read.finish().await?;
                records.iter().map(held_from_record).collect()
            }
        }
    }

    async fn private_key(
        &self,
        tenant: &TenantId,
        key: &HeldKey,
    ) -> Result<Arc<SigningKey>, KeyError> {
        if let Some(signer) = &key.signer {
            return Ok(signer.clone());
        }
        let cache_key = (tenant.clone(), key.meta.kid.clone());
        if let Some(found) = self
            .unsealed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&cache_key)
        {
            return Ok(found.clone());
        }
        let Custody::Kms(kms) = &self.custody else {
            return Err(KeyError::Kms(
                "an ephemeral key lost its private half".into(),
            ));
        };
        let mut read = self.store.read().await?;
        let record = read
            .signing_keys(tenant)
            .await?
            .into_iter()
            .find(|r| r.kid == key.meta.kid)
            .ok_or(KeyError::Store(StoreError::NotFound))?;
        read.finish().await?;
        let aad = sealed_key_aad(tenant, &record.kid, record.alg);
        let dek = kms
            .unwrap(&aad, &record.sealed.wrapped_dek)
            .await
            .map_err(KeyError::Kms)?;
        let signer = Arc::new(open_private_key(
            record.alg,
            &dek,
            &record.sealed.ciphertext,
            &aad,
        )?);
        self.unsealed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cache_key, signer.clone());
        Ok(signer)
    }

    /// One rotation pass for a tenant: plans each algorithm and applies the steps atomically.
    /// Safe to run concurrently from several instances: the store lock makes it exactly once.
    pub async fn rotate(&self, tenant: &TenantId) -> Result<RotationReport, KeyError> {
        self.apply(tenant, false).await
    }

    /// An immediate rotation (`svc-runtime keys rotate`): new active keys now, the old ones
    /// retired but still published until the tokens they signed have expired.
    pub async fn force_rotate(&self, tenant: &TenantId) -> Result<RotationReport, KeyError> {
        self.apply(tenant, true).await
    }

    /// A rotation pass over every tenant; returns how many tenants changed.
    pub async fn rotate_all(&self) -> Result<usize, KeyError> {
        let mut changed = 0;
        let mut after: Option<TenantId> = None;
        loop {
            let mut read = self.store.read().await?;
            let page = read
                .list_tenants(after.as_ref(), svc_store::Order::Ascending, 100)
                .await?;
            read.finish().await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id.clone());
            for tenant in &page {
                if !self.rotate(&tenant.id).await?.is_empty() {
                    changed += 1;
                }
            }
        }
        Ok(changed)
    }

    async fn apply(&self, tenant: &TenantId, forced: bool) -> Result<RotationReport, KeyError> {
        let report = match &self.custody {
            Custody::Ephemeral => self.apply_in_memory(tenant, forced).await?,
            Custody::Kms(kms) => self.apply_stored(tenant, forced, kms.as_ref()).await?,
        };
        if !report.is_empty() {
            self.invalidate(tenant);
            if let Some(listener) = self.rotated.get() {
                listener(tenant);
            }
            tracing::info!(
                tenant = %tenant,
                created = ?report.created,
                promoted = ?report.promoted,
                retired = ?report.retired,
                removed = ?report.removed,
                "signing keys rotated"
            );
        }
        Ok(report)
    }

    fn plan(
        &self,
        alg: SigningAlg,
        metas: &[KeyMeta],
        now: OffsetDateTime,
        forced: bool,
    ) -> Vec<RotationStep> {
        if forced {
            plan_forced_rotation(alg, metas, now, &self.settings.policy)
        } else {
            plan_rotation(alg, metas, now, &self.settings.policy)
        }
    }

    async fn apply_in_memory(
        &self,
        tenant: &TenantId,
        forced: bool,
    ) -> Result<RotationReport, KeyError> {
        let mut memory = self.memory.lock().await;
        let keys = memory.entry(tenant.clone()).or_default();
        let now = self.clock.now();
        let mut report = RotationReport::default();
        for alg in SigningAlg::ALL {
            let metas: Vec<KeyMeta> = keys
                .iter()
                .filter(|k| k.meta.alg == alg)
                .map(|k| k.meta.clone())
                .collect();
            for step in self.plan(alg, &metas, now, forced) {
                match step {
                    RotationStep::CreateActive | RotationStep::CreateNext { .. } => {
                        let (state, activates_at) = creation(&step, now);
                        let key = SigningKey::generate(alg)?;
                        report.created.push(key.kid().to_owned());
                        keys.push(HeldKey {
                            meta: new_meta(&key, state, now, activates_at),
                            public: key.public_key().clone(),
                            signer: Some(Arc::new(key)),
                        });
                    }
                    RotationStep::Promote {
                        next_kid,
                        retire_kid,
                        remove_after,
                    } => {
                        for key in keys.iter_mut() {
                            if Some(&key.meta.kid) == retire_kid.as_ref()
                                && key.meta.state == KeyState::Active
                            {
                                key.meta.state = KeyState::Retired;
                                key.meta.retired_at = Some(now);
                                key.meta.remove_after = Some(remove_after);
                                report.retired.push(key.meta.kid.clone());
                            }
                        }
                        for key in keys.iter_mut() {
                            if key.meta.kid == next_kid && key.meta.state == KeyState::Next {
                                key.meta.state = KeyState::Active;
                                key.meta.activates_at = now;
                                report.promoted.push(next_kid.clone());
                            }
                        }
                    }
                    RotationStep::Retire { kid, remove_after } => {
                        for key in keys.iter_mut().filter(|k| k.meta.kid == kid) {
                            key.meta.state = KeyState::Retired;
                            key.meta.retired_at.get_or_insert(now);
                            key.meta.remove_after = Some(remove_after);
                        }
                        report.retired.push(kid);
                    }
                    RotationStep::Remove { kid } => {
                        keys.retain(|k| k.meta.kid != kid);
                        report.removed.push(kid);
                    }
                }
            }
        }
        Ok(report)
    }

    async fn apply_stored(
        &self,
        tenant: &TenantId,
        forced: bool,
        kms: &dyn KeyWrapper,
    ) -> Result<RotationReport, KeyError> {
        let mut tx = self.store.write().await?;
        tx.lock_signing_keys(tenant).await?;
        let records = tx.signing_keys(tenant).await?;
        let now = self.clock.now();
        let mut report = RotationReport::default();
        for alg in SigningAlg::ALL {
            let metas: Vec<KeyMeta> = records
                .iter()
                .filter(|r| r.alg == alg)
                .map(meta_of)
                .collect();
            for step in self.plan(alg, &metas, now, forced) {
                apply_stored_step(tx.as_mut(), tenant, alg, step, now, kms, &mut report).await?;
            }
        }
        tx.commit().await?;
        Ok(report)
    }
}

async fn apply_stored_step(
    tx: &mut dyn WriteTx,
    tenant: &TenantId,
    alg: SigningAlg,
    step: RotationStep,
    now: OffsetDateTime,
    kms: &dyn KeyWrapper,
    report: &mut RotationReport,
) -> Result<(), KeyError> {
    match step {
        RotationStep::CreateActive | RotationStep::CreateNext { .. } => {
            let (state, activates_at) = creation(&step, now);
            let key = SigningKey::generate(alg)?;
            let aad = sealed_key_aad(tenant, key.kid(), alg);
            let sealed = seal_private_key(&key, &aad)?;
            let wrapped_dek = kms
                .wrap(&aad, sealed.dek.as_ref())
                .await
                .map_err(KeyError::Kms)?;
            tx.insert_signing_key(&SigningKeyRecord {
                tenant_id: tenant.clone(),
                kid: key.kid().to_owned(),
                alg,
                state,
                public_jwk: key.public_key().to_json_string(),
                sealed: SealedPrivateKey {
                    wrapped_dek,
                    ciphertext: sealed.ciphertext,
                },
                created_at: now,
                activates_at,
                retired_at: None,
                remove_after: None,
            })
            .await?;
            report.created.push(key.kid().to_owned());
        }
        RotationStep::Promote {
            next_kid,
            retire_kid,
            remove_after,
        } => {
            // Retire first: at most one active key per algorithm at any statement.
            if let Some(old) = retire_kid {
                tx.transition_signing_key(
                    tenant,
                    &KeyTransition {
                        kid: old.clone(),
                        from: KeyState::Active,
                        to: KeyState::Retired,
                        activates_at: None,
                        retired_at: Some(now),
                        remove_after: Some(remove_after),
                    },
                )
                .await?;
                report.retired.push(old);
            }
            tx.transition_signing_key(
                tenant,
                &KeyTransition {
                    kid: next_kid.clone(),
                    from: KeyState::Next,
                    to: KeyState::Active,
                    activates_at: Some(now),
                    retired_at: None,
                    remove_after: None,
                },
            )
            .await?;
            report.promoted.push(next_kid);
        }
        RotationStep::Retire { kid, remove_after } => {
            // A retirement outside a promotion: a forced rotation, or a repair of a key set
            // that has two active keys or a retired key without dates.
            let current = tx
                .signing_keys(tenant)
                .await?
                .into_iter()
                .find(|r| r.kid == kid);
            let Some(current) = current else {
                return Ok(());
            };
            tx.transition_signing_key(
                tenant,
                &KeyTransition {
                    kid: kid.clone(),
                    from: current.state,
                    to: KeyState::Retired,
                    activates_at: None,
                    retired_at: Some(current.retired_at.unwrap_or(now)),
                    remove_after: Some(remove_after),
                },
            )
            .await?;
            report.retired.push(kid);
        }
        RotationStep::Remove { kid } => {
            tx.delete_signing_key(tenant, &kid).await?;
            report.removed.push(kid);
        }
    }
    Ok(())
}

/// State and activation instant of a key a creation step makes.
fn creation(step: &RotationStep, now: OffsetDateTime) -> (KeyState, OffsetDateTime) {
    match step {
        RotationStep::CreateNext { activates_at } => (KeyState::Next, *activates_at),
        _ => (KeyState::Active, now),
    }
}

fn new_meta(
    key: &SigningKey,
    state: KeyState,
    now: OffsetDateTime,
    activates_at: OffsetDateTime,
) -> KeyMeta {
    KeyMeta {
        kid: key.kid().to_owned(),
        alg: key.alg(),
        state,
        created_at: now,
        activates_at,
        retired_at: None,
        remove_after: None,
    }
}

fn meta_of(record: &SigningKeyRecord) -> KeyMeta {
    KeyMeta::from(record)
}

fn held_from_record(record: &SigningKeyRecord) -> Result<HeldKey, KeyError> {
    Ok(HeldKey {
        meta: meta_of(record),
        public: PublicJwk::parse(&record.public_jwk)?,
        signer: None,
    })
}

/// A short, stable tag of the JWKS bytes (not a security property: a cache validator).
fn etag_of(json: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    json.hash(&mut hasher);
    format!("{:016x}{:08x}", hasher.finish(), json.len())
}

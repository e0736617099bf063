//! Fixtures: an engine on a fresh SQLite database with a manual clock, an Argon2id hasher of
//! cheap parameters, a log mailer writing to a temporary file, and helpers to arrange users and
//! read mails.

use async_trait::async_trait;
use serde_json::Value;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use svc_authn::{
    Authn, AuthnSettings, CaptchaSettings, CaptchaVerifier, ClientInfo, LogMailer, LogSink,
};
use svc_crypto::Argon2id;
use svc_domain::{
    BreachedPasswords, Clock, Email, HasherError, ManualClock, PairwiseSecret, Password,
    PasswordHash, PasswordHasher, Passwords, Rng, SeededRandom, Tenant, TenantId, TenantSlug,
    TenantStatus, User, UserId, UserStatus,
};
use svc_store::Store;
use time::{Duration, OffsetDateTime};

/// An engine and handles to steer and observe it.
pub(crate) struct Harness {
    pub(crate) authn: Arc<Authn>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) tenant: Tenant,
    pub(crate) hasher: Arc<TestHasher>,
    mail_path: PathBuf,
    _dir: tempfile::TempDir,
}

/// The engine's settings in tests: the defaults.
pub(crate) fn test_settings() -> AuthnSettings {
    AuthnSettings::default()
}

/// Real Argon2id (`svc_crypto`) at low cost (the production defaults would make every test
/// slow), computed inline: the runtime's hasher adds only the blocking pool and the concurrency
/// bound, which its own tests cover. Counts the hashes it makes.
pub(crate) struct TestHasher {
    argon: Argon2id,
    rng: Arc<dyn Rng>,
    dummy: PasswordHash,
    hashes: AtomicU64,
}

impl std::fmt::Debug for TestHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestHasher").finish_non_exhaustive()
    }
}

impl TestHasher {
    /// A hasher drawing salts (and, now, its dummy hash) from `rng`.
    pub(crate) fn new(rng: Arc<dyn Rng>) -> Self {
        let argon = Argon2id::new(8192, 1, 1).unwrap();
        let dummy = argon.dummy_hash(rng.as_ref());
        Self {
            argon,
            rng,
            dummy,
            hashes: AtomicU64::new(0),
        }
    }

    /// Hashes made so far.
    pub(crate) fn hashes(&self) -> u64 {
        self.hashes.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl PasswordHasher for TestHasher {
    async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
        self.hashes.fetch_add(1, Ordering::SeqCst);
        self.argon
            .hash(password, &Argon2id::salt(self.rng.as_ref()))
    }

    async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
        let real = hash.is_some();
        let hash = hash.unwrap_or(&self.dummy);
        svc_crypto::verify_password(password, hash).unwrap_or(false) && real
    }
}

/// A start time off the whole microsecond, so precision handling is exercised.
pub(crate) fn start() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH + Duration::days(20_780) + Duration::nanoseconds(123_456_789)
}

/// A harness with default test settings, no breach check, sign-up closed.
pub(crate) async fn harness() -> Harness {
    harness_with(test_settings(), None, false).await
}

/// A harness with the given settings, breach check and sign-up switch.
pub(crate) async fn harness_with(
    settings: AuthnSettings,
    breached: Option<Arc<dyn BreachedPasswords>>,
    signup_enabled: bool,
) -> Harness {
    harness_with_captcha(settings, breached, signup_enabled, None).await
}

/// A harness as [`harness_with`], with a CAPTCHA when given.
pub(crate) async fn harness_with_captcha(
    settings: AuthnSettings,
    breached: Option<Arc<dyn BreachedPasswords>>,
    signup_enabled: bool,
    captcha: Option<(CaptchaSettings, Arc<dyn CaptchaVerifier>)>,
) -> Harness {
    build(settings, breached, signup_enabled, captcha, None).await
}

/// A harness with second factors on (a fixed data key, five-minute challenges).
pub(crate) async fn harness_with_two_factor(settings: AuthnSettings) -> Harness {
    let two_factor = svc_authn::TwoFactorSettings {
        key: Arc::new(svc_crypto::FactorKey::new(&[42u8; 32]).unwrap()),
        challenge_lifetime: std::time::Duration::from_secs(300),
        backup_codes_warn_below: 3,
        trusted_device_lifetime: Some(std::time::Duration::from_secs(30 * 86_400)),
        notify_new_device: true,
        adaptive: Some(svc_authn::AdaptiveSettings {
            threshold: 50,
            new_ip_score: 50,
            failure_burst_score: 50,
            failure_burst: 2,
        }),
    };
    build(settings, None, false, None, Some(two_factor)).await
}

/// A harness with second factors (as [`harness_with_two_factor`]) and social recovery.
pub(crate) async fn harness_with_recovery(recovery: svc_authn::RecoverySettings) -> Harness {
    let mut h = harness_with_two_factor(test_settings()).await;
    let authn = Arc::try_unwrap(h.authn).unwrap_or_else(|_| unreachable!("one owner"));
    h.authn = Arc::new(authn.with_recovery(recovery));
    h
}

async fn build(
    settings: AuthnSettings,
    breached: Option<Arc<dyn BreachedPasswords>>,
    signup_enabled: bool,
    captcha: Option<(CaptchaSettings, Arc<dyn CaptchaVerifier>)>,
    two_factor: Option<svc_authn::TwoFactorSettings>,
) -> Harness {
    let store: Arc<dyn Store> = Arc::new(
        svc_store_sqlite::testing::temp_store()
            .await
            .expect("temp store"),
    );
    let clock = Arc::new(ManualClock::new(start()));
    let rng = Arc::new(SeededRandom::new(7));
    let dir = tempfile::tempdir().unwrap();
    let mail_path = dir.path().join("mail.jsonl");
    let mailer = Arc::new(LogMailer::new(
        LogSink::File(mail_path.clone()),
        clock.clone(),
    ));
    let hasher = Arc::new(TestHasher::new(rng.clone()));
    let now = clock.now();
    let tenant = Tenant {
        id: TenantId::generate(clock.as_ref(), rng.as_ref()),
        slug: TenantSlug::parse("acme").unwrap(),
        display_name: "Acme".to_owned(),
        status: TenantStatus::Active,
        signup_enabled,
        mfa_policy: svc_domain::MfaPolicy::Default,
        pairwise_secret: PairwiseSecret::generate(rng.as_ref()),
        created_at: now,
        updated_at: now,
    };
    let mut tx = store.write().await.unwrap();
    tx.insert_tenant(&tenant).await.unwrap();
    tx.commit().await.unwrap();
    let mut authn = Authn::new(
        store.clone(),
        clock.clone(),
        rng,
        Passwords::new(hasher.clone(), breached),
        mailer,
        settings,
    );
    if let Some((settings, verifier)) = captcha {
        authn = authn.with_captcha(settings, verifier);
    }
    if let Some(two_factor) = two_factor {
        authn = authn.with_two_factor(two_factor);
    }
    let authn = Arc::new(authn);
    Harness {
        authn,
        clock,
        store,
        tenant,
        hasher,
        mail_path,
        _dir: dir,
    }
}

/// The issuer links are built on.
pub(crate) const ISSUER: &str = "https://acme.example.com";

/// A browser at `ip`.
pub(crate) fn client(ip: &str) -> ClientInfo {
    ClientInfo {
        ip: Some(ip.parse::<IpAddr>().unwrap()),
        user_agent: Some("Mozilla/5.0 (test)".to_owned()),
        device: None,
    }
}

impl Harness {
    /// Inserts a user directly, with `password` hashed when given.
    pub(crate) async fn user(
        &self,
        email: &str,
        password: Option<&str>,
        status: UserStatus,
    ) -> User {
        let hash = match password {
            Some(p) => Some(
                self.hasher
                    .hash(&Password::parse(p).unwrap())
                    .await
                    .unwrap(),
            ),
            None => None,
        };
        let now = self.clock.now();
        let now = now
            .replace_nanosecond(now.nanosecond() / 1000 * 1000)
            .unwrap();
        let user = User {
            id: UserId::generate(
                self.clock.as_ref(),
                &SeededRandom::new(now.nanosecond().into()),
            ),
            tenant_id: self.tenant.id.clone(),
            email: Email::parse(email).unwrap(),
            email_verified: false,
            name: None,
            given_name: None,
            family_name: None,
            status,
            password_hash: hash,
            created_at: now,
            updated_at: now,
            last_sign_in_at: None,
        };
        let mut tx = self.store.write().await.unwrap();
        tx.insert_user(&user).await.unwrap();
        tx.commit().await.unwrap();
        self.clock.advance(Duration::milliseconds(1));
        user
    }

    /// The user as stored now.
    pub(crate) async fn stored(&self, id: &UserId) -> User {
        let mut tx = self.store.read().await.unwrap();
        let user = tx.user(&self.tenant.id, id).await.unwrap().unwrap();
        tx.finish().await.unwrap();
        user
    }

    /// The user holding `email`, if any.
    pub(crate) async fn by_email(&self, email: &str) -> Option<User> {
        let mut tx = self.store.read().await.unwrap();
        let user = tx
            .user_by_email(&self.tenant.id, &Email::parse(email).unwrap())
            .await
            .unwrap();
        tx.finish().await.unwrap();
        user
    }

    /// Changes a user's status directly (as an administrator would).
    pub(crate) async fn set_status(&self, id: &UserId, status: UserStatus) {
        let mut user = self.stored(id).await;
        user.status = status;
        let mut tx = self.store.write().await.unwrap();
        let outcome = tx.update_user_if_unchanged(&user, user.updated_at).await;
        assert_eq!(outcome.unwrap(), svc_store::UpdateOutcome::Applied);
        tx.commit().await.unwrap();
    }

    /// Every mail sent so far (once the background sends have settled).
    pub(crate) async fn mails(&self) -> Vec<Value> {
        self.authn.mail_settled().await;
        match std::fs::read_to_string(&self.mail_path) {
            Ok(text) => text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The token of the last mailed link, checking the link's path.
    pub(crate) async fn last_token(&self, path: &str) -> String {
        let mails = self.mails().await;
        let link = mails.last().expect("a mail")["link"]
            .as_str()
            .expect("a link")
            .to_owned();
        let prefix = format!("{ISSUER}/auth/{path}?token=");
        link.strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{link} is not under {prefix}"))
            .to_owned()
    }
}

//! Tenant user use cases: the three ways to create a user, listing, partial updates, the
//! status lifecycle with its revocations, sessions, tenant isolation and atomicity.

use crate::support::{Harness, client_actor, harness, meta};
use async_trait::async_trait;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use svc_authn::{Authn, AuthnSettings, ClientInfo, LogMailer, LogSink};
use svc_crypto::Argon2id;
use svc_domain::{
    BreachCheckUnavailable, BreachedPasswords, HasherError, Password, PasswordHash, PasswordHasher,
    Passwords, SeededRandom, User, UserStatus, UserTokenPurpose,
};
use svc_manage::audit::action;
use svc_manage::control_plane::CreatedTenant;
use svc_manage::users::{self, NewUser, UserPatch, UserView};
use svc_manage::{
    Invitations, ManageContext, ManageError, PendingMail, Precondition, Revision, SignInServices,
};
use svc_store::{StoreError, UserFilter, WriteTx};

const ISSUER: &str = "https://acme.example.com";
const PW: &str = "correct horse battery";
/// No `If-Match`.
const NONE: Precondition = Precondition::None;

/// The sign-in engine on the harness's store, mailing to a temporary file, wired into a
/// management context as the runtime wires it: one [`Passwords`] for both, and the engine
/// issuing invitations.
pub(crate) struct Engine {
    pub(crate) authn: Arc<Authn>,
    /// The harness's context with the sign-in services.
    pub(crate) ctx: ManageContext,
    mail: PathBuf,
    _dir: tempfile::TempDir,
}

/// Real Argon2id (`svc_crypto`) at low cost, computed inline: the runtime's hasher adds only the
/// blocking pool and the concurrency bound, which its own tests cover.
#[derive(Debug)]
struct InlineHasher {
    argon: Argon2id,
    rng: Arc<SeededRandom>,
    dummy: PasswordHash,
}

impl InlineHasher {
    /// A hasher drawing its dummy hash, then every salt, from `rng`.
    fn new(rng: Arc<SeededRandom>) -> Self {
        let argon = Argon2id::new(8192, 1, 1).unwrap();
        Self {
            dummy: argon.dummy_hash(rng.as_ref()),
            argon,
            rng,
        }
    }
}

#[async_trait]
impl PasswordHasher for InlineHasher {
    async fn hash(&self, password: &Password) -> Result<PasswordHash, HasherError> {
        self.argon
            .hash(password, &Argon2id::salt(self.rng.as_ref()))
    }

    async fn verify(&self, password: &Password, hash: Option<&PasswordHash>) -> bool {
        let real = hash.is_some();
        let hash = hash.unwrap_or(&self.dummy);
        svc_crypto::verify_password(password, hash).unwrap_or(false) && real
    }
}

/// The engine issuing invitations (the runtime's adapter, restated: it lives in svc-runtime).
struct EngineInvitations(Arc<Authn>);

impl svc_manage::AccountNotices for EngineInvitations {
    fn factors_reset(&self, user: &svc_domain::User, tenant_name: &str, issuer: &str) {
        self.0.notify_factors_reset(user, tenant_name, issuer);
    }

    fn invitation(&self, mail: &svc_manage::InvitationMail<'_>) {
        self.0.notify_invitation(
            mail.to,
            (mail.tenant_name, mail.organization_name),
            mail.link.clone(),
            mail.valid_for,
        );
    }
}

#[async_trait]
impl Invitations for EngineInvitations {
    async fn prepare(
        &self,
        tx: &mut dyn WriteTx,
        issuer: &str,
        user: &User,
        tenant_name: &str,
    ) -> Result<PendingMail, StoreError> {
        let mail = self
            .0
            .prepare_link(tx, issuer, user, UserTokenPurpose::Invitation, tenant_name)
            .await?;
        let authn = self.0.clone();
        Ok(PendingMail::new(move || authn.deliver(mail)))
    }
}

impl Engine {
    pub(crate) async fn new(h: &Harness) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mail = dir.path().join("mail.jsonl");
        let rng = Arc::new(SeededRandom::new(9));
        let hasher = Arc::new(InlineHasher::new(rng.clone()));
        let mailer = Arc::new(LogMailer::new(LogSink::File(mail.clone()), h.clock.clone()));
        let authn = Arc::new(Authn::new(
            h.store.clone(),
            h.clock.clone(),
            rng,
            Passwords::new(hasher, None),
            mailer,
            AuthnSettings::default(),
        ));
        let ctx = h.ctx.clone().with_sign_in(SignInServices {
            passwords: authn.passwords().clone(),
            invitations: Arc::new(EngineInvitations(authn.clone())),
            notices: Arc::new(EngineInvitations(authn.clone())),
        });
        Self {
            authn,
            ctx,
            mail,
            _dir: dir,
        }
    }

    pub(crate) async fn mails(&self) -> Vec<Value> {
        self.authn.mail_settled().await;
        std::fs::read_to_string(&self.mail)
            .map(|t| {
                t.lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn new_user(email: &str) -> NewUser {
    NewUser {
        email: email.to_owned(),
        ..NewUser::default()
    }
}

async fn create(e: &Engine, t: &CreatedTenant, input: NewUser) -> svc_domain::User {
    users::create(&e.ctx, &t.tenant, ISSUER, &client_actor(t), &meta(), input)
        .await
        .unwrap()
}

fn browser() -> ClientInfo {
    ClientInfo {
        ip: Some("203.0.113.9".parse().unwrap()),
        user_agent: None,
        device: None,
    }
}

#[tokio::test]
async fn a_user_with_a_password_is_active_and_can_sign_in() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let input = NewUser {
        email: " Ada@Example.com".to_owned(),
        name: Some(" Ada Lovelace ".to_owned()),
        given_name: Some("Ada".to_owned()),
        email_verified: Some(true),
        password: Some(PW.to_owned()),
        ..NewUser::default()
    };
    let ada = create(&e, &acme, input).await;
    assert_eq!(ada.status, UserStatus::Active);
    assert_eq!(ada.email.as_str(), "ada@example.com");
    assert_eq!(ada.name.as_deref(), Some("Ada Lovelace"));
    assert!(ada.email_verified);
    assert_eq!(
        users::get(&h.ctx, &acme.tenant.id, &ada.id).await.unwrap(),
        ada
    );
    let audit = h.audit(&acme.tenant.id).await;
    assert_eq!(audit[0].action, action::TENANT_USER_CREATED);
    assert_eq!(audit[0].target.as_deref(), Some(ada.id.as_str()));

    let view = serde_json::to_value(UserView::from(&ada)).unwrap();
    let mut keys: Vec<&str> = view
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "created_at",
            "email",
            "email_verified",
            "family_name",
            "given_name",
            "has_password",
            "id",
            "last_sign_in_at",
            "name",
            "status",
            "updated_at"
        ]
    );
    assert_eq!(view["status"], "active");
    assert_eq!(view["has_password"], true);
    assert!(!view.to_string().contains("argon2"));

    e.authn
        .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_invited_user_is_mailed_a_link_that_activates_the_account() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let ivy = create(
        &e,
        &acme,
        NewUser {
            invite: Some(true),
            ..new_user("ivy@example.com")
        },
    )
    .await;
    assert_eq!(ivy.status, UserStatus::Invited);
    assert_eq!(
        h.audit(&acme.tenant.id).await[0].action,
        action::TENANT_USER_INVITED
    );
    let mails = e.mails().await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["to"], "ivy@example.com");
    let link = mails[0]["link"].as_str().unwrap();
    let token = link
        .strip_prefix(&format!("{ISSUER}/auth/accept-invitation?token="))
        .unwrap();
    let signed = e
        .authn
        .accept_invitation(&acme.tenant, token, PW, None, &browser())
        .await
        .unwrap();
    assert_eq!(signed.user.status, UserStatus::Active);
    assert!(signed.user.email_verified);
}

#[tokio::test]
async fn without_password_or_invitation_a_user_is_pre_provisioned() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let pat = create(&e, &acme, new_user("pat@example.com")).await;
    assert_eq!(pat.status, UserStatus::PreProvisioned);
    assert!(!pat.email_verified && pat.password_hash.is_none());
    assert!(e.mails().await.is_empty());
}

#[tokio::test]
async fn passwords_and_invitations_need_the_sign_in_services_and_fail_closed_without_them() {
    let h = harness().await;
    let acme = h.tenant("acme").await;
    let (actor, meta) = (client_actor(&acme), meta());
    let unwired = |input| users::create(&h.ctx, &acme.tenant, ISSUER, &actor, &meta, input);
    // A pre-provisioned user needs neither a hasher nor a mailer.
    let pat = unwired(new_user("pat@example.com")).await.unwrap();
    assert_eq!(pat.status, UserStatus::PreProvisioned);
    // A password or an invitation without them is an internal error that writes nothing.
    let audit_before = h.audit(&acme.tenant.id).await.len();
    for input in [
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
        NewUser {
            invite: Some(true),
            ..new_user("ivy@example.com")
        },
    ] {
        let err = unwired(input).await.unwrap_err();
        assert!(matches!(err, ManageError::Dependency(_)), "{err:?}");
        assert_eq!(err.to_string(), "internal error", "no internal detail");
    }
    assert_eq!(h.audit(&acme.tenant.id).await.len(), audit_before);
}

#[tokio::test]
async fn a_breach_check_that_fails_closed_refuses_new_passwords_as_unavailable() {
    /// Always unavailable, as an unreachable API in a deployment that fails closed.
    struct Down;

    #[async_trait]
    impl BreachedPasswords for Down {
        async fn is_breached(&self, _: &Password) -> Result<bool, BreachCheckUnavailable> {
            Err(BreachCheckUnavailable)
        }
    }

    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let ctx = h.ctx.clone().with_sign_in(SignInServices {
        passwords: Passwords::new(
            Arc::new(InlineHasher::new(Arc::new(SeededRandom::new(10)))),
            Some(Arc::new(Down)),
        ),
        invitations: Arc::new(EngineInvitations(e.authn.clone())),
        notices: Arc::new(EngineInvitations(e.authn.clone())),
    });
    let ada = create(&e, &acme, new_user("ada@example.com")).await;
    let refused = users::create(
        &ctx,
        &acme.tenant,
        ISSUER,
        &client_actor(&acme),
        &meta(),
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("bob@example.com")
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, ManageError::PasswordCheckUnavailable),
        "{refused:?}"
    );
    let refused = users::update(
        &ctx,
        &acme.tenant,
        ISSUER,
        &client_actor(&acme),
        &meta(),
        &ada.id,
        UserPatch {
            password: Some(PW.to_owned()),
            ..UserPatch::default()
        },
        &NONE,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, ManageError::PasswordCheckUnavailable),
        "{refused:?}"
    );
    // The policy still comes first: a short password is a field error, not an outage.
    let short = users::create(
        &ctx,
        &acme.tenant,
        ISSUER,
        &client_actor(&acme),
        &meta(),
        NewUser {
            password: Some("short".to_owned()),
            ..new_user("bob@example.com")
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&short, ManageError::Invalid { field, .. } if field == "password"),
        "{short:?}"
    );
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_field_and_writes_nothing() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    create(&e, &acme, new_user("ada@example.com")).await;
    let audit_before = h.audit(&acme.tenant.id).await.len();
    let cases = [
        (
            NewUser {
                password: Some(PW.to_owned()),
                invite: Some(true),
                ..new_user("bob@example.com")
            },
            "invite",
        ),
        (
            NewUser {
                password: Some("short".to_owned()),
                ..new_user("bob@example.com")
            },
            "password",
        ),
        (new_user("not-an-address"), "email"),
        (
            NewUser {
                family_name: Some(String::new()),
                ..new_user("bob@example.com")
            },
            "family_name",
        ),
    ];
    for (input, field) in cases {
        let err = users::create(
            &e.ctx,
            &acme.tenant,
            ISSUER,
            &client_actor(&acme),
            &meta(),
            input,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field: f, .. } if f == field),
            "{field}: {err:?}"
        );
    }
    let dup = users::create(
        &e.ctx,
        &acme.tenant,
        ISSUER,
        &client_actor(&acme),
        &meta(),
        new_user("ADA@example.com"),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&dup, ManageError::Conflict(m) if m.contains("already exists")),
        "{dup:?}"
    );
    assert_eq!(h.audit(&acme.tenant.id).await.len(), audit_before);
}

#[tokio::test]
async fn users_are_listed_by_page_and_filtered_by_status_or_address() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let input = NewUser {
            password: (n % 2 == 0).then(|| PW.to_owned()),
            ..new_user(&format!("user{n}@example.com"))
        };
        ids.push(create(&e, &acme, input).await.id);
    }
    let tenant = &acme.tenant.id;
    let (page1, next) = users::list(&h.ctx, tenant, &UserFilter::default(), None, None, Some(2))
        .await
        .unwrap();
    assert_eq!(
        page1.iter().map(|u| &u.id).collect::<Vec<_>>(),
        vec![&ids[0], &ids[1]]
    );
    let (page2, next) = users::list(
        &h.ctx,
        tenant,
        &UserFilter::default(),
        next.as_ref(),
        None,
        Some(2),
    )
    .await
    .unwrap();
    assert_eq!(
        page2.iter().map(|u| &u.id).collect::<Vec<_>>(),
        vec![&ids[2], &ids[3]]
    );
    let (page3, next) = users::list(
        &h.ctx,
        tenant,
        &UserFilter::default(),
        next.as_ref(),
        None,
        Some(2),
    )
    .await
    .unwrap();
    assert_eq!((page3.len(), next), (1, None));

    let active = UserFilter {
        status: Some(UserStatus::Active),
        ..UserFilter::default()
    };
    let (found, _) = users::list(&h.ctx, tenant, &active, None, None, None)
        .await
        .unwrap();
    assert_eq!(found.len(), 3);
    let by_email = UserFilter {
        email: Some(svc_domain::Email::parse("USER1@example.com").unwrap()),
        ..UserFilter::default()
    };
    let (found, _) = users::list(&h.ctx, tenant, &by_email, None, None, None)
        .await
        .unwrap();
    assert_eq!(
        found.iter().map(|u| &u.id).collect::<Vec<_>>(),
        vec![&ids[1]]
    );
}

#[tokio::test]
async fn a_patch_changes_only_what_it_names() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let actor = client_actor(&acme);
    let input = NewUser {
        name: Some("Ada".to_owned()),
        email_verified: Some(true),
        password: Some(PW.to_owned()),
        ..new_user("ada@example.com")
    };
    let ada = create(&e, &acme, input).await;
    create(&e, &acme, new_user("bob@example.com")).await;
    let patch = |json: Value| serde_json::from_value::<UserPatch>(json).unwrap();
    let request = meta();
    let update = |p: UserPatch| {
        users::update(
            &e.ctx,
            &acme.tenant,
            ISSUER,
            &actor,
            &request,
            &ada.id,
            p,
            &NONE,
        )
    };

    let audit_before = h.audit(&acme.tenant.id).await.len();
    let same = update(patch(serde_json::json!({}))).await.unwrap();
    assert_eq!(same, ada);
    assert_eq!(
        h.audit(&acme.tenant.id).await.len(),
        audit_before,
        "nothing written"
    );

    let renamed = update(patch(
        serde_json::json!({"name": null, "family_name": "Lovelace"}),
    ))
    .await
    .unwrap();
    assert_eq!(
        (renamed.name, renamed.family_name.as_deref()),
        (None, Some("Lovelace"))
    );
    assert!(renamed.email_verified);
    assert_eq!(
        h.audit(&acme.tenant.id).await[0].action,
        action::TENANT_USER_UPDATED
    );

    let moved = update(patch(serde_json::json!({"email": "ada@new.example"})))
        .await
        .unwrap();
    assert_eq!(moved.email.as_str(), "ada@new.example");
    assert!(!moved.email_verified, "a new address starts unverified");

    let taken = update(patch(serde_json::json!({"email": "bob@example.com"})))
        .await
        .unwrap_err();
    assert!(matches!(taken, ManageError::Conflict(_)), "{taken:?}");
    let weak = update(patch(serde_json::json!({"password": "short"})))
        .await
        .unwrap_err();
    assert!(matches!(&weak, ManageError::Invalid { field, .. } if field == "password"));

    // A new password signs everyone out.
    let signed = e
        .authn
        .sign_in(&acme.tenant, "ada@new.example", PW, &browser())
        .await
        .unwrap();
    update(patch(
        serde_json::json!({"password": "another long passphrase"}),
    ))
    .await
    .unwrap();
    assert!(
        e.authn
            .session(&acme.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_none()
    );
    e.authn
        .sign_in(
            &acme.tenant,
            "ada@new.example",
            "another long passphrase",
            &browser(),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn suspend_reactivate_and_remove_follow_the_lifecycle() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let actor = client_actor(&acme);
    let tenant = &acme.tenant.id;
    let ada = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
    )
    .await;
    let signed = e
        .authn
        .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
        .await
        .unwrap();

    let suspended = users::suspend(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(suspended.status, UserStatus::Suspended);
    assert!(
        users::list_sessions(&h.ctx, tenant, &ada.id, None, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    let again = users::suspend(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(again, ManageError::Conflict(_)));

    let back = users::reactivate(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(back.status, UserStatus::Active);
    assert!(
        e.authn
            .session(&acme.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_none(),
        "reactivation grants nothing back"
    );
    let not_suspended = users::reactivate(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap_err();
    assert!(matches!(not_suspended, ManageError::Conflict(_)));

    let removed = users::remove(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
        .await
        .unwrap();
    assert_eq!(removed.status, UserStatus::Removed);
    for err in [
        users::reactivate(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
            .await
            .unwrap_err(),
        users::remove(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
            .await
            .unwrap_err(),
        users::suspend(&h.ctx, tenant, &actor, &meta(), &ada.id, &NONE)
            .await
            .unwrap_err(),
    ] {
        assert!(matches!(err, ManageError::Conflict(_)), "{err:?}");
    }
    // A tombstone stays readable; its address is free again.
    assert_eq!(
        users::get(&h.ctx, tenant, &ada.id).await.unwrap().status,
        UserStatus::Removed
    );
    let successor = create(&e, &acme, new_user("ada@example.com")).await;
    assert_ne!(successor.id, ada.id);

    let actions: Vec<String> = h
        .audit(tenant)
        .await
        .into_iter()
        .map(|a| a.action)
        .collect();
    for expected in [
        action::TENANT_USER_SUSPENDED,
        action::TENANT_USER_REACTIVATED,
        action::TENANT_USER_REMOVED,
    ] {
        assert!(
            actions.iter().any(|a| a == expected),
            "{expected} in {actions:?}"
        );
    }
}

#[tokio::test]
async fn reactivating_a_user_who_never_had_a_password_returns_them_to_pre_provisioned() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let actor = client_actor(&acme);
    let tenant = &acme.tenant.id;
    let grace = create(&e, &acme, new_user("grace@example.com")).await;
    assert_eq!(grace.status, UserStatus::PreProvisioned);
    users::suspend(&h.ctx, tenant, &actor, &meta(), &grace.id, &NONE)
        .await
        .unwrap();

    let back = users::reactivate(&h.ctx, tenant, &actor, &meta(), &grace.id, &NONE)
        .await
        .unwrap();
    assert_eq!(
        back.status,
        UserStatus::PreProvisioned,
        "never active without a password"
    );
    assert_eq!(
        users::get(&h.ctx, tenant, &grace.id).await.unwrap().status,
        UserStatus::PreProvisioned
    );
    // Like any pre-provisioned account, the person claims it through a password reset.
    e.authn
        .request_password_reset(&acme.tenant, ISSUER, "grace@example.com", &browser())
        .await
        .unwrap();
    let link = e
        .mails()
        .await
        .into_iter()
        .rev()
        .find(|m| m["to"] == "grace@example.com")
        .and_then(|m| m["link"].as_str().map(str::to_owned))
        .expect("a reset link");
    let token = link.split("token=").nth(1).unwrap();
    let claimed = e
        .authn
        .reset_password(&acme.tenant, token, PW)
        .await
        .unwrap();
    assert_eq!(claimed.status, UserStatus::Active);

    // With a password, reactivation is straight back to active.
    users::suspend(&h.ctx, tenant, &actor, &meta(), &grace.id, &NONE)
        .await
        .unwrap();
    let back = users::reactivate(&h.ctx, tenant, &actor, &meta(), &grace.id, &NONE)
        .await
        .unwrap();
    assert_eq!(back.status, UserStatus::Active);
}

#[tokio::test]
async fn sessions_are_listed_and_revoked_one_at_a_time_within_the_tenant() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let globex = h.tenant("globex").await;
    let actor = client_actor(&acme);
    let tenant = &acme.tenant.id;
    let ada = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
    )
    .await;
    let bob = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("bob@example.com")
        },
    )
    .await;
    let one = e
        .authn
        .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
        .await
        .unwrap();
    let two = e
        .authn
        .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
        .await
        .unwrap();
    let (sessions, next) = users::list_sessions(&h.ctx, tenant, &ada.id, None, None, None)
        .await
        .unwrap();
    assert_eq!((sessions.len(), next), (2, None));

    let wrong_owner =
        users::revoke_session(&h.ctx, tenant, &actor, &meta(), &bob.id, &one.session.id).await;
    assert!(matches!(wrong_owner, Err(ManageError::NotFound)));
    users::revoke_session(&h.ctx, tenant, &actor, &meta(), &ada.id, &one.session.id)
        .await
        .unwrap();
    let again =
        users::revoke_session(&h.ctx, tenant, &actor, &meta(), &ada.id, &one.session.id).await;
    assert!(matches!(again, Err(ManageError::NotFound)));
    let (left, _) = users::list_sessions(&h.ctx, tenant, &ada.id, None, None, None)
        .await
        .unwrap();
    assert_eq!(
        left.iter().map(|s| &s.id).collect::<Vec<_>>(),
        vec![&two.session.id]
    );
    assert_eq!(
        h.audit(tenant).await[0].action,
        action::TENANT_USER_SESSION_REVOKED
    );

    // Another tenant sees none of it.
    let other = &globex.tenant.id;
    assert!(matches!(
        users::get(&h.ctx, other, &ada.id).await,
        Err(ManageError::NotFound)
    ));
    assert!(matches!(
        users::list_sessions(&h.ctx, other, &ada.id, None, None, None).await,
        Err(ManageError::NotFound)
    ));
    let cross = users::suspend(
        &h.ctx,
        other,
        &client_actor(&globex),
        &meta(),
        &ada.id,
        &NONE,
    )
    .await;
    assert!(matches!(cross, Err(ManageError::NotFound)));
}

#[tokio::test]
async fn a_suspension_whose_revocation_fails_changes_nothing() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let ada = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
    )
    .await;
    let signed = e
        .authn
        .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
        .await
        .unwrap();
    let audit_before = h.audit(tenant).await.len();
    h.store.fail_on(Some("revoke_user_refresh_families"));
    let err = users::suspend(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        &ada.id,
        &NONE,
    )
    .await;
    h.store.fail_on(None);
    assert!(matches!(err, Err(ManageError::Unavailable(_))), "{err:?}");
    assert_eq!(
        users::get(&h.ctx, tenant, &ada.id).await.unwrap().status,
        UserStatus::Active
    );
    assert!(
        e.authn
            .session(&acme.tenant, &signed.cookie_value)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(h.audit(tenant).await.len(), audit_before);
}

#[tokio::test]
async fn every_change_honours_if_match_and_makes_a_new_revision() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let actor = client_actor(&acme);
    let tenant = &acme.tenant.id;
    let ada = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
    )
    .await;
    let at = |user: &User| Precondition::OneOf(vec![Some(Revision::of(user.updated_at))]);
    let stale = at(&ada);
    let rename = |name: &str| UserPatch {
        name: Some(Some(name.to_owned())),
        ..UserPatch::default()
    };
    let update = |patch: UserPatch, precondition: Precondition| {
        let (e, acme, actor, id) = (&e, &acme, &actor, ada.id.clone());
        async move {
            users::update(
                &e.ctx,
                &acme.tenant,
                ISSUER,
                actor,
                &meta(),
                &id,
                patch,
                &precondition,
            )
            .await
        }
    };

    let renamed = update(rename("Ada"), stale.clone()).await.unwrap();
    assert!(renamed.updated_at > ada.updated_at, "a new revision");
    assert_ne!(
        Revision::of(renamed.updated_at),
        Revision::of(ada.updated_at)
    );
    let audit_before = h.audit(tenant).await.len();

    // The revision read before the rename is stale now, for every kind of change, and for a
    // patch that would change nothing too; a tag that is not ours never matches.
    let foreign = Precondition::OneOf(vec![None]);
    for precondition in [stale.clone(), foreign] {
        for err in [
            update(rename("Mallory"), precondition.clone())
                .await
                .unwrap_err(),
            update(UserPatch::default(), precondition.clone())
                .await
                .unwrap_err(),
            users::suspend(&h.ctx, tenant, &actor, &meta(), &ada.id, &precondition)
                .await
                .unwrap_err(),
            users::remove(&h.ctx, tenant, &actor, &meta(), &ada.id, &precondition)
                .await
                .unwrap_err(),
        ] {
            assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");
        }
    }
    assert_eq!(users::get(&h.ctx, tenant, &ada.id).await.unwrap(), renamed);
    assert_eq!(h.audit(tenant).await.len(), audit_before, "nothing written");

    // The current revision (alone or in a list), or `*`, lets each change through.
    let listed = Precondition::OneOf(vec![None, Some(Revision::of(renamed.updated_at))]);
    let suspended = users::suspend(&h.ctx, tenant, &actor, &meta(), &ada.id, &listed)
        .await
        .unwrap();
    assert!(suspended.updated_at > renamed.updated_at);
    let err = users::reactivate(&h.ctx, tenant, &actor, &meta(), &ada.id, &at(&renamed))
        .await
        .unwrap_err();
    assert!(matches!(err, ManageError::PreconditionFailed), "{err:?}");
    let back = users::reactivate(&h.ctx, tenant, &actor, &meta(), &ada.id, &at(&suspended))
        .await
        .unwrap();
    assert_eq!(back.status, UserStatus::Active);
    let patched = update(rename("Ada L."), Precondition::Exists)
        .await
        .unwrap();
    assert!(patched.updated_at > back.updated_at);
    assert_eq!(users::get(&h.ctx, tenant, &ada.id).await.unwrap(), patched);
    let removed = users::remove(&h.ctx, tenant, &actor, &meta(), &ada.id, &at(&patched))
        .await
        .unwrap();
    assert_eq!(removed.status, UserStatus::Removed);
    assert_eq!(users::get(&h.ctx, tenant, &ada.id).await.unwrap(), removed);
}

#[tokio::test]
async fn sessions_page_newest_first_and_a_vanished_cursor_still_works() {
    let h = harness().await;
    let e = Engine::new(&h).await;
    let acme = h.tenant("acme").await;
    let tenant = &acme.tenant.id;
    let ada = create(
        &e,
        &acme,
        NewUser {
            password: Some(PW.to_owned()),
            ..new_user("ada@example.com")
        },
    )
    .await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        let signed = e
            .authn
            .sign_in(&acme.tenant, "ada@example.com", PW, &browser())
            .await
            .unwrap();
        ids.push(signed.session.id);
    }
    ids.reverse(); // newest first
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (page, next) =
            users::list_sessions(&h.ctx, tenant, &ada.id, after.as_ref(), None, Some(2))
                .await
                .unwrap();
        assert!(page.len() <= 2);
        seen.extend(page.into_iter().map(|s| s.id));
        match next {
            Some(cursor) => after = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen, ids, "each session once, newest first");

    // The cursor's own session ends between two pages: the next page is unaffected.
    let (first, cursor) = users::list_sessions(&h.ctx, tenant, &ada.id, None, None, Some(2))
        .await
        .unwrap();
    let cursor = cursor.unwrap();
    assert_eq!(cursor, first[1].id);
    users::revoke_session(
        &h.ctx,
        tenant,
        &client_actor(&acme),
        &meta(),
        &ada.id,
        &cursor,
    )
    .await
    .unwrap();
    let (rest, next) = users::list_sessions(&h.ctx, tenant, &ada.id, Some(&cursor), None, Some(10))
        .await
        .unwrap();
    assert_eq!(
        rest.iter().map(|s| &s.id).collect::<Vec<_>>(),
        ids[2..].iter().collect::<Vec<_>>()
    );
    assert_eq!(next, None);
}

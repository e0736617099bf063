//! The authorization code flow driven through the engines for the store-backed tests: a
//! tenant with a code-flow application (public, with an API audience), a confidential backend
//! of the same audience, a person with a live session, and helpers for each endpoint.

use super::support::*;
use crate::authorize::{AuthorizeEndpoint, AuthorizeOutcome, AuthorizeSettings};
use crate::introspect::Introspector;
use crate::token::TokenResponse;
use crate::userinfo::UserInfo;
use serde_json::Value;
use svc_domain::Clock;
use svc_domain::{
    Application, ClientId, Email, GeneratedSecret, GrantType, OsRandom, RedirectUri, ScopeSet,
    SecretHash, Session, SessionId, SigningAlg, TokenEndpointAuthMethod, User, UserId, UserStatus,
};

pub(super) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(super) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub(super) const REDIRECT: &str = "https://shop.example/cb";

pub(super) struct Flow {
    pub(super) fx: Fixture,
    pub(super) authorize: AuthorizeEndpoint,
    pub(super) app: Application,
    pub(super) confidential: (Application, String),
    pub(super) user: User,
    pub(super) session: Session,
}

impl Flow {
    pub(super) async fn new(first_party: bool) -> Self {
        Self::with(Fixture::new().await, first_party).await
    }

    pub(super) async fn with(fx: Fixture, first_party: bool) -> Self {
        Self::build(fx, first_party, |_| {}).await
    }

    /// A flow whose code-flow application is changed by `edit` before it is stored (the
    /// confidential backend keeps the defaults).
    pub(super) async fn build(
        fx: Fixture,
        first_party: bool,
        edit: impl FnOnce(&mut Application),
    ) -> Self {
        let now = fx.clock.now();
        let rng = OsRandom;
        let mut app = Application {
            id: ClientId::generate(fx.clock.as_ref(), &rng),
            tenant_id: fx.tenant.id.clone(),
            name: "Shop".into(),
            redirect_uris: vec![RedirectUri::parse(REDIRECT).unwrap()],
            post_logout_redirect_uris: vec![],
            grant_types: vec![GrantType::AuthorizationCode, GrantType::RefreshToken],
            token_endpoint_auth_method: TokenEndpointAuthMethod::None,
            allowed_scopes: ScopeSet::parse("openid profile email offline_access").unwrap(),
            secret_hash: None,
            api_audience: Some("https://api.shop.example".into()),
            first_party,
            id_token_signed_response_alg: SigningAlg::Rs256,
            jwks: None,
            jwks_uri: None,
            is_management: false,
            minimum_acr: None,
            organization_usage: svc_domain::OrganizationUsage::Allow,
            require_pushed_authorization_requests: false,
            dpop_bound_access_tokens: false,
            logout: Default::default(),
            authorization_details_types: Vec::new(),
            metadata_document: None,
            created_at: now,
            updated_at: now,
        };
        let secret = GeneratedSecret::generate("cs_", &rng);
        let mut backend = app.clone();
        backend.id = ClientId::generate(fx.clock.as_ref(), &rng);
        backend.name = "Shop backend".into();
        backend.token_endpoint_auth_method = TokenEndpointAuthMethod::ClientSecretBasic;
        backend.secret_hash = Some(secret.hash.clone());
        app.id = ClientId::generate(fx.clock.as_ref(), &rng);
        edit(&mut app);
        let user = User {
            id: UserId::generate(fx.clock.as_ref(), &rng),
            tenant_id: fx.tenant.id.clone(),
            email: Email::parse("ada@example.com").unwrap(),
            email_verified: true,
            name: Some("Ada Lovelace".into()),
            given_name: Some("Ada".into()),
            family_name: None,
            status: UserStatus::Active,
            password_hash: None,
            created_at: now,
            updated_at: now,
            last_sign_in_at: None,
        };
        let session = Session {
            id: SessionId::generate(fx.clock.as_ref(), &rng),
            tenant_id: fx.tenant.id.clone(),
            user_id: user.id.clone(),
            secret_hash: SecretHash::of("cookie"),
            created_at: now,
            auth_time: now,
            amr: vec!["pwd".into()],
            acr: Some(svc_domain::ACR_PASSWORD.into()),
            expires_at: now + time::Duration::days(1),
            last_seen_at: now,
            revoked_at: None,
            user_agent: None,
            ip: None,
        };
        let mut tx = fx.store.write().await.unwrap();
        tx.insert_application(&app).await.unwrap();
        tx.insert_application(&backend).await.unwrap();
        tx.insert_user(&user).await.unwrap();
        tx.insert_session(&session).await.unwrap();
        tx.commit().await.unwrap();
        let authorize = AuthorizeEndpoint::new(fx.ctx.clone(), AuthorizeSettings::default());
        Self {
            fx,
            authorize,
            app,
            confidential: (backend, secret.plaintext),
            user,
            session,
        }
    }

    pub(super) fn params(&self, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut list = vec![
            ("client_id", self.app.id.as_str()),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("scope", "openid profile email offline_access"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "st-1"),
            ("nonce", "n-1"),
        ];
        // An extra parameter of a default's name replaces it (a repeat would be refused).
        for (name, value) in extra {
            match list.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value,
                None => list.push((name, value)),
            }
        }
        form(&list)
    }

    pub(super) async fn authorize(&self, extra: &[(&str, &str)]) -> AuthorizeOutcome {
        self.authorize
            .authorize(
                &self.fx.tenant,
                &self.fx.issuer,
                &self.params(extra),
                Some(&self.session),
            )
            .await
    }

    /// Authorizes (consenting when asked) and returns the code.
    pub(super) async fn code(&self) -> String {
        let mut outcome = self.authorize(&[]).await;
        if let AuthorizeOutcome::Consent { interaction } = &outcome {
            outcome = self
                .authorize
                .decide_consent(
                    &self.fx.tenant,
                    &self.fx.issuer,
                    interaction,
                    Some(&self.session),
                    true,
                )
                .await;
        }
        let AuthorizeOutcome::RedirectToClient(url) = outcome else {
            panic!("expected a redirect, got {outcome:?}");
        };
        let url = url::Url::parse(&url).unwrap();
        let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(q["state"], "st-1");
        assert_eq!(q["iss"], self.fx.issuer);
        q["code"].clone()
    }

    pub(super) async fn redeem(
        &self,
        code: &str,
        verifier: &str,
    ) -> Result<TokenResponse, crate::OAuthError> {
        self.fx
            .endpoint
            .handle(
                &self.fx.tenant,
                &self.fx.issuer,
                &form(&[
                    ("grant_type", "authorization_code"),
                    ("client_id", self.app.id.as_str()),
                    ("code", code),
                    ("redirect_uri", REDIRECT),
                    ("code_verifier", verifier),
                ]),
                None,
            )
            .await
    }

    /// Refreshes asking for `scope`.
    pub(super) async fn refresh_with(
        &self,
        token: &str,
        scope: &str,
    ) -> Result<TokenResponse, crate::OAuthError> {
        self.fx
            .endpoint
            .handle(
                &self.fx.tenant,
                &self.fx.issuer,
                &form(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", self.app.id.as_str()),
                    ("refresh_token", token),
                    ("scope", scope),
                ]),
                None,
            )
            .await
    }

    pub(super) async fn refresh(&self, token: &str) -> Result<TokenResponse, crate::OAuthError> {
        self.fx
            .endpoint
            .handle(
                &self.fx.tenant,
                &self.fx.issuer,
                &form(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", self.app.id.as_str()),
                    ("refresh_token", token),
                ]),
                None,
            )
            .await
    }

    pub(super) async fn introspect(&self, token: &str) -> Value {
        Introspector::new(self.fx.ctx.clone())
            .handle(
                &self.fx.tenant,
                &self.fx.issuer,
                &form(&[("token", token)]),
                Some(&basic(
                    self.confidential.0.id.as_str(),
                    &self.confidential.1,
                )),
            )
            .await
            .unwrap()
    }
}

impl Flow {
    /// The UserInfo engine of this flow's store, keys and clock.
    pub(super) fn userinfo(&self) -> UserInfo {
        UserInfo::new(self.fx.ctx.clone())
    }

    /// Introspects `token` as the confidential client `caller` (an application and its secret).
    pub(super) async fn introspect_as(&self, token: &str, caller: &(Application, String)) -> Value {
        Introspector::new(self.fx.ctx.clone())
            .handle(
                &self.fx.tenant,
                &self.fx.issuer,
                &form(&[("token", token)]),
                Some(&basic(caller.0.id.as_str(), &caller.1)),
            )
            .await
            .unwrap()
    }

    /// Stores another confidential application of the tenant, changed by `edit`.
    pub(super) async fn other_client(
        &self,
        edit: impl FnOnce(&mut Application),
    ) -> (Application, String) {
        let mut app = self.confidential.0.clone();
        let secret = GeneratedSecret::generate("cs_", &OsRandom);
        app.id = ClientId::generate(self.fx.clock.as_ref(), &OsRandom);
        app.secret_hash = Some(secret.hash.clone());
        edit(&mut app);
        let mut tx = self.fx.store.write().await.unwrap();
        tx.insert_application(&app).await.unwrap();
        tx.commit().await.unwrap();
        (app, secret.plaintext)
    }

    /// Sets the person's status directly in the store, as suspension or removal would (the
    /// management use case also revokes sessions and families; tests that need that call it).
    pub(super) async fn set_user_status(&self, status: UserStatus) {
        let mut tx = self.fx.store.write().await.unwrap();
        let mut user = tx
            .user(&self.fx.tenant.id, &self.user.id)
            .await
            .unwrap()
            .unwrap();
        user.status = status;
        let outcome = tx.update_user_if_unchanged(&user, user.updated_at).await;
        assert_eq!(outcome.unwrap(), svc_store::UpdateOutcome::Applied);
        tx.commit().await.unwrap();
    }

    /// Stores a new session of the person that authenticated at `auth_time` (what the hosted
    /// sign-in page creates).
    pub(super) async fn sign_in_again(&self, auth_time: time::OffsetDateTime) -> Session {
        let session = Session {
            id: SessionId::generate(self.fx.clock.as_ref(), &OsRandom),
            secret_hash: SecretHash::of(&format!("cookie-{auth_time}")),
            created_at: auth_time,
            auth_time,
            last_seen_at: auth_time,
            expires_at: auth_time + time::Duration::days(1),
            ..self.session.clone()
        };
        let mut tx = self.fx.store.write().await.unwrap();
        tx.insert_session(&session).await.unwrap();
        tx.commit().await.unwrap();
        session
    }

    /// The tenant's audit entries with `action`.
    pub(super) async fn audit(&self, action: &str) -> Vec<svc_domain::AuditEntry> {
        let mut tx = self.fx.store.read().await.unwrap();
        let filter = svc_store::AuditFilter {
            action: Some(action.to_owned()),
            ..svc_store::AuditFilter::default()
        };
        let entries = tx
            .list_audit(
                &self.fx.tenant.id,
                &filter,
                None,
                svc_store::Order::Descending,
                100,
            )
            .await
            .unwrap();
        tx.finish().await.unwrap();
        entries
    }

    /// The tenant's recorded events of `event_type`: their `data`, oldest first.
    pub(super) async fn events(&self, event_type: &str) -> Vec<Value> {
        let mut tx = self.fx.store.read().await.unwrap();
        let events = tx.events(&self.fx.tenant.id, None, 1000).await.unwrap();
        tx.finish().await.unwrap();
        events
            .into_iter()
            .filter(|e| e.event_type.as_str() == event_type)
            .map(|e| serde_json::from_str::<Value>(&e.body).unwrap()["data"].clone())
            .collect()
    }

    /// The claims of an ID token, verified against the tenant's published keys with `alg`.
    pub(super) async fn id_claims(&self, id_token: &str, alg: SigningAlg) -> Value {
        let published = self.fx.keys.published_jwks(&self.fx.tenant).await.unwrap();
        svc_crypto::verify_jwt_signature(&published.keys, id_token, alg)
            .unwrap()
            .claims
    }
}

/// The query of the redirect to the client an authorization ends with (a code or an error).
pub(super) fn query(outcome: &AuthorizeOutcome) -> std::collections::HashMap<String, String> {
    let AuthorizeOutcome::RedirectToClient(url) = outcome else {
        panic!("expected a redirect to the client, got {outcome:?}");
    };
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

//! Shared fixtures for the token endpoint tests: the store-backed [`Fixture`], registered
//! clients, client key pairs for `private_key_jwt`, and the common assertions.

use crate::context::ProtocolContext;
use crate::error::ErrorCode;
use crate::keys::{Custody, KeyService, KeyServiceSettings};
use crate::token::*;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration as StdDuration;
use svc_crypto::rotation::RotationPolicy;
use svc_crypto::{SigningAlg, SigningKey};
use svc_domain::{
    Application, ClientId, Clock, GeneratedSecret, ManualClock, OsRandom, Rng, ScopeSet, TenantId,
    TenantSlug, TenantStatus, TokenEndpointAuthMethod,
};
use svc_store::Store;
use time::OffsetDateTime;

pub(super) const ASSERTION_TYPE: &str = JWT_BEARER_ASSERTION_TYPE;

pub(super) fn start() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap()
}

pub(super) struct Fixture {
    /// What every engine under test is built from: the fixture's store, keys and manual clock.
    pub(super) ctx: ProtocolContext,
    pub(super) endpoint: TokenEndpoint,
    pub(super) store: Arc<dyn Store>,
    pub(super) keys: Arc<KeyService>,
    pub(super) clock: Arc<ManualClock>,
    pub(super) tenant: Tenant,
    pub(super) issuer: String,
    pub(super) other_tenant: Tenant,
}

/// A registered application and the secret it was given, if any.
pub(super) struct Client {
    pub(super) app: Application,
    secret: Option<String>,
}

impl Client {
    pub(super) fn id(&self) -> &str {
        self.app.id.as_str()
    }

    pub(super) fn secret(&self) -> &str {
        self.secret.as_deref().unwrap()
    }

    pub(super) fn basic(&self) -> String {
        basic(self.id(), self.secret())
    }
}

pub(super) fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

pub(super) fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

impl Fixture {
    pub(super) async fn new() -> Self {
        Self::with_alg(SigningAlg::Es256).await
    }

    pub(super) async fn with_alg(access_token_alg: SigningAlg) -> Self {
        let store: Arc<dyn Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
        Self::on_store(store, access_token_alg).await
    }

    /// A fixture on SQLite whose token endpoint runs with `settings`.
    pub(super) async fn with_settings(settings: TokenSettings) -> Self {
        let store: Arc<dyn Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
        Self::build(store, SigningAlg::Es256, settings).await
    }

    /// A fixture over a given (migrated, empty) store.
    pub(super) async fn on_store(store: Arc<dyn Store>, access_token_alg: SigningAlg) -> Self {
        Self::build(store, access_token_alg, TokenSettings::default()).await
    }

    async fn build(
        store: Arc<dyn Store>,
        access_token_alg: SigningAlg,
        settings: TokenSettings,
    ) -> Self {
        let clock = Arc::new(ManualClock::new(start()));
        let keys = Arc::new(KeyService::new(
            store.clone(),
            Custody::Ephemeral,
            clock.clone(),
            KeyServiceSettings {
                access_token_alg,
                policy: RotationPolicy::default(),
                refresh_after: StdDuration::from_secs(60),
            },
        ));
        let (tenant, other_tenant) = (new_tenant("acme"), new_tenant("other"));
        let mut tx = store.write().await.unwrap();
        tx.insert_tenant(&tenant).await.unwrap();
        tx.insert_tenant(&other_tenant).await.unwrap();
        tx.commit().await.unwrap();
        let ctx = ProtocolContext::new(
            store.clone(),
            keys.clone(),
            clock.clone(),
            Arc::new(OsRandom),
        );
        let endpoint = TokenEndpoint::new(ctx.clone(), settings);
        Self {
            ctx,
            endpoint,
            store,
            keys,
            clock,
            tenant,
            issuer: "https://acme.example.com".into(),
            other_tenant,
        }
    }

    fn application(&self, tenant: &Tenant, method: TokenEndpointAuthMethod) -> Application {
        Application {
            id: ClientId::generate(self.clock.as_ref(), &OsRandom),
            tenant_id: tenant.id.clone(),
            name: "backend".into(),
            redirect_uris: vec![],
            post_logout_redirect_uris: Vec::new(),
            grant_types: vec![GrantType::ClientCredentials],
            token_endpoint_auth_method: method,
            allowed_scopes: ScopeSet::parse("applications:read audit:read").unwrap(),
            secret_hash: None,
            api_audience: None,
            first_party: true,
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
            created_at: start(),
            updated_at: start(),
        }
    }

    async fn insert(&self, app: Application, secret: Option<String>) -> Client {
        let mut tx = self.store.write().await.unwrap();
        tx.insert_application(&app).await.unwrap();
        tx.commit().await.unwrap();
        Client { app, secret }
    }

    /// A client of the main tenant with `method` (and a secret when the method uses one).
    pub(super) async fn client(&self, method: TokenEndpointAuthMethod) -> Client {
        self.client_with(method, |_| {}).await
    }

    pub(super) async fn client_with(
        &self,
        method: TokenEndpointAuthMethod,
        edit: impl FnOnce(&mut Application),
    ) -> Client {
        self.client_in(&self.tenant, method, edit).await
    }

    pub(super) async fn client_in(
        &self,
        tenant: &Tenant,
        method: TokenEndpointAuthMethod,
        edit: impl FnOnce(&mut Application),
    ) -> Client {
        let mut app = self.application(tenant, method);
        let secret = method.uses_secret().then(|| {
            let generated = GeneratedSecret::generate("cs_", &OsRandom);
            app.secret_hash = Some(generated.hash);
            generated.plaintext
        });
        edit(&mut app);
        self.insert(app, secret).await
    }

    pub(super) async fn token(
        &self,
        pairs: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        self.endpoint
            .handle(&self.tenant, &self.issuer, &form(pairs), authorization)
            .await
    }

    pub(super) async fn refused(
        &self,
        pairs: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> OAuthError {
        self.token(pairs, authorization).await.unwrap_err()
    }

    /// Decodes and verifies an access token with jsonwebtoken against the published JWKS.
    pub(super) async fn verify(&self, token: &str, audience: &str) -> (Header, Value) {
        install_provider();
        let jwks = self.keys.published_jwks(&self.tenant).await.unwrap();
        let set: JwkSet = serde_json::from_str(&jwks.json).unwrap();
        let header = jsonwebtoken::decode_header(token).unwrap();
        let jwk = set.find(header.kid.as_deref().unwrap()).unwrap();
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[audience]);
        // The manual clock runs in the future; jsonwebtoken reads the wall clock.
        validation.validate_exp = false;
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        let data =
            jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
                .unwrap();
        (data.header, data.claims)
    }
}

fn new_tenant(slug: &str) -> Tenant {
    Tenant {
        id: TenantId::generate(&ManualClock::new(start()), &OsRandom),
        slug: TenantSlug::parse(slug).unwrap(),
        display_name: slug.into(),
        status: TenantStatus::Active,
        signup_enabled: false,
        mfa_policy: svc_domain::MfaPolicy::Default,
        pairwise_secret: svc_domain::PairwiseSecret::from_bytes(&[7; 32])
            .unwrap_or_else(|| unreachable!()),
        created_at: start(),
        updated_at: start(),
    }
}

pub(super) fn install_provider() {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
}

pub(super) fn assert_same_error(a: &OAuthError, b: &OAuthError) {
    assert_eq!(a.code(), b.code());
    assert_eq!(a.description(), b.description());
    // Equal codes are equal statuses: svc-http maps each code to one status.
    assert_eq!(a.basic_challenge(), b.basic_challenge());
}

pub(super) fn assert_auth_failed(error: &OAuthError) {
    assert_eq!(error.code(), ErrorCode::InvalidClient, "{error}");
    assert_eq!(error.description(), client_auth::AUTH_FAILED, "{error}");
}

pub(super) const CC: (&str, &str) = ("grant_type", "client_credentials");

/// A client's own key pair, and how jsonwebtoken signs with it.
pub(super) struct ClientKey {
    key: SigningKey,
    alg: Algorithm,
}

impl ClientKey {
    pub(super) fn generate(alg: SigningAlg) -> Self {
        let jose = match alg {
            SigningAlg::Es256 => Algorithm::ES256,
            SigningAlg::EdDsa => Algorithm::EdDSA,
            SigningAlg::Rs256 => Algorithm::RS256,
        };
        Self {
            key: SigningKey::generate(alg).unwrap(),
            alg: jose,
        }
    }

    pub(super) fn kid(&self) -> &str {
        self.key.kid()
    }

    fn encoding_key(&self) -> EncodingKey {
        let der = self.key.to_pkcs8().unwrap();
        match self.key.alg() {
            SigningAlg::Es256 => EncodingKey::from_ec_der(&der),
            SigningAlg::EdDsa => EncodingKey::from_ed_der(&der),
            SigningAlg::Rs256 => EncodingKey::from_rsa_der(&pkcs1_of_rsa_pkcs8(&der)),
        }
    }

    /// The public JWK; for RSA without `alg`, so the same key serves RS256 and PS256.
    pub(super) fn jwk(&self) -> Value {
        let mut jwk = self.key.public_jwk();
        if self.key.alg() == SigningAlg::Rs256 {
            jwk.as_object_mut().unwrap().remove("alg");
        }
        jwk
    }

    /// Valid claims for `client_id` at `fx`'s issuer, with `overrides` (null removes a claim).
    pub(super) fn claims(fx: &Fixture, client_id: &str, overrides: Value) -> Value {
        let now = fx.clock.now().unix_timestamp();
        let mut claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": fx.issuer,
            "iat": now,
            "exp": now + 120,
            "jti": URL_SAFE_NO_PAD.encode(OsRandom.next_u128().to_le_bytes()),
        });
        for (k, v) in overrides.as_object().unwrap() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(k);
            } else {
                claims[k] = v.clone();
            }
        }
        claims
    }

    pub(super) fn sign(&self, header: Header, claims: &Value) -> String {
        install_provider();
        jsonwebtoken::encode(&header, claims, &self.encoding_key()).unwrap()
    }

    pub(super) fn header(&self) -> Header {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid().to_owned());
        header
    }

    pub(super) fn assertion(&self, fx: &Fixture, client_id: &str, overrides: Value) -> String {
        self.sign(self.header(), &Self::claims(fx, client_id, overrides))
    }
}

/// jsonwebtoken's aws-lc backend reads RSA keys as PKCS#1; svc-crypto exports PKCS#8 v1,
/// which wraps the PKCS#1 document in an OCTET STRING right after the rsaEncryption
/// AlgorithmIdentifier.
fn pkcs1_of_rsa_pkcs8(der: &[u8]) -> Vec<u8> {
    const RSA_ALGORITHM_ID: [u8; 15] = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    let at = der
        .windows(RSA_ALGORITHM_ID.len())
        .position(|w| w == RSA_ALGORITHM_ID)
        .unwrap()
        + RSA_ALGORITHM_ID.len();
    assert_eq!(der[at], 0x04, "OCTET STRING");
    let (len, start) = match der[at + 1] {
        n if n < 0x80 => (usize::from(n), at + 2),
        0x81 => (usize::from(der[at + 2]), at + 3),
        0x82 => (
            usize::from(der[at + 2]) << 8 | usize::from(der[at + 3]),
            at + 4,
        ),
        other => panic!("unexpected DER length byte {other:#x}"),
    };
    der[start..start + len].to_vec()
}

pub(super) fn jwks_of(keys: &[&ClientKey]) -> String {
    json!({ "keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>() }).to_string()
}

impl Fixture {
    pub(super) async fn jwt_client(&self, keys: &[&ClientKey]) -> Client {
        let jwks = jwks_of(keys);
        self.client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks = Some(jwks);
        })
        .await
    }

    pub(super) async fn with_assertion(
        &self,
        assertion: &str,
        extra: &[(&str, &str)],
    ) -> Result<TokenResponse, OAuthError> {
        let mut pairs = vec![
            CC,
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", assertion),
        ];
        pairs.extend_from_slice(extra);
        self.token(&pairs, None).await
    }

    pub(super) async fn assertion_refused(&self, assertion: &str) -> OAuthError {
        let error = self.with_assertion(assertion, &[]).await.unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidClient, "{error}");
        error
    }
}

//! Store-backed tests of the token endpoint: a migrated SQLite store on a temp file, ephemeral
//! signing keys and a manual clock. Named after the rule (and RFC section) they cover.

use super::*;
use crate::error::ErrorCode;
use crate::keys::{Custody, KeyService, KeyServiceSettings};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Value, json};
use std::time::Duration as StdDuration;
use svc_crypto::rotation::RotationPolicy;
use svc_crypto::{SigningAlg, SigningKey};
use svc_domain::{
    Application, ClientId, GeneratedSecret, ManualClock, OsRandom, ScopeSet, TenantId, TenantSlug,
    TenantStatus, TokenEndpointAuthMethod,
};
use time::{Duration, OffsetDateTime};

const ASSERTION_TYPE: &str = JWT_BEARER_ASSERTION_TYPE;

fn start() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_900_000_000).unwrap()
}

struct Fixture {
    endpoint: TokenEndpoint,
    store: Arc<dyn Store>,
    keys: Arc<KeyService>,
    clock: Arc<ManualClock>,
    tenant: Tenant,
    issuer: String,
    other_tenant: Tenant,
}

/// A registered application and the secret it was given, if any.
struct Client {
    app: Application,
    secret: Option<String>,
}

impl Client {
    fn id(&self) -> &str {
        self.app.id.as_str()
    }

    fn secret(&self) -> &str {
        self.secret.as_deref().unwrap()
    }

    fn basic(&self) -> String {
        basic(self.id(), self.secret())
    }
}

fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
}

fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

impl Fixture {
    async fn new() -> Self {
        Self::with_alg(SigningAlg::Es256).await
    }

    async fn with_alg(access_token_alg: SigningAlg) -> Self {
        let store: Arc<dyn Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
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
        let endpoint = TokenEndpoint::new(
            store.clone(),
            keys.clone(),
            clock.clone(),
            Arc::new(OsRandom),
            TokenSettings::default(),
        );
        Self {
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
    async fn client(&self, method: TokenEndpointAuthMethod) -> Client {
        self.client_with(method, |_| {}).await
    }

    async fn client_with(
        &self,
        method: TokenEndpointAuthMethod,
        edit: impl FnOnce(&mut Application),
    ) -> Client {
        self.client_in(&self.tenant, method, edit).await
    }

    async fn client_in(
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

    async fn token(
        &self,
        pairs: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<TokenResponse, OAuthError> {
        self.endpoint
            .handle(&self.tenant, &self.issuer, &form(pairs), authorization)
            .await
    }

    async fn refused(&self, pairs: &[(&str, &str)], authorization: Option<&str>) -> OAuthError {
        self.token(pairs, authorization).await.unwrap_err()
    }

    /// Decodes and verifies an access token with jsonwebtoken against the published JWKS.
    async fn verify(&self, token: &str, audience: &str) -> (Header, Value) {
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
        created_at: start(),
        updated_at: start(),
    }
}

fn install_provider() {
    let _ = jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.install_default();
}

fn assert_same_error(a: &OAuthError, b: &OAuthError) {
    assert_eq!(a.code(), b.code());
    assert_eq!(a.description(), b.description());
    assert_eq!(a.status(), b.status());
    assert_eq!(a.basic_challenge(), b.basic_challenge());
}

fn assert_auth_failed(error: &OAuthError) {
    assert_eq!(error.code(), ErrorCode::InvalidClient, "{error}");
    assert_eq!(error.status(), 401);
    assert_eq!(error.description(), client_auth::AUTH_FAILED, "{error}");
}

const CC: (&str, &str) = ("grant_type", "client_credentials");

// ---------------------------------------------------------------------------------------------
// Client authentication by secret (RFC 6749 §2.3.1) and `none`.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn client_secret_basic_authenticates_and_gets_a_token() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let response = fx.token(&[CC], Some(&client.basic())).await.unwrap();
    assert_eq!(response.token_type, "Bearer");
    assert_eq!(
        response.expires_in, 300,
        "system subjects get the agent lifetime"
    );
    assert_eq!(response.scope, "applications:read audit:read");
    assert_eq!(response.refresh_token, None);
    assert_eq!(response.id_token, None);
}

#[tokio::test]
async fn client_secret_post_authenticates() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let response = fx
        .token(
            &[
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
            ],
            None,
        )
        .await
        .unwrap();
    assert!(!response.access_token.is_empty());
}

#[tokio::test]
async fn none_authenticates_public_clients_by_client_id_alone() {
    let fx = Fixture::new().await;
    // Authentication succeeds; the grant then refuses (RFC 6749 §4.4: confidential only).
    let public = fx.client(TokenEndpointAuthMethod::None).await;
    let error = fx.refused(&[CC, ("client_id", public.id())], None).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    // And for a grant that arrives later: "not available yet", not invalid_client.
    let public = fx
        .client_with(TokenEndpointAuthMethod::None, |app| {
            app.grant_types = vec![GrantType::AuthorizationCode];
        })
        .await;
    let error = fx
        .refused(
            &[
                ("grant_type", "authorization_code"),
                ("client_id", public.id()),
                ("code", "c"),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::UnsupportedGrantType);
    assert!(error.description().contains("not available yet"));
}

#[tokio::test]
async fn the_registered_method_must_be_used_exactly() {
    let fx = Fixture::new().await;
    let basic_app = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let post_app = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;

    // Basic attempt by a client_secret_post client: 401 with a Basic challenge.
    let error = fx.refused(&[CC], Some(&post_app.basic())).await;
    assert_auth_failed(&error);
    assert!(error.basic_challenge());
    assert!(error.log_detail().unwrap().contains("registered method"));

    // Post attempt by a client_secret_basic client: 401 without a challenge.
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", basic_app.id()),
                ("client_secret", basic_app.secret()),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
    assert!(!error.basic_challenge());

    // A confidential client sending only its client_id.
    let error = fx.refused(&[CC, ("client_id", basic_app.id())], None).await;
    assert_auth_failed(&error);

    // A private_key_jwt client sending a secret.
    let key = ClientKey::generate(SigningAlg::Es256);
    let jwt_app = fx
        .client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks = Some(jwks_of(&[&key]));
        })
        .await;
    let error = fx
        .refused(
            &[CC, ("client_id", jwt_app.id()), ("client_secret", "guess")],
            None,
        )
        .await;
    assert_auth_failed(&error);
    let error = fx.refused(&[CC], Some(&basic(jwt_app.id(), "guess"))).await;
    assert_auth_failed(&error);

    // A client_secret_basic client presenting an assertion.
    let assertion = key.assertion(&fx, basic_app.id(), json!({}));
    let error = fx
        .refused(
            &[
                CC,
                ("client_assertion_type", ASSERTION_TYPE),
                ("client_assertion", &assertion),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
}

#[tokio::test]
async fn a_public_client_sending_a_secret_is_refused() {
    let fx = Fixture::new().await;
    let public = fx.client(TokenEndpointAuthMethod::None).await;
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", public.id()),
                ("client_secret", "anything"),
            ],
            None,
        )
        .await;
    assert_auth_failed(&error);
    let error = fx.refused(&[CC], Some(&basic(public.id(), ""))).await;
    assert_auth_failed(&error);
    assert!(error.basic_challenge());
}

#[tokio::test]
async fn unknown_client_and_wrong_secret_are_indistinguishable() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let unknown_id = ClientId::generate(fx.clock.as_ref(), &OsRandom);

    let wrong_secret = fx
        .refused(&[CC], Some(&basic(client.id(), "cs_wrong")))
        .await;
    let unknown = fx
        .refused(&[CC], Some(&basic(unknown_id.as_str(), client.secret())))
        .await;
    let malformed_id = fx
        .refused(&[CC], Some(&basic("not-an-id", client.secret())))
        .await;
    assert_auth_failed(&wrong_secret);
    assert_same_error(&wrong_secret, &unknown);
    assert_same_error(&wrong_secret, &malformed_id);
    assert!(wrong_secret.basic_challenge());
    // Only the logs can tell them apart.
    assert_eq!(wrong_secret.log_detail(), Some("wrong client secret"));
    assert_eq!(unknown.log_detail(), Some("unknown client"));

    // The same holds in the body.
    let post = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let wrong = fx
        .refused(
            &[CC, ("client_id", post.id()), ("client_secret", "x")],
            None,
        )
        .await;
    let unknown = fx
        .refused(
            &[
                CC,
                ("client_id", unknown_id.as_str()),
                ("client_secret", "x"),
            ],
            None,
        )
        .await;
    assert_same_error(&wrong, &unknown);
    assert!(!wrong.basic_challenge());
}

#[tokio::test]
async fn another_tenants_client_is_unknown_here() {
    let fx = Fixture::new().await;
    let foreign = fx
        .client_in(
            &fx.other_tenant,
            TokenEndpointAuthMethod::ClientSecretBasic,
            |_| {},
        )
        .await;
    let error = fx.refused(&[CC], Some(&foreign.basic())).await;
    assert_auth_failed(&error);
    assert_eq!(error.log_detail(), Some("unknown client"));
    // It works at its own tenant.
    let response = fx
        .endpoint
        .handle(
            &fx.other_tenant,
            "https://other.example.com",
            &form(&[CC]),
            Some(&foreign.basic()),
        )
        .await
        .unwrap();
    assert!(!response.access_token.is_empty());
}

#[tokio::test]
async fn no_client_authentication_is_invalid_client() {
    let fx = Fixture::new().await;
    let error = fx.refused(&[CC], None).await;
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(!error.basic_challenge());
}

// ---------------------------------------------------------------------------------------------
// private_key_jwt (RFC 7523 §2.2, §3; OIDC Core §9).
// ---------------------------------------------------------------------------------------------

/// A client's own key pair, and how jsonwebtoken signs with it.
struct ClientKey {
    key: SigningKey,
    alg: Algorithm,
}

impl ClientKey {
    fn generate(alg: SigningAlg) -> Self {
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

    fn kid(&self) -> &str {
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
    fn jwk(&self) -> Value {
        let mut jwk = self.key.public_jwk();
        if self.key.alg() == SigningAlg::Rs256 {
            jwk.as_object_mut().unwrap().remove("alg");
        }
        jwk
    }

    /// Valid claims for `client_id` at `fx`'s issuer, with `overrides` (null removes a claim).
    fn claims(fx: &Fixture, client_id: &str, overrides: Value) -> Value {
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

    fn sign(&self, header: Header, claims: &Value) -> String {
        install_provider();
        jsonwebtoken::encode(&header, claims, &self.encoding_key()).unwrap()
    }

    fn header(&self) -> Header {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid().to_owned());
        header
    }

    fn assertion(&self, fx: &Fixture, client_id: &str, overrides: Value) -> String {
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

fn jwks_of(keys: &[&ClientKey]) -> String {
    json!({ "keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>() }).to_string()
}

impl Fixture {
    async fn jwt_client(&self, keys: &[&ClientKey]) -> Client {
        let jwks = jwks_of(keys);
        self.client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks = Some(jwks);
        })
        .await
    }

    async fn with_assertion(
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

    async fn assertion_refused(&self, assertion: &str) -> OAuthError {
        let error = self.with_assertion(assertion, &[]).await.unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidClient, "{error}");
        assert_eq!(error.status(), 401);
        error
    }
}

#[tokio::test]
async fn private_key_jwt_authenticates_with_every_supported_algorithm() {
    let fx = Fixture::new().await;
    let es = ClientKey::generate(SigningAlg::Es256);
    let ed = ClientKey::generate(SigningAlg::EdDsa);
    let rsa = ClientKey::generate(SigningAlg::Rs256);
    let client = fx.jwt_client(&[&es, &ed, &rsa]).await;
    for (key, alg) in [
        (&es, Algorithm::ES256),
        (&ed, Algorithm::EdDSA),
        (&rsa, Algorithm::RS256),
        (&rsa, Algorithm::PS256),
    ] {
        let mut header = key.header();
        header.alg = alg;
        let assertion = key.sign(header, &ClientKey::claims(&fx, client.id(), json!({})));
        let response = fx.with_assertion(&assertion, &[]).await;
        assert!(response.is_ok(), "{alg:?}: {:?}", response.err());
    }
    // With a matching client_id in the body, and aud = the token endpoint URL.
    let assertion = es.assertion(
        &fx,
        client.id(),
        json!({"aud": format!("{}/oauth/token", fx.issuer)}),
    );
    fx.with_assertion(&assertion, &[("client_id", client.id())])
        .await
        .unwrap();
}

#[tokio::test]
async fn private_key_jwt_refuses_alg_none_and_hmac_with_the_public_key() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let claims = ClientKey::claims(&fx, client.id(), json!({}));

    // alg=none, empty signature (CVE-2026-16093).
    let none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(json!({"alg": "none", "kid": key.kid()}).to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let error = fx.assertion_refused(&none).await;
    assert!(error.description().contains("never none or HMAC"));

    // HS256 keyed with the public key (the classic algorithm-confusion attack), both the JWK
    // text and the raw public coordinates as the "secret".
    let jwk_text = key.jwk().to_string();
    for secret in [
        jwk_text.as_bytes().to_vec(),
        URL_SAFE_NO_PAD
            .decode(key.jwk()["x"].as_str().unwrap())
            .unwrap(),
    ] {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(key.kid().to_owned());
        install_provider();
        let forged =
            jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(&secret)).unwrap();
        let error = fx.assertion_refused(&forged).await;
        assert!(error.description().contains("never none or HMAC"));
    }
}

#[tokio::test]
async fn private_key_jwt_refuses_expired_and_long_lived_assertions() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let now = fx.clock.now().unix_timestamp();

    // exp five minutes in the past (FAPI2 ensure-client-assertion-with-exp-is-5-minutes-in-past).
    let expired = key.assertion(
        &fx,
        client.id(),
        json!({"exp": now - 300, "iat": now - 400}),
    );
    assert!(
        fx.assertion_refused(&expired)
            .await
            .description()
            .contains("expired")
    );

    let long = key.assertion(&fx, client.id(), json!({"exp": now + 3600}));
    assert!(
        fx.assertion_refused(&long)
            .await
            .description()
            .contains("expire within")
    );

    let no_exp = key.assertion(&fx, client.id(), json!({"exp": null}));
    assert!(
        fx.assertion_refused(&no_exp)
            .await
            .description()
            .contains("exp")
    );

    // nbf 8 s ahead is fine; over 60 s is not.
    let soon = key.assertion(&fx, client.id(), json!({"nbf": now + 8}));
    fx.with_assertion(&soon, &[]).await.unwrap();
    let later = key.assertion(&fx, client.id(), json!({"nbf": now + 61}));
    assert!(
        fx.assertion_refused(&later)
            .await
            .description()
            .contains("nbf")
    );
    let future_iat = key.assertion(&fx, client.id(), json!({"iat": now + 120}));
    assert!(
        fx.assertion_refused(&future_iat)
            .await
            .description()
            .contains("iat")
    );

    // Time passing makes a once-valid assertion expire.
    let fresh = key.assertion(&fx, client.id(), json!({}));
    fx.clock.advance(Duration::seconds(121));
    assert!(
        fx.assertion_refused(&fresh)
            .await
            .description()
            .contains("expired")
    );
}

#[tokio::test]
async fn private_key_jwt_refuses_a_replayed_jti() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::EdDsa);
    let client = fx.jwt_client(&[&key]).await;
    let assertion = key.assertion(&fx, client.id(), json!({"jti": "once"}));
    fx.with_assertion(&assertion, &[]).await.unwrap();
    let error = fx.assertion_refused(&assertion).await;
    assert_eq!(error.description(), "client assertion replayed");
    // A new assertion with the same jti is a replay too.
    let again = key.assertion(
        &fx,
        client.id(),
        json!({"jti": "once", "exp": fx.clock.now().unix_timestamp() + 60}),
    );
    assert_eq!(
        fx.assertion_refused(&again).await.description(),
        "client assertion replayed"
    );
    let missing = key.assertion(&fx, client.id(), json!({"jti": null}));
    assert!(
        fx.assertion_refused(&missing)
            .await
            .description()
            .contains("jti")
    );
}

#[tokio::test]
async fn private_key_jwt_refuses_a_wrong_audience() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    for aud in [
        json!("https://other.example.com"),
        json!(format!("{}/oauth/par", fx.issuer)),
        json!(format!("https://other.example.com/oauth/token")),
        json!(null),
    ] {
        let assertion = key.assertion(&fx, client.id(), json!({ "aud": aud.clone() }));
        assert!(
            fx.assertion_refused(&assertion)
                .await
                .description()
                .contains("aud"),
            "{aud}"
        );
    }
}

#[tokio::test]
async fn private_key_jwt_refuses_a_wrong_iss_or_sub() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let other = fx.jwt_client(&[&key]).await;

    let wrong_iss = key.assertion(&fx, client.id(), json!({"iss": other.id()}));
    assert!(
        fx.assertion_refused(&wrong_iss)
            .await
            .description()
            .contains("iss")
    );

    let no_sub = key.assertion(&fx, client.id(), json!({"sub": null}));
    assert!(
        fx.assertion_refused(&no_sub)
            .await
            .description()
            .contains("sub")
    );

    // sub names another client (with the same key): iss no longer matches.
    let wrong_sub = key.assertion(&fx, client.id(), json!({"sub": other.id()}));
    assert!(
        fx.assertion_refused(&wrong_sub)
            .await
            .description()
            .contains("iss")
    );

    // The body client_id must equal sub.
    let good = key.assertion(&fx, client.id(), json!({}));
    let error = fx
        .with_assertion(&good, &[("client_id", other.id())])
        .await
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(error.description().contains("sub"));
}

#[tokio::test]
async fn private_key_jwt_refuses_unknown_kids_and_foreign_signatures() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let stranger = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let claims = ClientKey::claims(&fx, client.id(), json!({}));

    // A kid the client never registered.
    let unknown_kid = stranger.sign(stranger.header(), &claims);
    assert_auth_failed(&fx.assertion_refused(&unknown_kid).await);

    // Signed by another key but claiming the registered kid.
    let mut header = stranger.header();
    header.kid = Some(key.kid().to_owned());
    let forged = stranger.sign(header, &claims);
    let error = fx.assertion_refused(&forged).await;
    assert_auth_failed(&error);
    assert!(error.log_detail().unwrap().contains("signature"));

    // No kid: the only key is used, so the stranger's signature still fails...
    let mut header = stranger.header();
    header.kid = None;
    assert_auth_failed(&fx.assertion_refused(&stranger.sign(header, &claims)).await);
    // ...and the owner's succeeds.
    let mut header = key.header();
    header.kid = None;
    fx.with_assertion(&key.sign(header, &claims), &[])
        .await
        .unwrap();

    // An unknown client id in sub looks like any other failure.
    let unknown = ClientId::generate(fx.clock.as_ref(), &OsRandom);
    let error = fx
        .assertion_refused(&key.assertion(&fx, unknown.as_str(), json!({})))
        .await;
    assert_auth_failed(&error);
}

#[tokio::test]
async fn private_key_jwt_needs_the_jwt_bearer_assertion_type() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx.jwt_client(&[&key]).await;
    let assertion = key.assertion(&fx, client.id(), json!({}));
    let error = fx
        .refused(
            &[
                CC,
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:saml2-bearer",
                ),
                ("client_assertion", &assertion),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidClient);
    assert!(error.description().contains("client_assertion_type"));
}

struct StaticFetcher(String);

#[async_trait]
impl JwksFetcher for StaticFetcher {
    async fn fetch(&self, uri: &str) -> Result<String, String> {
        if uri == "https://client.example.com/jwks.json" {
            Ok(self.0.clone())
        } else {
            Err(format!("unexpected {uri}"))
        }
    }
}

#[tokio::test]
async fn private_key_jwt_with_jwks_uri_uses_the_fetcher_when_there_is_one() {
    let fx = Fixture::new().await;
    let key = ClientKey::generate(SigningAlg::Es256);
    let client = fx
        .client_with(TokenEndpointAuthMethod::PrivateKeyJwt, |app| {
            app.jwks_uri = Some("https://client.example.com/jwks.json".into());
        })
        .await;
    // Without a fetcher.
    let error = fx
        .assertion_refused(&key.assertion(&fx, client.id(), json!({})))
        .await;
    assert_eq!(error.description(), "jwks_uri not supported");

    // With one.
    let endpoint = TokenEndpoint::new(
        fx.store.clone(),
        fx.keys.clone(),
        fx.clock.clone(),
        Arc::new(OsRandom),
        TokenSettings::default(),
    )
    .with_jwks_fetcher(Arc::new(StaticFetcher(jwks_of(&[&key]))));
    let assertion = key.assertion(&fx, client.id(), json!({}));
    endpoint
        .handle(
            &fx.tenant,
            &fx.issuer,
            &form(&[
                CC,
                ("client_assertion_type", ASSERTION_TYPE),
                ("client_assertion", &assertion),
            ]),
            None,
        )
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// The client credentials grant (RFC 6749 §4.4) and the issued token (RFC 9068).
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn the_issued_token_verifies_against_the_published_jwks_with_the_expected_claims() {
    for alg in [SigningAlg::Es256, SigningAlg::EdDsa] {
        let fx = Fixture::with_alg(alg).await;
        let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
        let response = fx
            .token(&[CC, ("scope", "audit:read")], Some(&client.basic()))
            .await
            .unwrap();
        let audience = format!("{}/api/v1", fx.issuer);
        let (header, claims) = fx.verify(&response.access_token, &audience).await;
        assert_eq!(header.typ.as_deref(), Some("at+jwt"), "{alg}");
        assert_eq!(
            header.alg,
            if alg == SigningAlg::Es256 {
                Algorithm::ES256
            } else {
                Algorithm::EdDSA
            }
        );
        let now = start().unix_timestamp();
        assert_eq!(claims["iss"], fx.issuer);
        assert_eq!(claims["sub"], client.id());
        assert_eq!(claims["aud"], audience);
        assert_eq!(claims["iat"], now);
        assert_eq!(claims["nbf"], now);
        assert_eq!(claims["exp"], now + 300);
        assert_eq!(claims["tenant_id"], fx.tenant.id.as_str());
        assert_eq!(claims["client_id"], client.id());
        assert_eq!(claims["scope"], "audit:read");
        assert_eq!(claims["subject_type"], "system");
        let jti = claims["jti"].as_str().unwrap();
        assert!(
            URL_SAFE_NO_PAD.decode(jti).unwrap().len() >= 16,
            "≥128 bits"
        );
        assert_eq!(response.expires_in, 300);

        // Two tokens never share a jti.
        let second = fx.token(&[CC], Some(&client.basic())).await.unwrap();
        let (_, second) = fx.verify(&second.access_token, &audience).await;
        assert_ne!(second["jti"], claims["jti"]);
    }
}

#[tokio::test]
async fn client_credentials_scopes_default_narrow_and_refuse() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let auth = client.basic();

    let all = fx.token(&[CC], Some(&auth)).await.unwrap();
    assert_eq!(all.scope, "applications:read audit:read");

    let subset = fx
        .token(
            &[CC, ("scope", "audit:read applications:read audit:read")],
            Some(&auth),
        )
        .await
        .unwrap();
    assert_eq!(
        subset.scope, "applications:read audit:read",
        "sorted, deduplicated"
    );

    let error = fx
        .refused(&[CC, ("scope", "audit:read users:write")], Some(&auth))
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidScope);
    assert!(error.description().contains("users:write"));
    assert_eq!(error.status(), 400);

    let error = fx
        .refused(&[CC, ("scope", "audit:read  x")], Some(&auth))
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidScope);
    assert!(error.description().contains("malformed"));
}

#[tokio::test]
async fn client_credentials_audience_follows_resource_and_registration() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.api_audience = Some("https://api.example.net".into());
        })
        .await;
    let auth = client.basic();

    let default = fx.token(&[CC], Some(&auth)).await.unwrap();
    fx.verify(&default.access_token, "https://api.example.net")
        .await;

    let explicit = fx
        .token(&[CC, ("resource", "https://api.example.net")], Some(&auth))
        .await
        .unwrap();
    fx.verify(&explicit.access_token, "https://api.example.net")
        .await;

    for resources in [
        vec![("resource", "https://elsewhere.example.net")],
        vec![("resource", "https://api.example.net#x")],
        vec![("resource", "api.example.net")],
        vec![
            ("resource", "https://api.example.net"),
            ("resource", "https://api.example.net"),
        ],
    ] {
        let mut pairs = vec![CC];
        pairs.extend(resources.iter().copied());
        let error = fx.refused(&pairs, Some(&auth)).await;
        assert_eq!(error.code(), ErrorCode::InvalidTarget, "{resources:?}");
        assert_eq!(error.status(), 400);
    }
}

#[tokio::test]
async fn client_credentials_never_issues_a_refresh_token() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.allowed_scopes = ScopeSet::parse("offline_access openid audit:read").unwrap();
            app.grant_types = vec![GrantType::ClientCredentials, GrantType::RefreshToken];
        })
        .await;
    let response = fx
        .token(
            &[CC, ("scope", "offline_access openid")],
            Some(&client.basic()),
        )
        .await
        .unwrap();
    assert_eq!(response.refresh_token, None);
    assert_eq!(response.id_token, None);
    let body = serde_json::to_value(&response).unwrap();
    assert!(body.get("refresh_token").is_none() && body.get("id_token").is_none());
}

#[tokio::test]
async fn grants_not_allowed_on_the_application_are_unauthorized_client() {
    let fx = Fixture::new().await;
    let client = fx
        .client_with(TokenEndpointAuthMethod::ClientSecretBasic, |app| {
            app.grant_types = vec![GrantType::AuthorizationCode];
        })
        .await;
    let error = fx.refused(&[CC], Some(&client.basic())).await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    let error = fx
        .refused(
            &[("grant_type", "refresh_token"), ("refresh_token", "r")],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::UnauthorizedClient);
    // The allowed one that has no engine yet.
    let error = fx
        .refused(
            &[("grant_type", "authorization_code"), ("code", "c")],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::UnsupportedGrantType);
    assert!(error.description().contains("not available yet"));
}

#[tokio::test]
async fn unsupported_malformed_and_missing_grant_types() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let auth = client.basic();
    for grant in [
        "password",
        "implicit",
        "urn:ietf:params:oauth:grant-type:device_code",
        "client credentials",
        "CLIENT_CREDENTIALS",
    ] {
        let error = fx.refused(&[("grant_type", grant)], Some(&auth)).await;
        assert_eq!(error.code(), ErrorCode::UnsupportedGrantType, "{grant}");
        assert_eq!(error.status(), 400);
    }
    let error = fx.refused(&[("scope", "audit:read")], Some(&auth)).await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn duplicated_parameters_are_invalid_request() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretPost).await;
    let error = fx
        .refused(
            &[
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
                ("scope", "audit:read"),
                ("scope", "applications:read"),
            ],
            None,
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(error.description().contains("`scope`"));
    let error = fx
        .refused(
            &[
                CC,
                CC,
                ("client_id", client.id()),
                ("client_secret", client.secret()),
            ],
            None,
        )
        .await;
    assert!(error.description().contains("`grant_type`"));
}

#[tokio::test]
async fn several_authentication_mechanisms_are_invalid_request() {
    let fx = Fixture::new().await;
    let client = fx.client(TokenEndpointAuthMethod::ClientSecretBasic).await;
    let error = fx
        .refused(
            &[CC, ("client_secret", client.secret())],
            Some(&client.basic()),
        )
        .await;
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
}

#[tokio::test]
async fn the_client_id_hint_needs_no_store() {
    let client = "app_01jd0000000000000000000000";
    assert_eq!(
        client_id_hint(&form(&[CC]), Some(&basic(client, "s"))).as_deref(),
        Some(client)
    );
}

//! A social provider built for the tests (issue 20 item 3 asks for one): one loopback server
//! playing both kinds of upstream svc signs people in through.
//!
//! - an **OpenID provider** at its root: discovery, key set, `/authorize` (answers at once
//!   with a code for the person the test set, and RFC 9207 `iss`), `/token` (HTTP Basic
//!   client authentication, the code bound to its redirect URI and PKCE challenge, single use;
//!   the ID token carries the authorization request's nonce), `/userinfo`;
//! - a **GitHub**-style OAuth 2.0 server under the GitHub Enterprise Server paths
//!   (`/login/oauth/authorize`, `/login/oauth/access_token` with the client secret in the body,
//!   `/api/v3/user` with a numeric `id` and no verified address, `/api/v3/user/emails`).
//!
//! Every rule a real provider applies to us is applied here, so a request svc gets wrong
//! fails the test: a wrong secret, verifier or redirect URI is `invalid_grant`/`invalid_client`.

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The client secret the provider expects.
pub(crate) const SECRET: &str = "upstream-client-secret";

/// Who signs in at the provider next.
#[derive(Debug, Clone)]
pub(crate) struct Person {
    /// The OpenID subject (or GitHub's numeric id, as text).
    pub subject: String,
    /// The address.
    pub email: Option<String>,
    /// Whether the provider vouches for it (OpenID: `email_verified`; GitHub: the address is
    /// the verified primary of `/user/emails`).
    pub verified: bool,
    /// The name.
    pub name: String,
}

impl Person {
    pub(crate) fn new(subject: &str, email: &str, verified: bool) -> Self {
        Self {
            subject: subject.to_owned(),
            email: Some(email.to_owned()),
            verified,
            name: "Ada Lovelace".to_owned(),
        }
    }
}

#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    nonce: Option<String>,
    person: Person,
}

#[derive(Default)]
struct Inner {
    person: Option<Person>,
    codes: HashMap<String, Grant>,
    tokens: HashMap<String, Person>,
    /// An `aud` to put in the next ID tokens instead of the client id (hostile answers).
    aud: Option<String>,
    next: u64,
    /// Token requests seen, with their client authentication, for the assertions.
    token_requests: Vec<Value>,
}

/// The provider.
#[derive(Clone)]
pub(crate) struct SocialProvider {
    /// Its base URL (`http://127.0.0.1:<port>`): the OpenID issuer and GitHub's base.
    pub base: String,
    key: Arc<svc_crypto::SigningKey>,
    inner: Arc<Mutex<Inner>>,
}

impl SocialProvider {
    /// Starts it on a free loopback port.
    pub(crate) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let provider = Self {
            base,
            key: Arc::new(svc_crypto::SigningKey::generate(svc_crypto::SigningAlg::Es256).unwrap()),
            inner: Arc::new(Mutex::new(Inner::default())),
        };
        let router = axum::Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", post(oidc_token))
            .route("/userinfo", get(userinfo))
            .route("/login/oauth/authorize", get(authorize))
            .route("/login/oauth/access_token", post(github_token))
            .route("/api/v3/user", get(github_user))
            .route("/api/v3/user/emails", get(github_emails))
            .with_state(provider.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        provider
    }

    /// The person the next authorization request signs in.
    pub(crate) fn sign_in_as(&self, person: Person) {
        self.inner.lock().unwrap().person = Some(person);
    }

    /// Puts `aud` in the next ID tokens (a token for another client).
    pub(crate) fn answer_for_audience(&self, aud: Option<&str>) {
        self.inner.lock().unwrap().aud = aud.map(str::to_owned);
    }

    /// The token requests seen so far.
    pub(crate) fn token_requests(&self) -> Vec<Value> {
        self.inner.lock().unwrap().token_requests.clone()
    }

    fn next_id(&self, prefix: &str) -> String {
        let mut inner = self.inner.lock().unwrap();
        inner.next += 1;
        format!("{prefix}-{}", inner.next)
    }
}

async fn discovery(State(p): State<SocialProvider>) -> Response {
    let b = &p.base;
    axum::Json(json!({
        "issuer": b,
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "jwks_uri": format!("{b}/jwks"),
        "userinfo_endpoint": format!("{b}/userinfo"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

async fn jwks(State(p): State<SocialProvider>) -> Response {
    axum::Json(json!({"keys": [p.key.public_jwk()]})).into_response()
}

/// Both kinds' authorization endpoint: the person the test set approves at once.
async fn authorize(
    State(p): State<SocialProvider>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let field = |n: &str| q.get(n).cloned().unwrap_or_default();
    if field("response_type") != "code" || field("code_challenge_method") != "S256" {
        return (StatusCode::BAD_REQUEST, "code flow with S256 only").into_response();
    }
    let Some(person) = p.inner.lock().unwrap().person.clone() else {
        return (StatusCode::FORBIDDEN, "nobody signs in").into_response();
    };
    let code = p.next_id("code");
    let grant = Grant {
        client_id: field("client_id"),
        redirect_uri: field("redirect_uri"),
        challenge: field("code_challenge"),
        nonce: q.get("nonce").cloned(),
        person,
    };
    let oidc = grant.nonce.is_some();
    p.inner.lock().unwrap().codes.insert(code.clone(), grant);
    let mut back = url::Url::parse(&field("redirect_uri")).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    if oidc {
        back.query_pairs_mut().append_pair("iss", &p.base);
    }
    (StatusCode::SEE_OTHER, [("location", back.to_string())]).into_response()
}

/// Redeems `code` for `client_id` with `verifier` and `redirect_uri` (RFC 6749 §4.1.3, RFC
/// 7636 §4.6): the grant, spent, or why not.
fn redeem(
    p: &SocialProvider,
    form: &HashMap<String, String>,
    client_id: &str,
) -> Result<Grant, &'static str> {
    let field = |n: &str| form.get(n).cloned().unwrap_or_default();
    let grant = p
        .inner
        .lock()
        .unwrap()
        .codes
        .remove(&field("code"))
        .ok_or("invalid_grant")?;
    let digest = svc_crypto::digest::sha256(field("code_verifier").as_bytes());
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
    if field("grant_type") != "authorization_code"
        || grant.client_id != client_id
        || grant.redirect_uri != field("redirect_uri")
        || grant.challenge != challenge
    {
        return Err("invalid_grant");
    }
    Ok(grant)
}

fn refused(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
}

/// The OpenID token endpoint: HTTP Basic client authentication only.
async fn oidc_token(
    State(p): State<SocialProvider>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let basic = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|v| base64::engine::general_purpose::STANDARD.decode(v).ok())
        .and_then(|v| String::from_utf8(v).ok());
    p.inner
        .lock()
        .unwrap()
        .token_requests
        .push(json!({"kind": "oidc", "basic": basic.is_some(), "body_secret": form.contains_key("client_secret")}));
    let Some((client_id, secret)) = basic.as_deref().and_then(|b| b.split_once(':')) else {
        return refused("invalid_client");
    };
    if secret != SECRET {
        return refused("invalid_client");
    }
    let grant = match redeem(&p, &form, client_id) {
        Ok(grant) => grant,
        Err(e) => return refused(e),
    };
    let now = svc_domain::Clock::now(&svc_domain::SystemClock).unix_timestamp();
    let aud = p
        .inner
        .lock()
        .unwrap()
        .aud
        .clone()
        .unwrap_or_else(|| client_id.to_owned());
    let person = &grant.person;
    let mut claims = json!({
        "iss": p.base, "aud": aud, "sub": person.subject, "iat": now, "exp": now + 300,
        "nonce": grant.nonce, "name": person.name,
    });
    if let Some(email) = &person.email {
        claims["email"] = json!(email);
        claims["email_verified"] = json!(person.verified);
    }
    let access = p.next_id("at");
    p.inner
        .lock()
        .unwrap()
        .tokens
        .insert(access.clone(), person.clone());
    axum::Json(json!({
        "access_token": access, "token_type": "Bearer", "expires_in": 300,
        "id_token": p.key.sign_jwt("JWT", &claims).unwrap(),
    }))
    .into_response()
}

/// The person behind a bearer token.
fn bearer(p: &SocialProvider, headers: &HeaderMap) -> Option<Person> {
    let token = headers
        .get("authorization")?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")?;
    p.inner.lock().unwrap().tokens.get(token).cloned()
}

async fn userinfo(State(p): State<SocialProvider>, headers: HeaderMap) -> Response {
    match bearer(&p, &headers) {
        Some(person) => axum::Json(json!({
            "sub": person.subject, "email": person.email, "email_verified": person.verified,
        }))
        .into_response(),
        None => StatusCode::UNAUTHORIZED.into_response(),
    }
}

/// GitHub's token endpoint: the client secret in the body (`client_secret_post`), JSON only
/// when asked for by `Accept`.
async fn github_token(
    State(p): State<SocialProvider>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    p.inner.lock().unwrap().token_requests.push(json!({
        "kind": "github",
        "basic": headers.contains_key("authorization"),
        "body_secret": form.contains_key("client_secret"),
    }));
    let wants_json = headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    if !wants_json {
        return "error=not_json".into_response();
    }
    let client_id = form.get("client_id").cloned().unwrap_or_default();
    if form.get("client_secret").map(String::as_str) != Some(SECRET) {
        return refused("incorrect_client_credentials");
    }
    let grant = match redeem(&p, &form, &client_id) {
        Ok(grant) => grant,
        Err(e) => return refused(e),
    };
    let access = p.next_id("gho");
    p.inner
        .lock()
        .unwrap()
        .tokens
        .insert(access.clone(), grant.person);
    axum::Json(
        json!({"access_token": access, "token_type": "bearer", "scope": "read:user,user:email"}),
    )
    .into_response()
}

/// `GET /api/v3/user`: a numeric id and the public address, which GitHub never vouches for.
async fn github_user(State(p): State<SocialProvider>, headers: HeaderMap) -> Response {
    let has_agent = headers.contains_key("user-agent");
    match bearer(&p, &headers) {
        // GitHub's API refuses requests without a User-Agent.
        Some(_) if !has_agent => StatusCode::FORBIDDEN.into_response(),
        Some(person) => axum::Json(json!({
            "id": person.subject.parse::<u64>().unwrap_or(0),
            "login": "ada", "name": person.name, "email": null,
        }))
        .into_response(),
        None => StatusCode::UNAUTHORIZED.into_response(),
    }
}

/// `GET /api/v3/user/emails`: a secondary verified address first, then the primary.
async fn github_emails(State(p): State<SocialProvider>, headers: HeaderMap) -> Response {
    match bearer(&p, &headers) {
        Some(person) => {
            let mut list = vec![json!({
                "email": "secondary@elsewhere.example", "primary": false, "verified": true,
            })];
            if let Some(email) = &person.email {
                list.push(json!({"email": email, "primary": true, "verified": person.verified}));
            }
            axum::Json(Value::Array(list)).into_response()
        }
        None => StatusCode::UNAUTHORIZED.into_response(),
    }
}

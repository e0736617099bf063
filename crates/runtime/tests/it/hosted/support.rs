//! Helpers of the hosted sign-in tests: an app serving tenants under `localhost` with cheap
//! Argon2 and mail written to a file, a tenant with an application and a person, and a
//! [`Browser`] (cookie jar, no redirects followed) that reads forms the way a person fills them.

use crate::common::operator_token;
use reqwest::cookie::{CookieStore, Jar};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use svc_testkit::{Backend, TestApp};

/// A PKCE verifier and its S256 challenge (base64url of its SHA-256, RFC 7636 §4.2).
pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mJ92ZAzg4pdM0LMXh6x5rQOQnDJfWM";
pub(crate) const CHALLENGE: &str = "2XHK-GJmT4fXkaU7betaGOmS_rNgq58J-MKNvwiC4cQ";
/// The application's registered redirect URI.
pub(crate) const REDIRECT: &str = "https://app.example.com/callback";
/// The password of [`World::user`].
pub(crate) const PASSWORD: &str = "correct horse battery staple";
/// What a hostile value looks like in every reflected parameter.
pub(crate) const XSS: &str = "\"><img src=x onerror=alert(1)><script>alert(2)</script>";

/// A running app, a tenant with an application and a person, and where mail goes.
pub(crate) struct World {
    pub(crate) app: TestApp,
    pub(crate) host: String,
    pub(crate) token: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    pub(crate) user: String,
    /// The operator token that created the tenant, and the tenant's id.
    operator: String,
    tenant_id: String,
    mail: PathBuf,
    _dir: tempfile::TempDir,
}

/// Options of [`World::new`].
#[derive(Default)]
pub(crate) struct Setup {
    pub(crate) signup: bool,
    pub(crate) first_party: bool,
    pub(crate) client_name: Option<String>,
    /// More environment for the app (e.g. webhook delivery settings).
    pub(crate) env: Vec<(&'static str, &'static str)>,
    /// The app's clock, when the test moves time itself.
    pub(crate) clock: Option<Arc<svc_domain::ManualClock>>,
}

impl World {
    /// The app on `backend` with tenant `acme` (sign-up as asked), a third-party (or
    /// first-party) code-flow application and a person `ada@example.com`.
    pub(crate) async fn new(backend: Backend, setup: Setup) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mail = dir.path().join("mail.jsonl");
        let sink = format!("file:{}", mail.display());
        let mut env = vec![("SVC_SERVER__BASE_DOMAIN", "localhost")];
        env.extend([
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_EMAIL__PROVIDER", "log"),
        ]);
        env.push(("SVC_EMAIL__LOG__SINK", sink.as_str()));
        env.extend(setup.env.iter().copied());
        let app = match &setup.clock {
            None => TestApp::spawn_with(backend, &env).await,
            Some(clock) => {
                let options = svc_runtime::BuildOptions {
                    clock: clock.clone(),
                    ..TestApp::options()
                };
                TestApp::try_spawn_with_options(backend, &env, options)
                    .await
                    .unwrap_or_else(|e| panic!("test app failed to start: {e}"))
            }
        };
        let operator = operator_token(&app).await;
        let created = app
            .request(reqwest::Method::POST, "/api/v1/control-plane/tenants")
            .bearer_auth(&operator)
            .json(&json!({"slug": "acme", "display_name": "Acme Corp", "signup_enabled": setup.signup}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
        let created: Value = created.json().await.unwrap();
        let port = app.url.rsplit(':').next().unwrap().to_owned();
        let host = format!("acme.localhost:{port}");
        let management = &created["management_application"];
        let token = management_token(
            &app,
            &host,
            management["client_id"].as_str().unwrap(),
            management["client_secret"].as_str().unwrap(),
        )
        .await;
        let mut world = Self {
            host,
            app,
            token,
            client_id: String::new(),
            client_secret: String::new(),
            user: "ada@example.com".into(),
            tenant_id: created["tenant"]["id"].as_str().unwrap().to_owned(),
            operator,
            mail,
            _dir: dir,
        };
        let name = setup.client_name.unwrap_or_else(|| "Shop".into());
        let (id, secret) = world.register(&name, setup.first_party).await;
        world.client_id = id;
        world.client_secret = secret;
        let user = world.user.clone();
        world.create_user(&user, PASSWORD).await;
        world
    }

    /// Another tenant `slug` of the same app, created by the world's operator.
    pub(crate) async fn other_tenant(&self, slug: &str) -> crate::common::CreatedTenant {
        crate::common::create_tenant(&self.app, &self.operator, slug).await
    }

    /// Changes the tenant through the control plane (`PATCH`): the answer.
    pub(crate) async fn patch_tenant(&self, patch: Value) -> reqwest::Response {
        self.app
            .request(
                reqwest::Method::PATCH,
                &format!("/api/v1/control-plane/tenants/{}", self.tenant_id),
            )
            .bearer_auth(&self.operator)
            .json(&patch)
            .send()
            .await
            .unwrap()
    }

    /// Registers a code-flow application: `(client_id, client_secret)`.
    pub(crate) async fn register(&self, name: &str, first_party: bool) -> (String, String) {
        self.register_with(json!({"name": name, "first_party": first_party}))
            .await
    }

    /// Registers a code-flow application whose registration is the defaults of
    /// [`World::register`] with the members of `overrides`: `(client_id, client_secret)`.
    pub(crate) async fn register_with(&self, overrides: Value) -> (String, String) {
        let mut body = json!({
            "name": "Shop",
            "redirect_uris": [REDIRECT],
            "post_logout_redirect_uris": ["https://app.example.com/bye"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "profile", "email", "offline_access"],
            "first_party": false,
        });
        for (key, value) in overrides.as_object().unwrap() {
            body[key] = value.clone();
        }
        let response = self
            .api(reqwest::Method::POST, "/api/v1/applications")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{body}");
        let body: Value = response.json().await.unwrap();
        (
            body["client_id"].as_str().unwrap().to_owned(),
            body["client_secret"].as_str().unwrap().to_owned(),
        )
    }

    /// Creates an active person with a password through the management API.
    pub(crate) async fn create_user(&self, email: &str, password: &str) -> Value {
        let response = self
            .api(reqwest::Method::POST, "/api/v1/tenant-users")
            .json(&json!({"email": email, "password": password, "name": "Ada Lovelace"}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert_eq!(status, 201, "{body}");
        body
    }

    /// A management API request on the tenant's host.
    pub(crate) fn api(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .request(method, path)
            .header("host", &self.host)
            .bearer_auth(&self.token)
    }

    /// The tenant's issuer.
    pub(crate) fn issuer(&self) -> String {
        format!("http://{}", self.host)
    }

    /// The tenant's OpenID discovery document.
    pub(crate) async fn discovery(&self) -> Value {
        self.app
            .request(reqwest::Method::GET, "/.well-known/openid-configuration")
            .header("host", &self.host)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// A fresh browser (empty cookie jar).
    pub(crate) fn browser(&self) -> Browser {
        Browser::new(&self.app, &self.host)
    }

    /// `/oauth/authorize?…` for the world's application, with PKCE and `state`.
    pub(crate) fn authorize_path(
        &self,
        scope: &str,
        state: &str,
        extra: &[(&str, &str)],
    ) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("scope", scope)
            .append_pair("state", state)
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256");
        for (k, v) in extra {
            query.append_pair(k, v);
        }
        format!("/oauth/authorize?{}", query.finish())
    }

    /// Every mail sent so far, as JSON lines of the log sink.
    fn mails(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.mail)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect()
    }

    /// The mails sent to `to`, waiting up to ten seconds until there are at least `at_least`
    /// (mail leaves from a background task, after the answer).
    pub(crate) async fn mails_to(&self, to: &str, at_least: usize) -> Vec<Value> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let mails: Vec<Value> = self.mails().into_iter().filter(|m| m["to"] == to).collect();
            if mails.len() >= at_least || std::time::Instant::now() > deadline {
                return mails;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }

    /// The one-time link most recently mailed to `to` whose path is `path` (waiting for it).
    pub(crate) async fn mailed_link(&self, to: &str, path: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let link = loop {
            let found = self
                .mails()
                .into_iter()
                .filter(|m| m["to"] == to)
                .filter_map(|m| m["link"].as_str().map(str::to_owned))
                .rfind(|l| l.contains(path));
            match found {
                Some(link) => break link,
                None if std::time::Instant::now() > deadline => {
                    panic!("no {path} link mailed to {to}: {:?}", self.mails())
                }
                None => tokio::time::sleep(std::time::Duration::from_millis(25)).await,
            }
        };
        assert!(
            link.starts_with(&self.issuer()),
            "links use the issuer: {link}"
        );
        link.replacen(&self.issuer(), "", 1)
    }

    /// How many messages went to `to`, after giving background sends a moment (for asserting
    /// that nothing was sent).
    pub(crate) async fn mail_count(&self, to: &str) -> usize {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        self.mails().into_iter().filter(|m| m["to"] == to).count()
    }

    /// Runs the authorization request of `client_id` for `scope` in `browser` through the
    /// hosted pages (signing in as [`World::user`] and allowing consent when asked) and returns
    /// the code sent to the application.
    pub(crate) async fn code_for(
        &self,
        browser: &Browser,
        client_id: &str,
        scope: &str,
        extra: &[(&str, &str)],
    ) -> String {
        let path = self
            .authorize_path(scope, "st", extra)
            .replace(&self.client_id, client_id);
        let location = follow_to_client(browser, &path, REDIRECT, &self.user).await;
        assert_eq!(param(&location, "error"), None, "{location}");
        param(&location, "code").unwrap()
    }

    /// Redeems a code at the token endpoint.
    pub(crate) async fn redeem(&self, code: &str) -> reqwest::Response {
        self.redeem_as(code, &self.client_id, &self.client_secret)
            .await
    }

    /// Redeems a code at the token endpoint as the application `client_id`.
    pub(crate) async fn redeem_as(
        &self,
        code: &str,
        client_id: &str,
        client_secret: &str,
    ) -> reqwest::Response {
        self.app
            .request(reqwest::Method::POST, "/oauth/token")
            .header("host", &self.host)
            .basic_auth(client_id, Some(client_secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ])
            .send()
            .await
            .unwrap()
    }

    /// Introspects `token` as the world's application (RFC 7662).
    pub(crate) async fn introspect(&self, token: &str) -> Value {
        self.app
            .request(reqwest::Method::POST, "/oauth/introspect")
            .header("host", &self.host)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .form(&[("token", token)])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Stops the app.
    pub(crate) async fn shutdown(self) {
        self.app.shutdown().await;
    }
}

/// A management access token (client_credentials) for the tenant at `host`.
pub(crate) async fn management_token(app: &TestApp, host: &str, id: &str, secret: &str) -> String {
    let response = app
        .request(reqwest::Method::POST, "/oauth/token")
        .header("host", host)
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

/// A browser on the tenant's host: keeps cookies, never follows redirects.
pub(crate) struct Browser {
    client: reqwest::Client,
    base: String,
    jar: Arc<Jar>,
}

/// A response, read.
pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Page {
    /// The `Location` header.
    pub(crate) fn location(&self) -> Option<String> {
        self.headers
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned())
    }

    /// Every `Set-Cookie` header.
    pub(crate) fn set_cookies(&self) -> Vec<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    }

    /// The value of the hidden (or any) input `name`.
    pub(crate) fn field(&self, name: &str) -> Option<String> {
        let marker = format!("name=\"{name}\"");
        let at = self.body.find(&marker)?;
        let tag_end = at + self.body[at..].find('>')?;
        let tag = &self.body[at..tag_end];
        let start = tag.find("value=\"")? + "value=\"".len();
        let end = tag[start..].find('"')?;
        Some(unescape(&tag[start..start + end]))
    }

    /// Asserts the hosted security headers.
    pub(crate) fn assert_secure(&self, what: &str) {
        let h = |name: &str| {
            self.headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_else(|| panic!("{what}: no {name}"))
        };
        let csp = h("content-security-policy");
        for directive in [
            "default-src 'none'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(csp.contains(directive), "{what}: {csp}");
        }
        assert_eq!(h("x-frame-options"), "DENY", "{what}");
        assert_eq!(h("referrer-policy"), "no-referrer", "{what}");
        assert_eq!(h("x-content-type-options"), "nosniff", "{what}");
        assert_eq!(h("cache-control"), "no-store", "{what}");
    }
}

fn unescape(s: &str) -> String {
    s.replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

impl Browser {
    pub(crate) fn new(app: &TestApp, host: &str) -> Self {
        let addr: std::net::SocketAddr = app.url.trim_start_matches("http://").parse().unwrap();
        let hostname = host.split(':').next().unwrap();
        let jar = Arc::new(Jar::default());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .cookie_provider(jar.clone())
            .resolve(hostname, addr)
            .user_agent("hosted-e2e/1.0")
            .build()
            .unwrap();
        Self {
            client,
            base: format!("http://{host}"),
            jar,
        }
    }

    async fn read(response: reqwest::Response) -> Page {
        Page {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    /// `GET path` (a path on the tenant's host, or an absolute URL).
    pub(crate) async fn get(&self, path: &str) -> Page {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        };
        Self::read(self.client.get(url).send().await.unwrap()).await
    }

    /// The `Cookie` header this browser sends to its host.
    pub(crate) fn cookie_header(&self) -> Option<String> {
        let url = reqwest::Url::parse(&self.base).ok()?;
        self.jar
            .cookies(&url)
            .and_then(|v| v.to_str().ok().map(str::to_owned))
    }

    /// A request to `path` with this browser's cookies, for extra headers or a JSON body.
    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    /// `POST path` with a form.
    pub(crate) async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .form(form)
            .send()
            .await
            .unwrap();
        Self::read(response).await
    }

    /// `POST path` with a raw body.
    pub(crate) async fn post_raw(&self, path: &str, body: String) -> Page {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        Self::read(response).await
    }

    /// The value of cookie `name` in the jar.
    pub(crate) fn cookie(&self, name: &str) -> Option<String> {
        let url = self.base.parse().unwrap();
        let header = self.jar.cookies(&url)?;
        header
            .to_str()
            .unwrap()
            .split("; ")
            .filter_map(|p| p.split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }

    /// Puts a cookie in the jar (as another site or an old tab might have left it).
    pub(crate) fn set_cookie(&self, cookie: &str) {
        let url = self.base.parse().unwrap();
        self.jar.add_cookie_str(cookie, &url);
    }

    /// The WebAuthn options the glue script of `page` would fetch: `POST {path}` with the
    /// page's CSRF token; the answer sets the HttpOnly ceremony cookie.
    pub(crate) async fn webauthn_options(&self, page: &str, path: &str) -> Value {
        let shown = self.get(page).await;
        assert_eq!(shown.status, 200, "{page}: {}", shown.body);
        let csrf = shown.field("csrf").unwrap();
        let answer = self.post(path, &[("csrf", &csrf)]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert!(
            answer
                .set_cookies()
                .iter()
                .any(|c| c.starts_with("svc_webauthn=wan_c_") && c.contains("HttpOnly")),
            "{:?}",
            answer.set_cookies()
        );
        serde_json::from_str(&answer.body).unwrap()
    }

    /// Opens `path` (a page with a form) and submits it with `fields` plus its hidden fields.
    pub(crate) async fn submit(&self, path: &str, action: &str, fields: &[(&str, &str)]) -> Page {
        let page = self.get(path).await;
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        let mut form: Vec<(String, String)> = hidden_fields(&page.body);
        for (name, value) in fields {
            form.retain(|(n, _)| n != name);
            form.push(((*name).to_owned(), (*value).to_owned()));
        }
        let form: Vec<(&str, &str)> = form.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        self.post(action, &form).await
    }

    /// Signs in on the sign-in page of `interaction` (or none).
    pub(crate) async fn sign_in(
        &self,
        interaction: Option<&str>,
        email: &str,
        password: &str,
    ) -> Page {
        let path = match interaction {
            Some(i) => format!("/auth/sign-in?interaction={i}"),
            None => "/auth/sign-in".to_owned(),
        };
        self.submit(
            &path,
            "/auth/sign-in",
            &[("email", email), ("password", password)],
        )
        .await
    }
}

/// Follows `browser` from `start` through the hosted pages (signing in as `email` with
/// [`PASSWORD`] and allowing consent when asked) to the redirect to `redirect_uri`: its URL.
pub(crate) async fn follow_to_client(
    browser: &Browser,
    start: &str,
    redirect_uri: &str,
    email: &str,
) -> String {
    let mut page = browser.get(start).await;
    for _ in 0..6 {
        assert_eq!(page.status, 303, "{}", page.body);
        let location = page.location().unwrap();
        if location.starts_with(redirect_uri) {
            return location;
        }
        page = if location.starts_with("/auth/sign-in?") {
            let interaction = param(&location, "interaction").unwrap();
            browser.sign_in(Some(&interaction), email, PASSWORD).await
        } else if location.starts_with("/auth/consent?") {
            browser
                .submit(&location, "/auth/consent", &[("decision", "allow")])
                .await
        } else {
            browser.get(&location).await
        };
    }
    panic!("the authorization request did not reach the application");
}

/// Every hidden input of the first form of a page.
pub(crate) fn hidden_fields(body: &str) -> Vec<(String, String)> {
    // A page may carry several forms (sign-in and passkey); a browser submits one.
    let first = body.find("<form").map_or(body, |start| {
        let rest = &body[start..];
        rest.find("</form>").map_or(rest, |end| &rest[..end])
    });
    first
        .split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|rest| {
            let name = rest.strip_prefix("name=\"")?;
            let (name, rest) = name.split_once('"')?;
            let value = rest.strip_prefix(" value=\"")?;
            let (value, _) = value.split_once('"')?;
            Some((unescape(name), unescape(value)))
        })
        .collect()
}

/// A query parameter of an absolute or relative URL.
pub(crate) fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

impl Browser {
    /// A browser on `host` (`name:port`) of a service listening at `url` (`http://ip:port`),
    /// e.g. the real binary started as a child process.
    pub(crate) fn at(url: &str, host: &str) -> Self {
        let addr: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
        let hostname = host.split(':').next().unwrap();
        let jar = Arc::new(Jar::default());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .cookie_provider(jar.clone())
            .resolve(hostname, addr)
            .user_agent("hosted-e2e/1.0")
            .build()
            .unwrap();
        Self {
            client,
            base: format!("http://{host}"),
            jar,
        }
    }
}

/// The claims of a JWT, unverified (signatures are checked by the SDK and interop tests).
pub(crate) fn payload(jwt: &str) -> Value {
    use base64::Engine;
    let part = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap(),
    )
    .unwrap()
}

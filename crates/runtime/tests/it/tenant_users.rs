//! Tenant users end to end, on SQLite and PostgreSQL: a tenant's management application
//! creates users three ways (password, invitation read from the log mailer's file, pre-provisioned),
//! lists, reads, patches, suspends, reactivates and removes them, manages their sessions, and
//! every refusal comes back as the right problem. The API conventions on these routes (ETag,
//! If-Match, Location, pagination) are in `users_conventions`, which shares [`spawn`] and
//! [`Api`].

use crate::common::{
    CreatedTenant as Tenant, create_tenant, management_token as token, operator_token,
};
use serde_json::{Value, json};
use svc_domain::{Clock, SecretHash, Session, SessionId, SystemClock, UserId};
use svc_testkit::{BACKENDS, TestApp};

pub(crate) const PW: &str = "correct horse battery";

/// An app serving tenants under `localhost`, with cheap Argon2, a small body limit and the log
/// mailer appending to `mail`.
pub(crate) async fn spawn(backend: svc_testkit::Backend, mail: &std::path::Path) -> TestApp {
    let sink = format!("file:{}", mail.display());
    TestApp::spawn_with(
        backend,
        &[
            ("SVC_SERVER__BASE_DOMAIN", "localhost"),
            ("SVC_AUTH__ARGON2_MEMORY_KIB", "8192"),
            ("SVC_AUTH__ARGON2_ITERATIONS", "1"),
            ("SVC_SERVER__MAX_REQUEST_BODY_BYTES", "16384"),
            ("SVC_EMAIL__PROVIDER", "log"),
            ("SVC_EMAIL__LOG__SINK", &sink),
        ],
    )
    .await
}

/// Calls the users API on `tenant`'s host with `token`.
pub(crate) struct Api<'a> {
    pub(crate) app: &'a TestApp,
    pub(crate) tenant: &'a Tenant,
    pub(crate) token: String,
}

impl Api<'_> {
    pub(crate) fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .request(method, path)
            .header("host", &self.tenant.host)
            .bearer_auth(&self.token)
    }

    /// Sends `body` (when given) and returns the status and parsed JSON body (`Null` if none).
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// An app with tenants `acme` and `globex`, each with a full management token.
pub(crate) struct TwoTenants {
    pub(crate) app: TestApp,
    pub(crate) acme: Tenant,
    pub(crate) globex: Tenant,
    acme_token: String,
    globex_token: String,
    _dir: tempfile::TempDir,
}

impl TwoTenants {
    pub(crate) async fn new(backend: svc_testkit::Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let app = spawn(backend, &dir.path().join("mail.jsonl")).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let globex = create_tenant(&app, &operator, "globex").await;
        let acme_token = token(&app, &acme, None).await;
        let globex_token = token(&app, &globex, None).await;
        Self {
            app,
            acme,
            globex,
            acme_token,
            globex_token,
            _dir: dir,
        }
    }

    pub(crate) fn acme(&self) -> Api<'_> {
        Api {
            app: &self.app,
            tenant: &self.acme,
            token: self.acme_token.clone(),
        }
    }

    pub(crate) fn globex(&self) -> Api<'_> {
        Api {
            app: &self.app,
            tenant: &self.globex,
            token: self.globex_token.clone(),
        }
    }

    /// `acme` with a management token holding only `scope`.
    pub(crate) async fn acme_with(&self, scope: &str) -> Api<'_> {
        Api {
            app: &self.app,
            tenant: &self.acme,
            token: token(&self.app, &self.acme, Some(scope)).await,
        }
    }
}

/// The mails written so far, waiting up to ten seconds for the first one (mail is sent by a
/// background task, after the answer).
async fn mails(path: &std::path::Path) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mails: Vec<Value> = std::fs::read_to_string(path)
            .map(|t| {
                t.lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect()
            })
            .unwrap_or_default();
        if !mails.is_empty() || std::time::Instant::now() > deadline {
            return mails;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn tenant_users_are_created_listed_changed_and_retired() {
    use reqwest::Method as M;
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let mail = dir.path().join("mail.jsonl");
        let app = spawn(backend, &mail).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let globex = create_tenant(&app, &operator, "globex").await;
        let api = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, None).await,
        };
        let base = "/api/v1/tenant-users";

        // Three ways to create a user.
        let (status, ada) = api
            .call(
                M::POST,
                base,
                Some(json!({"email": "Ada@Example.com", "name": "Ada", "password": PW})),
            )
            .await;
        assert_eq!(status, 201, "{backend:?}: {ada}");
        assert_eq!(ada["status"], "active");
        assert_eq!(ada["email"], "ada@example.com");
        assert_eq!(ada["has_password"], true);
        assert!(ada["id"].as_str().unwrap().starts_with("usr_"));
        assert!(ada.get("password_hash").is_none() && !ada.to_string().contains("argon2"));

        let (status, ivy) = api
            .call(
                M::POST,
                base,
                Some(json!({"email": "ivy@example.com", "invite": true})),
            )
            .await;
        assert_eq!(status, 201, "{ivy}");
        assert_eq!(ivy["status"], "invited");
        let sent = mails(&mail).await;
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0]["to"], "ivy@example.com");
        let link = sent[0]["link"].as_str().unwrap();
        let prefix = format!("http://{}/auth/accept-invitation?token=", acme.host);
        assert!(link.starts_with(&prefix), "{link}");
        assert!(sent[0]["text"].as_str().unwrap().contains(link));
        assert!(sent[0]["sent_at"].as_str().unwrap().ends_with('Z'));

        let (status, pat) = api
            .call(
                M::POST,
                base,
                Some(json!({"email": "pat@example.com", "email_verified": true})),
            )
            .await;
        assert_eq!(status, 201);
        assert_eq!(
            (pat["status"].as_str(), pat["email_verified"].as_bool()),
            (Some("pre_provisioned"), Some(true))
        );

        // Refusals on create.
        for (body, status, needle) in [
            (json!({"email": "ADA@example.com"}), 409, "already exists"),
            (json!({"email": "not-an-address"}), 400, "email"),
            (
                json!({"email": "bob@example.com", "password": "short"}),
                400,
                "at least 8",
            ),
            (
                json!({"email": "bob@example.com", "password": PW, "invite": true}),
                400,
                "invite",
            ),
            (
                json!({"email": "bob@example.com", "role": "admin"}),
                400,
                "unknown field",
            ),
        ] {
            let (got, problem) = api.call(M::POST, base, Some(body.clone())).await;
            assert_eq!(got, status, "{body}: {problem}");
            assert!(
                problem["detail"].as_str().unwrap().contains(needle),
                "{body}: {problem}"
            );
        }
        let malformed = api
            .request(M::POST, base)
            .header("content-type", "application/json")
            .body("{\"email\": ")
            .send()
            .await
            .unwrap();
        assert_eq!(malformed.status(), 400);
        assert_eq!(
            malformed.headers()["content-type"],
            "application/problem+json"
        );
        let huge = json!({"email": "big@example.com", "name": "x".repeat(20_000)});
        let (status, _) = api.call(M::POST, base, Some(huge)).await;
        assert_eq!(status, 413);

        // An idempotent retry replays the first answer, `Location` included.
        let retry = || {
            api.request(M::POST, base)
                .header("idempotency-key", "create-zoe-1")
                .json(&json!({"email": "zoe@example.com"}))
        };
        let first = retry().send().await.unwrap();
        assert_eq!(first.status(), 201);
        let location = first.headers()["location"].to_str().unwrap().to_owned();
        let first: Value = first.json().await.unwrap();
        assert_eq!(
            location,
            format!("{base}/{}", first["id"].as_str().unwrap())
        );
        let again = retry().send().await.unwrap();
        assert_eq!(again.status(), 201);
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        assert_eq!(again.headers()["location"], location.as_str());
        assert_eq!(again.json::<Value>().await.unwrap()["id"], first["id"]);

        // List, filter and paginate.
        let (status, page) = api.call(M::GET, &format!("{base}?limit=2"), None).await;
        assert_eq!(status, 200);
        assert_eq!(page["items"].as_array().unwrap().len(), 2);
        let cursor = page["next_cursor"].as_str().unwrap().to_owned();
        let (_, rest) = api
            .call(M::GET, &format!("{base}?limit=10&after={cursor}"), None)
            .await;
        assert_eq!(rest["items"].as_array().unwrap().len(), 2);
        assert!(rest["next_cursor"].is_null());
        let (_, active) = api
            .call(M::GET, &format!("{base}?status=active"), None)
            .await;
        let emails: Vec<&str> = active["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["email"].as_str().unwrap())
            .collect();
        assert_eq!(emails, ["ada@example.com"]);
        let (_, by_email) = api
            .call(M::GET, &format!("{base}?email=IVY%40example.com"), None)
            .await;
        assert_eq!(by_email["items"][0]["id"], ivy["id"]);
        for bad in [
            "?status=sleeping",
            "?after=app_01jd0000000000000000000000",
            "?colour=red",
        ] {
            let (status, problem) = api.call(M::GET, &format!("{base}{bad}"), None).await;
            assert_eq!(status, 400, "{bad}: {problem}");
        }

        // Read and patch.
        let ada_path = format!("{base}/{}", ada["id"].as_str().unwrap());
        let (status, read) = api.call(M::GET, &ada_path, None).await;
        assert_eq!((status, &read), (200, &ada));
        let (status, patched) = api
            .call(M::PATCH, &ada_path, Some(json!({"name": null, "family_name": "Lovelace", "email": "ada@lovelace.example"})))
            .await;
        assert_eq!(status, 200, "{patched}");
        assert!(patched["name"].is_null());
        assert_eq!(patched["family_name"], "Lovelace");
        assert_eq!(patched["email_verified"], false);
        let (status, _) = api
            .call(M::PATCH, &ada_path, Some(json!({"password": "short"})))
            .await;
        assert_eq!(status, 400);
        let (status, _) = api
            .call(
                M::PATCH,
                &ada_path,
                Some(json!({"email": "ivy@example.com"})),
            )
            .await;
        assert_eq!(status, 409);

        // Sessions: one arranged directly in the database, listed and revoked.
        let user_id = UserId::parse(ada["id"].as_str().unwrap()).unwrap();
        let session_id = insert_session(&app, &acme_tenant_id(&app).await, &user_id).await;
        let sessions_path = format!("{ada_path}/sessions");
        let (status, listed) = api.call(M::GET, &sessions_path, None).await;
        assert_eq!(status, 200);
        assert_eq!(listed["items"][0]["id"], session_id.as_str());
        assert!(listed["next_cursor"].is_null());
        assert!(!listed.to_string().contains("secret"));
        let one = format!("{sessions_path}/{session_id}");
        assert_eq!(api.call(M::DELETE, &one, None).await.0, 204);
        assert_eq!(api.call(M::DELETE, &one, None).await.0, 404);
        assert_eq!(
            api.call(M::DELETE, &format!("{sessions_path}/nonsense"), None)
                .await
                .0,
            404
        );

        // The lifecycle.
        let (status, suspended) = api
            .call(M::POST, &format!("{ada_path}/suspend"), None)
            .await;
        assert_eq!(
            (status, suspended["status"].as_str()),
            (200, Some("suspended"))
        );
        let (status, back) = api
            .call(M::POST, &format!("{ada_path}/reactivate"), None)
            .await;
        assert_eq!((status, back["status"].as_str()), (200, Some("active")));
        assert_eq!(api.call(M::DELETE, &ada_path, None).await.0, 204);
        let (status, problem) = api
            .call(M::POST, &format!("{ada_path}/reactivate"), None)
            .await;
        assert_eq!((status, problem["error"].as_str()), (409, Some("conflict")));
        let (_, tombstone) = api.call(M::GET, &ada_path, None).await;
        assert_eq!(tombstone["status"], "removed");
        let (status, _) = api
            .call(
                M::POST,
                base,
                Some(json!({"email": "ada@lovelace.example"})),
            )
            .await;
        assert_eq!(status, 201, "a removed user's address is free again");

        // Another tenant's user, or a malformed id, is not found.
        let other = Api {
            app: &app,
            tenant: &globex,
            token: token(&app, &globex, None).await,
        };
        let ivy_path = format!("{base}/{}", ivy["id"].as_str().unwrap());
        for (method, path) in [
            (M::GET, ivy_path.clone()),
            (M::PATCH, ivy_path.clone()),
            (M::DELETE, ivy_path.clone()),
            (M::POST, format!("{ivy_path}/suspend")),
            (M::GET, format!("{ivy_path}/sessions")),
        ] {
            let body = (method == M::PATCH).then(|| json!({"name": "Mallory"}));
            let (status, problem) = other.call(method.clone(), &path, body).await;
            assert_eq!(
                (status, problem["error"].as_str()),
                (404, Some("not_found")),
                "{method} {path}"
            );
        }
        assert_eq!(
            api.call(M::GET, &format!("{base}/usr_nope"), None).await.0,
            404
        );
        let (_, still) = api.call(M::GET, &ivy_path, None).await;
        assert_eq!(still["status"], "invited");

        app.shutdown().await;
    }
}

#[tokio::test]
async fn tenant_users_need_a_token_with_the_users_scopes() {
    use reqwest::Method as M;
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let app = spawn(backend, &dir.path().join("mail.jsonl")).await;
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let base = "/api/v1/tenant-users";

        let anonymous = app
            .request(M::GET, base)
            .header("host", &acme.host)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401, "{backend:?}");
        assert!(anonymous.headers().contains_key("www-authenticate"));

        let apps_only = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, Some("applications:read")).await,
        };
        let (status, problem) = apps_only.call(M::GET, base, None).await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope"))
        );

        let reader = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, Some("users:read")).await,
        };
        assert_eq!(reader.call(M::GET, base, None).await.0, 200);
        let (status, problem) = reader
            .call(M::POST, base, Some(json!({"email": "ada@example.com"})))
            .await;
        assert_eq!(
            (status, problem["error"].as_str()),
            (403, Some("insufficient_scope"))
        );

        let writer = Api {
            app: &app,
            tenant: &acme,
            token: token(&app, &acme, Some("users:write")).await,
        };
        let (status, _) = writer
            .call(M::POST, base, Some(json!({"email": "ada@example.com"})))
            .await;
        assert_eq!(status, 201, "users:write creates");
        assert_eq!(
            writer.call(M::GET, base, None).await.0,
            403,
            "write implies nothing about read"
        );
        app.shutdown().await;
    }
}

async fn acme_tenant_id(app: &TestApp) -> svc_domain::TenantId {
    app.tenant("acme").await.id
}

/// A live session of `user`, written directly to the app's database.
async fn insert_session(app: &TestApp, tenant: &svc_domain::TenantId, user: &UserId) -> SessionId {
    let now = SystemClock.now();
    let now = now
        .replace_nanosecond(now.nanosecond() / 1000 * 1000)
        .unwrap();
    let session = Session {
        id: SessionId::generate(&SystemClock, &svc_domain::OsRandom),
        tenant_id: tenant.clone(),
        user_id: user.clone(),
        secret_hash: SecretHash::of("ses_s_e2e-test-cookie"),
        created_at: now,
        auth_time: now,
        amr: vec!["pwd".to_owned()],
        acr: None,
        expires_at: now + time::Duration::days(1),
        last_seen_at: now,
        revoked_at: None,
        user_agent: Some("e2e".to_owned()),
        ip: Some("127.0.0.1".to_owned()),
    };
    let store = app.store().await;
    let mut tx = store.write().await.unwrap();
    tx.insert_session(&session).await.unwrap();
    tx.commit().await.unwrap();
    store.close().await;
    session.id
}

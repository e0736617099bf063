//! API keys (issue 19 item 5) over HTTP, on SQLite and PostgreSQL, with an injected clock:
//! created and shown once, listed and read without the key, accepted on the management API with
//! their scopes only, revoked at once, expired, rotated with an overlap, `last_used_at`; and the
//! bad inputs: escalation beyond the caller's scopes, limits, a key of another tenant, malformed
//! `svck_` values, unknown vs revoked keys by timing, introspection, keys switched off, and the
//! key never reaching the logs.

use crate::common::{CreatedTenant, create_tenant, management_token, operator_token};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use svc_domain::{Clock, ManualClock, SystemClock};
use svc_runtime::BuildOptions;
use svc_testkit::{BACKENDS, Backend, Process, TestApp};
use time::OffsetDateTime;

/// An app on a manual clock with tenant `acme` (and its full management token) and `other`.
struct Keys {
    app: TestApp,
    clock: Arc<ManualClock>,
    acme: CreatedTenant,
    token: String,
    other: CreatedTenant,
}

impl Keys {
    async fn new(backend: Backend, env: &[(&str, &str)]) -> Self {
        let now = SystemClock.now();
        let clock = Arc::new(ManualClock::new(now.replace_nanosecond(0).unwrap_or(now)));
        let mut vars = vec![("SVC_SERVER__BASE_DOMAIN", "localhost")];
        vars.extend_from_slice(env);
        let options = BuildOptions {
            clock: clock.clone(),
            ..TestApp::options()
        };
        let app = TestApp::try_spawn_with_options(backend, &vars, options)
            .await
            .unwrap();
        let operator = operator_token(&app).await;
        let acme = create_tenant(&app, &operator, "acme").await;
        let other = create_tenant(&app, &operator, "other").await;
        let token = management_token(&app, &acme, None).await;
        Self {
            app,
            clock,
            acme,
            token,
            other,
        }
    }

    fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }

    /// Moves time on (ids made later sort later).
    fn advance(&self, secs: i64) {
        self.clock.advance(time::Duration::seconds(secs));
    }

    /// `method path` at `tenant`'s host with `credential` as the bearer token.
    fn at(
        &self,
        tenant: &CreatedTenant,
        method: Method,
        path: &str,
        credential: &str,
    ) -> reqwest::RequestBuilder {
        self.app
            .request(method, path)
            .header("host", &tenant.host)
            .bearer_auth(credential)
    }

    /// `method path` at acme with the management token.
    fn api(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.at(&self.acme, method, path, &self.token)
    }

    /// Creates a key at acme with the management token: status and body.
    async fn create(&self, body: Value) -> (u16, Value) {
        self.clock.advance(time::Duration::milliseconds(2));
        let response = self
            .api(Method::POST, "/api/v1/api-keys")
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// Creates a key that must succeed: its id and key.
    async fn key(&self, scopes: &[&str]) -> (String, String) {
        let (status, body) = self.create(json!({"name": "ci", "scopes": scopes})).await;
        assert_eq!(status, 201, "{body}");
        (
            body["id"].as_str().unwrap().to_owned(),
            body["key"].as_str().unwrap().to_owned(),
        )
    }

    /// `GET path` at acme with `key`: the status.
    async fn get_with(&self, key: &str, path: &str) -> u16 {
        self.at(&self.acme, Method::GET, path, key)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

/// Asserts the answer to a refused key: 401 `invalid_token`, the same challenge every time.
async fn assert_refused(response: reqwest::Response, what: &str) {
    assert_eq!(response.status(), 401, "{what}");
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        challenge.as_deref(),
        Some("Bearer error=\"invalid_token\", error_description=\"the API key is not valid\""),
        "{what}: {body}"
    );
    assert_eq!(body["detail"], "the API key is not valid", "{what}: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_shown_once_work_with_their_scopes_and_stop_when_revoked() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[]).await;
        let (status, created) = k
            .create(json!({"name": "  CI deploy ", "scopes": ["applications:read", "audit:read"]}))
            .await;
        assert_eq!(status, 201, "{created}");
        let key = created["key"].as_str().unwrap().to_owned();
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(key.starts_with("svck_") && key.len() == 57, "{created}");
        assert!(id.starts_with("apik_"), "{created}");
        assert_eq!(created["name"], "CI deploy");
        assert_eq!(
            created["scopes"],
            json!(["applications:read", "audit:read"])
        );
        assert_eq!(created["last_used_at"], Value::Null);
        assert!(
            created["created_by"]
                .as_str()
                .unwrap()
                .starts_with("client:app_")
        );

        // Never again: not in the list, not in a read.
        let listed = k.api(Method::GET, "/api/v1/api-keys").send().await.unwrap();
        assert_eq!(listed.status(), 200);
        let listed: Value = listed.json().await.unwrap();
        assert_eq!(listed["items"][0]["id"], id.as_str(), "{listed}");
        assert!(listed["items"][0].get("key").is_none(), "{listed}");
        let read = k
            .api(Method::GET, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        let read = read.text().await.unwrap();
        assert!(!listed.to_string().contains(&key) && !read.contains(&key));

        // Its scopes, and nothing else (`*:read` is not `*:write`).
        assert_eq!(k.get_with(&key, "/api/v1/applications").await, 200);
        assert_eq!(k.get_with(&key, "/api/v1/audit-logs").await, 200);
        let denied = k
            .at(&k.acme, Method::GET, "/api/v1/tenant-users", &key)
            .send()
            .await
            .unwrap();
        assert_eq!(denied.status(), 403);
        let challenge = denied.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("insufficient_scope"), "{challenge}");
        let write = k
            .at(&k.acme, Method::POST, "/api/v1/api-keys", &key)
            .json(&json!({"name": "x", "scopes": ["applications:read"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(write.status(), 403);

        // `last_used_at` is set by the use, and the audit log names the key as the actor.
        let read: Value = k
            .api(Method::GET, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(read["last_used_at"].is_string(), "{read}");
        let audit: Value = k
            .at(&k.acme, Method::GET, "/api/v1/audit-logs", &key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            audit.to_string().contains("api_key.created"),
            "the creation is audited: {audit}"
        );

        // Revoked: refused at once, like an unknown key; revoking again changes nothing.
        let revoked = k
            .api(Method::DELETE, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        let after = k
            .at(&k.acme, Method::GET, "/api/v1/applications", &key)
            .send()
            .await
            .unwrap();
        assert_refused(after, "revoked").await;
        let again = k
            .api(Method::DELETE, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 204);
        let read: Value = k
            .api(Method::GET, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(read["revoked_at"].is_string(), "{read}");
        let unknown = k
            .api(
                Method::DELETE,
                "/api/v1/api-keys/apik_01jd3k2m4n5p6q7r8s9t0v1w2x",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(unknown.status(), 404);
        k.app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_expire_and_rotated_keys_overlap_then_stop() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[]).await;
        let expires = (k.now() + time::Duration::seconds(30))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let (status, short) = k
            .create(
                json!({"name": "short", "scopes": ["applications:read"], "expires_at": expires}),
            )
            .await;
        assert_eq!(status, 201, "{short}");
        let short_key = short["key"].as_str().unwrap().to_owned();
        assert_eq!(k.get_with(&short_key, "/api/v1/applications").await, 200);

        let (id, old) = k.key(&["applications:read"]).await;
        let rotated = k
            .api(Method::POST, &format!("/api/v1/api-keys/{id}/rotate"))
            .json(&json!({"overlap_secs": 60}))
            .send()
            .await
            .unwrap();
        assert_eq!(rotated.status(), 201);
        let rotated: Value = rotated.json().await.unwrap();
        let new = rotated["key"].as_str().unwrap().to_owned();
        assert_ne!(new, old);
        assert_eq!(rotated["rotated_from"], id.as_str(), "{rotated}");
        assert_eq!(rotated["scopes"], json!(["applications:read"]));
        // During the overlap both work.
        assert_eq!(k.get_with(&old, "/api/v1/applications").await, 200);
        assert_eq!(k.get_with(&new, "/api/v1/applications").await, 200);

        k.advance(31);
        let expired = k
            .at(&k.acme, Method::GET, "/api/v1/applications", &short_key)
            .send()
            .await
            .unwrap();
        assert_refused(expired, "expired").await;
        assert_eq!(k.get_with(&old, "/api/v1/applications").await, 200);
        k.advance(30);
        let after_overlap = k
            .at(&k.acme, Method::GET, "/api/v1/applications", &old)
            .send()
            .await
            .unwrap();
        assert_refused(after_overlap, "rotated, after the overlap").await;
        assert_eq!(k.get_with(&new, "/api/v1/applications").await, 200);

        // An overlap of 0 stops the old key at once; a dead key cannot be rotated.
        let new_id = rotated["id"].as_str().unwrap();
        let now = k
            .api(Method::POST, &format!("/api/v1/api-keys/{new_id}/rotate"))
            .json(&json!({"overlap_secs": 0}))
            .send()
            .await
            .unwrap();
        assert_eq!(now.status(), 201);
        assert_eq!(k.get_with(&new, "/api/v1/applications").await, 401);
        let dead = k
            .api(Method::POST, &format!("/api/v1/api-keys/{id}/rotate"))
            .send()
            .await
            .unwrap();
        assert_eq!(dead.status(), 409);
        let too_long = k
            .api(Method::POST, &format!("/api/v1/api-keys/{new_id}/rotate"))
            .json(&json!({"overlap_secs": 604_801}))
            .send()
            .await
            .unwrap();
        assert_eq!(too_long.status(), 400);
        k.app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_holds_more_than_its_creator_and_limits_hold() {
    for backend in BACKENDS {
        let k = Keys::new(
            backend,
            &[
                ("SVC_API_KEYS__MAX_PER_TENANT", "2"),
                ("SVC_API_KEYS__MAX_LIFETIME_DAYS", "30"),
            ],
        )
        .await;
        // A token with fewer scopes cannot give a key more.
        let narrow = management_token(
            &k.app,
            &k.acme,
            Some("applications:read applications:write"),
        )
        .await;
        let escalate = k
            .at(&k.acme, Method::POST, "/api/v1/api-keys", &narrow)
            .json(&json!({"name": "x", "scopes": ["applications:read", "users:write"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(escalate.status(), 400);
        let body: Value = escalate.json().await.unwrap();
        assert!(body.to_string().contains("users:write"), "{body}");

        let in_a_year = k.now() + time::Duration::days(365);
        let past = k.now() - time::Duration::seconds(1);
        let rfc = |t: OffsetDateTime| {
            t.format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        };
        for (bad, why) in [
            (
                json!({"name": "", "scopes": ["applications:read"]}),
                "empty name",
            ),
            (
                json!({"name": "x".repeat(101), "scopes": ["applications:read"]}),
                "long name",
            ),
            (json!({"name": "x", "scopes": []}), "no scope"),
            (
                json!({"name": "x", "scopes": ["openid"]}),
                "not a management scope",
            ),
            (
                json!({"name": "x", "scopes": ["applications:read"], "expires_at": rfc(past)}),
                "past",
            ),
            (
                json!({"name": "x", "scopes": ["applications:read"], "expires_at": rfc(in_a_year)}),
                "beyond the maximum lifetime",
            ),
            (
                json!({"name": "x", "scopes": ["applications:read"], "admin": true}),
                "unknown field",
            ),
        ] {
            let (status, body) = k.create(bad).await;
            assert_eq!(status, 400, "{why}: {body}");
        }

        // Without `expires_at`, the maximum lifetime applies.
        let (id, _) = k.key(&["applications:read", "users:write"]).await;
        let read: Value = k
            .api(Method::GET, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(read["expires_at"].is_string(), "{read}");
        // Rotating hands out the key's scopes: the narrow caller may not.
        let rotate = k
            .at(
                &k.acme,
                Method::POST,
                &format!("/api/v1/api-keys/{id}/rotate"),
                &narrow,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(rotate.status(), 403);

        // Two live keys per tenant here; a revoked one frees its place.
        let (second, _) = k.key(&["applications:read"]).await;
        let (status, body) = k
            .create(json!({"name": "third", "scopes": ["applications:read"]}))
            .await;
        assert_eq!(status, 409, "{body}");
        k.api(Method::DELETE, &format!("/api/v1/api-keys/{second}"))
            .send()
            .await
            .unwrap();
        k.key(&["applications:read"]).await;
        k.app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_and_malformed_keys_are_refused_alike() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[]).await;
        let (_, key) = k.key(&["applications:read"]).await;
        let foreign = k
            .at(&k.other, Method::GET, "/api/v1/applications", &key)
            .send()
            .await
            .unwrap();
        assert_refused(foreign, "another tenant's key").await;

        let mut wrong_alphabet = key.clone();
        wrong_alphabet.replace_range(10..11, "1");
        let unknown = format!("svck_{}", "a".repeat(52));
        for (bad, why) in [
            (unknown.as_str(), "unknown"),
            ("svck_", "empty"),
            (wrong_alphabet.as_str(), "wrong alphabet"),
            (&key[..key.len() - 1], "too short"),
            (&format!("{key}{}", "a".repeat(4000)), "too long"),
            (
                &key.to_uppercase().replacen("SVCK_", "svck_", 1),
                "upper case",
            ),
        ] {
            let response = k
                .at(&k.acme, Method::GET, "/api/v1/applications", bad)
                .send()
                .await
                .unwrap();
            assert_refused(response, why).await;
        }
        // Beyond any token's size, or not a token68 at all: the header itself is malformed,
        // still 401 and never 500.
        let huge = format!("svck_{}", "a".repeat(9000));
        let response = k
            .at(&k.acme, Method::GET, "/api/v1/applications", &huge)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        let broken = k
            .app
            .request(Method::GET, "/api/v1/applications")
            .header("host", &k.acme.host)
            .header("authorization", "Bearer svck_a b")
            .send()
            .await
            .unwrap();
        assert_eq!(broken.status(), 401);
        // A key is a bearer credential: the DPoP scheme does not carry one.
        let dpop = k
            .app
            .request(Method::GET, "/api/v1/applications")
            .header("host", &k.acme.host)
            .header("authorization", format!("DPoP {key}"))
            .send()
            .await
            .unwrap();
        assert_refused(dpop, "DPoP scheme").await;
        k.app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_describes_live_keys_to_the_tenants_resource_servers() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[]).await;
        let register = |audience: Option<&str>| {
            // A resource server's own API, or (without one) the management API's scopes.
            let mut body = json!({
                "name": "Reports", "redirect_uris": [], "post_logout_redirect_uris": [],
                "grant_types": ["client_credentials"],
                "token_endpoint_auth_method": "client_secret_basic",
                "allowed_scopes": ["applications:read"],
            });
            if let Some(audience) = audience {
                body["api_audience"] = json!(audience);
                body["allowed_scopes"] = json!(["reports:read"]);
            }
            k.api(Method::POST, "/api/v1/applications")
                .json(&body)
                .send()
        };
        let created = |response: reqwest::Response| async move {
            let status = response.status();
            let body = response.json::<Value>().await.unwrap();
            assert_eq!(status, 201, "{body}");
            body
        };
        let server = created(register(Some("https://reports.example.com")).await.unwrap()).await;
        let plain = created(register(None).await.unwrap()).await;
        let introspect = |client: &Value, token: &str| {
            let (id, secret) = (
                client["client_id"].as_str().unwrap().to_owned(),
                client["client_secret"].as_str().unwrap().to_owned(),
            );
            k.app
                .request(Method::POST, "/oauth/introspect")
                .header("host", &k.acme.host)
                .basic_auth(id, Some(secret))
                .form(&[("token", token.to_owned())])
                .send()
        };
        let (id, key) = k.key(&["applications:read", "users:read"]).await;
        let active: Value = introspect(&server, &key)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(active["active"], true, "{active}");
        assert_eq!(active["token_type"], "api_key");
        assert_eq!(active["scope"], "applications:read users:read");
        assert_eq!(active["sub"], id.as_str());
        assert_eq!(active["client_id"], id.as_str());
        assert_eq!(active["tenant_id"], k.acme.id.as_str());
        assert_eq!(
            active["aud"],
            format!("http://{}/api/v1", k.acme.host),
            "{active}"
        );
        assert!(
            active["iat"].is_i64() && active.get("exp").is_none(),
            "{active}"
        );
        let inactive = |v: Value| assert_eq!(v, json!({"active": false}));
        inactive(
            introspect(&plain, &key)
                .await
                .unwrap()
                .json()
                .await
                .unwrap(),
        );
        inactive(
            introspect(&server, &format!("svck_{}", "b".repeat(52)))
                .await
                .unwrap()
                .json()
                .await
                .unwrap(),
        );
        k.api(Method::DELETE, &format!("/api/v1/api-keys/{id}"))
            .send()
            .await
            .unwrap();
        inactive(
            introspect(&server, &key)
                .await
                .unwrap()
                .json()
                .await
                .unwrap(),
        );
        k.app.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switched_off_keys_are_absent_and_refused() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[("SVC_API_KEYS__ENABLED", "false")]).await;
        let absent = k.api(Method::GET, "/api/v1/api-keys").send().await.unwrap();
        assert_eq!(absent.status(), 404);
        let refused = k
            .at(
                &k.acme,
                Method::GET,
                "/api/v1/applications",
                &format!("svck_{}", "c".repeat(52)),
            )
            .send()
            .await
            .unwrap();
        assert_refused(refused, "keys switched off").await;
        k.app.shutdown().await;
    }
}

/// The median of `samples`.
fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Mann–Whitney U statistic of `a` against `b` as a z-score (normal approximation, ties
/// averaged), as the CIBA decoy test computes it.
fn rank_test_z(a: &[f64], b: &[f64]) -> f64 {
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|v| (*v, true))
        .chain(b.iter().map(|v| (*v, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks = vec![0.0; all.len()];
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = rank;
        }
        i = j + 1;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let r1: f64 = all
        .iter()
        .zip(&ranks)
        .filter(|((_, first), _)| *first)
        .map(|(_, r)| r)
        .sum();
    let u = r1 - n1 * (n1 + 1.0) / 2.0;
    (u - n1 * n2 / 2.0) / (n1 * n2 * (n1 + n2 + 1.0) / 12.0).sqrt()
}

/// The attack the issue names: guessing a key a character at a time. A key is looked up by
/// its keyed hash, never by prefix, so a guess that matches a live key in all but its last
/// character is refused in the same time as one that shares nothing with any key.
///
/// (A revoked key does cost a little more: its row is found, decoded and found dead. Telling
/// that apart needs the whole revoked key, which reveals nothing its holder does not know.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_near_miss_of_a_live_key_is_refused_in_the_time_of_any_unknown_key() {
    for backend in BACKENDS {
        let k = Keys::new(backend, &[]).await;
        let (_, live) = k.key(&["applications:read"]).await;
        let mut near = live.clone();
        let last = near.pop().unwrap();
        near.push(if last == 'd' { 'e' } else { 'd' });
        let unrelated = format!("svck_{}", "d".repeat(52));
        assert_eq!(k.get_with(&live, "/api/v1/applications").await, 200);
        let (mut near_times, mut unrelated_times) = (Vec::new(), Vec::new());
        // A shuffled order (fixed seed): a strict alternation could line up with anything
        // periodic on a busy machine.
        let mut order: Vec<bool> = (0..400).map(|i| i % 2 == 0).collect();
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        for i in (1..order.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        for (round, near_one) in order.into_iter().enumerate() {
            let key = if near_one { &near } else { &unrelated };
            let t0 = Instant::now();
            let status = k.get_with(key, "/api/v1/applications").await;
            let took = t0.elapsed().as_secs_f64() * 1e6;
            assert_eq!(status, 401);
            if round < 20 {
                continue; // warm-up: connection, caches
            }
            if near_one {
                near_times.push(took);
            } else {
                unrelated_times.push(took);
            }
        }
        let z = rank_test_z(&near_times, &unrelated_times);
        let (near_median, unrelated_median) = (median(&near_times), median(&unrelated_times));
        let relative = (near_median - unrelated_median).abs() / unrelated_median;
        eprintln!(
            "{backend:?}: API key refusals, near miss vs unrelated, Mann–Whitney z = {z:.2}, \
             medians {near_median:.0} / {unrelated_median:.0} µs"
        );
        // A leak worth the name (the row of the live key found by a prefix, read and compared)
        // costs a database read, a few per cent of a refusal's round trip at least (SQLite's
        // cheapest reads included). Both the rank test and that size must say so: with a
        // strict alternation, a busy CI machine once showed z ≈ 5 between two keys that are
        // both simply absent, so the order is shuffled and a difference of medians under
        // 3 % is not taken for a leak.
        assert!(
            z.abs() < 4.0 || relative < 0.03,
            "{backend:?}: a near miss of a live key is told apart by timing (z = {z:.2}, \
             medians {near_median:.0} / {unrelated_median:.0} µs)"
        );
        k.app.shutdown().await;
    }
}

/// The real binary, logging at `debug`: a key created, used, refused and revoked appears
/// nowhere in its output.
#[tokio::test]
async fn the_key_never_reaches_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("SVC_SERVER__PORT", "0"),
        ("SVC_SERVER__BASE_DOMAIN", "localhost"),
        ("RUST_LOG", "debug"),
    ];
    let process = Process::spawn(crate::binary(), dir.path(), &["--log-format", "json"], &env);
    let url = process.wait_for_url(Duration::from_secs(30)).await;
    let db = format!("sqlite://{}", dir.path().join("data/svc.db").display());
    let work = tempfile::tempdir().unwrap();
    let exit = Process::run(
        crate::binary(),
        work.path(),
        &["operator", "create-token", "--name", "e2e"],
        &[("DATABASE_URL", db.as_str())],
    )
    .await;
    assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    let operator = exit
        .stdout
        .lines()
        .find(|l| l.starts_with("svcop_"))
        .unwrap()
        .trim()
        .to_owned();
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{url}/api/v1/control-plane/tenants"))
        .bearer_auth(&operator)
        .json(&json!({"slug": "acme", "display_name": "Acme"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let port = url.rsplit(':').next().unwrap();
    let host = format!("acme.localhost:{port}");
    let management = &created["management_application"];
    let token: Value = client
        .post(format!("{url}/oauth/token"))
        .header("host", &host)
        .basic_auth(
            management["client_id"].as_str().unwrap(),
            management["client_secret"].as_str(),
        )
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap();
    let key: Value = client
        .post(format!("{url}/api/v1/api-keys"))
        .header("host", &host)
        .bearer_auth(token)
        .json(&json!({"name": "logged?", "scopes": ["applications:read"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (id, key) = (key["id"].as_str().unwrap(), key["key"].as_str().unwrap());
    let with = |credential: &str| {
        client
            .get(format!("{url}/api/v1/applications"))
            .header("host", &host)
            .bearer_auth(credential)
            .send()
    };
    assert_eq!(with(key).await.unwrap().status(), 200);
    let forged = format!("{}{}", &key[..20], "e".repeat(37));
    assert_eq!(with(&forged).await.unwrap().status(), 401);
    let revoked = client
        .delete(format!("{url}/api/v1/api-keys/{id}"))
        .header("host", &host)
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 204);
    assert_eq!(with(key).await.unwrap().status(), 401);

    process.terminate();
    let exit = process.wait(Duration::from_secs(30)).await;
    let logs = format!("{}\n{}", exit.stdout, exit.stderr);
    assert!(
        logs.contains("http_request"),
        "requests are logged at debug: {logs}"
    );
    // The key's random part, in any position of a log line.
    assert!(!logs.contains(&key[5..]), "the key is in the logs");
    assert!(
        !logs.contains(&forged[5..]),
        "a presented key is in the logs"
    );
}

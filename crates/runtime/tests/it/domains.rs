//! Verified domains end to end, on SQLite and PostgreSQL, through real HTTP and a real DNS
//! server on the loopback (`dns::LocalDns`, named in `verified_domains.dns_servers`): an
//! organization claims a domain, is refused while its TXT record is missing, wrong, stale,
//! another organization's, or its lookup fails, and is verified by its own value; a second
//! organization cannot verify the same name (409); the HTTPS method refuses a domain that
//! resolves to the loopback; every `{id}` and `{domain_id}` of another organization or tenant
//! is a 404; changes honour `If-Match`; and the routes need their `organizations:*` scope.

use crate::common::{create_tenant, management_token, operator_token};
use crate::dns::LocalDns;
use crate::tenant_users::Api;
use reqwest::Method as M;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, TestApp};

const BASE: &str = "/api/v1/organizations";

/// `method path` with `body` and `If-Match` (when given): status, `ETag`, JSON body.
async fn send(
    api: &Api<'_>,
    method: M,
    path: &str,
    if_match: Option<&str>,
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let mut request = api.request(method, path);
    if let Some(tag) = if_match {
        request = request.header(IF_MATCH, tag);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let etag = response
        .headers()
        .get(ETAG)
        .map(|v| v.to_str().unwrap().to_owned());
    let location = response
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let mut body = serde_json::from_str(&text).unwrap_or(Value::Null);
    if let (Some(location), Some(object)) = (location, body.as_object_mut()) {
        object.insert("__location".into(), location.into());
    }
    (status, etag, body)
}

async fn create_org(api: &Api<'_>, slug: &str) -> String {
    let (status, org) = api
        .call(M::POST, BASE, Some(json!({"name": slug, "slug": slug})))
        .await;
    assert_eq!(status, 201, "{org}");
    org["id"].as_str().unwrap().to_owned()
}

/// `POST …/verify` with `method` (none: an empty body).
async fn verify(api: &Api<'_>, path: &str, method: Option<&str>) -> (u16, Value) {
    let body = method.map(|m| json!({ "method": m }));
    let (status, _, body) = send(api, M::POST, &format!("{path}/verify"), None, body).await;
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domains_are_claimed_proven_by_their_own_txt_record_and_isolated() {
    for backend in BACKENDS {
        let dns = LocalDns::start().await;
        let servers = dns.servers_setting();
        let mail = tempfile::tempdir().unwrap();
        let sink = format!("file:{}", mail.path().join("mail.jsonl").display());
        let app = TestApp::spawn_with(
            backend,
            &[
                ("SVC_SERVER__BASE_DOMAIN", "localhost"),
                ("SVC_EMAIL__PROVIDER", "log"),
                ("SVC_EMAIL__LOG__SINK", &sink),
                ("SVC_VERIFIED_DOMAINS__DNS_SERVERS", &servers),
                ("SVC_VERIFIED_DOMAINS__TIMEOUT_MS", "1500"),
            ],
        )
        .await;
        let operator = operator_token(&app).await;
        let (acme_t, globex_t) = (
            create_tenant(&app, &operator, "acme").await,
            create_tenant(&app, &operator, "globex").await,
        );
        let acme = Api {
            app: &app,
            tenant: &acme_t,
            token: management_token(&app, &acme_t, None).await,
        };
        let globex = Api {
            app: &app,
            tenant: &globex_t,
            token: management_token(&app, &globex_t, None).await,
        };
        let initech = create_org(&acme, "initech").await;
        let hooli = create_org(&acme, "hooli").await;
        let foreign = create_org(&globex, "initech").await;

        // Claim: 201, Location, the instructions carrying this claim's token.
        let (status, _, d) = send(
            &acme,
            M::POST,
            &format!("{BASE}/{initech}/domains"),
            None,
            Some(json!({"name": "Acme.Example", "auto_join": true})),
        )
        .await;
        assert_eq!(status, 201, "{d}");
        let id = d["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("dom_"));
        let path = format!("{BASE}/{initech}/domains/{id}");
        assert_eq!(d["__location"], path.as_str());
        assert_eq!(d["name"], "acme.example");
        assert_eq!(d["status"], "pending");
        assert_eq!(d["auto_join_roles"], json!(["member"]));
        let record = "_svc-verification.acme.example";
        assert_eq!(d["verification"]["dns_txt"]["name"], record);
        let value = d["verification"]["dns_txt"]["value"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(value.starts_with("svc-domain-verification="));
        assert_eq!(d["verification"]["https"]["body"], value.as_str());
        assert_eq!(
            d["verification"]["https"]["url"],
            "https://acme.example/.well-known/svc-domain-verification.txt"
        );
        let (status, _, theirs) = send(
            &acme,
            M::POST,
            &format!("{BASE}/{hooli}/domains"),
            None,
            Some(json!({"name": "acme.example"})),
        )
        .await;
        assert_eq!(
            status, 201,
            "another organization may claim it too: {theirs}"
        );
        let their_path = format!("{BASE}/{hooli}/domains/{}", theirs["id"].as_str().unwrap());
        let their_value = theirs["verification"]["dns_txt"]["value"].as_str().unwrap();
        assert_ne!(their_value, value);

        // NXDOMAIN: a clear 400 naming the record and the value expected.
        let (status, problem) = verify(&acme, &path, None).await;
        assert_eq!(status, 400, "{problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("dns_txt: no TXT record found at"),
            "{detail}"
        );
        assert!(
            detail.contains(record) && detail.contains(&value),
            "{detail}"
        );
        // The other organization's value, and an unrelated record: refused, not echoed.
        dns.set_txt(record, &[their_value, "v=spf1 -all"]);
        let (status, problem) = verify(&acme, &path, Some("dns_txt")).await;
        assert_eq!(status, 400, "{problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("2 found") && detail.contains(&value),
            "{detail}"
        );
        assert!(!detail.contains(their_value), "{detail}");
        // A server failure is a refusal, never a 500.
        dns.fail(record);
        let (status, problem) = verify(&acme, &path, None).await;
        assert_eq!(status, 400, "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("Server Failure"),
            "{problem}"
        );
        let (_, _, pending) = send(&acme, M::GET, &path, None, None).await;
        assert_eq!(pending["status"], "pending");
        assert!(pending["last_checked_at"].is_string(), "{pending}");

        // Its own value: verified.
        dns.set_txt(record, &[their_value, &value]);
        let (status, verified) = verify(&acme, &path, None).await;
        assert_eq!(status, 200, "{verified}");
        assert_eq!(verified["status"], "verified");
        assert!(verified["verified_at"].is_string());
        // The other organization cannot verify it, even with its own value.
        let (status, problem) = verify(&acme, &their_path, None).await;
        assert_eq!(status, 409, "{problem}");

        // A stale value: the token of an earlier claim of the same name, since removed.
        let (_, _, old) = send(
            &acme,
            M::POST,
            &format!("{BASE}/{hooli}/domains"),
            None,
            Some(json!({"name": "old.example"})),
        )
        .await;
        let old_path = format!("{BASE}/{hooli}/domains/{}", old["id"].as_str().unwrap());
        let old_value = old["verification"]["dns_txt"]["value"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, _, _) = send(&acme, M::DELETE, &old_path, None, None).await;
        assert_eq!(status, 204);
        let (_, _, new) = send(
            &acme,
            M::POST,
            &format!("{BASE}/{hooli}/domains"),
            None,
            Some(json!({"name": "old.example"})),
        )
        .await;
        dns.set_txt("_svc-verification.old.example", &[&old_value]);
        let new_path = format!("{BASE}/{hooli}/domains/{}", new["id"].as_str().unwrap());
        let (status, problem) = verify(&acme, &new_path, None).await;
        assert_eq!(status, 400, "{problem}");

        // The HTTPS method: a domain resolving to the loopback is refused by the SSRF guard.
        dns.set_a("old.example", &["127.0.0.1".parse().unwrap()]);
        let (status, problem) = verify(&acme, &new_path, Some("https")).await;
        assert_eq!(status, 400, "{problem}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.starts_with("https: "), "{detail}");
        assert!(detail.contains("internal address"), "{detail}");

        // Malformed names: 400 naming `name`; the same name twice in one organization: 409.
        for bad in ["localhost", "127.0.0.1", "a_b.example", "example.com.", ""] {
            let (status, problem) = acme
                .call(
                    M::POST,
                    &format!("{BASE}/{initech}/domains"),
                    Some(json!({"name": bad})),
                )
                .await;
            assert_eq!(status, 400, "{bad}: {problem}");
            assert!(
                problem["detail"].as_str().unwrap().starts_with("name: "),
                "{problem}"
            );
        }
        let (status, _) = acme
            .call(
                M::POST,
                &format!("{BASE}/{initech}/domains"),
                Some(json!({"name": "ACME.example"})),
            )
            .await;
        assert_eq!(status, 409);

        // IDOR: another organization's or tenant's ids, or malformed ones, are 404 everywhere.
        let wrong_org = format!("{BASE}/{hooli}/domains/{id}");
        let other_tenant = format!("{BASE}/{initech}/domains/{id}");
        let their_org = format!("{BASE}/{foreign}/domains/{id}");
        for (api, p) in [
            (&acme, wrong_org.as_str()),
            (&globex, other_tenant.as_str()),
            (&globex, their_org.as_str()),
            (&acme, &format!("{BASE}/{initech}/domains/dom_nope")),
            (&acme, &format!("{BASE}/{initech}/domains/{}", initech)),
        ] {
            for (method, body) in [
                (M::GET, None),
                (M::PATCH, Some(json!({"auto_join": false}))),
                (M::DELETE, None),
            ] {
                let (status, _, body) = send(api, method.clone(), p, None, body).await;
                assert_eq!(status, 404, "{method} {p}: {body}");
            }
            let (status, _) = verify(api, p, None).await;
            assert_eq!(status, 404, "verify {p}");
        }
        let (status, _) = globex
            .call(M::GET, &format!("{BASE}/{initech}/domains"), None)
            .await;
        assert_eq!(status, 404);
        let (status, _) = globex
            .call(
                M::POST,
                &format!("{BASE}/{initech}/domains"),
                Some(json!({"name": "x.example"})),
            )
            .await;
        assert_eq!(status, 404);

        // Changes honour If-Match.
        let (_, tag, _) = send(&acme, M::GET, &path, None, None).await;
        let tag = tag.unwrap();
        let patch = json!({"auto_join_roles": ["admin", "member"]});
        let (status, new_tag, changed) =
            send(&acme, M::PATCH, &path, Some(&tag), Some(patch.clone())).await;
        assert_eq!(status, 200, "{changed}");
        assert_eq!(changed["auto_join_roles"], json!(["admin", "member"]));
        let (status, _, _) = send(&acme, M::PATCH, &path, Some(&tag), Some(patch)).await;
        assert_eq!(status, 412);
        let (status, _, _) = send(&acme, M::DELETE, &path, Some(&tag), None).await;
        assert_eq!(status, 412);
        let (status, list) = acme
            .call(M::GET, &format!("{BASE}/{initech}/domains"), None)
            .await;
        assert_eq!(status, 200);
        assert_eq!(list["items"].as_array().unwrap().len(), 1);
        let (status, _, _) = send(&acme, M::DELETE, &path, new_tag.as_deref(), None).await;
        assert_eq!(status, 204);

        // Scopes: reading needs organizations:read, every change organizations:write.
        let reader = Api {
            app: &app,
            tenant: &acme_t,
            token: management_token(&app, &acme_t, Some("organizations:read")).await,
        };
        let (status, _) = reader
            .call(M::GET, &format!("{BASE}/{hooli}/domains"), None)
            .await;
        assert_eq!(status, 200);
        let (status, _) = reader
            .call(
                M::POST,
                &format!("{BASE}/{hooli}/domains"),
                Some(json!({"name": "y.example"})),
            )
            .await;
        assert_eq!(status, 403);
        let (status, _) = verify(&reader, &their_path, None).await;
        assert_eq!(status, 403);
        let writer_only = Api {
            app: &app,
            tenant: &acme_t,
            token: management_token(&app, &acme_t, Some("users:read")).await,
        };
        let (status, _) = writer_only.call(M::GET, &their_path, None).await;
        assert_eq!(status, 403);
        app.shutdown().await;
    }
}

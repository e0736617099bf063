//! SCIM 2.0 provisioning (RFC 7643, RFC 7644) over HTTP, on SQLite and PostgreSQL: SCIM tokens
//! through the management API (issued, listed without secrets, revoked), discovery, the User
//! resource type (create, read, list with filter and paging, replace, PATCH as Entra ID and
//! Okta send it, delete), ETags, and the attacks of issue 20: filter injection, deeply nested
//! and oversized filters, oversized bodies, a token of another tenant, PATCH on `id` / `meta`,
//! a duplicate `userName` and a stale `If-Match`. Deprovisioning and organization tokens are in
//! `scim_reach.rs`.

use crate::hosted::support::{Setup, World};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, Backend};

pub(crate) const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub(crate) const PATCH_OP: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/// A world serving `/scim/v2`.
pub(crate) async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_SCIM__ENABLED", "true"),
                ("SVC_SCIM__MAX_RESULTS", "3"),
                ("SVC_SCIM__MAX_BODY_BYTES", "4096"),
            ],
            ..Setup::default()
        },
    )
    .await
}

/// Issues a SCIM token (for `organization` when given): the created view.
pub(crate) async fn issue(world: &World, organization: Option<&str>) -> Value {
    let body = match organization {
        Some(org) => json!({"organization_id": org}),
        None => json!({}),
    };
    let response = world
        .api(Method::POST, "/api/v1/scim/tokens")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

/// `method /scim/v2{path}` on `host` with `token`: status, headers, body.
pub(crate) async fn scim_at(
    world: &World,
    host: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = world
        .app
        .request(method, &format!("/scim/v2{path}"))
        .header("host", host);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/scim+json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub(crate) async fn scim(
    world: &World,
    method: Method,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    scim_at(world, &world.host, method, path, Some(token), body, &[]).await
}

pub(crate) fn assert_error(status: u16, body: &Value, expected: u16, scim_type: Option<&str>) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(
        body["schemas"][0], "urn:ietf:params:scim:api:messages:2.0:Error",
        "{body}"
    );
    assert_eq!(body["status"], expected.to_string(), "{body}");
    assert_eq!(body["scimType"].as_str(), scim_type, "{body}");
}

pub(crate) fn user(user_name: &str, email: &str) -> Value {
    json!({
        "schemas": [USER],
        "userName": user_name,
        "externalId": format!("ext-{user_name}"),
        "name": {"givenName": "Grace", "familyName": "Hopper"},
        "displayName": "Grace Hopper",
        "emails": [{"value": email, "type": "work", "primary": true}],
        "active": true,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_tokens_are_issued_listed_revoked_and_bound_to_their_tenant() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let created = issue(&world, None).await;
        let token = created["token"].as_str().unwrap().to_owned();
        assert!(
            token.starts_with("svcscim_") && token.len() == 60,
            "{created}"
        );
        assert!(created["id"].as_str().unwrap().starts_with("scimt_"));
        assert_eq!(created["organization_id"], Value::Null);

        let listed: Value = world
            .api(Method::GET, "/api/v1/scim/tokens")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(listed["items"][0]["id"], created["id"], "{listed}");
        assert!(
            !listed.to_string().contains(&token),
            "never listed: {listed}"
        );

        let (status, headers, spc) =
            scim(&world, Method::GET, "/ServiceProviderConfig", &token, None).await;
        assert_eq!(status, 200, "{spc}");
        assert_eq!(headers["content-type"], "application/scim+json");
        assert_eq!(spc["bulk"]["supported"], true);
        assert_eq!(spc["bulk"]["maxPayloadSize"], 4096, "[scim].max_body_bytes");
        assert_eq!(spc["patch"]["supported"], true);
        assert_eq!(spc["filter"]["maxResults"], 3);
        let (_, _, types) = scim(&world, Method::GET, "/ResourceTypes", &token, None).await;
        assert_eq!(types["totalResults"], 2, "Users and Groups: {types}");
        assert_eq!(types["Resources"][1]["id"], "Group", "{types}");
        let (_, _, schemas) = scim(&world, Method::GET, "/Schemas", &token, None).await;
        assert_eq!(schemas["Resources"][0]["id"], USER);

        // No token, another kind of token, garbage: 401 with a SCIM body.
        for presented in [None, Some(world.token.as_str()), Some("svcscim_nope")] {
            let (status, headers, body) = scim_at(
                &world,
                &world.host,
                Method::GET,
                "/Users",
                presented,
                None,
                &[],
            )
            .await;
            assert_error(status, &body, 401, None);
            assert!(headers.contains_key("www-authenticate"));
        }

        // A token of tenant acme is unknown at tenant other.
        let other = world.other_tenant("other").await;
        let (status, _, body) = scim_at(
            &world,
            &other.host,
            Method::GET,
            "/Users",
            Some(&token),
            None,
            &[],
        )
        .await;
        assert_error(status, &body, 401, None);

        // Revoked: refused at once.
        let id = created["id"].as_str().unwrap();
        let revoked = world
            .api(Method::DELETE, &format!("/api/v1/scim/tokens/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), 204);
        let (status, _, body) = scim(&world, Method::GET, "/Users", &token, None).await;
        assert_error(status, &body, 401, None);
        let again = world
            .api(Method::DELETE, &format!("/api/v1/scim/tokens/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 404);
        world.shutdown().await;

        // Not served unless enabled: the router's plain 404 (no token can be issued there, see
        // the last test; this one has the shape of one).
        let plain = World::new(backend, Setup::default()).await;
        let shaped = format!("svcscim_{}", "a".repeat(52));
        let (status, _, body) = scim(&plain, Method::GET, "/Users", &shaped, None).await;
        assert_eq!(status, 404, "{body}");
        assert!(body.get("scimType").is_none());
        plain.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_users_are_created_read_listed_replaced_patched_and_deleted() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();

        let (status, headers, grace) = scim(
            &world,
            Method::POST,
            "/Users",
            &token,
            Some(&user("Grace.Hopper", "grace@navy.example")),
        )
        .await;
        assert_eq!(status, 201, "{grace}");
        let id = grace["id"].as_str().unwrap().to_owned();
        let location = headers["location"].to_str().unwrap().to_owned();
        assert_eq!(location, format!("{}/scim/v2/Users/{id}", world.issuer()));
        assert_eq!(grace["meta"]["location"], location.as_str());
        let etag = headers["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with("W/\""), "{etag}");
        assert_eq!(grace["meta"]["version"], etag.as_str());
        assert_eq!(grace["userName"], "Grace.Hopper");
        assert_eq!(grace["externalId"], "ext-Grace.Hopper");
        assert_eq!(grace["emails"][0]["value"], "grace@navy.example");
        assert_eq!(grace["active"], true);
        assert!(grace.get("password").is_none());

        // The management API sees the same person, pre-provisioned, created by the token.
        let person: Value = world
            .api(Method::GET, &format!("/api/v1/tenant-users/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(person["status"], "pre_provisioned", "{person}");

        // userName is unique ignoring case; so is the address.
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users",
            &token,
            Some(&user("GRACE.hopper", "other@navy.example")),
        )
        .await;
        assert_error(status, &body, 409, Some("uniqueness"));
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users",
            &token,
            Some(&user("someone.else", "Grace@Navy.example")),
        )
        .await;
        assert_error(status, &body, 409, Some("uniqueness"));
        // A userName equal to a person's email (Ada was created through the management API).
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users",
            &token,
            Some(&user("ADA@example.com", "ada2@example.com")),
        )
        .await;
        assert_error(status, &body, 409, Some("uniqueness"));

        // Read by id; another id or a malformed one is 404.
        let (status, _, read) =
            scim(&world, Method::GET, &format!("/Users/{id}"), &token, None).await;
        assert_eq!(status, 200);
        assert_eq!(read, grace);
        for missing in ["usr_01jd3k2m4n5p6q7r8s9t0v1w2x", "1' OR '1'='1"] {
            let (status, _, body) = scim(
                &world,
                Method::GET,
                &format!("/Users/{}", urlencode(missing)),
                &token,
                None,
            )
            .await;
            assert_error(status, &body, 404, None);
        }

        // The probe Entra ID and Okta send, case-insensitively.
        let (status, _, found) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(r#"userName eq "grace.HOPPER""#)
            ),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["totalResults"], 1);
        assert_eq!(found["Resources"][0]["id"], id.as_str());
        let (_, _, found) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(
                    r#"emails[type eq "work" and value ew "@navy.example"] and active eq true"#
                )
            ),
            &token,
            None,
        )
        .await;
        assert_eq!(found["totalResults"], 1, "{found}");

        let since = grace["meta"]["lastModified"].as_str().unwrap().to_owned();
        let (_, _, found) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(&format!(
                    r#"meta.lastModified ge "{since}" and meta.created pr"#
                ))
            ),
            &token,
            None,
        )
        .await;
        assert_eq!(found["totalResults"], 1, "{found}");

        // Injection is a value; malformed, unknown or deeply nested filters are invalidFilter.
        let (status, _, found) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(r#"userName eq "x\" or 1=1 or \"\"=\"""#)
            ),
            &token,
            None,
        )
        .await;
        assert_eq!(
            (status, found["totalResults"].clone()),
            (200, json!(0)),
            "{found}"
        );
        let deep = format!("{}userName pr{}", "(".repeat(500), ")".repeat(500));
        for bad in [
            r#"userName eq "x" or 1=1"#.to_owned(),
            r#"password eq "x""#.to_owned(),
            "userName eq".to_owned(),
            deep,
            format!(r#"userName eq "{}""#, "a".repeat(5000)),
        ] {
            let (status, _, body) = scim(
                &world,
                Method::GET,
                &format!("/Users?filter={}", urlencode(&bad)),
                &token,
                None,
            )
            .await;
            assert_error(status, &body, 400, Some("invalidFilter"));
        }

        // Paging is 1-based and capped at max_results (3); count=0 gives only the total.
        for n in 0..3 {
            let (status, _, body) = scim(
                &world,
                Method::POST,
                "/Users",
                &token,
                Some(&user(&format!("u{n}"), &format!("u{n}@example.com"))),
            )
            .await;
            assert_eq!(status, 201, "{body}");
        }
        let (_, _, page) = scim(&world, Method::GET, "/Users?count=100", &token, None).await;
        assert_eq!(page["totalResults"], 5, "{page}");
        assert_eq!(page["itemsPerPage"], 3);
        let (_, _, page) = scim(
            &world,
            Method::GET,
            "/Users?startIndex=4&count=2",
            &token,
            None,
        )
        .await;
        assert_eq!(
            (page["startIndex"].clone(), page["itemsPerPage"].clone()),
            (json!(4), json!(2))
        );
        let (_, _, page) = scim(&world, Method::GET, "/Users?count=0", &token, None).await;
        assert_eq!(page["Resources"], json!([]));
        assert_eq!(page["totalResults"], 5);

        let (status, _, body) =
            scim(&world, Method::GET, "/Users?startIndex=one", &token, None).await;
        assert_error(status, &body, 400, Some("invalidValue"));
        // The same query as a SearchRequest (RFC 7644 §3.4.3), at /Users/.search and the root.
        let search = json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
            "filter": "userName sw \"u\"", "attributes": ["userName"], "count": 2,
        });
        for path in ["/Users/.search", "/.search"] {
            let (status, _, found) = scim(&world, Method::POST, path, &token, Some(&search)).await;
            assert_eq!(status, 200, "{found}");
            assert_eq!(found["totalResults"], 3, "{found}");
            assert_eq!(found["itemsPerPage"], 2, "{found}");
            let keys: Vec<&String> = found["Resources"][0].as_object().unwrap().keys().collect();
            assert_eq!(keys, ["id", "schemas", "userName"], "{found}");
        }

        // attributes / excludedAttributes.
        let (_, _, only) = scim(
            &world,
            Method::GET,
            &format!("/Users/{id}?attributes=userName,name.familyName"),
            &token,
            None,
        )
        .await;
        assert_eq!(
            only,
            json!({"schemas": [USER], "id": id, "userName": "Grace.Hopper",
                   "name": {"familyName": "Hopper"}})
        );
        let (_, _, without) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}&excludedAttributes=emails,meta",
                urlencode(&format!(r#"id eq "{id}""#))
            ),
            &token,
            None,
        )
        .await;
        let first = &without["Resources"][0];
        assert!(
            first.get("emails").is_none() && first.get("meta").is_none(),
            "{without}"
        );
        assert_eq!(first["userName"], "Grace.Hopper");

        // PUT: a stale If-Match is 412; the current one replaces (absent names are cleared).
        let mut replacement = user("grace.h", "grace@navy.example");
        replacement["name"] = json!({"givenName": "Grace"});
        let (status, _, body) = scim_at(
            &world,
            &world.host,
            Method::PUT,
            &format!("/Users/{id}"),
            Some(&token),
            Some(&replacement),
            &[("if-match", "W/\"r1\"")],
        )
        .await;
        assert_error(status, &body, 412, None);
        let (status, headers, replaced) = scim_at(
            &world,
            &world.host,
            Method::PUT,
            &format!("/Users/{id}"),
            Some(&token),
            Some(&replacement),
            &[("if-match", &etag)],
        )
        .await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(replaced["userName"], "grace.h");
        assert_eq!(replaced["name"], json!({"givenName": "Grace"}));
        let etag2 = headers["etag"].to_str().unwrap().to_owned();
        assert_ne!(etag2, etag);
        // The old version no longer matches.
        let (status, _, body) = scim_at(
            &world,
            &world.host,
            Method::PUT,
            &format!("/Users/{id}"),
            Some(&token),
            Some(&replacement),
            &[("if-match", &etag)],
        )
        .await;
        assert_error(status, &body, 412, None);
        // A replace naming another id is mutability.
        let mut other_id = replacement.clone();
        other_id["id"] = json!("usr_01jd3k2m4n5p6q7r8s9t0v1w2x");
        let (status, _, body) = scim(
            &world,
            Method::PUT,
            &format!("/Users/{id}"),
            &token,
            Some(&other_id),
        )
        .await;
        assert_error(status, &body, 400, Some("mutability"));

        // PATCH as Entra ID sends it: capitalised op, path-less object, "False" as a string.
        let entra = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "Replace", "path": "displayName", "value": "Rear Admiral Hopper"},
            {"op": "Replace", "value": {"name.familyName": "Hopper", "active": "False"}},
        ]});
        let (status, _, patched) = scim(
            &world,
            Method::PATCH,
            &format!("/Users/{id}"),
            &token,
            Some(&entra),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        assert_eq!(patched["displayName"], "Rear Admiral Hopper");
        assert_eq!(patched["name"]["familyName"], "Hopper");
        assert_eq!(patched["active"], false);
        // As Okta sends it: replace active true (the person comes back).
        let okta = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "replace", "value": {"active": true}},
        ]});
        let (status, _, patched) = scim(
            &world,
            Method::PATCH,
            &format!("/Users/{id}"),
            &token,
            Some(&okta),
        )
        .await;
        assert_eq!(
            (status, patched["active"].clone()),
            (200, json!(true)),
            "{patched}"
        );

        // PATCH on id, meta or a password: mutability; an unknown attribute: invalidPath.
        for (op, expected) in [
            (
                json!({"op": "replace", "path": "id", "value": "usr_x"}),
                "mutability",
            ),
            (
                json!({"op": "replace", "path": "meta.created", "value": "2000-01-01T00:00:00Z"}),
                "mutability",
            ),
            (
                json!({"op": "replace", "value": {"meta": {"version": "W/\"x\""}}}),
                "mutability",
            ),
            (
                json!({"op": "add", "path": "password", "value": "hunter2hunter2"}),
                "mutability",
            ),
            (
                json!({"op": "replace", "path": "favouriteColour", "value": "x"}),
                "invalidPath",
            ),
        ] {
            let body = json!({"schemas": [PATCH_OP], "Operations": [op]});
            let (status, _, refused) = scim(
                &world,
                Method::PATCH,
                &format!("/Users/{id}"),
                &token,
                Some(&body),
            )
            .await;
            assert_error(status, &refused, 400, Some(expected));
        }

        // Oversized bodies: 413 with a SCIM body.
        let mut huge = user("huge", "huge@example.com");
        huge["displayName"] = json!("x".repeat(5000));
        let (status, _, body) = scim(&world, Method::POST, "/Users", &token, Some(&huge)).await;
        assert_error(status, &body, 413, None);

        // Not offered.
        let (status, _, body) = scim(&world, Method::GET, "/Me", &token, None).await;
        assert_error(status, &body, 501, None);
        let (status, _, body) = scim(&world, Method::GET, "/Bulk", &token, None).await;
        assert_error(status, &body, 405, None);
        let (status, _, body) = scim(&world, Method::GET, "/Roles", &token, None).await;
        assert_error(status, &body, 404, None);

        // DELETE deprovisions: gone for SCIM, removed for the management API, name freed.
        let (status, _, _) = scim(
            &world,
            Method::DELETE,
            &format!("/Users/{id}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 204);
        let (status, _, body) =
            scim(&world, Method::GET, &format!("/Users/{id}"), &token, None).await;
        assert_error(status, &body, 404, None);
        let person: Value = world
            .api(Method::GET, &format!("/api/v1/tenant-users/{id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(person["status"], "removed", "{person}");
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users",
            &token,
            Some(&user("grace.h", "grace@navy.example")),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        world.shutdown().await;
    }
}

/// Percent-encodes a query value.
pub(crate) fn urlencode(raw: &str) -> String {
    let mut out = String::new();
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[tokio::test]
async fn without_scim_its_tokens_and_groups_are_neither_served_nor_documented() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: vec![("SVC_OPENAPI__ENABLED", "true")],
                ..Setup::default()
            },
        )
        .await;
        let org: Value = world
            .api(Method::POST, "/api/v1/organizations")
            .json(&json!({"name": "North", "slug": "north"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let org = org["id"].as_str().expect("an organization");
        let group = "scimg_01jd2n4k6m8p0r2t4v6x8z0b2d";
        for (method, path) in [
            (Method::POST, "/api/v1/scim/tokens".to_owned()),
            (Method::GET, "/api/v1/scim/tokens".to_owned()),
            (Method::GET, "/api/v1/scim/groups".to_owned()),
            (Method::PUT, format!("/api/v1/scim/groups/{group}/roles")),
            (
                Method::GET,
                format!("/api/v1/organizations/{org}/scim/groups"),
            ),
            (
                Method::PUT,
                format!("/api/v1/organizations/{org}/scim/groups/{group}/roles"),
            ),
        ] {
            let answer = world
                .api(method.clone(), &path)
                .json(&json!({"roles": []}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 404, "{backend:?} {method} {path}");
        }
        let document: Value = world.app.get("/openapi.json").await.json().await.unwrap();
        let paths = document["paths"].as_object().expect("paths");
        assert!(
            paths.contains_key("/api/v1/organizations/{id}/members"),
            "the document is the served one"
        );
        let scim: Vec<&String> = paths.keys().filter(|p| p.contains("/scim")).collect();
        assert!(
            scim.is_empty(),
            "{backend:?}: documented without [scim]: {scim:?}"
        );
        world.shutdown().await;
    }
}

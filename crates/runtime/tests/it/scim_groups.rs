//! SCIM 2.0 Groups and sorting over HTTP, on SQLite and PostgreSQL: discovery advertises the
//! Group resource type and sorting; CRUD of groups with ETags, `If-Match` (412), `displayName`
//! uniqueness (409), PATCH payloads as Entra ID and Okta send them, projections and a person's
//! read-only `groups`; members a token cannot see (another organization's, another tenant's,
//! unknown) refused with nothing written; scopes (an organization's token never sees the
//! tenant's or another organization's groups); the same sorted order on both backends; and
//! hostile input (deep and long filters, oversized bodies, junk `sortBy`).

use crate::common::management_token;
use crate::scim::{PATCH_OP, USER, assert_error, issue, scim, scim_at, urlencode, user, world};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";

fn group(name: &str, members: &[&str]) -> Value {
    json!({
        "schemas": [GROUP],
        "displayName": name,
        "externalId": format!("ext-{name}"),
        "members": members.iter().map(|m| json!({"value": m})).collect::<Vec<_>>(),
    })
}

fn member_ids(group: &Value) -> Vec<String> {
    let mut ids: Vec<String> = group["members"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|m| m["value"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn sorted(ids: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = ids.iter().map(|s| (*s).to_owned()).collect();
    out.sort();
    out
}

/// Creates a person through SCIM with `token`: their id.
async fn person(world: &crate::hosted::support::World, token: &str, name: &str) -> String {
    let (status, _, body) = scim(
        world,
        Method::POST,
        "/Users",
        token,
        Some(&user(name, &format!("{name}@example.org"))),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_groups_crud_patch_etags_and_uniqueness() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();

        // Discovery advertises Groups and sorting.
        let (_, _, spc) = scim(&world, Method::GET, "/ServiceProviderConfig", &token, None).await;
        assert_eq!(spc["sort"]["supported"], true, "{spc}");
        let (_, _, types) = scim(&world, Method::GET, "/ResourceTypes/Group", &token, None).await;
        assert_eq!(types["endpoint"], "/Groups", "{types}");
        let (status, _, schema) = scim(
            &world,
            Method::GET,
            &format!("/Schemas/{GROUP}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 200, "{schema}");
        assert_eq!(schema["attributes"][0]["name"], "displayName");

        let ann = person(&world, &token, "ann").await;
        let bob = person(&world, &token, "bob").await;
        let cid = person(&world, &token, "cid").await;

        // Create: 201, Location, ETag, members.
        let (status, headers, created) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&group("Engineering", &[&ann])),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("scimg_"), "{created}");
        assert_eq!(
            headers["location"].to_str().unwrap(),
            created["meta"]["location"].as_str().unwrap()
        );
        assert_eq!(
            headers["etag"].to_str().unwrap(),
            created["meta"]["version"].as_str().unwrap()
        );
        assert_eq!(created["meta"]["resourceType"], "Group");
        assert_eq!(member_ids(&created), std::slice::from_ref(&ann));
        assert!(
            created["members"][0]["$ref"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/scim/v2/Users/{ann}")),
            "{created}"
        );

        // The person's read-only `groups`.
        let (_, _, read_ann) =
            scim(&world, Method::GET, &format!("/Users/{ann}"), &token, None).await;
        assert_eq!(read_ann["groups"][0]["value"], id.as_str(), "{read_ann}");
        assert_eq!(read_ann["groups"][0]["display"], "Engineering");

        // displayName is unique ignoring case.
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&group("ENGINEERING", &[])),
        )
        .await;
        assert_error(status, &body, 409, Some("uniqueness"));

        // Filters.
        for (filter, expected) in [
            (r#"displayName eq "engineering""#.to_owned(), 1),
            (format!(r#"members[value eq "{ann}"]"#), 1),
            (format!(r#"members.value eq "{bob}""#), 0),
            (r#"externalId eq "ext-Engineering""#.to_owned(), 1),
            (r#"displayName eq "x\" or 1=1 or \"\"=\"""#.to_owned(), 0),
        ] {
            let (status, _, page) = scim(
                &world,
                Method::GET,
                &format!("/Groups?filter={}", urlencode(&filter)),
                &token,
                None,
            )
            .await;
            assert_eq!(status, 200, "{page}");
            assert_eq!(page["totalResults"], expected, "{filter}: {page}");
        }

        // Entra ID's PATCH: capitalised ops, remove with a value list, a rename.
        let entra = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "Add", "path": "members", "value": [{"value": bob}]},
            {"op": "Remove", "path": "members", "value": [{"value": ann}]},
            {"op": "Replace", "path": "displayName", "value": "Platform"}]});
        let (status, _, patched) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{id}"),
            &token,
            Some(&entra),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        assert_eq!(member_ids(&patched), std::slice::from_ref(&bob));
        assert_eq!(patched["displayName"], "Platform");
        let stale = created["meta"]["version"].as_str().unwrap().to_owned();
        assert_ne!(patched["meta"]["version"].as_str().unwrap(), stale);

        // Okta's PATCH: a value-path remove, a path-less rename carrying the id, a path-less add.
        let okta = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "remove", "path": format!("members[value eq \"{bob}\"]")},
            {"op": "replace", "value": {"id": id, "displayName": "Platform Team"}},
            {"op": "add", "value": {"members": [{"value": cid, "display": "cid"}]}}]});
        let (status, _, patched) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{id}"),
            &token,
            Some(&okta),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        assert_eq!(member_ids(&patched), std::slice::from_ref(&cid));
        assert_eq!(patched["displayName"], "Platform Team");
        let current = patched["meta"]["version"].as_str().unwrap().to_owned();

        // If-Match: a stale version is 412 and changes nothing; the current one applies.
        let rename = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "replace", "path": "displayName", "value": "Stale"}]});
        let (status, _, body) = scim_at(
            &world,
            &world.host,
            Method::PATCH,
            &format!("/Groups/{id}"),
            Some(&token),
            Some(&rename),
            &[("if-match", stale.as_str())],
        )
        .await;
        assert_error(status, &body, 412, None);
        let (_, _, unchanged) =
            scim(&world, Method::GET, &format!("/Groups/{id}"), &token, None).await;
        assert_eq!(unchanged["displayName"], "Platform Team");
        let mut replacement = group("Platform", &[&ann, &cid]);
        replacement.as_object_mut().unwrap().remove("externalId");
        let (status, _, body) = scim_at(
            &world,
            &world.host,
            Method::PUT,
            &format!("/Groups/{id}"),
            Some(&token),
            Some(&replacement),
            &[("if-match", stale.as_str())],
        )
        .await;
        assert_error(status, &body, 412, None);
        let (status, _, replaced) = scim_at(
            &world,
            &world.host,
            Method::PUT,
            &format!("/Groups/{id}"),
            Some(&token),
            Some(&replacement),
            &[("if-match", current.as_str())],
        )
        .await;
        assert_eq!(status, 200, "{replaced}");
        assert_eq!(member_ids(&replaced), sorted(&[&ann, &cid]));
        assert!(replaced.get("externalId").is_none(), "{replaced}");

        // Projections.
        let (_, _, only) = scim(
            &world,
            Method::GET,
            &format!("/Groups/{id}?attributes=displayName"),
            &token,
            None,
        )
        .await;
        let mut keys: Vec<&str> = only
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["displayName", "id", "schemas"], "{only}");
        let (_, _, without) = scim(
            &world,
            Method::GET,
            "/Groups?excludedAttributes=members",
            &token,
            None,
        )
        .await;
        assert!(
            without["Resources"][0].get("members").is_none(),
            "{without}"
        );
        assert_eq!(without["Resources"][0]["displayName"], "Platform");

        // PATCH refusals: id and meta, a required displayName, an unknown path.
        for (operation, scim_type) in [
            (
                json!({"op": "replace", "path": "id", "value": "scimg_x"}),
                "mutability",
            ),
            (
                json!({"op": "remove", "path": "displayName"}),
                "invalidValue",
            ),
            (
                json!({"op": "add", "path": "owners", "value": "x"}),
                "invalidPath",
            ),
        ] {
            let (status, _, body) = scim(
                &world,
                Method::PATCH,
                &format!("/Groups/{id}"),
                &token,
                Some(&json!({"schemas": [PATCH_OP], "Operations": [operation]})),
            )
            .await;
            assert_error(status, &body, 400, Some(scim_type));
        }

        // A root search spans Users and Groups; a filter one type cannot express matches
        // none of that type.
        for (filter, kinds) in [
            (r#"displayName eq "platform""#, vec!["Group"]),
            (r#"userName eq "ann""#, vec!["User"]),
            (
                &*format!(r#"id eq "{id}" or id eq "{ann}""#),
                vec!["User", "Group"],
            ),
        ] {
            let (status, _, found) = scim(
                &world,
                Method::POST,
                "/.search",
                &token,
                Some(&json!({"filter": filter})),
            )
            .await;
            assert_eq!(status, 200, "{found}");
            let types: Vec<&str> = found["Resources"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["meta"]["resourceType"].as_str())
                .collect();
            assert_eq!(types, kinds, "{filter}: {found}");
            assert_eq!(found["totalResults"], kinds.len());
        }

        // The audit log names the token.
        let audit: Value = world
            .api(Method::GET, &format!("/api/v1/audit-logs?target={id}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let actions: Vec<&str> = audit["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["action"].as_str())
            .collect();
        assert!(actions.contains(&"scim_group.created"), "{audit}");
        assert!(actions.contains(&"scim_group.updated"), "{audit}");

        // Delete: 204, then 404; the people stay, without the group.
        let (status, _, _) = scim(
            &world,
            Method::DELETE,
            &format!("/Groups/{id}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 204);
        let (status, _, body) =
            scim(&world, Method::GET, &format!("/Groups/{id}"), &token, None).await;
        assert_error(status, &body, 404, None);
        let (status, _, read_ann) =
            scim(&world, Method::GET, &format!("/Users/{ann}"), &token, None).await;
        assert_eq!(status, 200, "{read_ann}");
        assert!(read_ann.get("groups").is_none(), "{read_ann}");
        world.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_group_members_must_be_visible_and_scopes_stay_apart() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let tenant = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut orgs = Vec::new();
        for slug in ["north", "south"] {
            let created: Value = world
                .api(Method::POST, "/api/v1/organizations")
                .json(&json!({"name": slug, "slug": slug}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            orgs.push(created["id"].as_str().unwrap().to_owned());
        }
        let north = issue(&world, Some(&orgs[0])).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let south = issue(&world, Some(&orgs[1])).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let nina = person(&world, &north, "nina").await;
        let sam = person(&world, &south, "sam").await;
        // A person of another tenant.
        let other = world.other_tenant("other").await;
        let management = management_token(&world.app, &other, None).await;
        let stranger: Value = world
            .app
            .request(Method::POST, "/api/v1/tenant-users")
            .header("host", &other.host)
            .bearer_auth(&management)
            .json(&json!({"email": "stranger@other.example"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let stranger = stranger["id"].as_str().unwrap().to_owned();

        // Members the token cannot see: 400 invalidValue, nothing written.
        for members in [
            vec![nina.as_str(), sam.as_str()],
            vec![nina.as_str(), stranger.as_str()],
            vec!["usr_01jd3k2m4n5p6q7r8s9t0v1w2x"],
            vec!["not an id"],
        ] {
            let (status, _, body) = scim(
                &world,
                Method::POST,
                "/Groups",
                &north,
                Some(&group("North", &members)),
            )
            .await;
            assert_error(status, &body, 400, Some("invalidValue"));
        }
        let (_, _, listed) = scim(&world, Method::GET, "/Groups", &north, None).await;
        assert_eq!(listed["totalResults"], 0, "nothing written: {listed}");

        let (status, _, north_group) = scim(
            &world,
            Method::POST,
            "/Groups",
            &north,
            Some(&group("North", &[&nina])),
        )
        .await;
        assert_eq!(status, 201, "{north_group}");
        let north_id = north_group["id"].as_str().unwrap().to_owned();
        // One refused member in a PATCH of several operations: none of them applies.
        let patch = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "replace", "path": "displayName", "value": "North renamed"},
            {"op": "add", "path": "members", "value": [{"value": sam}]}]});
        let (status, _, body) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{north_id}"),
            &north,
            Some(&patch),
        )
        .await;
        assert_error(status, &body, 400, Some("invalidValue"));
        let (_, _, still) = scim(
            &world,
            Method::GET,
            &format!("/Groups/{north_id}"),
            &north,
            None,
        )
        .await;
        assert_eq!(still["displayName"], "North", "{still}");
        assert_eq!(member_ids(&still), std::slice::from_ref(&nina));

        // The tenant's token sees everyone; its groups are the tenant's own.
        let (status, _, all) = scim(
            &world,
            Method::POST,
            "/Groups",
            &tenant,
            Some(&group("North", &[&nina, &sam])),
        )
        .await;
        assert_eq!(status, 201, "the same name in another scope: {all}");
        let all_id = all["id"].as_str().unwrap().to_owned();
        // The same name in south's scope too.
        let (status, _, south_group) = scim(
            &world,
            Method::POST,
            "/Groups",
            &south,
            Some(&group("north", &[&sam])),
        )
        .await;
        assert_eq!(status, 201, "{south_group}");

        // Nobody sees another scope's group.
        for (token, id) in [(&north, &all_id), (&south, &north_id), (&tenant, &north_id)] {
            for method in [Method::GET, Method::DELETE] {
                let (status, _, body) =
                    scim(&world, method, &format!("/Groups/{id}"), token, None).await;
                assert_error(status, &body, 404, None);
            }
            let (status, _, body) = scim(
                &world,
                Method::PATCH,
                &format!("/Groups/{id}"),
                token,
                Some(&json!({"schemas": [PATCH_OP], "Operations": [
                    {"op": "replace", "path": "displayName", "value": "taken over"}]})),
            )
            .await;
            assert_error(status, &body, 404, None);
        }
        let (_, _, mine) = scim(&world, Method::GET, "/Groups", &north, None).await;
        assert_eq!(mine["totalResults"], 1, "{mine}");
        assert_eq!(mine["Resources"][0]["id"], north_id.as_str());
        // A person's `groups` are those of the reader's scope.
        let (_, _, nina_north) =
            scim(&world, Method::GET, &format!("/Users/{nina}"), &north, None).await;
        let groups: Vec<&str> = nina_north["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["value"].as_str())
            .collect();
        assert_eq!(groups, [north_id.as_str()], "{nina_north}");

        // Deleting the group keeps the membership of the organization.
        let (status, _, _) = scim(
            &world,
            Method::DELETE,
            &format!("/Groups/{north_id}"),
            &north,
            None,
        )
        .await;
        assert_eq!(status, 204);
        let (status, _, body) =
            scim(&world, Method::GET, &format!("/Users/{nina}"), &north, None).await;
        assert_eq!(status, 200, "still north's member: {body}");
        world.shutdown().await;
    }
}

/// The userNames of a Users listing sorted by `sort`, every page.
async fn user_order(world: &crate::hosted::support::World, token: &str, sort: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 1;
    loop {
        let (status, _, page) = scim(
            world,
            Method::GET,
            &format!("/Users?{sort}&startIndex={start}"),
            token,
            None,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        let items = page["Resources"].as_array().unwrap().clone();
        if items.is_empty() {
            return out;
        }
        start += items.len();
        out.extend(
            items
                .iter()
                .map(|u| u["userName"].as_str().unwrap().to_owned()),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_sorting_gives_the_same_order_on_both_backends() {
    let mut orders = Vec::new();
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        for (name, family, external) in [
            ("delta", Some("Zeta"), Some("e-B")),
            ("Alpha", Some("émile"), Some("e-a")),
            ("charlie", None, None),
            ("bravo", Some("adams"), Some("e-A")),
            ("ECHO", Some("Adams"), Some("e-b")),
        ] {
            let mut body = user(name, &format!("{}@example.org", name.to_lowercase()));
            match family {
                Some(f) => body["name"]["familyName"] = json!(f),
                None => {
                    body.as_object_mut().unwrap().remove("name");
                }
            }
            match external {
                Some(e) => body["externalId"] = json!(e),
                None => {
                    body.as_object_mut().unwrap().remove("externalId");
                }
            }
            let (status, _, created) =
                scim(&world, Method::POST, "/Users", &token, Some(&body)).await;
            assert_eq!(status, 201, "{created}");
            for name in [format!("{name} team")] {
                let (status, _, created) = scim(
                    &world,
                    Method::POST,
                    "/Groups",
                    &token,
                    Some(&group(&name, &[])),
                )
                .await;
                assert_eq!(status, 201, "{created}");
            }
        }
        let mut per_backend = Vec::new();
        for sort in [
            "sortBy=userName",
            "sortBy=userName&sortOrder=descending",
            "sortBy=name.familyName",
            "sortBy=name.familyName&sortOrder=DESCENDING",
            "sortBy=externalId",
            "sortBy=meta.created&sortOrder=descending",
            "sortBy=meta.lastModified",
        ] {
            per_backend.push(user_order(&world, &token, sort).await);
        }
        // The people the world starts with (its signed-in person) sort among them; only the
        // five created here are compared.
        for order in &mut per_backend {
            order.retain(|n| ["delta", "Alpha", "charlie", "bravo", "ECHO"].contains(&n.as_str()));
        }
        assert_eq!(
            per_backend[0],
            ["Alpha", "bravo", "charlie", "delta", "ECHO"]
        );
        assert_eq!(
            per_backend[1],
            ["ECHO", "delta", "charlie", "bravo", "Alpha"]
        );
        // Ties (adams, Adams) in id (creation) order; no familyName last ascending.
        assert_eq!(
            per_backend[2],
            ["bravo", "ECHO", "delta", "Alpha", "charlie"]
        );
        assert_eq!(
            per_backend[3],
            ["charlie", "Alpha", "delta", "bravo", "ECHO"]
        );
        // externalId is case-exact: byte order.
        assert_eq!(
            per_backend[4],
            ["bravo", "delta", "Alpha", "ECHO", "charlie"]
        );
        assert_eq!(
            per_backend[5],
            ["ECHO", "bravo", "charlie", "Alpha", "delta"]
        );
        assert_eq!(
            per_backend[6],
            ["delta", "Alpha", "charlie", "bravo", "ECHO"]
        );
        let mut groups = Vec::new();
        for start in [1, 4] {
            let (status, _, page) = scim(
                &world,
                Method::GET,
                &format!("/Groups?sortBy=displayName&sortOrder=descending&startIndex={start}"),
                &token,
                None,
            )
            .await;
            assert_eq!(status, 200, "{page}");
            groups.extend(
                page["Resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| g["displayName"].as_str().unwrap().to_owned()),
            );
        }
        assert_eq!(
            groups,
            [
                "ECHO team",
                "delta team",
                "charlie team",
                "bravo team",
                "Alpha team"
            ]
        );
        per_backend.push(groups);
        orders.push(per_backend);
        world.shutdown().await;
    }
    assert!(orders.windows(2).all(|w| w[0] == w[1]), "{orders:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim_groups_refuse_hostile_input() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, _, created) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&group("Ops", &[])),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();

        let deep = format!("{}displayName pr{}", "(".repeat(2_000), ")".repeat(2_000));
        let long = format!(r#"displayName eq "{}""#, "a".repeat(5_000));
        let wide = vec![r#"displayName eq "a""#; 1_500].join(" or ");
        for filter in [deep, long, wide, r#"userName eq "x""#.to_owned()] {
            let (status, _, body) = scim(
                &world,
                Method::POST,
                "/Groups/.search",
                &token,
                Some(
                    &json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
                    "filter": filter}),
                ),
            )
            .await;
            // Bodies past 4096 bytes are refused before any parsing.
            if status == 413 {
                assert_error(status, &body, 413, None);
            } else {
                assert_error(status, &body, 400, Some("invalidFilter"));
            }
        }
        let deep = format!("{}displayName pr{}", "(".repeat(500), ")".repeat(500));
        let (status, _, body) = scim(
            &world,
            Method::GET,
            &format!("/Groups?filter={}", urlencode(&deep)),
            &token,
            None,
        )
        .await;
        assert_error(status, &body, 400, Some("invalidFilter"));

        // sortBy junk is invalidValue on both resource types, sortOrder junk too.
        for path in [
            "/Groups?sortBy=members",
            "/Groups?sortBy=userName",
            "/Groups?sortBy=displayName&sortOrder=sideways",
            "/Users?sortBy=password",
            "/Users?sortBy=name.familyName%27%3B%20DROP%20TABLE%20users%3B--",
            "/Users?sortBy=emails%5Btype%20eq%20%22work%22%5D",
        ] {
            let (status, _, body) = scim(&world, Method::GET, path, &token, None).await;
            assert_error(status, &body, 400, Some("invalidValue"));
        }
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Users/.search",
            &token,
            Some(&json!({"sortBy": "x".repeat(1000)})),
        )
        .await;
        assert_error(status, &body, 400, Some("invalidValue"));

        // Oversized bodies, an oversized name, wrong shapes, too many operations.
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&group(&"x".repeat(5_000), &[])),
        )
        .await;
        assert_error(status, &body, 413, None);
        for bad in [
            group(&"x".repeat(300), &[]),
            json!({"schemas": [GROUP], "displayName": "m", "members": "everyone"}),
            json!({"schemas": [GROUP], "displayName": "m", "members": [{"value": 7}]}),
            json!({"schemas": [GROUP], "displayName": "m", "members": [{"value": id, "type": "Group"}]}),
            json!({"schemas": [GROUP]}),
        ] {
            let (status, _, body) = scim(&world, Method::POST, "/Groups", &token, Some(&bad)).await;
            assert_error(status, &body, 400, Some("invalidValue"));
        }
        let (status, _, body) = scim(
            &world,
            Method::POST,
            "/Groups",
            &token,
            Some(&json!({"schemas": [USER], "displayName": "m"})),
        )
        .await;
        assert_error(status, &body, 400, Some("invalidSyntax"));
        // A PATCH past the body limit (the operation count limit is unit-tested in `patch`).
        let many: Vec<Value> = (0..101)
            .map(|_| json!({"op": "add", "path": "externalId", "value": "x"}))
            .collect();
        let (status, _, body) = scim(
            &world,
            Method::PATCH,
            &format!("/Groups/{id}"),
            &token,
            Some(&json!({"schemas": [PATCH_OP], "Operations": many})),
        )
        .await;
        assert_error(status, &body, 413, None);
        // Nothing of the above changed the group.
        let (_, _, after) = scim(&world, Method::GET, &format!("/Groups/{id}"), &token, None).await;
        assert_eq!(after["meta"]["version"], created["meta"]["version"]);
        world.shutdown().await;
    }
}

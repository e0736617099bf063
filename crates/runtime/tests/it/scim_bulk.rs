//! SCIM 2.0 `/Bulk` (RFC 7644 §3.7) over HTTP, on SQLite and PostgreSQL: discovery advertises
//! it with its limits; `bulkId` references in paths and member values, resolved whatever the
//! order of the operations; per-operation errors as SCIM error bodies (409 `uniqueness`, 404,
//! 412) while the request answers 200; `failOnErrors` stops further operations; references that
//! cannot resolve (unknown, failed, a cycle) fail with 409; an organization's token reaches
//! only its members through `/Bulk` too; malformed requests, too many operations and oversized
//! bodies are refused whole.

use crate::hosted::support::{Setup, World};
use crate::scim::{PATCH_OP, assert_error, issue, scim, urlencode, user};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::{BACKENDS, Backend};

const BULK: &str = "urn:ietf:params:scim:api:messages:2.0:BulkRequest";
const GROUP: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
const MAX_BODY: &str = "65536";

async fn world(backend: Backend) -> World {
    World::new(
        backend,
        Setup {
            env: vec![
                ("SVC_SCIM__ENABLED", "true"),
                ("SVC_SCIM__MAX_BODY_BYTES", MAX_BODY),
            ],
            ..Setup::default()
        },
    )
    .await
}

fn bulk(ops: Value) -> Value {
    json!({"schemas": [BULK], "Operations": ops})
}

/// Posts a bulk request: the status and the answer.
async fn send(world: &World, token: &str, body: &Value) -> (u16, Value) {
    let (status, _, answer) = scim(world, Method::POST, "/Bulk", token, Some(body)).await;
    (status, answer)
}

fn statuses(answer: &Value) -> Vec<(String, String)> {
    answer["Operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| {
            (
                op["bulkId"].as_str().unwrap_or("-").to_owned(),
                op["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// How many resources of `kind` match `filter`.
async fn matching(world: &World, token: &str, kind: &str, filter: &str) -> u64 {
    let path = format!("/{kind}?filter={}", urlencode(filter));
    let (_, _, list) = scim(world, Method::GET, &path, token, None).await;
    list["totalResults"].as_u64().unwrap()
}

fn id_of(op: &Value) -> String {
    op["location"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_operations_resolve_bulk_ids_and_report_each_outcome() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (_, _, spc) = scim(&world, Method::GET, "/ServiceProviderConfig", &token, None).await;
        assert_eq!(spc["bulk"]["supported"], true, "{spc}");
        assert_eq!(spc["bulk"]["maxOperations"], 100);
        assert_eq!(spc["bulk"]["maxPayloadSize"], 65536);

        // A forward reference (the PATCH names a group and a person created after it) and a
        // member given by bulkId.
        let (status, answer) = send(
            &world,
            &token,
            &bulk(json!([
                {"method": "PATCH", "path": "/Groups/bulkId:team", "data": {
                    "schemas": [PATCH_OP],
                    "Operations": [{"op": "add", "path": "members", "value": [{"value": "bulkId:bob"}]}],
                }},
                {"method": "POST", "path": "/Groups", "bulkId": "team", "data": {
                    "schemas": [GROUP], "displayName": "Team", "members": [{"value": "bulkId:ann"}],
                }},
                {"method": "POST", "path": "/Users", "bulkId": "ann", "data": user("ann", "ann@example.org")},
                {"method": "POST", "path": "/Users", "bulkId": "bob", "data": user("bob", "bob@example.org")},
            ])),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(
            answer["schemas"],
            json!(["urn:ietf:params:scim:api:messages:2.0:BulkResponse"])
        );
        assert_eq!(
            statuses(&answer),
            [
                ("ann".into(), "201".into()),
                ("team".into(), "201".into()),
                ("bob".into(), "201".into()),
                ("-".into(), "200".into()),
            ],
            "run in dependency order: {answer}"
        );
        let ops = answer["Operations"].as_array().unwrap();
        let (ann, team, bob) = (id_of(&ops[0]), id_of(&ops[1]), id_of(&ops[2]));
        assert!(ops[0]["version"].as_str().unwrap().starts_with("W/"));
        let (_, _, group) = scim(
            &world,
            Method::GET,
            &format!("/Groups/{team}"),
            &token,
            None,
        )
        .await;
        let mut members: Vec<&str> = group["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["value"].as_str().unwrap())
            .collect();
        members.sort_unstable();
        let mut expected = vec![ann.as_str(), bob.as_str()];
        expected.sort_unstable();
        assert_eq!(members, expected, "{group}");

        // Per-operation failures answer 200 overall, each with its SCIM error body.
        let (status, answer) = send(
            &world,
            &token,
            &bulk(json!([
                {"method": "POST", "path": "/Users", "bulkId": "dup", "data": user("ann", "ann2@example.org")},
                {"method": "DELETE", "path": "/Users/usr_unknown"},
                {"method": "PUT", "path": format!("/Users/{bob}"), "version": "W/\"stale\"",
                 "data": user("bob", "bob@example.org")},
                {"method": "PATCH", "path": "/Groups/bulkId:nope", "data": {"schemas": [PATCH_OP], "Operations": []}},
                {"method": "POST", "path": "/Groups", "bulkId": "a", "data": {"schemas": [GROUP], "displayName": "A", "members": [{"value": "bulkId:b"}]}},
                {"method": "POST", "path": "/Groups", "bulkId": "b", "data": {"schemas": [GROUP], "displayName": "B", "members": [{"value": "bulkId:a"}]}},
                {"method": "DELETE", "path": format!("/Groups/{team}")},
            ])),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        let ops = answer["Operations"].as_array().unwrap();
        let got: Vec<&str> = ops.iter().map(|o| o["status"].as_str().unwrap()).collect();
        assert_eq!(
            got,
            ["409", "404", "412", "409", "204", "409", "409"],
            "the DELETE runs before the two halves of the cycle, which wait on each other until \
             nothing else is left, then fail for want of each other: {answer}"
        );
        assert_eq!(ops[5]["bulkId"], "a");
        assert_eq!(ops[6]["bulkId"], "b");
        assert_eq!(ops[0]["response"]["scimType"], "uniqueness");
        assert_eq!(ops[0]["response"]["status"], "409");
        assert!(
            ops[3]["response"]["detail"]
                .as_str()
                .unwrap()
                .contains("bulkId:nope"),
            "{answer}"
        );
        let (status, _, _) = scim(
            &world,
            Method::GET,
            &format!("/Groups/{team}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 404, "the DELETE ran");
        assert_eq!(
            matching(
                &world,
                &token,
                "Groups",
                "displayName eq \"A\" or displayName eq \"B\""
            )
            .await,
            0,
            "neither half of the cycle was created"
        );

        // failOnErrors: after one failure nothing else runs.
        let mut body = bulk(json!([
            {"method": "POST", "path": "/Users", "bulkId": "x", "data": user("ann", "ann3@example.org")},
            {"method": "POST", "path": "/Users", "bulkId": "y", "data": user("cid", "cid@example.org")},
        ]));
        body["failOnErrors"] = json!(1);
        let (status, answer) = send(&world, &token, &body).await;
        assert_eq!(status, 200);
        assert_eq!(statuses(&answer), [("x".into(), "409".into())]);
        assert_eq!(
            matching(&world, &token, "Users", "userName eq \"cid\"").await,
            0,
            "the second operation never ran"
        );

        // An organization's token reaches only its members through /Bulk as elsewhere.
        let org: Value = world
            .api(Method::POST, "/api/v1/organizations")
            .json(&json!({"name": "North", "slug": "north"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let north = issue(&world, org["id"].as_str()).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, answer) = send(
            &world,
            &north,
            &bulk(json!([{"method": "DELETE", "path": format!("/Users/{ann}")}])),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(answer["Operations"][0]["status"], "404", "{answer}");
        let (status, _, _) =
            scim(&world, Method::GET, &format!("/Users/{ann}"), &token, None).await;
        assert_eq!(status, 200, "still there");

        // Malformed or oversized requests are refused whole.
        let (status, answer) = send(&world, &token, &json!({"Operations": []})).await;
        assert_error(status, &answer, 400, Some("invalidSyntax"));
        let (status, answer) = send(
            &world,
            &token,
            &bulk(json!([
                {"method": "POST", "path": "/Users", "bulkId": "same", "data": user("d", "d@example.org")},
                {"method": "POST", "path": "/Users", "bulkId": "same", "data": user("e", "e@example.org")},
            ])),
        )
        .await;
        assert_error(status, &answer, 400, Some("invalidSyntax"));
        assert!(answer["detail"].as_str().unwrap().contains("used twice"));
        assert_eq!(
            matching(&world, &token, "Users", "userName eq \"d\"").await,
            0,
            "a refused request runs nothing"
        );
        let many: Vec<Value> = (0..101)
            .map(|i| json!({"method": "DELETE", "path": format!("/Users/usr_{i}")}))
            .collect();
        let (status, answer) = send(&world, &token, &bulk(Value::Array(many))).await;
        assert_error(status, &answer, 413, Some("tooMany"));
        assert!(answer["detail"].as_str().unwrap().contains("at most 100"));
        let mut huge = user("huge", "huge@example.org");
        huge["displayName"] = json!("x".repeat(70_000));
        let (status, answer) = send(
            &world,
            &token,
            &bulk(json!([{"method": "POST", "path": "/Users", "bulkId": "h", "data": huge}])),
        )
        .await;
        assert_error(status, &answer, 413, None);
        let (status, _, answer) = scim(&world, Method::GET, "/Bulk", &token, None).await;
        assert_error(status, &answer, 405, None);
        world.shutdown().await;
    }
}

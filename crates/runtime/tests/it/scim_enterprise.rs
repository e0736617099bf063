//! The SCIM enterprise User extension (RFC 7643 §4.3; issue 20 item 1) over HTTP, on SQLite and
//! PostgreSQL: advertised in `/Schemas` and the User resource type; a create carrying it as Entra
//! ID sends it; read back with its URN in `schemas`; patched the ways Entra ID and Okta patch
//! it (`Add` by path with the manager as a bare id, `Replace` of the whole object path-less);
//! projected with `attributes=urn:…:department`; cleared by a replace without it. Refused: an
//! extension that is not an object, an attribute it does not define, an over-long value; a
//! filter on it (`invalidFilter`, documented: it is not filterable). A refusal changes nothing.

use crate::scim::{PATCH_OP, USER, assert_error, issue, scim, urlencode, world};
use reqwest::Method;
use serde_json::{Value, json};
use svc_testkit::BACKENDS;

const EXT: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

fn entra_user() -> Value {
    json!({
        "schemas": [USER, EXT],
        "userName": "grace@navy.example",
        "active": true,
        "emails": [{"value": "grace@navy.example", "type": "work", "primary": true}],
        EXT: {"employeeNumber": "1906", "department": "Computing",
              "manager": {"value": "mgr-1", "displayName": "not stored"}},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_enterprise_extension_is_advertised_stored_patched_and_cleared() {
    for backend in BACKENDS {
        let world = world(backend).await;
        let token = issue(&world, None).await["token"]
            .as_str()
            .unwrap()
            .to_owned();

        let (status, _, types) =
            scim(&world, Method::GET, "/ResourceTypes/User", &token, None).await;
        assert_eq!(status, 200, "{types}");
        assert_eq!(
            types["schemaExtensions"],
            json!([{"schema": EXT, "required": false}])
        );
        let (status, _, schema) = scim(
            &world,
            Method::GET,
            &format!("/Schemas/{EXT}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 200, "{schema}");
        let names: Vec<&str> = schema["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "employeeNumber",
                "costCenter",
                "organization",
                "division",
                "department",
                "manager"
            ]
        );

        let (status, _, grace) =
            scim(&world, Method::POST, "/Users", &token, Some(&entra_user())).await;
        assert_eq!(status, 201, "{backend:?}: {grace}");
        assert_eq!(grace["schemas"], json!([USER, EXT]));
        assert_eq!(
            grace[EXT],
            json!({"employeeNumber": "1906", "department": "Computing",
                   "manager": {"value": "mgr-1"}})
        );
        let id = grace["id"].as_str().unwrap().to_owned();
        let path = format!("/Users/{id}");
        let (_, _, read) = scim(&world, Method::GET, &path, &token, None).await;
        assert_eq!(read[EXT], grace[EXT], "{read}");

        // Entra ID: by path, the manager as the bare id; Okta: the whole object path-less.
        let patch = json!({"schemas": [PATCH_OP], "Operations": [
            {"op": "Add", "path": format!("{EXT}:manager"), "value": "mgr-2"},
            {"op": "Replace", "path": format!("{EXT}:department"), "value": "Research"},
            {"op": "replace", "value": {EXT: {"costCenter": "42", "Division": "Navy"}}},
            {"op": "Remove", "path": format!("{EXT}:employeeNumber")},
        ]});
        let (status, _, patched) = scim(&world, Method::PATCH, &path, &token, Some(&patch)).await;
        assert_eq!(status, 200, "{patched}");
        assert_eq!(
            patched[EXT],
            json!({"costCenter": "42", "division": "Navy", "department": "Research",
                   "manager": {"value": "mgr-2"}})
        );
        assert_ne!(patched["meta"]["version"], grace["meta"]["version"]);

        // Projection by the extension attribute's full name.
        let (_, _, projected) = scim(
            &world,
            Method::GET,
            &format!(
                "{path}?attributes={}",
                urlencode(&format!("{EXT}:department"))
            ),
            &token,
            None,
        )
        .await;
        assert_eq!(
            projected[EXT],
            json!({"department": "Research"}),
            "{projected}"
        );
        assert!(projected.get("userName").is_none(), "{projected}");

        // Refusals, nothing changed by them.
        for (body, scim_type) in [
            (
                json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "Add", "path": format!("{EXT}:shoeSize"), "value": "9"}]}),
                "invalidPath",
            ),
            (
                json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "Replace", "value": {EXT: "Navy"}}]}),
                "invalidValue",
            ),
            (
                json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "Add", "path": format!("{EXT}:department"), "value": "x".repeat(300)}]}),
                "invalidValue",
            ),
            (
                json!({"schemas": [PATCH_OP], "Operations": [
                {"op": "Add", "path": format!("{EXT}:department"), "value": {"nested": true}}]}),
                "invalidValue",
            ),
        ] {
            let (status, _, refused) =
                scim(&world, Method::PATCH, &path, &token, Some(&body)).await;
            assert_error(status, &refused, 400, Some(scim_type));
        }
        let mut hostile = entra_user();
        hostile["userName"] = json!("other@navy.example");
        hostile["emails"][0]["value"] = json!("other@navy.example");
        hostile[EXT] = json!({"department": "x", "salary": "1"});
        let (status, _, refused) =
            scim(&world, Method::POST, "/Users", &token, Some(&hostile)).await;
        assert_error(status, &refused, 400, Some("invalidValue"));
        let (status, _, refused) = scim(
            &world,
            Method::GET,
            &format!(
                "/Users?filter={}",
                urlencode(&format!("{EXT}:department eq \"Research\""))
            ),
            &token,
            None,
        )
        .await;
        assert_error(status, &refused, 400, Some("invalidFilter"));
        let (_, _, unchanged) = scim(&world, Method::GET, &path, &token, None).await;
        assert_eq!(unchanged[EXT], patched[EXT]);
        assert_eq!(unchanged["meta"]["version"], patched["meta"]["version"]);

        // A replace without the extension clears it, and the URN leaves `schemas`.
        let mut replaced = entra_user();
        replaced.as_object_mut().unwrap().remove(EXT);
        replaced["schemas"] = json!([USER]);
        let (status, _, cleared) = scim(&world, Method::PUT, &path, &token, Some(&replaced)).await;
        assert_eq!(status, 200, "{cleared}");
        assert!(cleared.get(EXT).is_none(), "{cleared}");
        assert_eq!(cleared["schemas"], json!([USER]));
        world.shutdown().await;
    }
}

//! The API conventions on the webhook routes, over real HTTP on SQLite and PostgreSQL: `201` with
//! a `Location` that reads the subscription (also on an idempotent replay), an `ETag` on every
//! read and change, `If-Match` on update, `PATCH`, secret rotation and deletion (current tag,
//! `*`, stale and foreign tags, nothing changed on 412, one winner among racing writers of the
//! same revision), and `limit`/`after` walking every subscription and every delivery exactly
//! once.

use crate::webhooks::support::{Receiver, World, fast_delivery};
use reqwest::Method;
use reqwest::header::{ETAG, IF_MATCH, LOCATION};
use serde_json::{Value, json};
use std::collections::HashSet;
use svc_testkit::BACKENDS;

/// Status, headers and JSON body (or the text as a JSON string) of a request.
async fn send(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

fn header(headers: &reqwest::header::HeaderMap, name: reqwest::header::HeaderName) -> String {
    headers
        .get(&name)
        .unwrap_or_else(|| panic!("no {name} in {headers:?}"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// Asserts a 412 `precondition_failed` problem.
fn assert_precondition_failed(status: u16, headers: &reqwest::header::HeaderMap, body: &Value) {
    assert_eq!(status, 412, "{body}");
    assert_eq!(body["error"], "precondition_failed", "{body}");
    assert!(header(headers, reqwest::header::CONTENT_TYPE).starts_with("application/problem+json"));
}

#[tokio::test]
async fn subscriptions_answer_location_etags_and_honour_if_match() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let body = json!({
            "url": "https://hooks.example.com/conventions",
            "event_types": ["auth.logout"],
            "description": "conventions",
        });
        let (status, headers, created) = send(
            world
                .api(Method::POST, "/api/v1/webhooks")
                .header("idempotency-key", "conventions-1")
                .json(&body),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        let location = header(&headers, LOCATION);
        assert_eq!(location, format!("/api/v1/webhooks/{id}"));
        let (status, replay_headers, replayed) = send(
            world
                .api(Method::POST, "/api/v1/webhooks")
                .header("idempotency-key", "conventions-1")
                .json(&body),
        )
        .await;
        assert_eq!(status, 201);
        assert_eq!(replay_headers["idempotent-replayed"], "true");
        assert_eq!(replayed["id"], created["id"]);
        assert_eq!(header(&replay_headers, LOCATION), location, "{backend:?}");

        // The Location reads the subscription, with its revision.
        let (status, headers, read) = send(world.api(Method::GET, &location)).await;
        assert_eq!(status, 200);
        assert_eq!(read["id"], created["id"]);
        let first = header(&headers, ETAG);
        assert!(
            first.starts_with('"') && first.ends_with('"'),
            "a strong tag: {first}"
        );
        let (_, again, _) = send(world.api(Method::GET, &location)).await;
        assert_eq!(header(&again, ETAG), first, "stable while nothing changes");

        // PUT with the current tag: 200 and a new tag, which the next GET confirms.
        let (status, headers, updated) = send(
            world
                .api(Method::PUT, &location)
                .header(IF_MATCH, &first)
                .json(&json!({"description": "second"})),
        )
        .await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["description"], "second");
        let second = header(&headers, ETAG);
        assert_ne!(second, first);
        let (_, headers, _) = send(world.api(Method::GET, &location)).await;
        assert_eq!(header(&headers, ETAG), second);

        // Every change made with the stale tag is refused and changes nothing.
        for (method, path, body) in [
            (
                Method::PUT,
                location.clone(),
                Some(json!({"description": "lost"})),
            ),
            (
                Method::PATCH,
                location.clone(),
                Some(json!({"active": false})),
            ),
            (Method::POST, format!("{location}/rotate-secret"), None),
            (Method::DELETE, location.clone(), None),
        ] {
            let mut request = world.api(method.clone(), &path).header(IF_MATCH, &first);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let (status, headers, problem) = send(request).await;
            assert_precondition_failed(status, &headers, &problem);
        }
        // A tag that is not one of ours, a weak tag and a list of foreign tags match nothing.
        for tag in ["\"nope\"", "W/\"r1\"", "\"a\", \"b\"", "garbage"] {
            let (status, headers, problem) = send(
                world
                    .api(Method::PUT, &location)
                    .header(IF_MATCH, tag)
                    .json(&json!({"description": "lost"})),
            )
            .await;
            assert_precondition_failed(status, &headers, &problem);
        }
        let (status, headers, unchanged) = send(world.api(Method::GET, &location)).await;
        assert_eq!(status, 200);
        assert_eq!(unchanged, updated, "nothing changed");
        assert_eq!(header(&headers, ETAG), second);

        // `*`, a list holding the current tag, and PATCH with the current tag all apply.
        let (status, headers, _) = send(
            world
                .api(Method::PUT, &location)
                .header(IF_MATCH, "*")
                .json(&json!({"description": "third"})),
        )
        .await;
        assert_eq!(status, 200);
        let third = header(&headers, ETAG);
        let (status, headers, patched) = send(
            world
                .api(Method::PATCH, &location)
                .header(IF_MATCH, format!("\"nope\", {third}"))
                .json(&json!({"active": false})),
        )
        .await;
        assert_eq!(status, 200, "{patched}");
        assert_eq!(patched["active"], false);
        let fourth = header(&headers, ETAG);

        // Rotation takes If-Match too and answers the new revision.
        let (status, headers, rotated) = send(
            world
                .api(Method::POST, &format!("{location}/rotate-secret"))
                .header(IF_MATCH, &fourth),
        )
        .await;
        assert_eq!(status, 200, "{rotated}");
        assert!(rotated["secret"].as_str().unwrap().starts_with("whsec_"));
        let fifth = header(&headers, ETAG);
        assert_ne!(fifth, fourth);
        let (_, headers, _) = send(world.api(Method::GET, &location)).await;
        assert_eq!(header(&headers, ETAG), fifth);

        // Eight clients that all read the same revision race to change it: exactly one wins,
        // the others get 412, and what is stored is the winner's change.
        let racers = (0..8).map(|n| {
            send(
                world
                    .api(Method::PUT, &location)
                    .header(IF_MATCH, &fifth)
                    .json(&json!({"description": format!("racer {n}")})),
            )
        });
        let results = futures_util::future::join_all(racers).await;
        let winners: Vec<_> = results.iter().filter(|(s, _, _)| *s == 200).collect();
        assert_eq!(
            winners.len(),
            1,
            "{:?}",
            results.iter().map(|r| r.0).collect::<Vec<_>>()
        );
        for (status, headers, body) in results.iter().filter(|(s, _, _)| *s != 200) {
            assert_precondition_failed(*status, headers, body);
        }
        let (_, won_headers, won) = winners[0];
        let sixth = header(won_headers, ETAG);
        let (_, headers, stored) = send(world.api(Method::GET, &location)).await;
        assert_eq!(stored["description"], won["description"]);
        assert_eq!(header(&headers, ETAG), sixth);

        // Delete: refused with the previous tag, done with the current one.
        let (status, headers, problem) = send(
            world
                .api(Method::DELETE, &location)
                .header(IF_MATCH, &fifth),
        )
        .await;
        assert_precondition_failed(status, &headers, &problem);
        let (status, _, _) = send(
            world
                .api(Method::DELETE, &location)
                .header(IF_MATCH, &sixth),
        )
        .await;
        assert_eq!(status, 204);
        let (status, _, _) = send(world.api(Method::GET, &location)).await;
        assert_eq!(status, 404);
        let (status, _, _) = send(world.api(Method::DELETE, &location).header(IF_MATCH, "*")).await;
        assert_eq!(status, 404, "If-Match: * on a missing subscription");
        world.app.shutdown().await;
    }
}

#[tokio::test]
async fn subscriptions_and_deliveries_page_with_limit_and_after() {
    for backend in BACKENDS {
        let world = World::new(backend, &fast_delivery()).await;
        let receiver = Receiver::default();
        let url = receiver.start().await;

        // The catalog lists what this version records, each type described.
        let (status, _, catalog) =
            send(world.api(Method::GET, "/api/v1/webhooks/event-types")).await;
        assert_eq!(status, 200);
        let items = catalog["items"].as_array().unwrap();
        assert!(items.iter().any(|t| t["type"] == "webhook.test"));
        assert!(items.iter().all(|t| t["description"].is_string()));
        let mut created = Vec::new();
        for n in 0..5 {
            let types = if n == 0 {
                vec!["webhook.test", "auth.logout"]
            } else {
                vec!["webhook.test"]
            };
            let view = world.subscribe(&url, &types).await;
            created.push(view["id"].as_str().unwrap().to_owned());
            // Ids order by their millisecond; two made within one sort arbitrarily.
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }

        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut path = "/api/v1/webhooks?limit=2".to_owned();
            if let Some(after) = &cursor {
                path.push_str(&format!("&after={after}"));
            }
            let (status, _, page) = send(world.api(Method::GET, &path)).await;
            assert_eq!(status, 200, "{page}");
            pages += 1;
            let items = page["items"].as_array().unwrap();
            assert!(items.len() <= 2);
            seen.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => {
                    assert!(page.get("next_cursor").is_some(), "null, not absent");
                    break;
                }
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, created, "every subscription once, oldest first");
        let newest = walk_ids(&world, "/api/v1/webhooks?order=desc").await;
        let mut reversed = created.clone();
        reversed.reverse();
        assert_eq!(newest, reversed, "every subscription once, newest first");

        // Five test deliveries to the first subscription, walked newest first.
        let webhook = &created[0];
        let mut queued = Vec::new();
        for _ in 0..5 {
            let (status, _, delivery) =
                send(world.api(Method::POST, &format!("/api/v1/webhooks/{webhook}/test"))).await;
            assert_eq!(status, 202, "{delivery}");
            queued.push(delivery["id"].as_str().unwrap().to_owned());
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("/api/v1/webhooks/{webhook}/deliveries?limit=2");
            if let Some(after) = &cursor {
                path.push_str(&format!("&after={after}"));
            }
            let (status, _, page) = send(world.api(Method::GET, &path)).await;
            assert_eq!(status, 200, "{page}");
            let items = page["items"].as_array().unwrap();
            assert!(items.len() <= 2);
            seen.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        let oldest = walk_ids(
            &world,
            &format!("/api/v1/webhooks/{webhook}/deliveries?order=asc"),
        )
        .await;
        assert_eq!(oldest, queued, "every delivery once, oldest first");
        queued.reverse();
        assert_eq!(seen, queued, "every delivery once, newest first");
        assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 5);

        // Bad cursors, the former `before` and unknown parameters are refused.
        for path in [
            "/api/v1/webhooks?after=nope".to_owned(),
            "/api/v1/webhooks?limit=-1".to_owned(),
            "/api/v1/webhooks?page=2".to_owned(),
            format!("/api/v1/webhooks/{webhook}/deliveries?after=whk_nope"),
            format!("/api/v1/webhooks/{webhook}/deliveries?before={}", queued[0]),
            format!("/api/v1/webhooks/{webhook}/deliveries?status=lost"),
            format!("/api/v1/webhooks/{webhook}/deliveries?order=up"),
            "/api/v1/webhooks?order=".to_owned(),
        ] {
            let (status, _, problem) = send(world.api(Method::GET, &path)).await;
            assert_eq!(status, 400, "{path}: {problem}");
            assert_eq!(problem["error"], "bad_request", "{path}");
        }
        world.app.shutdown().await;
    }
}

/// Follows `next_cursor` from the first page of `path` (which carries its own query) two items
/// at a time, returning every id seen in order.
async fn walk_ids(world: &World, path: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let mut url = format!("{path}&limit=2");
        if let Some(after) = &cursor {
            url.push_str(&format!("&after={after}"));
        }
        let (status, _, page) = send(world.api(Method::GET, &url)).await;
        assert_eq!(status, 200, "{url}: {page}");
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 2, "{url}");
        seen.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
    panic!("{path}: more than 50 pages");
}

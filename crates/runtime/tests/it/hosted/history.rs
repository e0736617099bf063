//! Login history end to end: sign-in attempts on the hosted pages leave records (time, address,
//! browser, method, result) that the tenant API lists per person, newest first or oldest
//! first, a page at a time; attempts on unknown addresses leave none; an unknown person is not
//! found. (Another tenant's records are out of reach by construction: the store reads them by
//! tenant, which the conformance check `login_history_pages_per_user_both_ways` holds.)

use super::support::{Browser, PASSWORD, Setup, World};
use reqwest::Method;
use serde_json::Value;
use svc_testkit::BACKENDS;

async fn history(world: &World, user: &str, query: &str) -> (u16, Value) {
    let response = world
        .api(
            Method::GET,
            &format!("/api/v1/tenant-users/{user}/login-history{query}"),
        )
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn sign_in_attempts_are_listed_in_the_login_history() {
    for backend in BACKENDS {
        let world = World::new(
            backend,
            Setup {
                env: vec![("SVC_AUTH__BRUTE_FORCE_MAX_ATTEMPTS", "3")],
                ..Setup::default()
            },
        )
        .await;
        let bob = world.create_user("bob@example.com", PASSWORD).await;
        let bob = bob["id"].as_str().unwrap().to_owned();
        let (_, users) = history(&world, &bob, "").await;
        assert_eq!(
            users["items"],
            serde_json::json!([]),
            "{backend:?}: new account"
        );

        let browser = Browser::new(&world.app, &world.host);
        let wrong = browser
            .sign_in(None, "bob@example.com", "not the password")
            .await;
        assert_eq!(wrong.status, 401, "{backend:?}: {}", wrong.body);
        let nobody = browser
            .sign_in(None, "nobody@example.com", "not the password")
            .await;
        assert_eq!(nobody.status, 401);
        let right = browser.sign_in(None, "bob@example.com", PASSWORD).await;
        assert_eq!(right.status, 303, "{backend:?}: {}", right.body);

        let (status, page) = history(&world, &bob, "").await;
        assert_eq!(status, 200, "{page}");
        let items = page["items"].as_array().unwrap();
        let results: Vec<&str> = items
            .iter()
            .map(|i| i["result"].as_str().unwrap())
            .collect();
        assert_eq!(
            results,
            ["success", "invalid_credentials"],
            "{backend:?}: newest first"
        );
        for item in items {
            assert!(item["id"].as_str().unwrap().starts_with("lgn_"));
            assert_eq!(item["method"], "password");
            assert_eq!(item["user_agent"], "hosted-e2e/1.0");
            assert!(item["occurred_at"].as_str().unwrap().ends_with('Z'));
            assert!(
                item.get("ip").is_some(),
                "ip is always present, null if unknown"
            );
        }
        assert!(page["next_cursor"].is_null());

        // Three wrong passwords lock the account; an attempt while locked is recorded as such.
        for _ in 0..3 {
            browser
                .sign_in(None, "bob@example.com", "still not the password")
                .await;
        }
        let locked = browser.sign_in(None, "bob@example.com", PASSWORD).await;
        assert_eq!(locked.status, 429, "locked: {}", locked.body);
        let (_, page) = history(&world, &bob, "?limit=1").await;
        assert_eq!(page["items"][0]["result"], "locked", "{backend:?}: {page}");

        // Oldest first, a page at a time, the cursor moving up: every record once.
        let mut seen = Vec::new();
        let mut query = "?order=asc&limit=2".to_owned();
        loop {
            let (status, page) = history(&world, &bob, &query).await;
            assert_eq!(status, 200, "{page}");
            seen.extend(
                page["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["result"].as_str().unwrap().to_owned()),
            );
            match page["next_cursor"].as_str() {
                Some(next) => query = format!("?order=asc&limit=2&after={next}"),
                None => break,
            }
        }
        assert_eq!(
            seen,
            [
                "invalid_credentials",
                "success",
                "invalid_credentials",
                "invalid_credentials",
                "invalid_credentials",
                "locked"
            ],
            "{backend:?}"
        );

        // Refusals: an unknown or malformed person, a bad cursor, an unknown parameter.
        let (status, problem) = history(&world, "usr_01jd0000000000000000000000", "").await;
        assert_eq!(status, 404, "{problem}");
        assert_eq!(problem["error"], "not_found");
        let (status, _) = history(&world, "nope", "").await;
        assert_eq!(status, 404);
        for bad in [
            "?after=ses_01jd0000000000000000000000",
            "?order=sideways",
            "?page=2",
        ] {
            let (status, problem) = history(&world, &bob, bad).await;
            assert_eq!(status, 400, "{bad}: {problem}");
            assert_eq!(problem["error"], "bad_request", "{bad}");
        }
        world.shutdown().await;
    }
}

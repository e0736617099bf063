//! The cross-node checks run under load, each measured against the two auth-capable nodes
//! directly (bypassing the balancer, so that "another node" is certain): a refresh token and an
//! authorization code raced at both nodes, a revocation at one seen at the other, a client
//! secret rotation seen everywhere, and the token-endpoint throttle counted across nodes. Each
//! returns rows of the report; none panics on a mismatch, so the table is printed either way.

use super::Row;
use super::topology::{THROTTLE_BURST, THROTTLE_RATE};
use crate::hosted::support::{Browser, CHALLENGE, REDIRECT, VERIFIER, follow_to_client};
use crate::shared_caches::{BOUND, grant_at, until};
use futures_util::StreamExt;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Tokens and codes raced at two nodes: enough to catch a race that wins now and then, few
/// enough to stay a second or two of work.
pub(super) const RACES: usize = 8;
/// Requests the throttle check sends from one client.
const THROTTLE_REQUESTS: usize = 1000;
/// Requests of the throttle check in flight at once.
const THROTTLE_PARALLEL: usize = 16;

/// Everything the checks need.
pub(super) struct Ctx<'a> {
    pub(super) client: &'a reqwest::Client,
    /// The balancer's URL.
    pub(super) lb: &'a str,
    /// The tenant's host.
    pub(super) host: &'a str,
    /// The auth-capable nodes' URLs (`auth`, `all`).
    pub(super) nodes: [String; 2],
    /// The first-party code-flow application.
    pub(super) web: (&'a str, &'a str),
    /// The person the browser signs in as.
    pub(super) email: &'a str,
}

/// `POST {url}/oauth/token` with `form` as the code-flow application: (status, body).
async fn token(ctx: &Ctx<'_>, url: &str, form: &[(&str, &str)]) -> (u16, Value) {
    let answer = ctx
        .client
        .post(format!("{url}/oauth/token"))
        .header("host", ctx.host)
        .basic_auth(ctx.web.0, Some(ctx.web.1))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

/// An authorization code for the code-flow application (through the balancer).
async fn code(ctx: &Ctx<'_>, browser: &Browser, scope: &str) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", ctx.web.0)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("scope", scope)
        .append_pair("state", "st")
        .append_pair("code_challenge", CHALLENGE)
        .append_pair("code_challenge_method", "S256");
    let path = format!("/oauth/authorize?{}", query.finish());
    let location = follow_to_client(browser, &path, REDIRECT, ctx.email).await;
    crate::hosted::support::param(&location, "code").unwrap_or_else(|| panic!("{location}"))
}

fn redeem_form(code: &str) -> [(&str, &str); 4] {
    [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ]
}

/// How many of `pairs` of statuses are one 200 and one 400 (`invalid_grant`: the other node
/// saw the token or code spent). Anything else — a 429, a 5xx — proves nothing and counts
/// against the check.
fn exactly_one(pairs: &[(u16, u16)]) -> usize {
    pairs
        .iter()
        .filter(|pair| matches!(pair, (200, 400) | (400, 200)))
        .count()
}

/// Checks 1 and 2: the same refresh token, and the same code, sent at once to both nodes.
pub(super) async fn races(ctx: &Ctx<'_>) -> Vec<Row> {
    let browser = Browser::at(ctx.lb, ctx.host);
    let [a, b] = &ctx.nodes;
    let mut refresh_tokens = Vec::new();
    for _ in 0..RACES {
        let code = code(ctx, &browser, "openid offline_access").await;
        let (status, body) = token(ctx, ctx.lb, &redeem_form(&code)).await;
        assert_eq!(status, 200, "{body}");
        refresh_tokens.push(
            body["refresh_token"]
                .as_str()
                .expect("a refresh token")
                .to_owned(),
        );
    }
    let mut refresh = Vec::new();
    for rt in &refresh_tokens {
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", rt.as_str()),
        ];
        let ((x, _), (y, _)) = tokio::join!(token(ctx, a, &form), token(ctx, b, &form));
        refresh.push((x, y));
    }
    let mut codes = Vec::new();
    for _ in 0..RACES {
        let code = code(ctx, &browser, "openid").await;
        let form = redeem_form(&code);
        let ((x, _), (y, _)) = tokio::join!(token(ctx, a, &form), token(ctx, b, &form));
        codes.push((x, y));
    }
    vec![
        Row::new(
            "1 refresh token raced at auth+all: one 200 each",
            format!("{}/{RACES} {refresh:?}", exactly_one(&refresh)),
            format!("{RACES}/{RACES}"),
            exactly_one(&refresh) == RACES,
        ),
        Row::new(
            "2 code raced at auth+all: one 200 each",
            format!("{}/{RACES} {codes:?}", exactly_one(&codes)),
            format!("{RACES}/{RACES}"),
            exactly_one(&codes) == RACES,
        ),
    ]
}

/// `{"active": …}` of `token` introspected at `url` as (`id`, `secret`).
async fn active(ctx: &Ctx<'_>, url: &str, id: &str, secret: &str, token: &str) -> Option<bool> {
    let answer = ctx
        .client
        .post(format!("{url}/oauth/introspect"))
        .header("host", ctx.host)
        .basic_auth(id, Some(secret))
        .form(&[("token", token)])
        .send()
        .await
        .ok()?;
    answer.json::<Value>().await.ok()?["active"].as_bool()
}

/// Check 5: an access token revoked at one node is inactive at the other within [`BOUND`]
/// (both directions), after the other node has seen it active.
pub(super) async fn revocation(ctx: &Ctx<'_>, app: (&str, &str)) -> Row {
    let (id, secret) = app;
    let mut seen = Vec::new();
    let mut ok = true;
    for (at, other) in [(0, 1), (1, 0)] {
        let (at, other) = (&ctx.nodes[at], &ctx.nodes[other]);
        let issued: Value = ctx
            .client
            .post(format!("{at}/oauth/token"))
            .header("host", ctx.host)
            .basic_auth(id, Some(secret))
            .form(&[("grant_type", "client_credentials")])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let access = issued["access_token"].as_str().expect("an access token");
        ok &= active(ctx, other, id, secret, access).await == Some(true);
        let revoked = ctx
            .client
            .post(format!("{at}/oauth/revoke"))
            .header("host", ctx.host)
            .basic_auth(id, Some(secret))
            .form(&[("token", access)])
            .send()
            .await
            .unwrap()
            .status();
        ok &= revoked == 200;
        let started = Instant::now();
        let outcome = until(BOUND, 1, || async {
            u16::from(active(ctx, other, id, secret, access).await == Some(false))
        })
        .await;
        match outcome {
            Ok(_) => seen.push(started.elapsed()),
            Err(_) => ok = false,
        }
    }
    Row::new(
        "5 revoked at one node, inactive at the other",
        format!("{seen:.0?}"),
        format!("≤ {BOUND:?} each way"),
        ok && seen.len() == 2,
    )
}

/// Check 6: after a secret rotation (through the balancer), the old secret is refused and the
/// new one accepted by both auth-capable nodes within [`BOUND`], both having used the old one
/// just before.
pub(super) async fn secret_rotation(ctx: &Ctx<'_>, app: (&str, &str), management: &str) -> Row {
    let (id, old) = app;
    let mut ok = true;
    for node in &ctx.nodes {
        ok &= grant_at(ctx.client, node, ctx.host, id, old).await == 200;
    }
    let rotated: Value = ctx
        .client
        .post(format!("{}/api/v1/applications/{id}/rotate-secret", ctx.lb))
        .header("host", ctx.host)
        .bearer_auth(management)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let new = rotated["client_secret"].as_str().expect("a new secret");
    let rotated_at = Instant::now();
    let mut seen = Vec::new();
    for node in &ctx.nodes {
        let refused = until(BOUND, 401, || grant_at(ctx.client, node, ctx.host, id, old)).await;
        let accepted = until(BOUND, 200, || grant_at(ctx.client, node, ctx.host, id, new)).await;
        ok &= refused.is_ok() && accepted.is_ok();
        seen.push(rotated_at.elapsed());
    }
    Row::new(
        "6 rotated secret: old refused, new accepted on auth+all",
        format!("{seen:.0?} after the rotation"),
        format!("≤ {BOUND:?}"),
        ok && seen.iter().all(|s| *s <= BOUND),
    )
}

/// Check 4: one client sends [`THROTTLE_REQUESTS`] grants alternating between the two
/// auth-capable nodes, each from another address (so that only the per-client bucket counts).
/// One bucket shared through Redis admits at most burst + rate × elapsed; counted per process,
/// each node would admit that much.
pub(super) async fn throttle(ctx: &Ctx<'_>, app: (&str, &str)) -> Vec<Row> {
    let (id, secret) = app;
    let started = Instant::now();
    let statuses: Vec<u16> = futures_util::stream::iter(0..THROTTLE_REQUESTS)
        .map(|n| {
            let node = &ctx.nodes[n % 2];
            let address = format!("198.18.{}.{}", n / 250, n % 250 + 1);
            let request = ctx
                .client
                .post(format!("{node}/oauth/token"))
                .header("host", ctx.host)
                .header("x-forwarded-for", address)
                .basic_auth(id, Some(secret))
                .form(&[("grant_type", "client_credentials")])
                .send();
            async move { request.await.map_or(0, |r| r.status().as_u16()) }
        })
        .buffer_unordered(THROTTLE_PARALLEL)
        .collect()
        .await;
    let elapsed = started.elapsed().as_secs_f64();
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    let throttled = statuses.iter().filter(|s| **s == 429).count();
    let shared = f64::from(THROTTLE_BURST) + f64::from(THROTTLE_RATE) * elapsed;
    // Tolerance: 10 % of the shared allowance (requests admitted while the bucket's answer is
    // in flight, Redis's clock against the test's) and 5 for the last requests' timing.
    let bound = shared * 1.1 + 5.0;
    let per_process = 2.0 * shared;
    // The check tells one bucket from two only if two buckets would have admitted more than
    // the bound: the requests came fast enough.
    #[allow(clippy::cast_precision_loss)] // a few hundred requests
    let sent = THROTTLE_REQUESTS as f64;
    let telling = sent.min(per_process) > bound;
    #[allow(clippy::cast_precision_loss)]
    let admitted_f = admitted as f64;
    vec![
        Row::new(
            "4 throttle across nodes: admitted of one client",
            format!("{admitted} of {THROTTLE_REQUESTS} in {elapsed:.1} s ({throttled} × 429)"),
            format!(
                "≤ {bound:.0} (burst {THROTTLE_BURST} + {THROTTLE_RATE}/s × t, +10 % +5); \
                 per process ≈ {per_process:.0}"
            ),
            admitted_f <= bound && admitted + throttled == THROTTLE_REQUESTS && admitted > 0,
        ),
        Row::new(
            "4 throttle check could tell 1 bucket from 2",
            format!("min(sent, per-process) = {:.0}", sent.min(per_process)),
            format!("> {bound:.0}"),
            telling,
        ),
    ]
}

/// How long until every node answers `probe` with 200 (at most `within`).
pub(super) async fn all_until<F, Fut>(
    urls: &[String],
    within: Duration,
    probe: F,
) -> Option<Duration>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = u16>,
{
    let started = Instant::now();
    for url in urls {
        let left = within.saturating_sub(started.elapsed());
        until(left, 200, || probe(url.clone())).await.ok()?;
    }
    Some(started.elapsed())
}

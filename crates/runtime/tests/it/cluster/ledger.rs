//! What the run left behind, checked after the load: every user creation answered 2xx exists
//! (and none answered otherwise exists twice or half-made), every created user's
//! `admin.user.created` event reached the webhook receiver, duplicates stay within the attempts
//! that faults can leave in flight, and the probes' failures fall inside the fault windows.

use super::Row;
use super::probes::{Sample, Write};
use super::topology::DELIVERY_SLOTS;
use crate::webhooks::support::Receiver;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// Duplicated deliveries allowed: the attempts the killed node had in flight, plus those both
/// async-capable nodes had in flight when their path to PostgreSQL was cut (an attempt sent
/// whose success could not be recorded is sent again).
pub(super) const DUPLICATES_BOUND: usize = DELIVERY_SLOTS * 3;
/// How long the outbox may take to deliver what is left after the load.
const DRAIN: Duration = Duration::from_secs(30);

/// A named stretch of the run: a fault window (failures allowed) or a steady one (none).
pub(super) struct Phase {
    pub(super) name: String,
    pub(super) from: Duration,
    pub(super) to: Duration,
    pub(super) fault: bool,
}

fn failed(status: u16) -> bool {
    status == 0 || status >= 500
}

/// One row per phase (requests, 5xx and transport failures), and whether every steady phase
/// was free of them.
pub(super) fn phases(samples: &[Sample], phases: &[Phase]) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut leaks = Vec::new();
    for phase in phases {
        let inside: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.at >= phase.from && s.at < phase.to)
            .collect();
        let bad: Vec<&&Sample> = inside.iter().filter(|s| failed(s.status)).collect();
        let mut by_kind: HashMap<&str, usize> = HashMap::new();
        for s in &bad {
            *by_kind.entry(s.kind).or_default() += 1;
        }
        let mut kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k}:{n}")).collect();
        kinds.sort();
        if !phase.fault && !bad.is_empty() {
            leaks.push(format!("{}: {:?}", phase.name, bad));
        }
        rows.push(Row::new(
            &format!(
                "phase {} [{:.1}–{:.1} s]",
                phase.name,
                phase.from.as_secs_f64(),
                phase.to.as_secs_f64()
            ),
            match (phase.fault, bad.iter().map(|s| s.at).max()) {
                (true, Some(last)) => format!(
                    "{} requests, {} 5xx/transport {kinds:?}, the last {:.1} s into it",
                    inside.len(),
                    bad.len(),
                    (last - phase.from).as_secs_f64()
                ),
                _ => format!(
                    "{} requests, {} 5xx/transport {kinds:?}",
                    inside.len(),
                    bad.len()
                ),
            },
            if phase.fault {
                "any (fault window)".into()
            } else {
                "0".into()
            },
            phase.fault || bad.is_empty(),
        ));
    }
    (rows, leaks)
}

/// Every person with `email` (the list filtered by address).
async fn by_email(
    client: &reqwest::Client,
    lb: &str,
    host: &str,
    token: &str,
    email: &str,
) -> Vec<Value> {
    let url = format!("{lb}/api/v1/tenant-users?email={email}");
    for _ in 0..5 {
        let answer = client
            .get(&url)
            .header("host", host)
            .bearer_auth(token)
            .send()
            .await;
        if let Ok(answer) = answer
            && answer.status() == 200
            && let Ok(body) = answer.json::<Value>().await
        {
            return body["items"].as_array().cloned().unwrap_or_default();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the user list never answered for {email}");
}

/// No lost writes: each creation answered 201 exists exactly once, complete; one that got no
/// answer or a 5xx exists at most once (it may have committed before the answer was lost);
/// nothing else was answered. Returns the rows and the addresses of every person who exists.
pub(super) async fn writes(
    client: &reqwest::Client,
    lb: &str,
    host: &str,
    token: &str,
    writes: &[Write],
) -> (Vec<Row>, HashSet<String>) {
    let found: Vec<(Write, Vec<Value>)> = futures_util::stream::iter(writes.iter().cloned())
        .map(|w| async move {
            let people = by_email(client, lb, host, token, &w.email).await;
            (w, people)
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let answered = found.iter().filter(|(w, _)| w.status == 201).count();
    let mut lost = Vec::new();
    let mut ambiguous_kept = 0;
    let mut ambiguous = 0;
    let mut unexpected = Vec::new();
    let mut existing = HashSet::new();
    for (w, people) in &found {
        let complete = people.len() == 1
            && people[0]["email"] == w.email.as_str()
            && people[0]["status"] == "active";
        if !people.is_empty() {
            existing.insert(w.email.clone());
        }
        match w.status {
            201 => {
                if !complete || people[0]["id"].as_str() != w.id.as_deref() {
                    lost.push(format!("{} {people:?}", w.email));
                }
            }
            s if failed(s) => {
                ambiguous += 1;
                if people.len() > 1 || (people.len() == 1 && !complete) {
                    lost.push(format!("{} half-made or doubled: {people:?}", w.email));
                }
                ambiguous_kept += people.len();
            }
            s => unexpected.push(format!("{} answered {s}", w.email)),
        }
    }
    let rows = vec![
        Row::new(
            "no lost writes: 201 creations present, complete",
            format!(
                "{}/{answered} present ({} writes in all)",
                answered - lost.len().min(answered),
                writes.len()
            ),
            format!("{answered}/{answered}"),
            lost.is_empty() && answered > 0,
        ),
        Row::new(
            "writes without an answer (5xx/transport): kept",
            format!("{ambiguous_kept} of {ambiguous} exist (each whole, none twice)"),
            "≤ 1 each".into(),
            lost.is_empty(),
        ),
        Row::new(
            "writes answered otherwise (4xx)",
            format!("{} {unexpected:?}", unexpected.len()),
            "0".into(),
            unexpected.is_empty(),
        ),
    ];
    (rows, existing)
}

/// The ids of `webhook`'s deliveries with an attempt recorded as interrupted (its worker
/// stopped, or lost its database, before recording the outcome; the lease ran out), paging
/// through the history API.
async fn interrupted(
    client: &reqwest::Client,
    lb: &str,
    host: &str,
    token: &str,
    webhook: &str,
) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("{lb}/api/v1/webhooks/{webhook}/deliveries?limit=100");
        if let Some(after) = &cursor {
            url.push_str(&format!("&after={after}"));
        }
        let page: Value = client
            .get(&url)
            .header("host", host)
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for delivery in page["items"].as_array().expect("a page of deliveries") {
            let cut_short = delivery["history"].as_array().is_some_and(|attempts| {
                attempts.iter().any(|a| {
                    a["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("worker stopped"))
                })
            });
            if cut_short {
                found.insert(delivery["id"].as_str().unwrap().to_owned());
            }
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return found,
        }
    }
}

/// Where the webhook history is read.
pub(super) struct History<'a> {
    pub(super) client: &'a reqwest::Client,
    pub(super) lb: &'a str,
    pub(super) host: &'a str,
    pub(super) token: &'a str,
    pub(super) webhook: &'a str,
}

/// Webhooks: waits until every existing person's `admin.user.created` event arrived (at most
/// [`DRAIN`]), then counts deliveries received more than once: each must have an interrupted
/// attempt in its history, and there are at most [`DUPLICATES_BOUND`].
pub(super) async fn webhooks(
    receiver: &Receiver,
    existing: &HashSet<String>,
    history: &History<'_>,
) -> Vec<Row> {
    let started = Instant::now();
    let delivered = |receiver: &Receiver| -> (HashSet<String>, HashMap<String, usize>, usize) {
        let mut emails = HashSet::new();
        let mut per_delivery: HashMap<String, usize> = HashMap::new();
        let mut unverified = 0;
        for request in receiver.seen() {
            // A repeat of an accepted delivery is a replay the receiver acknowledges; anything
            // else must verify.
            if !matches!(
                request.verdict,
                Some(Ok(()) | Err(svc_sdk::WebhookError::Replayed(_)))
            ) {
                unverified += 1;
            }
            if let Some(email) = request.json()["data"]["email"].as_str() {
                emails.insert(email.to_owned());
            }
            *per_delivery
                .entry(request.header("x-svc-delivery").to_owned())
                .or_default() += 1;
        }
        (emails, per_delivery, unverified)
    };
    loop {
        let (emails, _, _) = delivered(receiver);
        if existing.is_subset(&emails) || started.elapsed() > DRAIN {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (emails, per_delivery, unverified) = delivered(receiver);
    let missing: Vec<&String> = existing.difference(&emails).collect();
    let duplicated: Vec<&String> = per_delivery
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| id)
        .collect();
    let duplicates = duplicated.len();
    let cut_short = interrupted(
        history.client,
        history.lb,
        history.host,
        history.token,
        history.webhook,
    )
    .await;
    let unexplained: Vec<&&String> = duplicated
        .iter()
        .filter(|id| !cut_short.contains(id.as_str()))
        .collect();
    vec![
        Row::new(
            "3 webhook: every created user's event delivered",
            format!(
                "{}/{} (drained {:.1} s after the load; {} unverified)",
                existing.len() - missing.len(),
                existing.len(),
                started.elapsed().as_secs_f64(),
                unverified
            ),
            format!("{0}/{0}, 0 unverified", existing.len()),
            missing.is_empty() && unverified == 0 && !existing.is_empty(),
        ),
        Row::new(
            "3 webhook: deliveries received more than once",
            format!(
                "{duplicates} of {}; {} deliveries with an interrupted attempt; unexplained {unexplained:?}",
                per_delivery.len(),
                cut_short.len()
            ),
            format!("≤ {DUPLICATES_BOUND} (in flight at the kill + PG cut), each interrupted"),
            duplicates <= DUPLICATES_BOUND && unexplained.is_empty(),
        ),
    ]
}

//! `signin-passkey`: a person signs in with a passkey on svc's hosted pages, the browser and
//! its authenticator played by `svc-webauthn-soft` (ES256, attestation "none").
//!
//! **Setup, not measured** (before the gate), once per user the run's workers sign in as,
//! `REGISTER_PARALLEL` at a time: a password sign-in (303 to `/auth/account`), `GET
//! /auth/account/passkeys` (CSRF field), `POST /auth/account/passkeys/options` (creation
//! options + the ceremony cookie `svc_webauthn`), the authenticator's answer, `POST
//! /auth/account/passkeys` `action=register` → 303 `?done=added`.
//!
//! A user's key is derived from their address, so every run re-creates the same authenticator.
//! It still registers it again on every run: an assertion must carry the user handle (svc's
//! user id), which only the creation options tell, and a password (aal1) session of a person
//! who already has a passkey may not start a registration (403, step-up required), while it
//! may remove one. So a user left with passkeys by an earlier run against the same server
//! first has them removed (`action=remove`), then gets the same key registered anew. This
//! keeps the driver free of state files, at one password sign-in per user per run, like the
//! setup of refresh and authcode.
//!
//! **One iteration** (measured), in a new browser (no cookies): `GET /auth/sign-in` (CSRF
//! cookie + field) → `POST /auth/passkey/options` (request options naming no credential: a
//! discoverable sign-in, and the ceremony cookie) → the assertion (ES256 signature by the
//! driver) → `POST /auth/passkey` with the CSRF token and the credential → 303 to
//! `/auth/account` with the session cookie (aal2). Anything else counts as `non2xx`.
//!
//! The WebAuthn origin is the server's public origin (`--host`, e.g.
//! `http://bench.localhost:PORT`, svc's issuer for that tenant) and the RP ID its host, which
//! must be a domain: without `--host`, an IP address in `--base-url` is addressed as
//! `localhost` ([`localhost_for_ip`]).

use crate::flows::{Flow, hidden_field, json};
use crate::http::{Agent, Failure, answer};
use anyhow::{Context, anyhow};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use svc_webauthn_soft::{CounterMode, SoftAuthenticator};
use tokio::task::JoinSet;
use url::{Host, Url};

/// Registrations in flight at once (each starts with a password sign-in: one Argon2id).
const REGISTER_PARALLEL: usize = 8;

/// Passkeys an earlier run may have left on one user before the setup gives up removing them.
const MAX_LEFT_OVER: usize = 8;

/// The account page listing a person's passkeys (and registering, renaming, removing them).
const PASSKEYS_PAGE: &str = "/auth/account/passkeys";

/// The ceremony cookie an options answer sets.
const CEREMONY_COOKIE: &str = "svc_webauthn";

/// `Host` for `base_url` when its host is an IP address (`localhost:PORT`), else `None`: a
/// WebAuthn RP ID is a domain, and svc derives the issuer (hence origin and RP ID) from `Host`.
pub(crate) fn localhost_for_ip(base_url: &str) -> anyhow::Result<Option<String>> {
    let url = Url::parse(base_url).context("--base-url")?;
    match url.host() {
        Some(Host::Ipv4(_) | Host::Ipv6(_)) => {
            let port = url
                .port_or_known_default()
                .ok_or_else(|| anyhow!("--base-url {base_url}: no port"))?;
            Ok(Some(format!("localhost:{port}")))
        }
        _ => Ok(None),
    }
}

/// The authenticator of the person signing in as `email`: its key and credential ID derived
/// from the address, so every run (and every worker) has the same one.
///
/// `CounterMode::Zero`, like synchronised passkeys (and flagged as one: backup eligible, backed
/// up): the signature counter stays 0, which svc (WebAuthn L3 §6.1.1) accepts every time. So
/// concurrent iterations of one user (workers sharing a user, or an iteration that outlived its
/// window) never look like a cloned authenticator, each worker may hold its own copy, and no
/// counter has to be carried from run to run. An incrementing counter would need one sequence
/// per user across workers and runs, and any reordering in flight would be refused as a clone.
fn authenticator(email: &str) -> SoftAuthenticator {
    let digest = Sha256::digest(format!("svc-bench-flows passkey {email}"));
    let mut seed = [0; 8];
    seed.copy_from_slice(&digest[..8]);
    SoftAuthenticator::from_seed(u64::from_be_bytes(seed))
        .with_counter_mode(CounterMode::Zero)
        .with_backup_eligible(true)
        .with_backup_state(true)
}

/// The registered authenticators of one run, by user number (1-based, as in `--email`).
#[derive(Debug, Default)]
pub(crate) struct Keyring {
    keys: Mutex<BTreeMap<usize, SoftAuthenticator>>,
}

impl Keyring {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<usize, SoftAuthenticator>> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of user `user`'s authenticator (copies are interchangeable: the counter is 0).
    pub(crate) fn get(&self, user: usize) -> Result<SoftAuthenticator, Failure> {
        self.lock()
            .get(&user)
            .cloned()
            .ok_or_else(|| answer(format!("user {user} has no registered passkey")))
    }
}

impl Flow {
    /// Registers a passkey for users 1..=`count`, `REGISTER_PARALLEL` at a time (not measured).
    pub(crate) async fn register_passkeys(self: &Arc<Self>, count: usize) -> anyhow::Result<()> {
        let started = Instant::now();
        let mut queue = 1..=count;
        let mut tasks = JoinSet::new();
        let spawn = |tasks: &mut JoinSet<_>, user: usize| {
            let flow = self.clone();
            tasks.spawn(async move { (user, flow.register_passkey(user).await) });
        };
        for user in queue.by_ref().take(REGISTER_PARALLEL) {
            spawn(&mut tasks, user);
        }
        let keyring = self
            .passkeys
            .as_ref()
            .ok_or_else(|| anyhow!("signin-passkey without a keyring"))?;
        let mut replaced = 0;
        while let Some(joined) = tasks.join_next().await {
            let (user, outcome) = joined.context("a registration task died")?;
            let (soft, removed) = outcome.map_err(|f| anyhow!("registering user {user}: {f}"))?;
            replaced += removed;
            keyring.lock().insert(user, soft);
            if let Some(user) = queue.next() {
                spawn(&mut tasks, user);
            }
        }
        eprintln!(
            "registered {count} passkey(s) in {:.1} s ({replaced} left by earlier runs removed)",
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// Signs user `user` in with the password and registers their authenticator, removing the
    /// passkeys they already have first; the authenticator (which now knows the user handle)
    /// and how many passkeys were removed.
    async fn register_passkey(&self, user: usize) -> Result<(SoftAuthenticator, usize), Failure> {
        let mut agent = Agent::new(self.target.clone());
        let email = self.user_email(user);
        let signed_in = self.password_step(&mut agent, &email).await?;
        if signed_in.location.as_deref() != Some("/auth/account")
            || agent.cookie("svc_session").is_none()
        {
            return Err(answer(format!(
                "{email}: the password sign-in went to {:?} without a session (a second factor? \
                 signin-passkey needs users without one)",
                signed_in.location
            )));
        }
        let url = self.target.url(PASSKEYS_PAGE)?;
        let mut removed = 0;
        let page = loop {
            let page = agent
                .get(url.clone())
                .await?
                .expect(&[200], "GET /auth/account/passkeys")?;
            let Some(left_over) = hidden_field(&page.body, "passkey").map(str::to_owned) else {
                break page;
            };
            if removed == MAX_LEFT_OVER {
                return Err(answer(format!(
                    "{email}: still a passkey after removing {removed}"
                )));
            }
            let field = Self::csrf(&agent, &page, "GET /auth/account/passkeys")?;
            agent
                .post(
                    url.clone(),
                    &[
                        ("csrf", &field),
                        ("action", "remove"),
                        ("passkey", &left_over),
                    ],
                    false,
                )
                .await?
                .expect(&[303], "POST /auth/account/passkeys action=remove")?;
            removed += 1;
        };
        let field = Self::csrf(&agent, &page, "GET /auth/account/passkeys")?;
        let asked = agent
            .post(
                self.target.url("/auth/account/passkeys/options")?,
                &[("csrf", &field)],
                false,
            )
            .await?
            .expect(&[200], "POST /auth/account/passkeys/options")?;
        let options = json(&asked.body, "POST /auth/account/passkeys/options")?;
        if agent.cookie(CEREMONY_COOKIE).is_none() {
            return Err(answer(
                "POST /auth/account/passkeys/options: no ceremony cookie",
            ));
        }
        let mut soft = authenticator(&email);
        let credential = soft.register(&options, &self.target.origin()).to_string();
        let what = format!("POST /auth/account/passkeys action=register ({email})");
        let done = agent
            .post(
                url,
                &[
                    ("csrf", &field),
                    ("action", "register"),
                    ("name", "bench"),
                    ("credential", &credential),
                ],
                false,
            )
            .await?;
        if done.status == 409 {
            // This user's passkeys are gone, so another person of the tenant holds this key.
            return Err(answer(format!(
                "{what}: registered already, to another user of this tenant (two --email \
                 templates giving the same address?)"
            )));
        }
        let done = done.expect(&[303], &what)?;
        if done.location.as_deref() != Some("/auth/account/passkeys?done=added") {
            return Err(answer(format!(
                "{what}: 303 to {:?}, expected {PASSKEYS_PAGE}?done=added",
                done.location
            )));
        }
        Ok((soft, removed))
    }

    /// One passkey sign-in in `agent` (a new browser: the caller clears its cookies) with
    /// `soft`: GET /auth/sign-in → POST /auth/passkey/options → assertion → POST /auth/passkey
    /// → 303 /auth/account with a session cookie.
    pub(crate) async fn passkey_sign_in(
        &self,
        agent: &mut Agent,
        soft: &mut SoftAuthenticator,
    ) -> Result<(), Failure> {
        let page = agent
            .get(self.target.url("/auth/sign-in")?)
            .await?
            .expect(&[200], "GET /auth/sign-in")?;
        let field = Self::csrf(agent, &page, "GET /auth/sign-in")?;
        let asked = agent
            .post(
                self.target.url("/auth/passkey/options")?,
                &[("csrf", &field)],
                false,
            )
            .await?
            .expect(&[200], "POST /auth/passkey/options")?;
        let options = json(&asked.body, "POST /auth/passkey/options")?;
        if agent.cookie(CEREMONY_COOKIE).is_none() {
            return Err(answer("POST /auth/passkey/options: no ceremony cookie"));
        }
        let credential = soft.assert(&options, &self.target.origin()).to_string();
        let done = agent
            .post(
                self.target.url("/auth/passkey")?,
                &[("csrf", &field), ("credential", &credential)],
                false,
            )
            .await?
            .expect(&[303], "POST /auth/passkey")?;
        if done.location.as_deref() != Some("/auth/account") {
            return Err(answer(format!(
                "POST /auth/passkey: 303 to {:?}, expected /auth/account",
                done.location
            )));
        }
        if agent.cookie("svc_session").is_none() {
            return Err(answer("POST /auth/passkey: 303 without a session cookie"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ip_address_is_addressed_as_localhost() {
        assert_eq!(
            localhost_for_ip("http://127.0.0.1:8080")
                .unwrap()
                .as_deref(),
            Some("localhost:8080")
        );
        assert_eq!(
            localhost_for_ip("http://[::1]:9000").unwrap().as_deref(),
            Some("localhost:9000")
        );
        assert_eq!(localhost_for_ip("http://localhost:8080").unwrap(), None);
        assert_eq!(localhost_for_ip("http://id.example.com").unwrap(), None);
    }

    #[test]
    fn every_run_re_creates_the_same_key_and_users_differ() {
        let a = authenticator("bench-passkey-1@bench.example");
        assert_eq!(
            a.public_key_sec1(),
            authenticator("bench-passkey-1@bench.example").public_key_sec1()
        );
        assert_ne!(
            a.public_key_sec1(),
            authenticator("bench-passkey-2@bench.example").public_key_sec1()
        );
    }
}

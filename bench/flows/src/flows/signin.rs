//! svc's hosted sign-in as the flows drive it: the CSRF field, the password step, the TOTP
//! second step, and the enrolment of TOTP users before a run (not measured).

use super::{ENROL_PARALLEL, Flow, Worker, detail, hidden_field};
use crate::http::{Agent, Failure, Reply, answer};
use crate::totp::{self, Key, Lease, Pool};
use anyhow::{Context, anyhow};
use std::sync::Arc;
use std::time::Instant;
use tokio::task::JoinSet;

impl Flow {
    /// The hidden `csrf` field of a page, checked against the CSRF cookie.
    pub(crate) fn csrf(agent: &Agent, page: &Reply, what: &str) -> Result<String, Failure> {
        let field = hidden_field(&page.body, "csrf")
            .ok_or_else(|| answer(format!("{what}: no csrf field")))?;
        if agent.cookie("svc_csrf") != Some(field) {
            return Err(answer(format!(
                "{what}: the csrf cookie does not match the field"
            )));
        }
        Ok(field.to_owned())
    }

    /// svc's hosted sign-in form: GET the page (CSRF cookie + hidden field), POST the
    /// credentials of `email`; the 303 answer.
    pub(crate) async fn password_step(
        &self,
        agent: &mut Agent,
        email: &str,
    ) -> Result<Reply, Failure> {
        let url = self.target.url("/auth/sign-in")?;
        let page = agent
            .get(url.clone())
            .await?
            .expect(&[200], "GET /auth/sign-in")?;
        let field = Self::csrf(agent, &page, "GET /auth/sign-in")?;
        agent
            .post(
                url,
                &[
                    ("csrf", &field),
                    ("email", email),
                    ("password", &self.args.password),
                ],
                false,
            )
            .await?
            .expect(&[303], "POST /auth/sign-in")
    }

    /// svc's hosted sign-in as the worker's user: expect 303 and a session cookie.
    pub(super) async fn ours_sign_in(&self, w: &mut Worker) -> Result<(), Failure> {
        let email = self.email(w.index);
        self.password_step(&mut w.agent, &email).await?;
        if w.agent.cookie("svc_session").is_none() {
            return Err(answer("POST /auth/sign-in: 303 without a session cookie"));
        }
        Ok(())
    }

    /// Password, then the second factor, as the lease's user with the code of its step:
    /// GET + POST /auth/sign-in → 303 /auth/second-factor (a challenge cookie, no session) →
    /// GET + POST /auth/second-factor → 303 /auth/account with a session cookie.
    pub(super) async fn totp_sign_in(&self, w: &mut Worker, lease: &Lease) -> Result<(), Failure> {
        let email = self.user_email(lease.user);
        let first = self.password_step(&mut w.agent, &email).await?;
        if first.location.as_deref() != Some("/auth/second-factor") {
            return Err(answer(format!(
                "POST /auth/sign-in ({email}): 303 to {:?}, expected /auth/second-factor",
                first.location
            )));
        }
        if w.agent.cookie("svc_session").is_some() || w.agent.cookie("svc_mfa").is_none() {
            return Err(answer(
                "POST /auth/sign-in: expected a challenge cookie and no session",
            ));
        }
        let url = self.target.url("/auth/second-factor")?;
        let page = w
            .agent
            .get(url.clone())
            .await?
            .expect(&[200], "GET /auth/second-factor")?;
        let field = Self::csrf(&w.agent, &page, "GET /auth/second-factor")?;
        let what = format!(
            "POST /auth/second-factor ({email}, step {}, now {})",
            lease.step,
            totp::current_step()
        );
        let done = w
            .agent
            .post(url, &[("csrf", &field), ("code", &lease.code())], false)
            .await?
            .expect(&[303], &what)?;
        if done.location.as_deref() != Some("/auth/account") {
            return Err(answer(format!(
                "{what}: 303 to {:?}, expected /auth/account",
                done.location
            )));
        }
        if w.agent.cookie("svc_session").is_none() {
            return Err(answer(format!("{what}: 303 without a session cookie")));
        }
        Ok(())
    }

    /// Enrols user `user` (not measured): a password sign-in (no second factor yet), a TOTP
    /// authenticator set up on /auth/account/two-factor and confirmed with the current code.
    /// Returns its key and the step of that code (spent).
    async fn enrol(&self, user: usize) -> Result<(Key, u64), Failure> {
        let mut agent = Agent::new(self.target.clone());
        let email = self.user_email(user);
        let signed_in = self.password_step(&mut agent, &email).await?;
        if signed_in.location.as_deref() != Some("/auth/account")
            || agent.cookie("svc_session").is_none()
        {
            return Err(answer(format!(
                "{email}: the password sign-in went to {:?} without a session (enrolled by an \
                 earlier run? give every run against one server the same --totp-state)",
                signed_in.location
            )));
        }
        let url = self.target.url("/auth/account/two-factor")?;
        let page = agent
            .get(url.clone())
            .await?
            .expect(&[200], "GET /auth/account/two-factor")?;
        let field = Self::csrf(&agent, &page, "GET /auth/account/two-factor")?;
        let setup = agent
            .post(url.clone(), &[("csrf", &field), ("action", "setup")], false)
            .await?
            .expect(&[200], "POST /auth/account/two-factor action=setup")?;
        let key = detail(&setup.body, "Key")
            .ok_or_else(|| answer("TOTP setup page: no <dt>Key</dt>"))
            .and_then(|shown| {
                Key::parse(shown).map_err(|e| answer(format!("TOTP setup page: {e:#}")))
            })?;
        let factor = hidden_field(&setup.body, "factor")
            .ok_or_else(|| answer("TOTP setup page: no factor field"))?
            .to_owned();
        let field = Self::csrf(&agent, &setup, "TOTP setup page")?;
        let step = totp::current_step();
        let confirmed = agent
            .post(
                url,
                &[
                    ("csrf", &field),
                    ("factor", &factor),
                    ("action", "confirm"),
                    ("code", &key.code(step)),
                ],
                false,
            )
            .await?
            .expect(&[200], "POST /auth/account/two-factor action=confirm")?;
        if !confirmed.body.contains("<code>") {
            return Err(answer("TOTP confirmed without backup codes shown"));
        }
        Ok((key, step))
    }

    /// Enrols users 1..=`count` that the pool has no key for, `ENROL_PARALLEL` at a time, and
    /// saves the pool (also when an enrolment failed, to keep the ones that went through).
    pub(super) async fn enrol_missing(
        self: &Arc<Self>,
        pool: &Pool,
        count: usize,
    ) -> anyhow::Result<()> {
        let missing = pool.missing(count);
        if missing.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let mut queue = missing.iter().copied();
        let mut tasks = JoinSet::new();
        let spawn = |tasks: &mut JoinSet<_>, user: usize| {
            let flow = self.clone();
            tasks.spawn(async move { (user, flow.enrol(user).await) });
        };
        for user in queue.by_ref().take(ENROL_PARALLEL) {
            spawn(&mut tasks, user);
        }
        let mut failure = None;
        while let Some(joined) = tasks.join_next().await {
            let (user, outcome) = joined.context("an enrolment task died")?;
            match outcome {
                Ok((key, step)) => pool.enrolled(user, key, step),
                Err(f) => {
                    failure.get_or_insert_with(|| anyhow!("enrolling user {user}: {f}"));
                }
            }
            if failure.is_none()
                && let Some(user) = queue.next()
            {
                spawn(&mut tasks, user);
            }
        }
        pool.save()?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        eprintln!(
            "enrolled {} TOTP user(s) in {:.1} s",
            missing.len(),
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }
}

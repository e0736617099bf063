//! Client-initiated backchannel authentication (OpenID CIBA Core 1.0, poll mode only):
//! `POST /bc-authorize` ([`BackchannelEndpoint`]).
//!
//! Like the device grant (`crate::device`) the request is pending until a person decides, and
//! the client polls the token endpoint (`crate::token::backchannel`); unlike it, the client names
//! the person (`login_hint`) and the person approves on their own device, on the hosted approval
//! page that a mailed notification points to (`crate::authorize::backchannel`). Checks, in order:
//! 1. The client authenticates as at the token endpoint and must be confidential (spec: "Only
//!    poll delivery mode with confidential clients") and registered for the CIBA grant
//!    (`unauthorized_client` otherwise).
//! 2. The parameters the spec rejects are refused by name (`invalid_request`):
//!    `login_hint_token`, `id_token_hint`, `client_notification_token` (ping/push),
//!    `user_code`, `acr_values`, and signed `request` objects. RAR `authorization_details`
//!    (RFC 9396) are taken as at the authorization endpoint: refused by name while the
//!    deployment has them off, else checked against the application's registered types
//!    (`invalid_authorization_details`); the person sees them before approving, and the tokens
//!    carry them.
//! 3. `scope` is required, must include `openid` (CIBA Core §7.1) and stay within the
//!    application's allowed scopes (`invalid_scope`).
//! 4. `login_hint` is required (`invalid_request`): an email address or a user id.
//! 5. `binding_message`, when sent, is at most [`MAX_BINDING_MESSAGE_CHARS`] printable characters
//!    (`invalid_binding_message`, CIBA Core §13).
//! 6. `requested_expiry`, when sent, is a positive integer of seconds; up to
//!    [`BackchannelSettings::max_expiry`] is honoured, more is capped (the answer's `expires_in`
//!    says what was granted).
//!
//! The hint is looked up once; whoever it names (a person who can sign in, or nobody: the
//! decoy) the request is stored the same way and the answer has the same shape. Its timing
//! is made the same too: the notifier is called for both (it composes the message either way
//! and sends it later, from a background task), and the answer is held until a floor
//! ([`BackchannelSettings::answer_floor`], 25 ms after the client was authenticated), which
//! hides the rest (reading the person's record). A rank test over interleaved samples holds it
//! (`crates/runtime/tests/it/ciba.rs`).
//!
//! **An agent's start** (issue 19 item 2, per-use approval; served with `[challenge]`): an
//! agent whose person asked to approve each use of a delegation authenticates with its key
//! instead of a client's credentials — its signed answer to a challenge as `client_assertion`
//! (RFC 7523 §2.2, `iss` = `sub` = the agent) — and names the person by id in `login_hint`,
//! the API in `resource` (RFC 8707; default its only allowed one) and the permissions in
//! `scope` (default: all the delegation grants there). Then, in order: the parameters of
//! check 2, `authorization_details` and `openid` are refused by name; `binding_message` and
//! `requested_expiry` as for a client; the agent is checked as at the agent grant
//! (`invalid_client` for its assertion, `invalid_target`/`invalid_scope` for what it asks);
//! a live delegation from that person covering the API and the permissions must exist
//! (`access_denied` otherwise: the agent learns no more than the agent grant tells it); the
//! challenge is spent; the request is stored naming the agent, the delegation and the API, and
//! the person is notified with the agent's name. There is no decoy: the agent is authenticated
//! and the person delegated to it. It polls as `crate::token::agent_use` says.

use crate::client_auth;
use crate::context::ProtocolContext;
use crate::error::{ErrorCode, OAuthError};
use crate::token::request::ClientRequest;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use svc_domain::{
    AUTH_REQ_ID_PREFIX, Application, BackchannelRequest, BackchannelRequestId,
    BackchannelRequester, DelegatedUse, DeviceStatus, Email, GeneratedSecret, GrantType,
    MAX_BINDING_MESSAGE_CHARS, ScopeSet, Tenant, User, UserId,
};

/// The path of the hosted approval page, under the issuer.
pub const APPROVAL_PATH: &str = "/auth/ciba";

/// `[ciba]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackchannelSettings {
    /// Whether `/bc-authorize`, the approval page and the grant are served.
    pub enabled: bool,
    /// Lifetime without `requested_expiry` (CONTRACTS.md: 300 s).
    pub expiry: Duration,
    /// The longest `requested_expiry` honoured (CONTRACTS.md: 600 s).
    pub max_expiry: Duration,
    /// Seconds between polls at first (CONTRACTS.md: 5 s).
    pub interval_secs: u32,
    /// The least time a start takes once the client is authenticated: the answer waits until
    /// then, so what a real hint costs more than a decoy's (finding and reading the person's
    /// record, composing their mail) never shows in the answer's timing.
    pub answer_floor: Duration,
    /// `[challenge].enabled`: agents may start requests for a use of a delegation their person
    /// approves each time ([`BackchannelEndpoint::start`], "An agent's start").
    pub agent_requests: bool,
}

impl Default for BackchannelSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            expiry: Duration::from_secs(300),
            max_expiry: Duration::from_secs(600),
            interval_secs: 5,
            answer_floor: Duration::from_millis(25),
            agent_requests: false,
        }
    }
}

/// Who asks the person to approve, as a notice names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker<'a> {
    /// An application (its display name) asks to sign the person in.
    Application(&'a str),
    /// An agent (its name) asks to act for the person once, on their delegation.
    Agent(&'a str),
}

/// Tells a person that a client asks them to approve a request (a mail, in the runtime).
///
/// Called for every request, decoys included (`person` is then `None`), so that an
/// implementation spends the same effort either way: the start's timing must not say whether
/// the hint named someone.
pub trait BackchannelNotifier: Send + Sync {
    /// Notifies `person` (nobody, for a decoy) of tenant `tenant` (issuer `issuer`) that
    /// `asker` asks, showing `binding_message`; must return at once (deliver in the
    /// background).
    fn notify(
        &self,
        tenant: &Tenant,
        issuer: &str,
        person: Option<&User>,
        asker: Asker<'_>,
        binding_message: Option<&str>,
    );
}

/// The successful start response (CIBA Core §7.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackchannelStartResponse {
    /// For the client's polls (`ar_…`).
    pub auth_req_id: String,
    /// Seconds the request lives.
    pub expires_in: u64,
    /// Seconds between polls.
    pub interval: u32,
}

/// Parameters the spec rejects (check 2), each named in the refusal.
const REJECTED: [&str; 6] = [
    "login_hint_token",
    "id_token_hint",
    "client_notification_token",
    "user_code",
    "acr_values",
    "request",
];

/// `POST /bc-authorize`.
pub struct BackchannelEndpoint {
    ctx: ProtocolContext,
    settings: BackchannelSettings,
    notifier: Arc<dyn BackchannelNotifier>,
}

impl BackchannelEndpoint {
    /// The endpoint over `ctx` with `settings`, notifying through `notifier`.
    pub fn new(
        ctx: ProtocolContext,
        settings: BackchannelSettings,
        notifier: Arc<dyn BackchannelNotifier>,
    ) -> Self {
        Self {
            ctx,
            settings,
            notifier,
        }
    }

    /// Checks 1–6, then stores the request (a decoy when the hint names nobody) and answers.
    pub async fn start(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<BackchannelStartResponse, OAuthError> {
        if self.settings.agent_requests
            && let Some(assertion) = crate::token::agent::agent_client_assertion(form)
        {
            return self
                .start_for_agent(tenant, issuer, form, authorization, assertion)
                .await;
        }
        let client_request = ClientRequest::parse(form, authorization)?;
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        // 1.
        let app = client_auth::authenticate(&auth, client_request.client())
            .await?
            .application;
        // From here on, the hint must not change how long the answer takes.
        let floor = tokio::time::Instant::now() + self.settings.answer_floor;
        check_client(&app)?;
        // 2.
        check_rejected(&client_request)?;
        let details = crate::details::direct(
            &app,
            client_request.param("authorization_details"),
            self.ctx.authorization_details(),
        )?;
        // 3.
        let scope = check_scope(&app, client_request.param("scope"))?;
        // 4.
        let hint = client_request
            .param("login_hint")
            .ok_or_else(|| OAuthError::invalid_request("login_hint is required"))?;
        // 5.
        let binding_message = check_binding_message(client_request.param("binding_message"))?;
        // 6.
        let lifetime = self.lifetime(client_request.param("requested_expiry"))?;

        let secret = GeneratedSecret::generate(AUTH_REQ_ID_PREFIX, self.ctx.rng.as_ref());
        let now = crate::authorize::truncate_micros(self.ctx.clock.now());
        let mut tx = self.ctx.store.write().await?;
        let person = person_named(tx.as_mut(), tenant, hint).await?;
        let request = BackchannelRequest {
            id: BackchannelRequestId::generate(self.ctx.clock.as_ref(), self.ctx.rng.as_ref()),
            hash: secret.hash,
            tenant_id: tenant.id.clone(),
            requester: BackchannelRequester::Application(app.id.clone()),
            user_id: person.as_ref().map(|p| p.id.clone()),
            scope,
            binding_message,
            authorization_details: details,
            status: DeviceStatus::Pending,
            interval_secs: self.settings.interval_secs,
            last_polled_at: None,
            created_at: now,
            expires_at: now + lifetime,
        };
        tx.insert_backchannel_request(&request).await?;
        tx.commit().await?;
        self.notifier.notify(
            tenant,
            issuer,
            person.as_ref(),
            Asker::Application(&app.name),
            request.binding_message.as_deref(),
        );
        tokio::time::sleep_until(floor).await;
        // Never whether it was a decoy: that is the point of one.
        tracing::info!(tenant = %tenant.id, client_id = %app.id, request = %request.id,
            "backchannel authentication started");
        Ok(BackchannelStartResponse {
            auth_req_id: secret.plaintext,
            expires_in: lifetime.as_secs(),
            interval: self.settings.interval_secs,
        })
    }

    /// An agent's start (see the module documentation).
    async fn start_for_agent(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
        assertion: &str,
    ) -> Result<BackchannelStartResponse, OAuthError> {
        use crate::token::agent::{AgentChecks, Using, agent_client, as_client_error, target_of};
        let (agent_id, unverified) = agent_client(form, authorization, assertion)?;
        let param = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if let Some(name) = REJECTED
            .into_iter()
            .chain(["authorization_details"])
            .find(|name| param(name).is_some())
        {
            return Err(OAuthError::invalid_request(format!(
                "{name} is not supported in an agent's request"
            )));
        }
        let person = param("login_hint")
            .ok_or_else(|| OAuthError::invalid_request("login_hint is required"))
            .and_then(|hint| {
                UserId::parse(hint).map_err(|_| {
                    OAuthError::invalid_request(
                        "login_hint of an agent's request is the id (usr_…) of the person it acts for",
                    )
                })
            })?;
        let asked = param("scope")
            .map(ScopeSet::parse)
            .transpose()
            .map_err(|e| OAuthError::invalid_scope(format!("scope: {e}")))?;
        if asked.as_ref().is_some_and(|s| s.contains("openid")) {
            return Err(OAuthError::invalid_scope(
                "an agent asks for an API's permissions: openid is not one",
            ));
        }
        let binding_message = check_binding_message(param("binding_message"))?;
        let lifetime = self.lifetime(param("requested_expiry"))?;

        let checks = AgentChecks { ctx: &self.ctx };
        let now = crate::authorize::truncate_micros(self.ctx.clock.now());
        let (agent, challenge) = checks
            .verify_signed(tenant, issuer, &agent_id, assertion, &unverified, now)
            .await
            .map_err(as_client_error)?;
        let target = target_of(&agent, param("resource"))?;
        if target == crate::discovery::management_api_resource(issuer) {
            return Err(OAuthError::invalid_target(
                "agents obtain tokens for the tenant's APIs, never the management API",
            ));
        }
        let api = checks.agent_api(tenant, &agent, target).await?;
        let (scope, delegation) = checks
            .delegated(
                tenant,
                &agent,
                &person,
                &api,
                asked.as_ref(),
                Using::ToApprove,
                now,
            )
            .await
            .map_err(|e| match e.code() {
                ErrorCode::InvalidGrant => OAuthError::new(
                    ErrorCode::AccessDenied,
                    "no live delegation from this person to this agent covers the request",
                ),
                _ => e,
            })?;
        checks
            .spend_challenge(tenant, &agent.id, &challenge, now)
            .await
            .map_err(as_client_error)?;

        let secret = GeneratedSecret::generate(AUTH_REQ_ID_PREFIX, self.ctx.rng.as_ref());
        let request = BackchannelRequest {
            id: BackchannelRequestId::generate(self.ctx.clock.as_ref(), self.ctx.rng.as_ref()),
            hash: secret.hash,
            tenant_id: tenant.id.clone(),
            requester: BackchannelRequester::Agent(DelegatedUse {
                agent_id: agent.id.clone(),
                delegation_id: delegation.id.clone(),
                resource: api.identifier.clone(),
            }),
            user_id: Some(person.clone()),
            scope,
            binding_message,
            // The delegation's, shown to the person again with this use.
            authorization_details: delegation.authorization_details.clone(),
            status: DeviceStatus::Pending,
            interval_secs: self.settings.interval_secs,
            last_polled_at: None,
            created_at: now,
            expires_at: now + lifetime,
        };
        let mut tx = self.ctx.store.write().await?;
        let user = tx.user(&tenant.id, &person).await?;
        tx.insert_backchannel_request(&request).await?;
        tx.commit().await?;
        self.notifier.notify(
            tenant,
            issuer,
            user.as_ref(),
            Asker::Agent(&agent.name),
            request.binding_message.as_deref(),
        );
        tracing::info!(tenant = %tenant.id, agent = %agent.id, delegation = %delegation.id,
            request = %request.id, "an agent asks its person to approve a use");
        Ok(BackchannelStartResponse {
            auth_req_id: secret.plaintext,
            expires_in: lifetime.as_secs(),
            interval: self.settings.interval_secs,
        })
    }

    /// Check 6: the request's lifetime.
    fn lifetime(&self, requested: Option<&str>) -> Result<Duration, OAuthError> {
        let Some(raw) = requested else {
            return Ok(self.settings.expiry);
        };
        match raw.parse::<u64>() {
            Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs).min(self.settings.max_expiry)),
            _ => Err(OAuthError::invalid_request(
                "requested_expiry must be a positive integer of seconds",
            )),
        }
    }
}

/// Check 1.
fn check_client(app: &Application) -> Result<(), OAuthError> {
    if !app.token_endpoint_auth_method.is_confidential() {
        return Err(OAuthError::unauthorized_client(
            "backchannel authentication is for confidential clients only",
        ));
    }
    if !app.allows_grant(GrantType::Ciba) {
        return Err(OAuthError::unauthorized_client(
            "this client may not use the CIBA grant",
        ));
    }
    Ok(())
}

/// Check 2.
fn check_rejected(request: &ClientRequest) -> Result<(), OAuthError> {
    match REJECTED
        .into_iter()
        .find(|name| request.param(name).is_some())
    {
        Some(name) => Err(OAuthError::invalid_request(format!(
            "{name} is not supported: send login_hint (poll mode only)"
        ))),
        None => Ok(()),
    }
}

/// Check 3.
fn check_scope(app: &Application, raw: Option<&str>) -> Result<ScopeSet, OAuthError> {
    let checked = crate::authorize::request::check_scope(app, raw, None)
        .map_err(|e| OAuthError::invalid_scope(e.description))?;
    let scope =
        ScopeSet::parse(&checked).map_err(|_| OAuthError::invalid_scope("scope is malformed"))?;
    if !scope.contains("openid") {
        return Err(OAuthError::invalid_scope(
            "scope must include openid (CIBA Core §7.1)",
        ));
    }
    Ok(scope)
}

/// Check 5.
fn check_binding_message(raw: Option<&str>) -> Result<Option<String>, OAuthError> {
    let Some(message) = raw else {
        return Ok(None);
    };
    let fits = message.chars().count() <= MAX_BINDING_MESSAGE_CHARS
        && !message.chars().any(char::is_control);
    if fits {
        Ok(Some(message.to_owned()))
    } else {
        Err(OAuthError::new(
            ErrorCode::InvalidBindingMessage,
            format!(
                "binding_message must be at most {MAX_BINDING_MESSAGE_CHARS} printable characters"
            ),
        ))
    }
}

/// The person `hint` names, when they can sign in: an email address or a user id.
async fn person_named(
    tx: &mut dyn svc_store::WriteTx,
    tenant: &Tenant,
    hint: &str,
) -> Result<Option<User>, OAuthError> {
    let found = if let Ok(id) = UserId::parse(hint) {
        tx.user(&tenant.id, &id).await?
    } else if let Ok(email) = Email::parse(hint) {
        tx.user_by_email(&tenant.id, &email).await?
    } else {
        None
    };
    Ok(found.filter(User::can_sign_in))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_messages_are_short_and_printable() {
        assert_eq!(check_binding_message(None).unwrap(), None);
        assert_eq!(
            check_binding_message(Some("W4-SCT ü")).unwrap().as_deref(),
            Some("W4-SCT ü")
        );
        let long = "x".repeat(MAX_BINDING_MESSAGE_CHARS + 1);
        for bad in [long.as_str(), "line\nbreak", "\u{7}"] {
            assert_eq!(
                check_binding_message(Some(bad)).unwrap_err().code(),
                ErrorCode::InvalidBindingMessage
            );
        }
    }
}

//! The authorization endpoint (RFC 6749 §4.1, OIDC Core §3.1.2) and its seam with the hosted
//! pages: the engine answers "redirect to the client", "needs login", "needs consent" or "show an
//! error page"; the pages record what the person did (a session, a consent) and call
//! [`AuthorizeEndpoint::resume`] to continue the same request (ARCHITECTURE.md rule 1).
//!
//! A request may also arrive pushed (RFC 9126, [`pushed`]): the client sent its parameters to
//! `/oauth/par` first, and the browser brings only `client_id` and the `request_uri`. Both
//! kinds pass the same checks ([`AuthorizeEndpoint::validate`]) and the same decisions.
//!
//! Decisions, in order, once the request passed [`request`]'s checks:
//! 1. Authentication: a live session of the tenant, recent enough for `max_age` (OIDC Core
//!    §3.1.2.1), and for `prompt=login` established after the request arrived. A session
//!    established after the request arrived satisfies `max_age` whatever its value (even 0):
//!    the person has just authenticated for this very request, and asking again would loop.
//!    Otherwise `login_required` under `prompt=none`, else the sign-in page.
//!
//!    Organization: when the request names one (`organization`, by id or slug), it must be an
//!    active organization of the tenant with the signed-in person as a member; otherwise
//!    `access_denied`, the same answer whether it does not exist, is suspended or the person is
//!    not in it (so the parameter cannot probe the tenant's organizations). The code carries it
//!    and the token endpoint checks it again.
//! 2. Assurance ([`assurance`]): the levels asked for — an essential `acr` claim (OIDC Core
//!    §5.5.1.1), else `acr_values` (§3.1.2.1) — are met by a session at or above the weakest
//!    of them we know (`urn:svc:aal1` < `urn:svc:aal2`). Below it, a person with a confirmed
//!    second factor is sent to step up on the hosted pages (`prompt=none`:
//!    `interaction_required`); when the deployment requires a second factor, or the application
//!    registered a `minimum_acr`, every request asks at least that (essential) and a person
//!    without a factor is sent to set one up; otherwise an essential request is
//!    `unmet_authentication_requirements` and a voluntary one goes on at the level reached,
//!    which the `acr` claim reports truthfully. Levels we do not know are never met.
//! 3. Consent: remembered per user, application and scope set, and for `prompt=consent` given
//!    after the request arrived. First-party applications skip it unless the request says
//!    `prompt=consent` (OIDC Core §3.1.2.1: the OP "SHOULD prompt the End-User for consent").
//!    Otherwise `consent_required` under `prompt=none`, else the consent page. A request with
//!    RAR `authorization_details` (RFC 9396) is always shown, whatever was remembered: a consent
//!    covers scopes, not a particular payment.
//! 4. A single-use authorization code (256 random bits, stored hashed, bound to client, redirect
//!    URI, PKCE challenge, session and subject, carrying the `claims` request with `acr_values`
//!    folded in) is sent to the redirect URI with `state` and `iss` (RFC 9207 §2).

mod assurance;
mod backchannel;
pub(crate) mod consent_details;
mod device;
mod gate;
mod grant;
mod picker;
pub mod pushed;
mod redirect;
pub mod request;
mod settings;
pub mod signed;
mod storage;

pub use backchannel::{AgentAsk, BackchannelDecision, BackchannelPrompt};
pub use consent_details::ConsentDetail;
pub use device::DeviceEntry;
pub use settings::AuthorizeSettings;

use redirect::{code_redirect, error_redirect};

pub use picker::{OrganizationChoice, OrganizationPrompt};
pub use pushed::{PushEndpoint, PushedAuthorizationResponse, PushedRequests};
pub use signed::RequestObjects;

/// How an authorization request reached the endpoint, for the deployment's and the
/// application's requirements (RFC 9126 §5–6, RFC 9101 §10.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Query or form parameters.
    Plain,
    /// A request object sent by value (RFC 9101 §5.1).
    Signed,
    /// A `request_uri` of `/oauth/par` (RFC 9126 §4), signed or not when pushed.
    Pushed,
}

/// Which hosted page a pending request waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Login,
    StepUp,
    Enrol,
    Consent,
    Organization,
}

use crate::client_documents::DocumentError;
use crate::error::ErrorPageKind;
use crate::policies;
use request::{AuthorizationRequest, PageError, Params, RedirectError};
use std::sync::Arc;
use svc_domain::{
    Application, Clock, Interaction, InteractionId, OrganizationUsage, Origin, PolicyRule, Rng,
    Session, SignInFacts, Tenant, denial_among,
};
use svc_store::{Store, StoreError};

/// Prefix of authorization codes, so a leaked string says what it is and a code is never taken
/// for another kind of token.
pub const CODE_PREFIX: &str = "ac_";

/// `prompt=none` without a usable session (OIDC Core §3.1.2.6).
const LOGIN_REQUIRED: (&str, &str) = (
    "login_required",
    "the person is not signed in (prompt=none)",
);
/// `prompt=none` without the consent the request needs (OIDC Core §3.1.2.6).
const CONSENT_REQUIRED: (&str, &str) = (
    "consent_required",
    "the person has not consented to this request (prompt=none)",
);
/// An essential `acr` the session does not reach and cannot be raised to (OIDC Core errata
/// set 2, §3.1.2.6).
const UNMET_ACR: (&str, &str) = (
    "unmet_authentication_requirements",
    "the essential acr requested cannot be reached for this person",
);
/// The organization named is not one the person can act in (absent, suspended, or not theirs).
const NOT_A_MEMBER: (&str, &str) = (
    "access_denied",
    "the person cannot act in this organization",
);
/// The application requires an organization and the person belongs to none it can act in.
const IN_NO_ORGANIZATION: (&str, &str) = (
    "access_denied",
    "this application is used in an organization, and the person belongs to none",
);
/// `prompt=none` when the person must pick an organization first (OIDC Core §3.1.2.6).
const PICK_ORGANIZATION: (&str, &str) = (
    "interaction_required",
    "the person must choose an organization (prompt=none)",
);
/// The API resource of the request was deleted while the person signed in.
const RESOURCE_GONE: (&str, &str) = (
    "invalid_target",
    "the API resource of this request no longer exists",
);
/// `prompt=none` when the session must be stepped up first (OIDC Core §3.1.2.6).
const INTERACTION_REQUIRED: (&str, &str) = (
    "interaction_required",
    "the requested acr needs a second factor (prompt=none)",
);

/// What the browser should see next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeOutcome {
    /// Send the browser to this URL at the client (a code or an error, with `state` and `iss`).
    RedirectToClient(String),
    /// The person must sign in; the hosted sign-in page continues this interaction.
    Login {
        /// The pending request.
        interaction: InteractionId,
    },
    /// The person must consent; the hosted consent page continues this interaction.
    Consent {
        /// The pending request.
        interaction: InteractionId,
    },
    /// The signed-in person must give a second factor (step-up); the hosted second-factor page
    /// continues this interaction.
    StepUp {
        /// The pending request.
        interaction: InteractionId,
    },
    /// The signed-in person must set up a second factor first (the deployment requires one and
    /// they have none); the hosted setup page continues this interaction.
    Enrol {
        /// The pending request.
        interaction: InteractionId,
    },
    /// The application requires an organization and the request named none: the person picks
    /// one of theirs on the hosted organization page, which continues this interaction.
    SelectOrganization {
        /// The pending request.
        interaction: InteractionId,
    },
    /// Never redirect: show an error page of this kind (unknown client, unregistered
    /// redirect URI, expired interaction, unavailable database).
    ErrorPage {
        /// Why; the HTTP layer picks the status from it.
        kind: ErrorPageKind,
        /// Error code.
        error: String,
        /// For the person.
        description: String,
    },
}

/// What the consent page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentPrompt {
    /// The application's display name.
    pub client_name: String,
    /// For a client known by its metadata document's URL, that URL's host: the name is the
    /// client's own claim, the host is who published it.
    pub client_host: Option<String>,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// The descriptions of those that are permissions of the API resource the request names,
    /// by permission (tenant-written text: render it escaped).
    pub permissions: std::collections::BTreeMap<String, String>,
    /// Where the answer will be sent: the page's CSP `form-action` must allow its origin, since
    /// browsers check every redirect that follows a form submission against it.
    pub redirect_uri: String,
    /// For a device's request (RFC 8628), the user code it shows, for the person to compare
    /// (§5.4: the device may be someone else's).
    pub device_user_code: Option<String>,
    /// The RAR details asked for (RFC 9396), in words.
    pub details: Vec<ConsentDetail>,
}

/// What the sign-in page may show about the pending request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginContext {
    /// The application's display name.
    pub client_name: String,
    /// `login_hint`, to pre-fill the email field.
    pub login_hint: Option<String>,
    /// Where the flow ends (see [`ConsentPrompt::redirect_uri`]).
    pub redirect_uri: String,
}

/// The authorization endpoint of every tenant.
pub struct AuthorizeEndpoint {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    rng: Arc<dyn Rng>,
    settings: AuthorizeSettings,
    clients: Option<Arc<crate::client_auth::ClientCache>>,
    /// Fetches `jwks_uri` documents to verify request objects.
    jwks: Option<Arc<dyn crate::client_auth::JwksFetcher>>,
    /// Whether DPoP is on (`dpop_jkt` binds codes only then).
    dpop: bool,
    /// Resolves URL `client_id`s (client ID metadata documents).
    documents: Option<Arc<dyn crate::client_documents::ClientDocuments>>,
    /// `[oidc].authorization_details`: RAR details are taken.
    authorization_details: bool,
}

impl AuthorizeEndpoint {
    /// An endpoint over `ctx` with the lifetimes of `settings`; applications are read through
    /// the context's cache when it has one. Only what this endpoint uses is kept (it signs
    /// nothing and authenticates no client).
    pub fn new(ctx: crate::context::ProtocolContext, settings: AuthorizeSettings) -> Self {
        Self {
            dpop: ctx.dpop().is_some(),
            authorization_details: ctx.authorization_details(),
            store: ctx.store,
            clock: ctx.clock,
            rng: ctx.rng,
            settings,
            clients: ctx.clients,
            jwks: ctx.jwks_fetcher,
            documents: ctx.documents,
        }
    }

    /// Handles `GET|POST /oauth/authorize` with the request's parameters and the browser's
    /// session, if any (already checked live and of an active user by the hosted layer), from
    /// an address nobody could tell (a policy naming networks refuses it).
    pub async fn authorize(
        &self,
        tenant: &Tenant,
        issuer: &str,
        params: &[(String, String)],
        session: Option<&Session>,
    ) -> AuthorizeOutcome {
        self.authorize_from(tenant, issuer, params, session, Origin::Unknown)
            .await
    }

    /// [`Self::authorize`] from the browser at `origin` (for access policies' network rule).
    pub async fn authorize_from(
        &self,
        tenant: &Tenant,
        issuer: &str,
        params: &[(String, String)],
        session: Option<&Session>,
        origin: Origin,
    ) -> AuthorizeOutcome {
        let params = Params::new(params);
        let raw_client = match request::check_client_id(&params) {
            Ok(id) => id,
            Err(e) => return page(e),
        };
        let app = match self.named_application(tenant, raw_client).await {
            Ok(Some(app)) => app,
            Ok(None) => {
                return page(PageError {
                    error: "invalid_client",
                    description: "this application is not known here".into(),
                });
            }
            Err(DocumentError::Refused(why)) => {
                return page(PageError {
                    error: "invalid_client",
                    description: format!(
                        "this application's client metadata document cannot be used: {why}"
                    ),
                });
            }
            Err(DocumentError::Store(e)) => return unavailable(e),
        };
        if let Some(request_uri) = pushed::request_uri(&params, self.settings.pushed) {
            return self
                .authorize_pushed(
                    tenant,
                    issuer,
                    &app,
                    &params,
                    request_uri,
                    (session, origin),
                )
                .await;
        }
        if let Some(token) = signed::request_object(&params, self.settings.request_objects) {
            let inner = match self.unpack(issuer, &app, &params, token).await {
                Ok(inner) => inner,
                Err(description) => {
                    return page(PageError {
                        error: "invalid_request_object",
                        description,
                    });
                }
            };
            return self
                .checked(
                    tenant,
                    issuer,
                    &app,
                    (&Params::new(&inner), raw_client),
                    Arrival::Signed,
                    (session, origin),
                )
                .await;
        }
        self.checked(
            tenant,
            issuer,
            &app,
            (&params, raw_client),
            Arrival::Plain,
            (session, origin),
        )
        .await
    }

    /// Validates the `params` of `app` (sent with `client_id`, which check 1 found) and decides.
    async fn checked(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        (params, client_id): (&Params<'_>, &str),
        arrival: Arrival,
        browser: (Option<&Session>, Origin),
    ) -> AuthorizeOutcome {
        match self.validate(tenant, app, params, client_id, arrival).await {
            Ok(req) => self.decide(tenant, issuer, app, &req, browser, None).await,
            Err(refusal) => refused(refusal, issuer),
        }
    }

    /// Checks 2–14 of [`request`] on `params` for `app` (whose `client_id` check 1 passed): the
    /// one rule set of both `/oauth/authorize` and `/oauth/par` (RFC 9126 §2.1: the pushed
    /// request is validated like an authorization request), whether the parameters came plain
    /// or out of a request object. A request that was not pushed is refused when the
    /// deployment or the application requires pushed ones (RFC 9126 §6), and a plain one when
    /// the deployment requires signed ones (RFC 9101 §10.5).
    pub(crate) async fn validate(
        &self,
        tenant: &Tenant,
        app: &Application,
        params: &Params<'_>,
        client_id: &str,
        arrival: Arrival,
    ) -> Result<AuthorizationRequest, Refusal> {
        let redirect_uri = request::check_redirect_uri(app, params).map_err(Refusal::Page)?;
        let refuse = |error: RedirectError| Refusal::Redirect {
            redirect_uri: redirect_uri.clone(),
            state: params.single("state").ok().flatten().map(str::to_owned),
            error,
        };
        if arrival != Arrival::Pushed && self.settings.pushed.required_for(app) {
            return Err(refuse(pushed::required()));
        }
        if arrival == Arrival::Plain && self.settings.request_objects == RequestObjects::Required {
            return Err(refuse(signed::required()));
        }
        let target = match self.target(tenant, app, &params.all("resource")).await {
            Ok(Ok(target)) => target,
            Ok(Err(e)) => return Err(refuse(e)),
            Err(e) => return Err(Refusal::Unavailable(e)),
        };
        let mut request = request::check_rest(
            app,
            params,
            (client_id, redirect_uri.clone()),
            target.api(),
            self.authorization_details,
        )
        .map_err(refuse)?;
        // With DPoP off nothing is bound: a bound code could never be redeemed.
        if !self.dpop {
            request.dpop_jkt = None;
        }
        Ok(request)
    }

    /// Continues a pending request after the person signed in (`GET /oauth/authorize/resume`).
    pub async fn resume(
        &self,
        tenant: &Tenant,
        issuer: &str,
        interaction: &InteractionId,
        session: Option<&Session>,
    ) -> AuthorizeOutcome {
        self.resume_from(tenant, issuer, interaction, session, Origin::Unknown)
            .await
    }

    /// [`Self::resume`] from the browser at `origin`.
    pub async fn resume_from(
        &self,
        tenant: &Tenant,
        issuer: &str,
        interaction: &InteractionId,
        session: Option<&Session>,
        origin: Origin,
    ) -> AuthorizeOutcome {
        let (pending, req, app) = match self.pending(tenant, interaction).await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        self.decide(
            tenant,
            issuer,
            &app,
            &req,
            (session, origin),
            Some(&pending),
        )
        .await
    }

    /// What the consent page of `interaction` shows; the outcome to follow instead when there
    /// is nothing to consent to yet (no session: sign in first) or the request is gone.
    pub async fn consent_prompt(
        &self,
        tenant: &Tenant,
        interaction: &InteractionId,
        session: Option<&Session>,
    ) -> Result<ConsentPrompt, AuthorizeOutcome> {
        let (pending, req, app) = self.pending(tenant, interaction).await?;
        if !self.is_live(tenant, session) {
            return Err(AuthorizeOutcome::Login {
                interaction: pending.id,
            });
        }
        let permissions = match &req.resource {
            None => Default::default(),
            Some(identifier) => self
                .permission_descriptions(tenant, identifier)
                .await
                .map_err(unavailable)?,
        };
        Ok(ConsentPrompt {
            client_name: app.name.clone(),
            client_host: app
                .metadata_document
                .as_ref()
                .map(|d| d.url.authority().to_owned()),
            scopes: req.scopes().iter().map(|s| s.as_str().to_owned()).collect(),
            permissions,
            device_user_code: req.device.as_ref().map(|d| d.user_code.clone()),
            details: req
                .authorization_details
                .as_ref()
                .map(|d| consent_details::describe(d, &app.authorization_details_types))
                .unwrap_or_default(),
            redirect_uri: req.redirect_uri,
        })
    }

    /// Records the person's answer on the consent page and continues.
    pub async fn decide_consent(
        &self,
        tenant: &Tenant,
        issuer: &str,
        interaction: &InteractionId,
        session: Option<&Session>,
        allow: bool,
    ) -> AuthorizeOutcome {
        self.decide_consent_from(
            tenant,
            issuer,
            interaction,
            (session, Origin::Unknown),
            allow,
        )
        .await
    }

    /// [`Self::decide_consent`] from the browser at `origin`.
    pub async fn decide_consent_from(
        &self,
        tenant: &Tenant,
        issuer: &str,
        interaction: &InteractionId,
        (session, origin): (Option<&Session>, Origin),
        allow: bool,
    ) -> AuthorizeOutcome {
        let (pending, req, app) = match self.pending(tenant, interaction).await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        let Some(session) = session.filter(|s| self.is_live(tenant, Some(s))) else {
            return AuthorizeOutcome::Login {
                interaction: pending.id,
            };
        };
        if !allow {
            if let Err(e) = self.forget(tenant, &pending.id).await {
                return unavailable(e);
            }
            if let Some(device) = &req.device
                && let Err(e) = self.deny_device(tenant, device, session).await
            {
                return unavailable(e);
            }
            let denied = RedirectError::new("access_denied", "the person declined the request");
            return AuthorizeOutcome::RedirectToClient(error_redirect(
                &req.redirect_uri,
                &denied,
                req.state.as_deref(),
                issuer,
            ));
        }
        if let Err(e) = self.remember_consent(tenant, &app, session, &req).await {
            return unavailable(e);
        }
        // The person saw and approved this request's details; a remembered consent never
        // stands for them (it covers scopes only).
        let req = AuthorizationRequest {
            details_approved: true,
            ..req
        };
        self.decide(
            tenant,
            issuer,
            &app,
            &req,
            (Some(session), origin),
            Some(&pending),
        )
        .await
    }

    /// The application name and login hint of a pending request, for the sign-in page.
    pub async fn login_context(
        &self,
        tenant: &Tenant,
        interaction: &InteractionId,
    ) -> Option<LoginContext> {
        let (_, req, app) = self.pending(tenant, interaction).await.ok()?;
        Some(LoginContext {
            client_name: app.name,
            login_hint: req.login_hint,
            redirect_uri: req.redirect_uri,
        })
    }

    async fn decide(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        req: &AuthorizationRequest,
        (session, origin): (Option<&Session>, Origin),
        pending: Option<&Interaction>,
    ) -> AuthorizeOutcome {
        let now = self.clock.now();
        let since = pending.map(|p| p.created_at);
        // 1. Authentication.
        let authenticated = session.filter(|s| {
            let for_this_request = since.is_some_and(|t| s.auth_time >= t);
            self.is_live(tenant, Some(s))
                && (for_this_request
                    || req.max_age.is_none_or(|max| {
                        (now - s.auth_time).whole_seconds()
                            <= i64::try_from(max).unwrap_or(i64::MAX)
                    }))
                && (!req.prompt.login || for_this_request)
        });
        let Some(session) = authenticated else {
            if req.prompt.none {
                return self
                    .finish_with_error(tenant, issuer, req, pending, LOGIN_REQUIRED)
                    .await;
            }
            return self.ask(tenant, app, req, pending, Ask::Login).await;
        };
        // 1, continued: the organization, named by the request, or picked by the person when
        // the application requires one (the only one is taken without asking).
        let organization = match &req.organization {
            None if app.organization_usage == OrganizationUsage::Require => {
                match self.organizations_of(tenant, session).await {
                    Err(e) => return unavailable(e),
                    Ok(orgs) if orgs.is_empty() => {
                        return self
                            .finish_with_error(tenant, issuer, req, pending, IN_NO_ORGANIZATION)
                            .await;
                    }
                    Ok(orgs) if orgs.len() == 1 => orgs.into_iter().next().map(|o| o.id),
                    Ok(_) if req.prompt.none => {
                        return self
                            .finish_with_error(tenant, issuer, req, pending, PICK_ORGANIZATION)
                            .await;
                    }
                    Ok(_) => return self.ask(tenant, app, req, pending, Ask::Organization).await,
                }
            }
            None => None,
            Some(named) => match self.organization_of(tenant, session, named).await {
                Ok(Some(id)) => Some(id),
                Ok(None) => {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, NOT_A_MEMBER)
                        .await;
                }
                Err(e) => return unavailable(e),
            },
        };
        // 1, continued: the tenant's access policies governing this grant. An older sign-in
        // than one allows signs in again, as for `max_age`; a network or a sign-in method one
        // does not allow is refused before anything is asked of the person.
        let governing = match self
            .governing_policies(tenant, app, session, organization.as_ref())
            .await
        {
            Ok(governing) => governing,
            Err(e) => return unavailable(e),
        };
        let fresh = since.is_some_and(|t| session.auth_time >= t);
        if !fresh
            && let Some(max) = policies::max_session_age(&governing)
            && (now - session.auth_time).whole_seconds() > i64::try_from(max).unwrap_or(i64::MAX)
        {
            if req.prompt.none {
                return self
                    .finish_with_error(tenant, issuer, req, pending, LOGIN_REQUIRED)
                    .await;
            }
            return self.ask(tenant, app, req, pending, Ask::Login).await;
        }
        let facts = SignInFacts {
            acr: session.acr.as_deref(),
            amr: &session.amr,
            auth_time: session.auth_time,
            origin,
            now,
        };
        let refused = denial_among(
            &governing,
            &facts,
            &[PolicyRule::Network, PolicyRule::SignInMethod],
        );
        if let Some(denial) = refused {
            return self
                .refuse_by_policy(tenant, issuer, req, pending, session, &denial, origin)
                .await;
        }
        // 2. Assurance.
        let rules = self.settings.factor_rules(tenant);
        let mut required = rules.required;
        // An account recovered by its guardians owes a new second factor, whatever the policy.
        if !required && rules.enrol && self.settings.recovery {
            required = match self.recovery_factor_due(tenant, session).await {
                Ok(due) => due,
                Err(e) => return unavailable(e),
            };
        }
        let mut asked = assurance::Asked::of(req);
        // A floor from the tenant's or deployment's policy, a recovery, or the application's
        // registration: the person is asked to set a factor up rather than refused.
        let policy_floor = policies::acr_floor(&governing);
        let enrol_if_needed =
            rules.enrol && (required || app.minimum_acr.is_some() || policy_floor.is_some());
        if required {
            asked = asked.at_least(svc_domain::ACR_AAL2);
        }
        if let Some(minimum) = app.minimum_acr.as_deref() {
            asked = asked.at_least(minimum);
        }
        if let Some(floor) = policy_floor {
            asked = asked.at_least(floor);
        }
        if !asked.met_by(session.acr.as_deref()) {
            let reachable = rules.step_up && asked.met_by(Some(svc_domain::ACR_AAL2));
            let has_factor = if reachable {
                match self.has_second_factor(tenant, session).await {
                    Ok(has) => has,
                    Err(e) => return unavailable(e),
                }
            } else {
                false
            };
            // With a factor the person steps up; without one, a floor (the deployment's policy
            // or the application's minimum) has them set one up (the confirmation raises the
            // session).
            let page = match (has_factor, reachable && enrol_if_needed) {
                (true, _) => Some(Ask::StepUp),
                (false, true) => Some(Ask::Enrol),
                (false, false) => None,
            };
            if let Some(page) = page {
                if req.prompt.none {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, INTERACTION_REQUIRED)
                        .await;
                }
                if page == Ask::StepUp
                    && let Err(e) = self.record_step_up(tenant, session).await
                {
                    return unavailable(e);
                }
                return self.ask(tenant, app, req, pending, page).await;
            }
            // A policy's floor that cannot be reached is that policy's refusal, named.
            if let Some(denial) = denial_among(&governing, &facts, &[PolicyRule::Acr]) {
                return self
                    .refuse_by_policy(tenant, issuer, req, pending, session, &denial, origin)
                    .await;
            }
            if asked.essential {
                return self
                    .finish_with_error(tenant, issuer, req, pending, UNMET_ACR)
                    .await;
            }
        }
        // 3. Consent.
        // RFC 9396 §3: details (a payment, a document) are approved each time they are asked
        // for, by first- and third-party applications alike.
        let details_unapproved = req.authorization_details.is_some() && !req.details_approved;
        if !app.first_party || req.prompt.consent || details_unapproved {
            let consent = match self.consent(tenant, session, app).await {
                Ok(c) => c,
                Err(e) => return unavailable(e),
            };
            let requested = req.scopes();
            let satisfied = !details_unapproved
                && consent.is_some_and(|c| {
                    requested.is_subset(&c.scope)
                        && (!req.prompt.consent || since.is_some_and(|t| c.granted_at >= t))
                });
            if !satisfied {
                if req.prompt.none {
                    return self
                        .finish_with_error(tenant, issuer, req, pending, CONSENT_REQUIRED)
                        .await;
                }
                return self.ask(tenant, app, req, pending, Ask::Consent).await;
            }
        }
        // 4. The code, for the scopes the person may hold (management scopes and an API's
        // permissions need a role).
        let granted = self
            .granted_scope(tenant, issuer, app, req, session, organization.as_ref())
            .await;
        let (scope, resource) = match granted {
            Ok(Some(granted)) => granted,
            Ok(None) => {
                return self
                    .finish_with_error(tenant, issuer, req, pending, RESOURCE_GONE)
                    .await;
            }
            Err(e) => return unavailable(e),
        };
        let context = grant::CodeContext {
            organization,
            resource,
            scope,
        };
        if let Some(device) = &req.device {
            return self
                .approve_device(
                    (tenant, issuer),
                    app,
                    req,
                    device,
                    session,
                    pending,
                    context,
                )
                .await;
        }
        match self
            .issue_code((tenant, issuer), app, req, session, pending, context)
            .await
        {
            Ok(code) => AuthorizeOutcome::RedirectToClient(code_redirect(
                &req.redirect_uri,
                &code,
                req.state.as_deref(),
                issuer,
            )),
            Err(e) => unavailable(e),
        }
    }

    /// Whether the person of `session` has a way to reach `urn:svc:aal2`: a confirmed second
    /// factor to give, or a passkey to sign in with again.
    async fn has_second_factor(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<bool, StoreError> {
        let mut tx = self.store.read().await?;
        let factors = tx.second_factors(&tenant.id, &session.user_id).await?;
        let has = factors.iter().any(svc_domain::SecondFactor::is_confirmed)
            || !tx.passkeys(&tenant.id, &session.user_id).await?.is_empty();
        tx.finish().await?;
        Ok(has)
    }

    /// Whether the session's person was recovered by guardians and has no new factor yet.
    async fn recovery_factor_due(
        &self,
        tenant: &Tenant,
        session: &Session,
    ) -> Result<bool, StoreError> {
        let mut tx = self.store.read().await?;
        let due = tx.recovery_factor_due(&tenant.id, &session.user_id).await?;
        tx.finish().await?;
        Ok(due)
    }

    /// `auth.mfa.challenge` for a step-up this request needs.
    async fn record_step_up(&self, tenant: &Tenant, session: &Session) -> Result<(), StoreError> {
        let event = svc_domain::Event::new(
            self.clock.as_ref(),
            self.rng.as_ref(),
            &tenant.id,
            svc_domain::EventType::MfaChallenge,
            svc_domain::EventData::MfaChallenged {
                user_id: session.user_id.clone(),
                reason: "step_up".into(),
                client_ip: None,
            },
        );
        let mut tx = self.store.write().await?;
        tx.insert_event(&event).await?;
        tx.commit().await
    }

    fn is_live(&self, tenant: &Tenant, session: Option<&Session>) -> bool {
        session.is_some_and(|s| s.tenant_id == tenant.id && s.is_live(self.clock.now()))
    }

    /// Sends the person to sign in, step up or consent, storing the request once.
    async fn ask(
        &self,
        tenant: &Tenant,
        app: &Application,
        req: &AuthorizationRequest,
        pending: Option<&Interaction>,
        page: Ask,
    ) -> AuthorizeOutcome {
        let id = match pending {
            Some(p) => p.id.clone(),
            None => match self.store_interaction(tenant, app, req).await {
                Ok(id) => id,
                Err(e) => return unavailable(e),
            },
        };
        match page {
            Ask::Login => AuthorizeOutcome::Login { interaction: id },
            Ask::StepUp => AuthorizeOutcome::StepUp { interaction: id },
            Ask::Enrol => AuthorizeOutcome::Enrol { interaction: id },
            Ask::Consent => AuthorizeOutcome::Consent { interaction: id },
            Ask::Organization => AuthorizeOutcome::SelectOrganization { interaction: id },
        }
    }

    async fn finish_with_error(
        &self,
        tenant: &Tenant,
        issuer: &str,
        req: &AuthorizationRequest,
        pending: Option<&Interaction>,
        (error, description): (&'static str, &'static str),
    ) -> AuthorizeOutcome {
        if let Some(p) = pending
            && let Err(e) = self.forget(tenant, &p.id).await
        {
            return unavailable(e);
        }
        AuthorizeOutcome::RedirectToClient(error_redirect(
            &req.redirect_uri,
            &RedirectError::new(error, description),
            req.state.as_deref(),
            issuer,
        ))
    }
}

/// Time at whole microseconds, the finest every backend stores, so comparisons after a round
/// trip (`auth_time >= created_at`) hold.
pub(crate) fn truncate_micros(t: time::OffsetDateTime) -> time::OffsetDateTime {
    t.replace_nanosecond(t.nanosecond() / 1_000 * 1_000)
        .unwrap_or(t)
}

/// Why a request was refused before anything was decided, to be answered on the channel of the
/// endpoint that received it: an error page or a redirect at `/oauth/authorize`, JSON at
/// `/oauth/par` (RFC 9126 §2.3).
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The client or its redirect URI cannot be trusted (RFC 6749 §4.1.2.1).
    Page(PageError),
    /// Anything else, for the verified redirect URI.
    Redirect {
        /// The verified redirect URI.
        redirect_uri: String,
        /// The request's `state`, echoed.
        state: Option<String>,
        /// What was wrong.
        error: RedirectError,
    },
    /// The store failed.
    Unavailable(StoreError),
}

/// How `/oauth/authorize` answers a [`Refusal`].
fn refused(refusal: Refusal, issuer: &str) -> AuthorizeOutcome {
    match refusal {
        Refusal::Page(e) => page(e),
        Refusal::Redirect {
            redirect_uri,
            state,
            error,
        } => AuthorizeOutcome::RedirectToClient(error_redirect(
            &redirect_uri,
            &error,
            state.as_deref(),
            issuer,
        )),
        Refusal::Unavailable(e) => unavailable(e),
    }
}

fn page(e: PageError) -> AuthorizeOutcome {
    AuthorizeOutcome::ErrorPage {
        kind: ErrorPageKind::Refused,
        error: e.error.to_owned(),
        description: e.description,
    }
}

fn unavailable(e: StoreError) -> AuthorizeOutcome {
    tracing::warn!(error = %e, "authorization request failed on the store");
    AuthorizeOutcome::ErrorPage {
        kind: ErrorPageKind::Unavailable,
        error: "temporarily_unavailable".into(),
        description: "The service is temporarily unavailable. Try again in a moment.".into(),
    }
}

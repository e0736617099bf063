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
mod decide;
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

use redirect::error_redirect;

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

use crate::client_documents::DocumentError;
use crate::error::ErrorPageKind;
use request::{AuthorizationRequest, PageError, Params, RedirectError};
use std::sync::Arc;
use svc_domain::{Application, Clock, InteractionId, Origin, Rng, Session, Tenant};
use svc_store::{Store, StoreError};

/// Prefix of authorization codes, so a leaked string says what it is and a code is never taken
/// for another kind of token.
pub const CODE_PREFIX: &str = "ac_";

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

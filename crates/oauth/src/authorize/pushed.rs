//! Pushed authorization requests (RFC 9126): `POST /oauth/par` ([`PushEndpoint`]) and the
//! authorization endpoint's side of them ([`AuthorizeEndpoint::authorize_pushed`]).
//!
//! Rules enforced here, each a named check below:
//! - The pushing client authenticates exactly as at the token endpoint (RFC 9126 §2.1), and a
//!   `client_id` in the body must be the authenticated one ([`check_client_id`]).
//! - A `request_uri` cannot itself be pushed (RFC 9126 §2.1: `invalid_request`). A request
//!   object can (RFC 9126 §3): it is verified and unpacked by [`super::signed`] and its
//!   parameters stand for the whole request (`invalid_request_object` when it fails). Where
//!   the deployment requires signed requests, a push without one is `invalid_request`.
//! - The parameters are validated by the authorization endpoint's own checks
//!   ([`AuthorizeEndpoint::validate`], RFC 9126 §2.1), and refused as JSON, never by redirect
//!   (RFC 9126 §2.3): a request that could not be redirected is `invalid_request`, the others
//!   keep their RFC 6749 §4.1.2.1 code.
//! - What is stored is the authorization parameters only ([`kept`]): never the client's
//!   credentials (GHSA-69fp-7c8p-crjr kept PAR secrets in a cookie), and the `request_uri` only
//!   as the SHA-256 of its 256 random bits (CONTRACTS.md "Tokens"). It lives 60 s
//!   ([`PUSHED_REQUEST_LIFETIME`], RFC 9126 §2.2) and is taken once.
//! - At the authorization endpoint, a `request_uri` of ours carries the whole request: any other
//!   authorization parameter beside `client_id` is refused ([`check_only_reference`]) rather
//!   than merged, a strict reading of RFC 9126 §4 ("the authorization server MUST only use the
//!   parameters in the pushed authorization request"). It is taken atomically by its own client
//!   in its own tenant before it expires (RFC 9126 §4, §7.3: one-time use); anything else is an
//!   error page, since no redirect URI can be trusted yet. The pushed parameters then go through
//!   the same checks again (the application may have changed in the meantime) and on to the
//!   same decisions as a plain request; a pending sign-in keeps the validated request in its
//!   interaction, so taking the reference at the first hit does not stop the person coming back.
//! - A `request_uri` that is not ours (`urn:ietf:params:oauth:request_uri:` prefix) stays
//!   `request_uri_not_supported`, as does any while PAR is disabled.

use super::request::{self, AuthorizationRequest, PageError, Params, RedirectError};
use super::signed::{self, RequestObjects};
use super::{
    Arrival, AuthorizeEndpoint, AuthorizeOutcome, AuthorizeSettings, Refusal, page, refused,
};
use super::{truncate_micros, unavailable};
use crate::client_auth;
use crate::context::ProtocolContext;
use crate::error::{ErrorCode, OAuthError};
use crate::token::request::ClientRequest;
use serde::Serialize;
use std::time::Duration;
use svc_domain::{
    Application, GeneratedSecret, Origin, PushedRequest, SecretHash, Session, Tenant,
};

/// The prefix of every `request_uri` we issue (RFC 9126 §2.2: a URN of this namespace).
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";
/// The prefix of the random reference after [`REQUEST_URI_PREFIX`], so a reference is never
/// taken for another kind of secret (a code, a refresh token) and vice versa.
const REFERENCE_PREFIX: &str = "pr_";
/// How long a pushed request can be used (CONTRACTS.md defaults: 60 s; RFC 9126 §2.2 advises a
/// short lifetime).
pub const PUSHED_REQUEST_LIFETIME: Duration = Duration::from_secs(60);

/// `[oidc].pushed_authorization_requests`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PushedRequests {
    /// No `/oauth/par`; a `request_uri` is `request_uri_not_supported`.
    Disabled,
    /// `/oauth/par` is served; plain requests are accepted unless the application registered
    /// `require_pushed_authorization_requests`.
    #[default]
    Enabled,
    /// Every authorization request must be pushed first (RFC 9126 §5
    /// `require_pushed_authorization_requests: true`).
    Required,
}

impl PushedRequests {
    /// Whether `/oauth/par` is served and its `request_uri`s accepted.
    pub fn is_enabled(self) -> bool {
        self != Self::Disabled
    }

    /// Whether a plain (not pushed) request of `app` is refused: RFC 9126 §5 for the deployment,
    /// §6 for the application. An application that requires pushed requests on a deployment
    /// that disabled them cannot be authorized at all: failing closed keeps what it registered
    /// true.
    pub(crate) fn required_for(self, app: &Application) -> bool {
        self == Self::Required || app.require_pushed_authorization_requests
    }
}

/// The answer of `/oauth/par` (RFC 9126 §2.2), sent `201 Created`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushedAuthorizationResponse {
    /// `urn:ietf:params:oauth:request_uri:pr_…`, for the authorization request.
    pub request_uri: String,
    /// Its lifetime in seconds.
    pub expires_in: u64,
}

/// The refusal of a plain request where pushed ones are required (RFC 9126 §5, §6).
pub(crate) fn required() -> RedirectError {
    RedirectError::new(
        "invalid_request",
        "this application must push its authorization request to /oauth/par first and send \
         only client_id and request_uri here (RFC 9126)",
    )
}

/// The `request_uri` of `params` when it is one of ours and PAR is on: the request is then a
/// pushed one. Anything else (absent, repeated, foreign) goes the plain way, whose checks refuse
/// it as before.
pub(crate) fn request_uri<'a>(params: &Params<'a>, mode: PushedRequests) -> Option<&'a str> {
    let uri = params.single("request_uri").ok().flatten()?;
    (mode.is_enabled() && uri.starts_with(REQUEST_URI_PREFIX)).then_some(uri)
}

/// The authorization parameters of a pushed request, in order, repeats kept for the checks:
/// the known ones of [`request`] and `resource` (RFC 8707), never `client_id` (the authenticated
/// client is stored beside them) nor the client's credentials, which are not authorization
/// parameters.
fn kept(form: &[(String, String)]) -> Vec<(String, String)> {
    form.iter()
        .filter(|(name, _)| {
            name != "client_id" && (request::is_authorization_parameter(name) || name == "resource")
        })
        .cloned()
        .collect()
}

/// RFC 9126 §2.1: a `client_id` in the body names the authenticated client, once.
fn check_client_id(params: &Params<'_>, app: &Application) -> Result<(), OAuthError> {
    match params.single("client_id") {
        Err(()) => Err(OAuthError::invalid_request(
            "client_id was sent more than once",
        )),
        Ok(Some(id)) if id != app.wire_client_id() => Err(OAuthError::invalid_request(
            "client_id differs from the authenticated client (RFC 9126 §2.1)",
        )),
        Ok(_) => Ok(()),
    }
}

/// RFC 9126 §2.1: "The request_uri authorization request parameter ... MUST NOT be provided in
/// this case"; a request object only when the deployment takes them (RFC 9126 §3).
fn check_no_reference(params: &Params<'_>, objects: RequestObjects) -> Result<(), OAuthError> {
    if !params.all("request_uri").is_empty() {
        return Err(OAuthError::invalid_request(
            "request_uri cannot be pushed (RFC 9126 §2.1)",
        ));
    }
    if !objects.is_enabled() && !params.all("request").is_empty() {
        return Err(OAuthError::invalid_request(
            "request objects are not accepted on this deployment",
        ));
    }
    Ok(())
}

/// RFC 9126 §2.3: the authorization endpoint's refusal as the PAR endpoint's JSON error.
fn as_json(refusal: Refusal) -> OAuthError {
    match refusal {
        // RFC 9126 §2.3: no code of RFC 6749 §4.1.2.1 fits; `invalid_request` is the default.
        Refusal::Page(e) => OAuthError::invalid_request(e.description),
        Refusal::Redirect { error, .. } => {
            let code = match error.error {
                "invalid_scope" => ErrorCode::InvalidScope,
                "unauthorized_client" => ErrorCode::UnauthorizedClient,
                "unsupported_response_type" => ErrorCode::UnsupportedResponseType,
                "invalid_target" => ErrorCode::InvalidTarget,
                _ => ErrorCode::InvalidRequest,
            };
            OAuthError::new(code, error.description)
        }
        Refusal::Unavailable(e) => OAuthError::from(e),
    }
}

/// RFC 9126 §4: beside a pushed request's `request_uri`, only `client_id`. Unknown parameters
/// are ignored as on any authorization request (RFC 6749 §3.1).
fn check_only_reference(params: &Params<'_>) -> Result<(), PageError> {
    if params.single("request_uri").is_err() {
        return Err(PageError {
            error: "invalid_request",
            description: "request_uri was sent more than once".into(),
        });
    }
    let extra = request::KNOWN
        .into_iter()
        .chain(["resource"])
        .find(|name| !matches!(*name, "client_id" | "request_uri") && params.has(name));
    match extra {
        Some(name) => Err(PageError {
            error: "invalid_request",
            description: format!(
                "{name} cannot be sent with a request_uri: the pushed request carries every \
                 parameter (RFC 9126 §4)"
            ),
        }),
        None => Ok(()),
    }
}

/// The refusal of a `request_uri` that is unknown, used, expired, or another client's or
/// tenant's: one answer for all, so it tells nothing about other clients' requests.
fn unusable() -> PageError {
    PageError {
        error: "invalid_request_uri",
        description: "This request_uri is unknown, expired or already used. Return to the \
                      application and start again."
            .into(),
    }
}

impl AuthorizeEndpoint {
    /// The authorization request of `app` that `request_uri` refers to (RFC 9126 §4), taken
    /// once, checked again, and decided like a plain one.
    pub(super) async fn authorize_pushed(
        &self,
        tenant: &Tenant,
        issuer: &str,
        app: &Application,
        params: &Params<'_>,
        request_uri: &str,
        browser: (Option<&Session>, Origin),
    ) -> AuthorizeOutcome {
        if let Err(e) = check_only_reference(params) {
            return page(e);
        }
        let reference = request_uri.trim_start_matches(REQUEST_URI_PREFIX);
        let hash = SecretHash::of(reference);
        let now = self.clock.now();
        let take = async {
            let mut tx = self.store.write().await?;
            let taken = tx
                .take_pushed_request(&tenant.id, &app.id, &hash, now)
                .await?;
            tx.commit().await?;
            Ok::<_, svc_store::StoreError>(taken)
        };
        let pushed = match take.await {
            Ok(Some(pushed)) => pushed,
            Ok(None) => return page(unusable()),
            Err(e) => return unavailable(e),
        };
        let Ok(pairs) = serde_json::from_str::<Vec<(String, String)>>(&pushed.request) else {
            return page(unusable());
        };
        let stored = Params::new(&pairs);
        match self
            .validate(tenant, app, &stored, app.wire_client_id(), Arrival::Pushed)
            .await
        {
            Ok(req) => self.decide(tenant, issuer, app, &req, browser, None).await,
            Err(refusal) => refused(refusal, issuer),
        }
    }
}

/// `POST /oauth/par` (RFC 9126 §2).
pub struct PushEndpoint {
    ctx: ProtocolContext,
    authorize: AuthorizeEndpoint,
}

impl PushEndpoint {
    /// The PAR endpoint over `ctx`, validating with the authorization endpoint's `settings`.
    pub fn new(ctx: ProtocolContext, settings: AuthorizeSettings) -> Self {
        Self {
            authorize: AuthorizeEndpoint::new(ctx.clone(), settings),
            ctx,
        }
    }

    /// Authenticates the client, validates the pushed parameters, stores them and answers the
    /// `request_uri` (RFC 9126 §2.1–2.2).
    pub async fn push(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
    ) -> Result<PushedAuthorizationResponse, OAuthError> {
        self.push_with_proof(tenant, issuer, form, authorization, Ok(None))
            .await
    }

    /// [`Self::push`] with the request's `DPoP` header: a proof binds the code the request
    /// will yield to its key (RFC 9449 §10.1).
    pub async fn push_with_proof(
        &self,
        tenant: &Tenant,
        issuer: &str,
        form: &[(String, String)],
        authorization: Option<&str>,
        dpop: crate::dpop::ProofHeader<'_>,
    ) -> Result<PushedAuthorizationResponse, OAuthError> {
        let client_request = ClientRequest::parse(form, authorization)?;
        let checked = match self.ctx.dpop() {
            Some(checker) => {
                let url = format!("{issuer}/oauth/par");
                checker.check(tenant, dpop, "POST", &url, None)?
            }
            None => None,
        };
        let auth = self.ctx.client_auth(&tenant.id, issuer);
        let app = client_auth::authenticate(&auth, client_request.client())
            .await?
            .application;
        // The proof's `jti` is spent only by an authenticated client.
        let proof = match (self.ctx.dpop(), checked) {
            (Some(checker), Some(checked)) => Some(checker.record(tenant, checked).await?),
            _ => None,
        };
        let params = Params::new(form);
        check_client_id(&params, &app)?;
        let objects = self.authorize.settings.request_objects;
        check_no_reference(&params, objects)?;
        // RFC 9126 §3: a pushed request object stands for the whole request.
        let authorization_params = match signed::request_object(&params, objects) {
            Some(token) => kept(
                &self
                    .authorize
                    .unpack(issuer, &app, &params, token)
                    .await
                    .map_err(|description| {
                        OAuthError::new(ErrorCode::InvalidRequestObject, description)
                    })?,
            ),
            None if objects == RequestObjects::Required => {
                return Err(OAuthError::invalid_request(signed::required().description));
            }
            None => kept(form),
        };
        let authorization_params = bind_to_proof(authorization_params, proof.as_ref())?;
        let pushed_params = Params::new(&authorization_params);
        let _: AuthorizationRequest = self
            .authorize
            .validate(
                tenant,
                &app,
                &pushed_params,
                app.wire_client_id(),
                Arrival::Pushed,
            )
            .await
            .map_err(as_json)?;
        let secret = GeneratedSecret::generate(REFERENCE_PREFIX, self.ctx.rng.as_ref());
        let now = truncate_micros(self.ctx.clock.now());
        let pushed = PushedRequest {
            hash: secret.hash,
            tenant_id: tenant.id.clone(),
            client_id: app.id.clone(),
            request: serde_json::to_string(&authorization_params)
                .map_err(OAuthError::server_error)?,
            created_at: now,
            expires_at: now + PUSHED_REQUEST_LIFETIME,
        };
        let mut tx = self.ctx.store.write().await?;
        tx.insert_pushed_request(&pushed).await?;
        tx.commit().await?;
        tracing::info!(tenant = %tenant.id, client_id = %app.id, "authorization request pushed");
        Ok(PushedAuthorizationResponse {
            request_uri: format!("{REQUEST_URI_PREFIX}{}", secret.plaintext),
            expires_in: PUSHED_REQUEST_LIFETIME.as_secs(),
        })
    }
}

/// RFC 9449 §10.1: a proof at PAR binds the code to its key, as `dpop_jkt` would; when both
/// are sent they must name the same key.
fn bind_to_proof(
    mut params: Vec<(String, String)>,
    proof: Option<&crate::dpop::Proof>,
) -> Result<Vec<(String, String)>, OAuthError> {
    let Some(proof) = proof else {
        return Ok(params);
    };
    let named: Vec<&str> = params
        .iter()
        .filter(|(k, _)| k == "dpop_jkt")
        .map(|(_, v)| v.as_str())
        .collect();
    match named.as_slice() {
        [] => {
            params.push(("dpop_jkt".to_owned(), proof.jkt.clone()));
            Ok(params)
        }
        [one] if *one == proof.jkt => Ok(params),
        _ => Err(OAuthError::new(
            ErrorCode::InvalidDpopProof,
            "dpop_jkt names another key than the DPoP proof's",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn only_ours_and_only_when_enabled_are_pushed_references() {
        let ours = pairs(&[("request_uri", "urn:ietf:params:oauth:request_uri:pr_x")]);
        let foreign = pairs(&[("request_uri", "https://rp.example/request.jwt")]);
        let twice = pairs(&[
            ("request_uri", "urn:ietf:params:oauth:request_uri:pr_x"),
            ("request_uri", "urn:ietf:params:oauth:request_uri:pr_y"),
        ]);
        assert!(request_uri(&Params::new(&ours), PushedRequests::Enabled).is_some());
        assert!(request_uri(&Params::new(&ours), PushedRequests::Required).is_some());
        assert!(request_uri(&Params::new(&ours), PushedRequests::Disabled).is_none());
        assert!(request_uri(&Params::new(&foreign), PushedRequests::Enabled).is_none());
        assert!(request_uri(&Params::new(&twice), PushedRequests::Enabled).is_none());
    }

    #[test]
    fn credentials_and_client_id_are_never_stored() {
        let form = pairs(&[
            ("client_id", "app_x"),
            ("client_secret", "cs_secret"),
            ("client_assertion", "eyJ"),
            ("client_assertion_type", "urn:x"),
            ("scope", "openid"),
            ("resource", "https://api.example"),
            ("utm_source", "mail"),
            ("state", "s"),
        ]);
        let names: Vec<_> = kept(&form).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["scope", "resource", "state"]);
    }

    #[test]
    fn beside_a_request_uri_only_client_id_and_unknown_parameters_pass() {
        let base = [
            ("client_id", "app_x"),
            ("request_uri", "urn:ietf:params:oauth:request_uri:pr_x"),
            ("utm_source", "ignored"),
        ];
        assert!(check_only_reference(&Params::new(&pairs(&base))).is_ok());
        for extra in [
            "scope",
            "redirect_uri",
            "state",
            "resource",
            "response_type",
            "nonce",
        ] {
            let mut list = base.to_vec();
            list.push((extra, ""));
            let err = check_only_reference(&Params::new(&pairs(&list))).unwrap_err();
            assert_eq!(err.error, "invalid_request");
            assert!(err.description.starts_with(extra), "{extra}: {err:?}");
        }
    }

    #[test]
    fn refusals_keep_their_code_or_default_to_invalid_request() {
        let redirect = |code: &'static str| Refusal::Redirect {
            redirect_uri: "https://rp.example/cb".into(),
            state: None,
            error: RedirectError::new(code, "x"),
        };
        assert_eq!(
            as_json(redirect("invalid_scope")).code(),
            ErrorCode::InvalidScope
        );
        assert_eq!(
            as_json(redirect("unsupported_response_type")).code(),
            ErrorCode::UnsupportedResponseType
        );
        assert_eq!(
            as_json(redirect("request_not_supported")).code(),
            ErrorCode::InvalidRequest
        );
        let page = Refusal::Page(PageError {
            error: "invalid_request",
            description: "redirect_uri is not registered for this application".into(),
        });
        let json = as_json(page);
        assert_eq!(json.code(), ErrorCode::InvalidRequest);
        assert!(json.description().contains("redirect_uri"));
    }
}

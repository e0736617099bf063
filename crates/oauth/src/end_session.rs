//! RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
//!
//! Rules enforced here, in order:
//! 1. No parameter is repeated (an ambiguous request is refused on a page).
//! 2. `id_token_hint`, when sent, must be an ID token this issuer signed (§2: "the OP MUST
//!    validate that it was the issuer"); an expired one is still a valid hint (§4).
//! 3. `client_id`, when sent with a hint, must be the hint's audience (§2); the application must
//!    exist.
//! 4. `post_logout_redirect_uri` needs a known application and must equal one of its registered
//!    `post_logout_redirect_uris` exactly (§3); otherwise an error page, never a redirect.
//! 5. With a valid hint for the browser's current session (or no session at all), sign out at
//!    once; otherwise ask the person to confirm (§2: a logout request without a hint could be
//!    forged by any site).
//! 6. The redirect carries `state` when one was sent (§3).

use crate::context::ProtocolContext;
use crate::error::ErrorPageKind;
use std::collections::BTreeMap;
use svc_crypto::verify_jwt_signature;
use svc_domain::{Application, ClientId, Session, SessionClient, SigningAlg, Tenant};

/// What the logout page should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndSessionOutcome {
    /// Ask the person to confirm; re-post the same parameters with `confirmed`.
    Confirm {
        /// The application that asked, when known.
        client_name: Option<String>,
    },
    /// End the browser's session, then go to `redirect` (or show the signed-out page).
    SignOut {
        /// The registered post-logout URI with `state`.
        redirect: Option<String>,
    },
    /// Show an error page; never redirect.
    ErrorPage {
        /// Why; the HTTP layer picks the status from it.
        kind: ErrorPageKind,
        /// Error code.
        error: String,
        /// For the person.
        description: String,
    },
}

/// The end-session engine.
pub struct EndSession {
    ctx: ProtocolContext,
    frontchannel: bool,
}

struct Hint {
    client: Option<String>,
    sid: Option<String>,
}

impl EndSession {
    /// An end-session engine over `ctx` (it reads applications and the published keys).
    pub fn new(ctx: ProtocolContext) -> Self {
        Self {
            ctx,
            frontchannel: false,
        }
    }

    /// The same engine with front-channel logout on (`[logout].frontchannel`).
    #[must_use]
    pub fn with_frontchannel(mut self, on: bool) -> Self {
        self.frontchannel = on;
        self
    }

    /// The URIs the signed-out page loads in iframes for `session` (OpenID Connect Front-Channel
    /// Logout 1.0 §3): the `frontchannel_logout_uri` of each application the session signed
    /// into, with `iss` and `sid` added where the application registered
    /// `frontchannel_logout_session_required` (§2). Empty while the channel is off; a storage
    /// failure is logged and yields none, so it never stands in the way of signing out.
    pub async fn frontchannel_uris(&self, tenant: &Tenant, session: &Session) -> Vec<String> {
        if !self.frontchannel {
            return Vec::new();
        }
        let read = async {
            let mut tx = self.ctx.store.read().await?;
            let joined = tx.session_clients(&tenant.id, &session.id).await?;
            let mut uris = Vec::new();
            for client in joined {
                let Some(app) = tx.application(&tenant.id, &client.client_id).await? else {
                    continue;
                };
                if let Some(uri) = app.logout.frontchannel_uri.as_deref() {
                    let with_session = app.logout.frontchannel_session_required;
                    uris.extend(frontchannel_uri(uri, with_session, &client));
                }
            }
            tx.finish().await?;
            Ok::<_, svc_store::StoreError>(uris)
        };
        read.await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "front-channel logout lookup failed");
            Vec::new()
        })
    }

    /// Decides what a logout request leads to. `confirmed` is true when the person submitted
    /// the confirmation form.
    pub async fn request(
        &self,
        tenant: &Tenant,
        issuer: &str,
        params: &[(String, String)],
        session: Option<&Session>,
        confirmed: bool,
    ) -> EndSessionOutcome {
        // 1.
        let mut map: BTreeMap<&str, &str> = BTreeMap::new();
        for (name, value) in params {
            if value.is_empty() {
                continue;
            }
            if map.insert(name.as_str(), value.as_str()).is_some() {
                return page(
                    ErrorPageKind::Refused,
                    "invalid_request",
                    "a logout parameter was sent twice",
                );
            }
        }
        // 2.
        let hint = match map.get("id_token_hint") {
            None => None,
            Some(token) => match self.hint(tenant, issuer, token).await {
                Some(hint) => Some(hint),
                None => {
                    return page(
                        ErrorPageKind::Refused,
                        "invalid_request",
                        "id_token_hint is not an ID token of this issuer",
                    );
                }
            },
        };
        // 3.
        let hinted = hint.as_ref().and_then(|h| h.client.as_deref());
        let client = match (map.get("client_id").copied(), hinted) {
            (Some(given), Some(aud)) if given != aud => {
                return page(
                    ErrorPageKind::Refused,
                    "invalid_request",
                    "client_id is not the audience of id_token_hint",
                );
            }
            (Some(given), _) => Some(given),
            (None, aud) => aud,
        };
        let app = match client {
            None => None,
            Some(raw) => match self.application(tenant, raw).await {
                Ok(Some(app)) => Some(app),
                Ok(None) => {
                    return page(
                        ErrorPageKind::Refused,
                        "invalid_request",
                        "this application is not known here",
                    );
                }
                Err(()) => {
                    return page(
                        ErrorPageKind::Unavailable,
                        "temporarily_unavailable",
                        "The service is temporarily unavailable. Try again in a moment.",
                    );
                }
            },
        };
        // 4.
        let redirect = match map.get("post_logout_redirect_uri") {
            None => None,
            Some(uri) => {
                let registered = app
                    .as_ref()
                    .is_some_and(|a| a.post_logout_redirect_uris.iter().any(|r| r.matches(uri)));
                if !registered {
                    return page(
                        ErrorPageKind::Refused,
                        "invalid_request",
                        "post_logout_redirect_uri is not registered for this application",
                    );
                }
                // 6.
                Some(with_state(uri, map.get("state").copied()))
            }
        };
        // 5.
        let hint_matches_session = hint.as_ref().is_some_and(|h| match session {
            None => true,
            Some(s) => h.sid.as_deref() == Some(s.id.as_str()),
        });
        if hint_matches_session || confirmed {
            EndSessionOutcome::SignOut { redirect }
        } else {
            EndSessionOutcome::Confirm {
                client_name: app.map(|a| a.name),
            }
        }
    }

    async fn hint(&self, tenant: &Tenant, issuer: &str, token: &str) -> Option<Hint> {
        if token.len() > 16_384 {
            return None;
        }
        let published = self.ctx.keys.published_jwks(tenant).await.ok()?;
        let verified = SigningAlg::ALL
            .into_iter()
            .find_map(|alg| verify_jwt_signature(&published.keys, token, alg).ok())?;
        // Access tokens (`at+jwt`) are not ID tokens.
        if verified
            .typ
            .as_deref()
            .is_some_and(|t| !t.eq_ignore_ascii_case("JWT"))
        {
            return None;
        }
        let claims = verified.claims;
        if claims["iss"].as_str() != Some(issuer) {
            return None;
        }
        Some(Hint {
            client: claims["aud"].as_str().map(str::to_owned),
            sid: claims["sid"].as_str().map(str::to_owned),
        })
    }

    /// The application `raw` names: a registered application's id, or the URL of one read from
    /// a client ID metadata document, as stored (logging out never fetches a document).
    async fn application(&self, tenant: &Tenant, raw: &str) -> Result<Option<Application>, ()> {
        let url = svc_domain::ClientIdUrl::is_url_shaped(raw);
        let id = ClientId::parse(raw).ok();
        if id.is_none() && !url {
            return Ok(None);
        }
        let read = async {
            let mut tx = self.ctx.store.read().await?;
            let app = match &id {
                Some(id) => tx.application(&tenant.id, id).await?,
                None => tx.application_by_metadata_url(&tenant.id, raw).await?,
            };
            tx.finish().await?;
            Ok::<_, svc_store::StoreError>(app)
        };
        read.await.map_err(|e| {
            tracing::warn!(error = %e, "end-session lookup failed");
        })
    }
}

fn page(kind: ErrorPageKind, error: &str, description: &str) -> EndSessionOutcome {
    EndSessionOutcome::ErrorPage {
        kind,
        error: error.to_owned(),
        description: description.to_owned(),
    }
}

/// One iframe's URL (Front-Channel Logout 1.0 §2): the registered URI, with the issuer and
/// session the application saw added as `iss` and `sid` when it asked for them; `None` for a
/// URI that no longer parses.
fn frontchannel_uri(uri: &str, with_session: bool, client: &SessionClient) -> Option<String> {
    let mut url = url::Url::parse(uri).ok()?;
    if with_session {
        url.query_pairs_mut()
            .append_pair("iss", &client.issuer)
            .append_pair("sid", client.session_id.as_str());
    }
    Some(url.to_string())
}

/// The post-logout redirect: the registered URI with `state`, always serialised by
/// `url::Url`, so a URI registered with non-ASCII characters comes out percent-encoded and is
/// a valid `Location` whether or not a `state` was sent.
fn with_state(uri: &str, state: Option<&str>) -> String {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            if let Some(state) = state {
                url.query_pairs_mut().append_pair("state", state);
            }
            url.to_string()
        }
        // Registered URIs always parse (RedirectUri::parse); keep it rather than panic.
        Err(_) => uri.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontchannel_uris_carry_iss_and_sid_only_when_asked() {
        let at = time::OffsetDateTime::UNIX_EPOCH;
        let client = SessionClient {
            tenant_id: svc_domain::TenantId::parse("ten_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap(),
            session_id: svc_domain::SessionId::parse("ses_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap(),
            client_id: ClientId::parse("app_01hzzzzzzzzzzzzzzzzzzzzzzz").unwrap(),
            subject: "sub".into(),
            issuer: "https://acme.example".into(),
            joined_at: at,
        };
        assert_eq!(
            frontchannel_uri("https://rp.example/fc?x=1", true, &client).as_deref(),
            Some(
                "https://rp.example/fc?x=1&iss=https%3A%2F%2Facme.example\
                 &sid=ses_01hzzzzzzzzzzzzzzzzzzzzzzz"
            )
        );
        assert_eq!(
            frontchannel_uri("https://rp.example/fc", false, &client).as_deref(),
            Some("https://rp.example/fc")
        );
        assert_eq!(frontchannel_uri("not a url", true, &client), None);
    }

    #[test]
    fn post_logout_redirects_are_percent_encoded_with_or_without_state() {
        let registered = "https://app.example/au-revoir-\u{e9}?lang=fran\u{e7}ais";
        let bare = with_state(registered, None);
        assert_eq!(
            bare,
            "https://app.example/au-revoir-%C3%A9?lang=fran%C3%A7ais"
        );
        assert!(bare.is_ascii());
        assert_eq!(
            with_state(registered, Some("s &1")),
            "https://app.example/au-revoir-%C3%A9?lang=fran%C3%A7ais&state=s+%261"
        );
        assert_eq!(
            with_state("https://app.example/bye", None),
            "https://app.example/bye"
        );
    }
}

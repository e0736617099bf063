//! [`Ctx`]: everything a hosted handler knows about the request before reading its body (tenant,
//! page chrome, cookie policy, client), extracted once per request.
//!
//! Its own module, depending on nothing of the error seam, so the error pages can take it (for
//! the chrome) without the hosted routes and the seam importing each other.

use super::cookies::CookiePolicy;
use super::strings::Strings;
use super::view::Chrome;
use crate::ClientContext;
use crate::Problem;
use crate::tenancy::{CurrentTenant, TenantResolver};
use axum::extract::{FromRef, FromRequestParts};
use http::HeaderMap;
use http::header::{ACCEPT_LANGUAGE, USER_AGENT};
use http::request::Parts;
use svc_authn::ClientInfo;

/// Everything a hosted handler knows about the request before reading its body.
pub(crate) struct Ctx {
    /// The tenant and its issuer.
    pub(crate) current: CurrentTenant,
    /// Page chrome (language, tenant name).
    pub(crate) chrome: Chrome,
    /// Cookie names and attributes for this issuer.
    pub(crate) cookies: CookiePolicy,
    /// Address and browser, for the engine's limits and the sessions list.
    pub(crate) client: ClientInfo,
    /// The request headers (cookies).
    pub(crate) headers: HeaderMap,
}

impl<S> FromRequestParts<S> for Ctx
where
    S: Send + Sync,
    TenantResolver: FromRef<S>,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let current = CurrentTenant::from_request_parts(parts, state).await?;
        let client = ClientContext::from_request_parts(parts, state)
            .await
            .unwrap_or_else(|never| match never {});
        let headers = parts.headers.clone();
        let language = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
        let chrome = Chrome::new(
            Strings::for_accept_language(language),
            current.tenant.display_name.clone(),
        );
        let cookies = CookiePolicy::for_issuer(&current.issuer);
        let user_agent = headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok(Self {
            current,
            chrome,
            cookies,
            client: ClientInfo {
                ip: client.ip,
                user_agent,
                device: cookies.device(&headers),
            },
            headers,
        })
    }
}

impl Ctx {
    /// The catalogue of this request's language.
    pub(crate) fn s(&self) -> &'static Strings {
        self.chrome.s
    }
}

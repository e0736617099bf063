//! The browser's session as the hosted handlers see it: the live session and its person behind
//! the session cookie, with a storage failure already rendered as the error seam's page.
//!
//! Kept apart from `Ctx` itself so the request context does not depend on the error pages
//! (which depend on it for the page chrome).

use super::Ctx;
use crate::error::page as error;
use axum::response::Response;
use svc_authn::Authn;
use svc_domain::{Session, User};

impl Ctx {
    /// The browser's live session and its person, if any. A storage failure is an error page.
    pub(crate) async fn signed_in(
        &self,
        authn: &Authn,
    ) -> Result<Option<(Session, User)>, Response> {
        let Some(cookie) = self.cookies.session(&self.headers) else {
            return Ok(None);
        };
        authn
            .session(&self.current.tenant, &cookie)
            .await
            .map_err(|e| error::fatal(self, e))
    }
}

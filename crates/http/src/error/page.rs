//! The hosted HTML error pages: what a browser sees when a sign-in form is refused or a page
//! cannot be shown (which status, which catalogue message, on which field, and whether the form
//! can be shown again or a page replaces it), and the authorization error page that never
//! redirects.
//!
//! Bad input is never a 500: only storage failures (503) and internal faults (500) are server
//! errors, and their causes go to the logs, never to the page. The `AuthnError` table behind
//! [`refusal`] sits beside its API twin in `super::authn`.

pub(crate) use super::authn::{fatal, refusal};

use crate::hosted::ctx::Ctx;
use crate::hosted::form::FormError;
use crate::hosted::view::Page;
use axum::response::Response;
use http::header::RETRY_AFTER;
use http::{HeaderValue, StatusCode};
use std::time::Duration;
use svc_oauth::error::ErrorPageKind;

/// How a form shows a refused submission.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// Status of the re-rendered form.
    pub(crate) status: StatusCode,
    /// The message.
    pub(crate) message: &'static str,
    /// The field it concerns (`email`, `password`); `None` puts it in the form-level alert.
    pub(crate) field: Option<&'static str>,
    /// `Retry-After` for 429.
    pub(crate) retry_after: Option<Duration>,
}

impl Refusal {
    /// Whether `field` gets the message under it.
    pub(crate) fn on(&self, field: &str) -> Option<&'static str> {
        (self.field == Some(field)).then_some(self.message)
    }

    /// The form-level alert, when the message belongs to no single field.
    pub(crate) fn alert(&self) -> Option<&'static str> {
        self.field.is_none().then_some(self.message)
    }

    /// Adds the status and `Retry-After` to the re-rendered form.
    pub(crate) fn finish(&self, mut response: Response) -> Response {
        *response.status_mut() = self.status;
        if let Some(wait) = self.retry_after {
            response.headers_mut().insert(
                RETRY_AFTER,
                HeaderValue::from(super::retry_after_secs(wait)),
            );
        }
        response
    }
}

/// A page with a title and one paragraph.
pub(crate) fn message(
    ctx: &Ctx,
    status: StatusCode,
    title: &'static str,
    text: &'static str,
) -> Response {
    Page::new(title)
        .status(status)
        .text(text)
        .render(&ctx.chrome)
}

/// 403 for a form without a matching CSRF cookie and field; nothing was changed.
pub(crate) fn csrf(ctx: &Ctx) -> Response {
    let s = ctx.s();
    message(
        ctx,
        StatusCode::FORBIDDEN,
        s.form_expired_title,
        s.form_expired,
    )
}

/// 413 or 400 for a form that could not be read.
pub(crate) fn form(ctx: &Ctx, error: FormError) -> Response {
    let s = ctx.s();
    match error {
        FormError::TooLarge => message(
            ctx,
            StatusCode::PAYLOAD_TOO_LARGE,
            s.bad_request_title,
            s.form_too_large,
        ),
        FormError::Malformed => message(
            ctx,
            StatusCode::BAD_REQUEST,
            s.bad_request_title,
            s.bad_form,
        ),
    }
}

/// 404 page.
pub(crate) fn not_found(ctx: &Ctx) -> Response {
    let s = ctx.s();
    message(ctx, StatusCode::NOT_FOUND, s.not_found_title, s.not_found)
}

/// 404 when the tenant does not offer sign-up (the page does not exist for it).
pub(crate) fn sign_up_closed(ctx: &Ctx) -> Response {
    let s = ctx.s();
    message(
        ctx,
        StatusCode::NOT_FOUND,
        s.sign_up_title,
        s.sign_up_closed,
    )
}

/// 400 for an unknown, used or expired link.
pub(crate) fn invalid_link(ctx: &Ctx) -> Response {
    let s = ctx.s();
    message(
        ctx,
        StatusCode::BAD_REQUEST,
        s.invalid_link_title,
        s.invalid_link,
    )
}

/// 400 for a second step that expired or was used: the person signs in again (from the
/// pending request, when there is one).
pub(crate) fn challenge_expired(ctx: &Ctx, interaction: Option<&str>) -> Response {
    let s = ctx.s();
    Page::new(s.second_factor_title)
        .status(StatusCode::BAD_REQUEST)
        .text(s.challenge_expired)
        .link(
            None,
            s.sign_in_link,
            crate::hosted::path_with("/auth/sign-in", &[("interaction", interaction)]),
        )
        .render(&ctx.chrome)
}

/// 400 for an interaction id that is malformed, unknown or expired.
pub(crate) fn interaction_expired(ctx: &Ctx) -> Response {
    let s = ctx.s();
    message(
        ctx,
        StatusCode::BAD_REQUEST,
        s.authorize_error_title,
        s.interaction_expired,
    )
}

/// The authorization error page (unknown client, unregistered redirect URI, …): never a
/// redirect. The person reads the catalogue's text for the error code, in their language; the
/// code is shown (escaped) for the application's developer. The engine's English description is
/// for developers too, so it goes to the log with the request id, not onto the page.
pub(crate) fn authorize_page(
    ctx: &Ctx,
    kind: ErrorPageKind,
    error: String,
    description: String,
) -> Response {
    let s = ctx.s();
    let status = page_status(kind);
    tracing::info!(error = %error, description = %description, status = status.as_u16(),
        "authorization error page shown");
    Page::new(s.authorize_error_title)
        .status(status)
        .alert(s.authorize_error(&error))
        .detail(s.error_code_label, error)
        .render(&ctx.chrome)
}

/// The status of an error page: 400 for a request that cannot be honoured as sent, 503 while a
/// dependency is down. Never a 3xx: an error page must not send the browser anywhere.
fn page_status(kind: ErrorPageKind) -> StatusCode {
    match kind {
        ErrorPageKind::Refused => StatusCode::BAD_REQUEST,
        ErrorPageKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::cookies::CookiePolicy;
    use crate::hosted::strings::EN;
    use crate::hosted::view::Chrome;
    use crate::tenancy::CurrentTenant;
    use http::HeaderMap;
    use http_body_util::BodyExt;
    use svc_authn::AuthnError;
    use svc_domain::{
        Clock, ManualClock, PairwiseSecret, SeededRandom, Tenant, TenantId, TenantSlug,
        TenantStatus,
    };
    use time::OffsetDateTime;

    fn ctx() -> Ctx {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let tenant = Tenant {
            id: TenantId::generate(&clock, &SeededRandom::new(1)),
            slug: TenantSlug::parse("acme").unwrap(),
            display_name: "Acme".into(),
            status: TenantStatus::Active,
            signup_enabled: false,
            mfa_policy: svc_domain::MfaPolicy::Default,
            pairwise_secret: PairwiseSecret::from_bytes(&[7; 32]).unwrap(),
            created_at: clock.now(),
            updated_at: clock.now(),
        };
        Ctx {
            current: CurrentTenant {
                tenant,
                issuer: "http://acme.localhost".into(),
            },
            chrome: Chrome::new(&EN, "Acme"),
            cookies: CookiePolicy::for_issuer("http://acme.localhost"),
            client: svc_authn::ClientInfo::default(),
            headers: HeaderMap::new(),
        }
    }

    async fn text(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn failed_sign_ins_and_limits_stay_on_the_form() {
        let ctx = ctx();
        let refused = refusal(&ctx, AuthnError::InvalidCredentials).unwrap();
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
        assert_eq!(refused.alert(), Some(EN.bad_credentials));
        for error in [
            AuthnError::Locked {
                retry_after: Duration::from_millis(1500),
            },
            AuthnError::RateLimited {
                retry_after: Duration::ZERO,
            },
        ] {
            let refused = refusal(&ctx, error).unwrap();
            assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
            let response = refused.finish(axum::response::IntoResponse::into_response(()));
            let retry = response.headers()[RETRY_AFTER].to_str().unwrap().to_owned();
            assert!(retry == "2" || retry == "1", "{retry}");
        }
    }

    #[test]
    fn password_and_address_problems_name_their_field() {
        let ctx = ctx();
        let weak = refusal(&ctx, AuthnError::WeakPassword("too short".into())).unwrap();
        assert_eq!(weak.on("password"), Some(EN.weak_password));
        assert_eq!(weak.alert(), None);
        let invalid = refusal(&ctx, AuthnError::InvalidEmail).unwrap();
        assert_eq!(
            (invalid.status, invalid.on("email")),
            (StatusCode::BAD_REQUEST, Some(EN.invalid_email))
        );
    }

    #[test]
    fn recovery_refusals_stay_on_their_page_or_replace_it() {
        let ctx = ctx();
        let refused = refusal(&ctx, AuthnError::GuardianRefused("not your own address")).unwrap();
        assert_eq!(
            (refused.status, refused.on("email")),
            (StatusCode::BAD_REQUEST, Some("not your own address"))
        );
        for (error, status, message) in [
            (
                AuthnError::UnknownGuardian,
                StatusCode::NOT_FOUND,
                EN.recovery.guardian_unknown,
            ),
            (
                AuthnError::OwnRecovery,
                StatusCode::FORBIDDEN,
                EN.recovery.own_recovery,
            ),
            (
                AuthnError::RecoveryNotReady,
                StatusCode::CONFLICT,
                EN.recovery.not_ready,
            ),
        ] {
            let refused = refusal(&ctx, error).unwrap();
            assert_eq!((refused.status, refused.alert()), (status, Some(message)));
        }
        let off = refusal(&ctx, AuthnError::RecoveryOff).unwrap_err();
        assert_eq!(off.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn bad_input_is_never_a_server_error_and_causes_are_never_shown() {
        let ctx = ctx();
        for (error, status) in [
            (AuthnError::SignupClosed, StatusCode::NOT_FOUND),
            (AuthnError::InvalidLink, StatusCode::BAD_REQUEST),
            (AuthnError::UnknownUser, StatusCode::BAD_REQUEST),
        ] {
            assert_eq!(refusal(&ctx, error).unwrap_err().status(), status);
        }
        let store = AuthnError::Store(svc_store::StoreError::Corrupt("row 42 secret".into()));
        let page = fatal(&ctx, store);
        assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(!text(page).await.contains("row 42"));
        let internal = fatal(&ctx, AuthnError::Internal("argon2 exploded".into()));
        assert_eq!(internal.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!text(internal).await.contains("argon2"));
    }

    #[tokio::test]
    async fn the_authorize_error_page_shows_the_catalogue_text_and_the_escaped_code() {
        let page = authorize_page(
            &ctx(),
            ErrorPageKind::Refused,
            "invalid_client".into(),
            "this application is not known here".into(),
        );
        assert_eq!(page.status(), StatusCode::BAD_REQUEST);
        let html = text(page).await;
        assert!(html.contains("invalid_client"), "{html}");
        assert!(html.contains(EN.authorize_unknown_client), "{html}");
        assert!(
            !html.contains("not known here"),
            "the engine's English description is not the page's text"
        );
        let hostile = text(authorize_page(
            &ctx(),
            ErrorPageKind::Refused,
            "<b>x</b>".into(),
            "d".into(),
        ))
        .await;
        assert!(hostile.contains("&#60;b&#62;x") && hostile.contains(EN.authorize_other));
        let down = authorize_page(
            &ctx(),
            ErrorPageKind::Unavailable,
            "temporarily_unavailable".into(),
            "y".into(),
        );
        assert_eq!(down.status(), StatusCode::SERVICE_UNAVAILABLE);
        for kind in [ErrorPageKind::Refused, ErrorPageKind::Unavailable] {
            let status = authorize_page(&ctx(), kind, "x".into(), "y".into()).status();
            assert!(
                status.is_client_error() || status.is_server_error(),
                "an error page is never a 3xx: {status}"
            );
        }
    }
}

//! The sign-in engine's errors ([`AuthnError`]) on both surfaces that show them, side by side so
//! a new variant is decided for both in one place:
//!
//! - the JSON APIs (tenant users, invitations): a [`Problem`];
//! - the hosted forms and pages: a [`Refusal`] the form shows again, or a page that replaces it.
//!
//! They differ on purpose where a browser needs a page rather than a code: a closed sign-up is
//! 403 `forbidden` to an API caller but a 404 page to a person (the page does not exist for that
//! tenant); an unknown user is 404 to an administrator but, behind a link, the same "invalid
//! link" page as a used token (a link must not reveal who exists); and any storage failure is a
//! 503 page (try again), where the API keeps 500 for corruption. The texts never carry a secret,
//! and credential refusals stay one answer.

use super::Problem;
use super::page::{Refusal, invalid_link, message, sign_up_closed};
use crate::hosted::Ctx;
use axum::response::Response;
use http::StatusCode;
use svc_authn::AuthnError;

/// On the JSON APIs: password and address refusals are 400 with the rule.
impl From<AuthnError> for Problem {
    fn from(error: AuthnError) -> Self {
        use AuthnError as A;
        match error {
            A::Locked { retry_after } | A::RateLimited { retry_after } => {
                Self::rate_limited(retry_after)
            }
            A::InvalidCredentials | A::InvalidCode | A::SecondFactorRequired => {
                Self::unauthorized(error.to_string())
            }
            A::StepUpRequired => Self::forbidden(error.to_string()),
            A::PasskeyRefused => Self::unauthorized(error.to_string()),
            A::PasskeyAlreadyRegistered => Self::conflict(error.to_string()),
            A::PasskeysOff | A::UnknownPasskey => Self::not_found(error.to_string()),
            A::CeremonyExpired | A::InvalidPasskeyName => Self::bad_request(error.to_string()),
            A::AlreadyEnrolled => Self::conflict(error.to_string()),
            A::TwoFactorOff | A::UnknownFactor => Self::not_found(error.to_string()),
            A::ChallengeExpired | A::NoSecondFactor => Self::bad_request(error.to_string()),
            A::SignupClosed => Self::forbidden(error.to_string()),
            A::WeakPassword(message) => Self::bad_request(format!("password: {message}")),
            A::BreachedPassword
            | A::InvalidEmail
            | A::InvalidLink
            | A::CaptchaRequired
            | A::CaptchaFailed => Self::bad_request(error.to_string()),
            A::UnknownUser => Self::not_found(error.to_string()),
            A::RecoveryOff | A::UnknownGuardian => Self::not_found(error.to_string()),
            A::GuardianRefused(_) => Self::bad_request(error.to_string()),
            A::OwnRecovery => Self::forbidden(error.to_string()),
            A::RecoveryNotReady => Self::conflict(error.to_string()),
            A::SsoOff | A::NoSsoConnection => Self::not_found(error.to_string()),
            A::SsoRequired => Self::forbidden(error.to_string()),
            A::SsoExpired => Self::bad_request(error.to_string()),
            // The reason stays in the logs.
            A::SsoRefused(_) => Self::unauthorized("the identity provider's answer was refused"),
            other @ A::SsoUnreachable(_) => Self::service_unavailable().with_source(other),
            A::SocialOff | A::NoSocialProvider | A::UnknownSocialLink => {
                Self::not_found(error.to_string())
            }
            A::SocialExpired => Self::bad_request(error.to_string()),
            A::SocialRefused(_) => Self::unauthorized("the sign-in provider's answer was refused"),
            other @ A::SocialUnreachable(_) => Self::service_unavailable().with_source(other),
            A::SocialAccountExists | A::SocialAlreadyLinked | A::SocialLastMethod => {
                Self::conflict(error.to_string())
            }
            A::SocialWrongAccount => Self::forbidden(error.to_string()),
            other @ (A::BreachCheckUnavailable
            | A::CaptchaUnavailable(_)
            | A::Store(svc_store::StoreError::Unavailable(_))) => {
                Self::service_unavailable().with_source(other)
            }
            other @ (A::Store(_) | A::Internal(_)) => Self::server_error().with_source(other),
        }
    }
}

/// On the hosted forms: `Ok` is a refusal the form can show, `Err` a page that replaces the form
/// (an unusable link, closed sign-up, a server fault).
pub(crate) fn refusal(ctx: &Ctx, error: AuthnError) -> Result<Refusal, Response> {
    let s = ctx.s();
    let (status, message, field, retry_after) = match error {
        AuthnError::InvalidCredentials | AuthnError::SecondFactorRequired => {
            (StatusCode::UNAUTHORIZED, s.bad_credentials, None, None)
        }
        // A wrong, replayed or used code: one message, under the code field.
        AuthnError::InvalidCode => (StatusCode::UNAUTHORIZED, s.bad_code, Some("code"), None),
        AuthnError::StepUpRequired => (StatusCode::FORBIDDEN, s.step_up_required, None, None),
        AuthnError::PasskeyRefused => (StatusCode::UNAUTHORIZED, s.passkey_refused, None, None),
        AuthnError::CeremonyExpired => (StatusCode::BAD_REQUEST, s.passkey_expired, None, None),
        AuthnError::PasskeyAlreadyRegistered => {
            (StatusCode::CONFLICT, s.passkey_exists, None, None)
        }
        AuthnError::UnknownPasskey => (StatusCode::NOT_FOUND, s.passkey_unknown, None, None),
        AuthnError::InvalidPasskeyName => (
            StatusCode::BAD_REQUEST,
            s.passkey_name_invalid,
            Some("name"),
            None,
        ),
        AuthnError::PasskeysOff => return Err(super::page::not_found(ctx)),
        AuthnError::AlreadyEnrolled => (StatusCode::CONFLICT, s.already_enrolled, None, None),
        AuthnError::UnknownFactor => (StatusCode::NOT_FOUND, s.setup_expired, None, None),
        AuthnError::NoSecondFactor => (StatusCode::BAD_REQUEST, s.two_factor_is_off, None, None),
        AuthnError::ChallengeExpired => return Err(super::page::challenge_expired(ctx, None)),
        AuthnError::TwoFactorOff => return Err(super::page::not_found(ctx)),
        AuthnError::Locked { retry_after } | AuthnError::RateLimited { retry_after } => (
            StatusCode::TOO_MANY_REQUESTS,
            s.too_many_attempts,
            None,
            Some(retry_after),
        ),
        AuthnError::InvalidEmail => (
            StatusCode::BAD_REQUEST,
            s.invalid_email,
            Some("email"),
            None,
        ),
        AuthnError::WeakPassword(_) => (
            StatusCode::BAD_REQUEST,
            s.weak_password,
            Some("password"),
            None,
        ),
        AuthnError::BreachedPassword => (
            StatusCode::BAD_REQUEST,
            s.breached_password,
            Some("password"),
            None,
        ),
        AuthnError::BreachCheckUnavailable => {
            (StatusCode::SERVICE_UNAVAILABLE, s.server_error, None, None)
        }
        // The CAPTCHA's own message under the widget (`captcha`), the form shown again.
        AuthnError::CaptchaRequired => (
            StatusCode::BAD_REQUEST,
            s.captcha_required,
            Some("captcha"),
            None,
        ),
        AuthnError::CaptchaFailed => (
            StatusCode::BAD_REQUEST,
            s.captcha_failed,
            Some("captcha"),
            None,
        ),
        // The verifier logged why; the page only says to try again.
        AuthnError::CaptchaUnavailable(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            s.captcha_unavailable,
            Some("captcha"),
            None,
        ),
        AuthnError::RecoveryOff => return Err(super::page::not_found(ctx)),
        // The engine's reason (own address, named already, too many) under the address field.
        AuthnError::GuardianRefused(reason) => {
            (StatusCode::BAD_REQUEST, reason, Some("email"), None)
        }
        AuthnError::UnknownGuardian => (
            StatusCode::NOT_FOUND,
            s.recovery.guardian_unknown,
            None,
            None,
        ),
        AuthnError::OwnRecovery => (StatusCode::FORBIDDEN, s.recovery.own_recovery, None, None),
        AuthnError::RecoveryNotReady => (StatusCode::CONFLICT, s.recovery.not_ready, None, None),
        AuthnError::SsoOff => return Err(super::page::not_found(ctx)),
        AuthnError::NoSsoConnection => (
            StatusCode::BAD_REQUEST,
            s.sso.no_connection,
            Some("email"),
            None,
        ),
        AuthnError::SsoRequired => (StatusCode::FORBIDDEN, s.sso.required, None, None),
        AuthnError::SsoExpired => (StatusCode::BAD_REQUEST, s.sso.expired, None, None),
        // The reason was logged and recorded by the engine; the page says only what to do.
        AuthnError::SsoRefused(_) => (StatusCode::UNAUTHORIZED, s.sso.refused, None, None),
        AuthnError::SsoUnreachable(_) => (StatusCode::BAD_GATEWAY, s.sso.unreachable, None, None),
        AuthnError::SocialOff | AuthnError::UnknownSocialLink => {
            return Err(super::page::not_found(ctx));
        }
        AuthnError::NoSocialProvider => {
            (StatusCode::NOT_FOUND, s.social.unknown_provider, None, None)
        }
        AuthnError::SocialExpired => (StatusCode::BAD_REQUEST, s.social.expired, None, None),
        // The reason was logged and recorded by the engine; the page says only what to do.
        AuthnError::SocialRefused(_) => (StatusCode::UNAUTHORIZED, s.social.refused, None, None),
        AuthnError::SocialUnreachable(_) => {
            (StatusCode::BAD_GATEWAY, s.social.unreachable, None, None)
        }
        AuthnError::SocialAccountExists => {
            (StatusCode::CONFLICT, s.social.account_exists, None, None)
        }
        AuthnError::SocialAlreadyLinked => {
            (StatusCode::CONFLICT, s.social.already_linked, None, None)
        }
        AuthnError::SocialWrongAccount => {
            (StatusCode::FORBIDDEN, s.social.wrong_account, None, None)
        }
        AuthnError::SocialLastMethod => (StatusCode::CONFLICT, s.social.last_method, None, None),
        AuthnError::SignupClosed => return Err(sign_up_closed(ctx)),
        AuthnError::InvalidLink | AuthnError::UnknownUser => return Err(invalid_link(ctx)),
        other @ (AuthnError::Store(_) | AuthnError::Internal(_)) => {
            return Err(server_fault(ctx, &other));
        }
    };
    Ok(Refusal {
        status,
        message,
        field,
        retry_after,
    })
}

/// A page for an engine error where no form can be shown again.
pub(crate) fn fatal(ctx: &Ctx, error: AuthnError) -> Response {
    match refusal(ctx, error) {
        Ok(refusal) => {
            let s = ctx.s();
            let title = if refusal.status.is_server_error() {
                s.server_error_title
            } else {
                s.bad_request_title
            };
            refusal.finish(message(ctx, refusal.status, title, refusal.message))
        }
        Err(page) => page,
    }
}

/// The 503/500 page; the cause is logged here, never shown.
fn server_fault(ctx: &Ctx, error: &AuthnError) -> Response {
    let status = if matches!(error, AuthnError::Store(_)) {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    tracing::error!(error = %error, status = status.as_u16(), "hosted sign-in failed");
    let s = ctx.s();
    message(ctx, status, s.server_error_title, s.server_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use svc_store::StoreError;

    #[test]
    fn api_statuses_per_variant() {
        let table = [
            (AuthnError::InvalidCredentials, 401, "unauthorized"),
            (
                AuthnError::Locked {
                    retry_after: Duration::from_secs(3),
                },
                429,
                "rate_limited",
            ),
            (AuthnError::SignupClosed, 403, "forbidden"),
            (AuthnError::WeakPassword("short".into()), 400, "bad_request"),
            (AuthnError::BreachedPassword, 400, "bad_request"),
            (AuthnError::InvalidEmail, 400, "bad_request"),
            (AuthnError::InvalidLink, 400, "bad_request"),
            (AuthnError::UnknownUser, 404, "not_found"),
            (AuthnError::BreachCheckUnavailable, 503, "server_error"),
            (AuthnError::CaptchaRequired, 400, "bad_request"),
            (AuthnError::CaptchaFailed, 400, "bad_request"),
            (
                AuthnError::CaptchaUnavailable("timeout".into()),
                503,
                "server_error",
            ),
            (
                AuthnError::Store(StoreError::Unavailable("down".into())),
                503,
                "server_error",
            ),
            (
                AuthnError::Store(StoreError::Corrupt("row 42".into())),
                500,
                "server_error",
            ),
            (AuthnError::Internal("argon2".into()), 500, "server_error"),
            (AuthnError::InvalidCode, 401, "unauthorized"),
            (AuthnError::SecondFactorRequired, 401, "unauthorized"),
            (AuthnError::StepUpRequired, 403, "forbidden"),
            (AuthnError::AlreadyEnrolled, 409, "conflict"),
            (AuthnError::TwoFactorOff, 404, "not_found"),
            (AuthnError::UnknownFactor, 404, "not_found"),
            (AuthnError::ChallengeExpired, 400, "bad_request"),
            (AuthnError::NoSecondFactor, 400, "bad_request"),
            (AuthnError::RecoveryOff, 404, "not_found"),
            (
                AuthnError::GuardianRefused("own address"),
                400,
                "bad_request",
            ),
            (AuthnError::UnknownGuardian, 404, "not_found"),
            (AuthnError::OwnRecovery, 403, "forbidden"),
            (AuthnError::RecoveryNotReady, 409, "conflict"),
            (AuthnError::SsoOff, 404, "not_found"),
            (AuthnError::NoSsoConnection, 404, "not_found"),
            (AuthnError::SsoRequired, 403, "forbidden"),
            (AuthnError::SsoExpired, 400, "bad_request"),
            (AuthnError::SocialOff, 404, "not_found"),
            (AuthnError::NoSocialProvider, 404, "not_found"),
            (AuthnError::SocialExpired, 400, "bad_request"),
            (
                AuthnError::SocialRefused("row 42".into()),
                401,
                "unauthorized",
            ),
            (AuthnError::SocialAccountExists, 409, "conflict"),
            (AuthnError::SocialLastMethod, 409, "conflict"),
            (AuthnError::SocialWrongAccount, 403, "forbidden"),
            (AuthnError::SsoRefused("row 42".into()), 401, "unauthorized"),
            (
                AuthnError::SsoUnreachable("row 42".into()),
                503,
                "server_error",
            ),
        ];
        for (error, status, code) in table {
            let label = format!("{error:?}");
            let problem = Problem::from(error);
            assert_eq!(problem.status().as_u16(), status, "{label}");
            assert_eq!(problem.error(), code, "{label}");
            assert!(!problem.detail().contains("row 42"), "{label}");
        }
        let weak = Problem::from(AuthnError::WeakPassword("too short".into()));
        assert_eq!(weak.detail(), "password: too short");
    }
}

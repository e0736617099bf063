//! The one error type of the management use cases, in their own terms. `svc-http` maps each
//! variant to a problem+json response (the status each doc line names); nothing here knows HTTP.

use svc_domain::{HasherError, NewPasswordError};
use svc_store::StoreError;

/// Why a management use case did not take effect.
#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    /// 400 `bad_request`: an input broke a rule; `message` names the field and the rule.
    #[error("{field}: {message}")]
    Invalid {
        /// The offending input field, as spelled on the wire (`redirect_uris`, `slug`, ...).
        field: String,
        /// What is wrong and what is allowed, safe to show to the caller.
        message: String,
    },
    /// 404 `not_found`: no such record in this tenant (another tenant's record looks the same).
    #[error("not found")]
    NotFound,
    /// 409 `conflict`: the request clashes with existing state (a taken slug, an idempotency key
    /// reused with another request or still in progress); the text is safe to show.
    #[error("{0}")]
    Conflict(String),
    /// 412 `precondition_failed`: the resource changed since the revision the caller named in
    /// `If-Match` (or while this update ran); read it again and retry.
    #[error("the resource has changed since it was read")]
    PreconditionFailed,
    /// 403 `forbidden`: the request is well formed but not allowed (e.g. deleting the management
    /// application); the text is safe to show.
    #[error("{0}")]
    Forbidden(String),
    /// 401 `invalid_token`: a registration access token (RFC 7592 §2) is missing, unknown, or
    /// another application's; the text is safe to show and says no more than that.
    #[error("{0}")]
    Unauthenticated(String),
    /// 429 `rate_limited`: too many attempts from this caller (dynamic client registrations per
    /// client address); retry after the duration given.
    #[error("too many requests; retry later")]
    RateLimited(std::time::Duration),
    /// 503 `server_error`: the database is unavailable; the caller may retry with an
    /// idempotency key. The cause is for logs only.
    #[error("database unavailable")]
    Unavailable(#[source] StoreError),
    /// 500 `server_error`: a bug or corrupt data. The cause is for logs only.
    #[error("internal error")]
    Internal(#[source] StoreError),
    /// 503 `server_error`: the breached-password check is unavailable and the deployment fails
    /// closed; the caller may retry.
    #[error("passwords cannot be checked right now; try again later")]
    PasswordCheckUnavailable,
    /// 500 `server_error`: a service the use case relies on failed (a password could not be
    /// hashed) or is missing from the context (a wiring bug). The cause is for logs only.
    #[error("internal error")]
    Dependency(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ManageError {
    /// An [`ManageError::Invalid`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<StoreError> for ManageError {
    /// The default reading of a storage error. Use cases that expect a particular conflict (a
    /// taken slug) map it themselves before `?` reaches this.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => Self::NotFound,
            StoreError::Conflict { .. } => Self::Conflict(
                "the request conflicts with the current state; refresh and retry".to_owned(),
            ),
            StoreError::Unavailable(_) => Self::Unavailable(e),
            StoreError::Corrupt(_) => Self::Internal(e),
        }
    }
}

impl From<NewPasswordError> for ManageError {
    /// Refusals of the password itself name the field, in the words sign-up uses.
    fn from(e: NewPasswordError) -> Self {
        match e {
            NewPasswordError::Weak(_) | NewPasswordError::Breached => {
                Self::invalid("password", e.to_string())
            }
            NewPasswordError::CheckUnavailable => Self::PasswordCheckUnavailable,
        }
    }
}

impl From<HasherError> for ManageError {
    fn from(e: HasherError) -> Self {
        Self::Dependency(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_map_to_their_meaning() {
        assert!(matches!(
            ManageError::from(StoreError::NotFound),
            ManageError::NotFound
        ));
        let conflict = ManageError::from(StoreError::Conflict {
            constraint: "applications_pkey".to_owned(),
        });
        assert!(
            matches!(&conflict, ManageError::Conflict(m) if !m.contains("applications_pkey")),
            "constraint names stay out of client-facing text"
        );
        let down = ManageError::from(StoreError::Unavailable("connection refused".into()));
        assert!(matches!(down, ManageError::Unavailable(_)));
        assert_eq!(
            down.to_string(),
            "database unavailable",
            "no internal detail"
        );
        let corrupt = ManageError::from(StoreError::Corrupt("bad row".to_owned()));
        assert!(matches!(corrupt, ManageError::Internal(_)));
        assert_eq!(corrupt.to_string(), "internal error");
    }

    #[test]
    fn password_refusals_name_the_field_in_the_words_of_sign_up() {
        use svc_domain::PasswordError;
        let short = ManageError::from(NewPasswordError::Weak(PasswordError::TooShort));
        assert_eq!(
            short.to_string(),
            "password: a password needs at least 8 characters"
        );
        let breached = ManageError::from(NewPasswordError::Breached);
        assert_eq!(
            breached.to_string(),
            "password: this password appears in a known data breach; choose another"
        );
        assert!(matches!(
            ManageError::from(NewPasswordError::CheckUnavailable),
            ManageError::PasswordCheckUnavailable
        ));
        let failed = ManageError::from(HasherError::Failed("task died".into()));
        assert_eq!(failed.to_string(), "internal error", "no internal detail");
    }

    #[test]
    fn invalid_names_the_field() {
        let e = ManageError::invalid("slug", "must be a DNS label");
        assert_eq!(e.to_string(), "slug: must be a DNS label");
    }
}

//! The one error type of the management use cases, in their own terms. `svc-http` maps each
//! variant to a problem+json response (the status each doc line names); nothing here knows HTTP.

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
    /// 403 `forbidden`: the request is well formed but not allowed (e.g. deleting the management
    /// application); the text is safe to show.
    #[error("{0}")]
    Forbidden(String),
    /// 503 `server_error`: the database is unavailable; the caller may retry with an
    /// idempotency key. The cause is for logs only.
    #[error("database unavailable")]
    Unavailable(#[source] StoreError),
    /// 500 `server_error`: a bug or corrupt data. The cause is for logs only.
    #[error("internal error")]
    Internal(#[source] StoreError),
    /// A sign-in engine refusal with no management meaning of its own (the breached-password
    /// check is unavailable, hashing failed); `svc-http` maps it like the engine's errors.
    #[error("{0}")]
    Authn(#[source] svc_authn::AuthnError),
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

impl From<svc_authn::AuthnError> for ManageError {
    /// Password and address refusals name the field they concern; the rest keep their
    /// engine meaning.
    fn from(e: svc_authn::AuthnError) -> Self {
        use svc_authn::AuthnError as A;
        match e {
            A::WeakPassword(message) => Self::invalid("password", message),
            A::BreachedPassword => Self::invalid(
                "password",
                "this password appears in a known data breach; choose another",
            ),
            A::InvalidEmail => Self::invalid("email", A::InvalidEmail.to_string()),
            A::UnknownUser => Self::NotFound,
            A::Store(e) => e.into(),
            other => Self::Authn(other),
        }
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
    fn invalid_names_the_field() {
        let e = ManageError::invalid("slug", "must be a DNS label");
        assert_eq!(e.to_string(), "slug: must be a DNS label");
    }
}

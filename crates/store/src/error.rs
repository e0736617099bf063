//! The one error type of the storage layer, in storage terms. Engines map it to their own errors;
//! only `svc-http` turns those into HTTP.

/// What went wrong talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record does not exist (or belongs to another tenant, which must look the same).
    #[error("not found")]
    NotFound,
    /// A uniqueness or foreign-key rule refused the write; `constraint` names the rule.
    #[error("conflict on {constraint}")]
    Conflict {
        /// The name of the violated constraint, e.g. `tenants_slug_key`.
        constraint: String,
    },
    /// The database could not be reached or failed; worth retrying later.
    #[error("database unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A stored value could not be read back into a domain type (a bug or manual tampering).
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
}

//! The effective configuration as TOML with every secret replaced by `<redacted>`, for
//! `config check` and startup diagnostics.
//!
//! Redaction is a property of the value types (their `Serialize` impls), so a new secret-bearing
//! key is safe as long as it uses [`crate::Secret`], [`crate::DatabaseUrl`] or
//! [`crate::SecretUrl`]; there is no list of secret keys to keep in sync here.

use crate::model::Config;

impl Config {
    /// The effective configuration as TOML, secrets printed as `<redacted>`.
    #[must_use]
    pub fn redacted_toml(&self) -> String {
        match toml::to_string(self) {
            Ok(text) => text,
            Err(error) => format!("# the configuration could not be rendered as TOML: {error}\n"),
        }
    }
}

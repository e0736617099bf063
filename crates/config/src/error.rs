//! Configuration errors: one variant per way a configuration can be refused, each rendered as one
//! line that names the key (or file, or variable) and says how to fix it.
//!
//! The runtime prints [`ConfigErrors`] verbatim and exits, so the wording here is the operator's
//! whole diagnosis; the spec's "Startup errors" phrases live in the validation messages.

use std::fmt;
use std::path::PathBuf;

/// One problem with the configuration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A configuration file that was asked for (by `--config` or `SVC_CONFIG_FILE`) is missing or
    /// unreadable.
    #[error("configuration file {} ({origin}) {problem}", path.display())]
    File {
        /// The file, resolved against the working directory.
        path: PathBuf,
        /// Who named it: `--config` or `SVC_CONFIG_FILE`.
        origin: String,
        /// What is wrong: "does not exist", "cannot be read: …".
        problem: String,
    },
    /// A variable that carried key material is still set; the secret belongs in svc-kms now.
    #[error(
        "{var} moved to svc-kms: provision it through the key-management service and delete the variable"
    )]
    MovedToKms {
        /// The variable's name (never its value).
        var: String,
    },
    /// The configuration file is not valid TOML.
    #[error("{}: line {line}, column {column}: invalid TOML: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The configuration file sets a key that does not exist.
    #[error(
        "unknown key `{key}` in {}; valid keys in {section}: {}",
        path.display(),
        valid.join(", ")
    )]
    UnknownKey {
        /// The dotted key, e.g. `server.prot`.
        key: String,
        /// The file that sets it.
        path: PathBuf,
        /// The enclosing section as written in TOML (`[server]`, or `the top level`).
        section: String,
        /// The keys that section accepts.
        valid: Vec<String>,
    },
    /// A section or key whose feature does not exist in this version is set.
    #[error("{label} is not available in this version ({origin}): {reason}; {fix}")]
    Unavailable {
        /// The dotted key, e.g. `vault` or `openapi.enabled`.
        key: String,
        /// How it is written in TOML: `[vault]`, `[[chains]]`, `openapi.enabled`.
        label: String,
        /// Who set it: `set in file /etc/svc.toml` or `set by environment variable SVC_SCIM`.
        origin: String,
        /// What it would configure and what this version does instead.
        reason: String,
        /// How to fix it: remove it, or set the one value this version accepts.
        fix: String,
    },
    /// An environment variable could not be used: it maps to no key, its name is malformed, or its
    /// JSON value does not parse.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable name, e.g. `SVC_SERVER__PROT`.
        var: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A key has a value of the wrong type or an unaccepted value.
    #[error("invalid value for {key} from {origin}: {message}")]
    Value {
        /// The dotted key, e.g. `server.port`.
        key: String,
        /// Where the value came from: `file /etc/svc.toml` or `environment variable SVC_SERVER__PORT`.
        origin: String,
        /// Expected type or values and what was found.
        message: String,
    },
    /// A validation rule failed; `message` names the key and the fix.
    #[error("{message}")]
    Rule {
        /// The dotted key the rule is about (the first one when it concerns several).
        key: String,
        /// The whole line, e.g. `jwt.id_token_lifetime_secs = 5 is out of range 60..=3600; …`.
        message: String,
    },
}

impl ConfigError {
    /// The dotted configuration key this error is about, when there is one.
    #[must_use]
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::UnknownKey { key, .. }
            | Self::Unavailable { key, .. }
            | Self::Value { key, .. }
            | Self::Rule { key, .. } => Some(key),
            Self::File { .. }
            | Self::Syntax { .. }
            | Self::Env { .. }
            | Self::MovedToKms { .. } => None,
        }
    }
}

/// Every problem found, reported together so an operator fixes them in one pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// The individual problems.
    #[must_use]
    pub fn errors(&self) -> &[ConfigError] {
        &self.0
    }

    /// Whether any message contains `needle`; handy for tests and for the runtime's exit codes.
    #[must_use]
    pub fn contains(&self, needle: &str) -> bool {
        self.0.iter().any(|e| e.to_string().contains(needle))
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(error: ConfigError) -> Self {
        Self(vec![error])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_per_problem() {
        let errors = ConfigErrors(vec![
            ConfigError::Rule {
                key: "a".into(),
                message: "first".into(),
            },
            ConfigError::Env {
                var: "SVC_X".into(),
                message: "second".into(),
            },
        ]);
        assert_eq!(
            errors.to_string(),
            "first\nenvironment variable SVC_X: second"
        );
        assert!(errors.contains("SVC_X"));
        assert_eq!(errors.errors()[0].key(), Some("a"));
    }
}

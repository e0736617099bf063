//! Software statements in the runtime: the trusted issuers of
//! `[dynamic_registration].software_statement_issuers`, verified by `svc-oauth`, offered to the
//! registration use cases of `svc-manage` through their port (neither engine knows the other).

use crate::RuntimeError;
use std::sync::Arc;
use svc_config::Config;
use svc_manage::registration::{SoftwareStatementVerifier, StatementRefusal};
use svc_oauth::software_statement::{SoftwareStatements, StatementError};

/// The verifier of the configured issuers; `None` when there are none (every statement is
/// then refused). An unusable key set stops the start, naming the key.
pub(crate) fn verifier(
    config: &Config,
) -> Result<Option<Arc<dyn SoftwareStatementVerifier>>, RuntimeError> {
    let issuers = &config.dynamic_registration.software_statement_issuers;
    if issuers.is_empty() {
        return Ok(None);
    }
    let statements =
        SoftwareStatements::new(issuers.iter().map(|i| (i.issuer.as_str(), i.jwks.as_str())))
            .map_err(|e| {
                RuntimeError::Bootstrap(format!(
                    "dynamic_registration.software_statement_issuers: {e}"
                ))
            })?;
    Ok(Some(Arc::new(Verifier(statements))))
}

struct Verifier(SoftwareStatements);

impl SoftwareStatementVerifier for Verifier {
    fn verify(
        &self,
        statement: &str,
        now: time::OffsetDateTime,
    ) -> Result<serde_json::Map<String, serde_json::Value>, StatementRefusal> {
        self.0.verify(statement, now).map_err(|e| match e {
            StatementError::Unapproved(m) => StatementRefusal::Unapproved(m),
            StatementError::Invalid(m) => StatementRefusal::Invalid(m),
        })
    }
}

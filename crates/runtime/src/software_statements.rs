//! Software statements in the runtime: the trusted issuers of
//! `[dynamic_registration].software_statement_issuers` and each tenant's own (registration
//! policy), verified by `svc-oauth`, offered to the registration use cases of `svc-manage`
//! through their port (neither engine knows the other).

use crate::RuntimeError;
use std::sync::Arc;
use svc_config::Config;
use svc_domain::StatementIssuer;
use svc_manage::registration::{SoftwareStatementVerifier, StatementRefusal};
use svc_oauth::software_statement::{SoftwareStatements, StatementError};

/// The verifier of the configured issuers (possibly none: tenants may then trust their own).
/// An unusable key set stops the start, naming the key.
pub(crate) fn verifier(
    config: &Config,
) -> Result<Arc<dyn SoftwareStatementVerifier>, RuntimeError> {
    let issuers = &config.dynamic_registration.software_statement_issuers;
    let deployment =
        SoftwareStatements::new(issuers.iter().map(|i| (i.issuer.as_str(), i.jwks.as_str())))
            .map_err(|e| {
                RuntimeError::Bootstrap(format!(
                    "dynamic_registration.software_statement_issuers: {e}"
                ))
            })?;
    Ok(Arc::new(Verifier(deployment)))
}

struct Verifier(SoftwareStatements);

fn refusal(e: StatementError) -> StatementRefusal {
    match e {
        StatementError::Unapproved(m) => StatementRefusal::Unapproved(m),
        StatementError::Invalid(m) => StatementRefusal::Invalid(m),
    }
}

impl SoftwareStatementVerifier for Verifier {
    fn verify(
        &self,
        statement: &str,
        tenant: &[StatementIssuer],
        now: time::OffsetDateTime,
    ) -> Result<serde_json::Map<String, serde_json::Value>, StatementRefusal> {
        if tenant.is_empty() {
            return self.0.verify(statement, now).map_err(refusal);
        }
        // Checked when the tenant set them; a set that no longer parses vouches for nothing.
        let own =
            SoftwareStatements::new(tenant.iter().map(|i| (i.issuer.as_str(), i.jwks.as_str())))
                .map_err(StatementRefusal::Invalid)?;
        self.0.joined(&own).verify(statement, now).map_err(refusal)
    }

    fn check_issuer(&self, issuer: &StatementIssuer) -> Result<(), String> {
        SoftwareStatements::new([(issuer.issuer.as_str(), issuer.jwks.as_str())]).map(|_| ())
    }

    fn deployment_trusts_any(&self) -> bool {
        !self.0.is_empty()
    }
}

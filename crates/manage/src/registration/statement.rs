//! Software statements at registration (RFC 7591 §2.3, §3.1.1): the port through which the
//! runtime verifies a statement (the signature rules live in `svc-oauth`, which this crate may
//! not depend on), and how its claims then weigh against the plain metadata: every client
//! metadata member the statement carries takes precedence (§2.3 "MUST take precedence"); the
//! JWT's own claims (`iss`, `iat`, `exp`, `nbf`, `jti`, `aud`, `sub`) and `software_id` /
//! `software_version` describe the statement and are not metadata; anything else unknown, a
//! credential (`client_id`, `client_secret`) or another statement inside it is refused.

use super::metadata::ClientMetadata;
use crate::{ManageContext, ManageError};
use serde_json::{Map, Value};
use time::OffsetDateTime;

/// Field name of the refusal of an untrusted issuer: `svc-http` answers it with
/// `unapproved_software_statement` (RFC 7591 §3.2.2).
pub const UNAPPROVED_FIELD: &str = "software_statement.iss";

/// Verifies software statements for the deployment's trusted issuers.
pub trait SoftwareStatementVerifier: Send + Sync {
    /// The authentic claims of `statement` at `now`, or why it is refused.
    fn verify(
        &self,
        statement: &str,
        now: OffsetDateTime,
    ) -> Result<Map<String, Value>, StatementRefusal>;
}

/// Why a statement is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementRefusal {
    /// Its issuer is not trusted here (`unapproved_software_statement`).
    Unapproved(String),
    /// Malformed, badly signed or expired (`invalid_software_statement`).
    Invalid(String),
}

/// Claims that describe the statement itself, not the client.
const STATEMENT_CLAIMS: [&str; 9] = [
    "iss",
    "sub",
    "aud",
    "iat",
    "exp",
    "nbf",
    "jti",
    "software_id",
    "software_version",
];

impl ClientMetadata {
    /// The metadata with its software statement (if any) verified and applied, and removed.
    ///
    /// Errors: [`ManageError::Invalid`] on `software_statement` (no trusted issuer is
    /// configured, the statement is invalid, or it carries what a statement may not) or on
    /// [`UNAPPROVED_FIELD`].
    pub(super) fn vouched(mut self, ctx: &ManageContext) -> Result<Self, ManageError> {
        let Some(statement) = self.software_statement.take() else {
            return Ok(self);
        };
        let Some(verifier) = ctx.software_statements.as_deref() else {
            return Err(ManageError::invalid(
                "software_statement",
                "software statements are not accepted by this deployment",
            ));
        };
        let mut claims =
            verifier
                .verify(&statement, ctx.now())
                .map_err(|refusal| match refusal {
                    StatementRefusal::Unapproved(m) => ManageError::invalid(UNAPPROVED_FIELD, m),
                    StatementRefusal::Invalid(m) => ManageError::invalid("software_statement", m),
                })?;
        for claim in STATEMENT_CLAIMS {
            claims.remove(claim);
        }
        for forbidden in ["client_id", "client_secret", "software_statement"] {
            if claims.contains_key(forbidden) {
                return Err(ManageError::invalid(
                    "software_statement",
                    format!("a software statement cannot carry {forbidden}"),
                ));
            }
        }
        let vouched: ClientMetadata =
            serde_json::from_value(Value::Object(claims)).map_err(|e| {
                ManageError::invalid(
                    "software_statement",
                    format!(
                        "the software statement carries metadata this server does not take: {e}"
                    ),
                )
            })?;
        self.overlay(vouched);
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    /// Accepts `good`, refuses `stranger` as unapproved, anything else as invalid; the claims
    /// are the statement text parsed as JSON.
    struct Fake;

    impl SoftwareStatementVerifier for Fake {
        fn verify(
            &self,
            s: &str,
            _: OffsetDateTime,
        ) -> Result<Map<String, Value>, StatementRefusal> {
            match s {
                "stranger" => Err(StatementRefusal::Unapproved("not trusted".into())),
                s => match serde_json::from_str(s) {
                    Ok(Value::Object(map)) => Ok(map),
                    _ => Err(StatementRefusal::Invalid("bad".into())),
                },
            }
        }
    }

    async fn ctx(with: bool) -> ManageContext {
        let store: Arc<dyn svc_store::Store> =
            Arc::new(svc_store_sqlite::testing::temp_store().await.unwrap());
        let clock = Arc::new(svc_domain::ManualClock::new(OffsetDateTime::UNIX_EPOCH));
        let ctx = ManageContext::new(store, clock, Arc::new(svc_domain::OsRandom));
        if with {
            ctx.with_software_statements(Arc::new(Fake))
        } else {
            ctx
        }
    }

    fn metadata(statement: &str) -> ClientMetadata {
        serde_json::from_value(json!({
            "client_name": "Plain name",
            "redirect_uris": ["https://plain.example/cb"],
            "scope": "openid",
            "software_statement": statement,
        }))
        .unwrap()
    }

    fn refused_field(result: Result<ClientMetadata, ManageError>) -> (String, String) {
        match result {
            Err(ManageError::Invalid { field, message }) => (field, message),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn statement_claims_take_precedence_and_the_statement_is_consumed() {
        let statement = json!({
            "iss": "https://house.example", "exp": 1, "software_id": "x",
            "client_name": "Vouched", "redirect_uris": ["https://vouched.example/cb"],
        })
        .to_string();
        let vouched = metadata(&statement).vouched(&ctx(true).await).unwrap();
        assert_eq!(vouched.client_name.as_deref(), Some("Vouched"));
        assert_eq!(
            vouched.redirect_uris,
            Some(vec!["https://vouched.example/cb".to_owned()])
        );
        assert_eq!(
            vouched.scope.as_deref(),
            Some("openid"),
            "plain metadata stays"
        );
        assert_eq!(vouched.software_statement, None);
    }

    #[tokio::test]
    async fn refusals_name_the_right_field() {
        let (on, off) = (ctx(true).await, ctx(false).await);
        let (field, _) = refused_field(metadata("{}").vouched(&off));
        assert_eq!(field, "software_statement");
        let (field, _) = refused_field(metadata("stranger").vouched(&on));
        assert_eq!(field, UNAPPROVED_FIELD);
        let (field, _) = refused_field(metadata("not json").vouched(&on));
        assert_eq!(field, "software_statement");
        for carried in [
            json!({"client_id": "app_x"}),
            json!({"client_secret": "s"}),
            json!({"software_statement": "nested"}),
            json!({"logo_uri": "https://x.example/logo.png"}),
        ] {
            let (field, message) = refused_field(metadata(&carried.to_string()).vouched(&on));
            assert_eq!(field, "software_statement", "{carried}: {message}");
        }
        // No statement: nothing to do, with or without a verifier.
        let plain: ClientMetadata = serde_json::from_value(json!({"client_name": "P"})).unwrap();
        assert_eq!(plain.clone().vouched(&off).unwrap(), plain);
    }
}

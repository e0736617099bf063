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
use svc_domain::{StatementIssuer, TenantId};
use time::OffsetDateTime;

/// Field name of the refusal of an untrusted issuer: `svc-http` answers it with
/// `unapproved_software_statement` (RFC 7591 §3.2.2).
pub const UNAPPROVED_FIELD: &str = "software_statement.iss";

/// Verifies software statements for the issuers the deployment trusts and those a tenant
/// trusts beside them.
pub trait SoftwareStatementVerifier: Send + Sync {
    /// The authentic claims of `statement` at `now`, from an issuer the deployment trusts or
    /// one of `tenant` (the registering tenant's own), or why it is refused.
    fn verify(
        &self,
        statement: &str,
        tenant: &[StatementIssuer],
        now: OffsetDateTime,
    ) -> Result<Map<String, Value>, StatementRefusal>;

    /// Whether `issuer` could vouch: its key set is a JWK Set holding a public key statements
    /// can be verified with. `Err` says what is wrong.
    fn check_issuer(&self, issuer: &StatementIssuer) -> Result<(), String>;

    /// Whether the deployment itself trusts any issuer.
    fn deployment_trusts_any(&self) -> bool;
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

/// Longest issuer identifier a tenant may trust.
const MAX_ISSUER_BYTES: usize = 255;
/// Largest JWK Set a tenant may store for one issuer.
const MAX_JWKS_BYTES: usize = 16 * 1024;

/// An issuer a tenant asks to trust, as sent to the registration-policy API.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementIssuerInput {
    /// The statements' `iss`, compared exactly (at most 255 bytes, no spaces or controls).
    pub issuer: String,
    /// Its JWK Set document (`{"keys": [...]}`), public keys only, at most 16 KiB.
    #[schema(value_type = Object)]
    pub jwks: Value,
}

/// An issuer a tenant trusts, as the registration-policy API shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct StatementIssuerView {
    /// The statements' `iss`.
    pub issuer: String,
    /// Its JWK Set document (public keys).
    #[schema(value_type = Object)]
    pub jwks: Value,
}

impl StatementIssuerView {
    pub(super) fn of(stored: StatementIssuer) -> Self {
        Self {
            jwks: serde_json::from_str(&stored.jwks).unwrap_or(Value::Null),
            issuer: stored.issuer,
        }
    }
}

/// Rule: the issuers a tenant trusts — at most [`svc_domain::MAX_TENANT_STATEMENT_ISSUERS`],
/// each named once by a printable identifier, each with a JWK Set of public keys the verifier
/// can use. Errors name the field (`software_statement_issuers[i].issuer|jwks`).
pub(super) fn check_trusted(
    ctx: &ManageContext,
    input: Vec<StatementIssuerInput>,
) -> Result<Vec<StatementIssuer>, ManageError> {
    const FIELD: &str = "software_statement_issuers";
    let Some(verifier) = ctx.software_statements.as_deref() else {
        return Err(ManageError::invalid(
            FIELD,
            "this deployment does not accept software statements",
        ));
    };
    if input.len() > svc_domain::MAX_TENANT_STATEMENT_ISSUERS {
        return Err(ManageError::invalid(
            FIELD,
            format!(
                "a tenant may trust at most {} issuers",
                svc_domain::MAX_TENANT_STATEMENT_ISSUERS
            ),
        ));
    }
    let mut trusted: Vec<StatementIssuer> = Vec::with_capacity(input.len());
    for (i, given) in input.into_iter().enumerate() {
        let field = |member: &str| format!("{FIELD}[{i}].{member}");
        let issuer = given.issuer;
        if issuer.is_empty()
            || issuer.len() > MAX_ISSUER_BYTES
            || issuer.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ManageError::invalid(
                field("issuer"),
                format!(
                    "an issuer is 1 to {MAX_ISSUER_BYTES} bytes without spaces or control \
                     characters"
                ),
            ));
        }
        if trusted.iter().any(|t| t.issuer == issuer) {
            return Err(ManageError::invalid(
                field("issuer"),
                "this issuer is listed twice",
            ));
        }
        // The application rule (a JWK Set of 1 to 10 public keys), then a tighter size.
        let jwks = crate::applications::check_jwks(&given.jwks)
            .and_then(|text| {
                if text.len() > MAX_JWKS_BYTES {
                    Err(ManageError::invalid(
                        "jwks",
                        format!("a JWK Set is at most {MAX_JWKS_BYTES} bytes"),
                    ))
                } else {
                    Ok(text)
                }
            })
            .map_err(|e| match e {
                ManageError::Invalid { message, .. } => {
                    ManageError::invalid(field("jwks"), message)
                }
                other => other,
            })?;
        let candidate = StatementIssuer { issuer, jwks };
        verifier
            .check_issuer(&candidate)
            .map_err(|e| ManageError::invalid(field("jwks"), e))?;
        trusted.push(candidate);
    }
    Ok(trusted)
}

impl ClientMetadata {
    /// The metadata with its software statement (if any) verified and applied, and removed:
    /// verified against the issuers the deployment trusts and those `tenant` trusts (read only
    /// when a statement is there).
    ///
    /// Errors: [`ManageError::Invalid`] on `software_statement` (no trusted issuer is
    /// configured for the deployment or the tenant, the statement is invalid, or it carries
    /// what a statement may not) or on [`UNAPPROVED_FIELD`].
    pub(super) async fn vouched(
        mut self,
        ctx: &ManageContext,
        tenant: &TenantId,
    ) -> Result<Self, ManageError> {
        let Some(statement) = self.software_statement.take() else {
            return Ok(self);
        };
        let not_accepted = || {
            ManageError::invalid(
                "software_statement",
                "software statements are not accepted here: neither this deployment nor this \
                 tenant trusts an issuer",
            )
        };
        let Some(verifier) = ctx.software_statements.as_deref() else {
            return Err(not_accepted());
        };
        let mut tx = ctx.store.read().await?;
        let trusted = tx.statement_issuers(tenant).await?;
        tx.finish().await?;
        if trusted.is_empty() && !verifier.deployment_trusts_any() {
            return Err(not_accepted());
        }
        let mut claims = verifier
            .verify(&statement, &trusted, ctx.now())
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
            _: &[StatementIssuer],
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

        fn check_issuer(&self, _: &StatementIssuer) -> Result<(), String> {
            Ok(())
        }

        fn deployment_trusts_any(&self) -> bool {
            true
        }
    }

    fn tenant() -> TenantId {
        TenantId::parse("ten_01jd3xk1q7e8ccbz6r9v0w2y4m").unwrap()
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
        let vouched = metadata(&statement)
            .vouched(&ctx(true).await, &tenant())
            .await
            .unwrap();
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
        let (field, _) = refused_field(metadata("{}").vouched(&off, &tenant()).await);
        assert_eq!(field, "software_statement");
        let (field, _) = refused_field(metadata("stranger").vouched(&on, &tenant()).await);
        assert_eq!(field, UNAPPROVED_FIELD);
        let (field, _) = refused_field(metadata("not json").vouched(&on, &tenant()).await);
        assert_eq!(field, "software_statement");
        for carried in [
            json!({"client_id": "app_x"}),
            json!({"client_secret": "s"}),
            json!({"software_statement": "nested"}),
            json!({"logo_uri": "https://x.example/logo.png"}),
        ] {
            let (field, message) =
                refused_field(metadata(&carried.to_string()).vouched(&on, &tenant()).await);
            assert_eq!(field, "software_statement", "{carried}: {message}");
        }
        // No statement: nothing to do, with or without a verifier.
        let plain: ClientMetadata = serde_json::from_value(json!({"client_name": "P"})).unwrap();
        assert_eq!(plain.clone().vouched(&off, &tenant()).await.unwrap(), plain);
    }
}

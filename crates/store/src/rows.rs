//! Backend-neutral row forms: what a backend reads out of a row (plain text, bytes, booleans,
//! instants) and the ONE place where stored values become domain types. SQL differs per dialect;
//! this conversion must not, so both backends fetch a row form and call `decode`. A value that
//! does not parse back is [`StoreError::Corrupt`] naming the table, column and record.

use crate::StoreError;
use svc_domain::{
    Application, ClientId, GrantType, OperatorToken, OperatorTokenId, RedirectUri, Scope, ScopeSet,
    SecretHash, SigningAlg, TenantId, TokenEndpointAuthMethod,
};
use time::OffsetDateTime;

/// Encodes list-valued columns (redirect URIs, grant types, scopes) as a JSON array of strings.
pub fn encode_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<String, StoreError> {
    let items: Vec<&str> = items.into_iter().collect();
    serde_json::to_string(&items)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON array: {e}")))
}

/// Decodes a JSON array of strings read from `column` of the record `of`.
pub fn decode_strings(text: &str, column: &str, of: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Corrupt(format!(
            "{column} of {of}: not a JSON array of strings: {e}"
        ))
    })
}

/// An `applications` row as stored.
#[derive(Debug, Clone)]
pub struct ApplicationRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `name`.
    pub name: String,
    /// `redirect_uris` (JSON array text).
    pub redirect_uris: String,
    /// `grant_types` (JSON array text).
    pub grant_types: String,
    /// `allowed_scopes` (JSON array text).
    pub allowed_scopes: String,
    /// `token_endpoint_auth_method`.
    pub token_endpoint_auth_method: String,
    /// `secret_hash`.
    pub secret_hash: Option<Vec<u8>>,
    /// `api_audience`.
    pub api_audience: Option<String>,
    /// `first_party`.
    pub first_party: bool,
    /// `id_token_signed_response_alg`.
    pub id_token_signed_response_alg: String,
    /// `jwks`.
    pub jwks: Option<String>,
    /// `jwks_uri`.
    pub jwks_uri: Option<String>,
    /// `is_management`.
    pub is_management: bool,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
}

impl ApplicationRow {
    /// The application this row stores.
    pub fn decode(self) -> Result<Application, StoreError> {
        let id = self.id;
        let corrupt = |column: &str, value: &str, why: &dyn std::fmt::Display| {
            StoreError::Corrupt(format!("applications.{column} {value:?} of {id}: {why}"))
        };
        let redirect_uris = decode_strings(&self.redirect_uris, "applications.redirect_uris", &id)?
            .iter()
            .map(|uri| RedirectUri::parse(uri).map_err(|e| corrupt("redirect_uris", uri, &e)))
            .collect::<Result<_, _>>()?;
        let grant_types = decode_strings(&self.grant_types, "applications.grant_types", &id)?
            .iter()
            .map(|grant| {
                GrantType::parse(grant)
                    .ok_or_else(|| corrupt("grant_types", grant, &"unknown grant"))
            })
            .collect::<Result<_, _>>()?;
        let scopes = decode_strings(&self.allowed_scopes, "applications.allowed_scopes", &id)?
            .iter()
            .map(|scope| Scope::parse(scope).map_err(|e| corrupt("allowed_scopes", scope, &e)))
            .collect::<Result<Vec<_>, _>>()?;
        let method = &self.token_endpoint_auth_method;
        let alg = &self.id_token_signed_response_alg;
        let secret_hash = self
            .secret_hash
            .map(|bytes| {
                SecretHash::from_bytes(&bytes).ok_or_else(|| {
                    corrupt(
                        "secret_hash",
                        &format!("{} bytes", bytes.len()),
                        &"not 32 bytes",
                    )
                })
            })
            .transpose()?;
        Ok(Application {
            tenant_id: TenantId::parse(&self.tenant_id)
                .map_err(|e| corrupt("tenant_id", &self.tenant_id, &e))?,
            name: self.name,
            redirect_uris,
            grant_types,
            token_endpoint_auth_method: TokenEndpointAuthMethod::parse(method).ok_or_else(
                || {
                    corrupt(
                        "token_endpoint_auth_method",
                        method,
                        &"unknown authentication method",
                    )
                },
            )?,
            allowed_scopes: ScopeSet::from_scopes(scopes),
            secret_hash,
            api_audience: self.api_audience,
            first_party: self.first_party,
            id_token_signed_response_alg: SigningAlg::parse(alg).ok_or_else(|| {
                corrupt("id_token_signed_response_alg", alg, &"unknown algorithm")
            })?,
            jwks: self.jwks,
            jwks_uri: self.jwks_uri,
            is_management: self.is_management,
            created_at: self.created_at,
            updated_at: self.updated_at,
            id: ClientId::parse(&id).map_err(|e| corrupt("id", &id, &e))?,
        })
    }
}

/// An `operator_tokens` row as stored.
#[derive(Debug, Clone)]
pub struct OperatorTokenRow {
    /// `id`.
    pub id: String,
    /// `name`.
    pub name: String,
    /// `token_hash`.
    pub token_hash: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
}

impl OperatorTokenRow {
    /// The operator token record this row stores.
    pub fn decode(self) -> Result<OperatorToken, StoreError> {
        let id = self.id;
        Ok(OperatorToken {
            id: OperatorTokenId::parse(&id)
                .map_err(|e| StoreError::Corrupt(format!("operator_tokens.id {id:?}: {e}")))?,
            name: self.name,
            token_hash: SecretHash::from_bytes(&self.token_hash).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "operator_tokens.token_hash of {id}: {} bytes, not 32",
                    self.token_hash.len()
                ))
            })?,
            created_at: self.created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> ApplicationRow {
        ApplicationRow {
            id: "app_01jd0000000000000000000000".into(),
            tenant_id: "ten_01jd0000000000000000000000".into(),
            name: "x".into(),
            redirect_uris: r#"["https://a.example/cb"]"#.into(),
            grant_types: r#"["client_credentials"]"#.into(),
            allowed_scopes: r#"["a:read"]"#.into(),
            token_endpoint_auth_method: "client_secret_basic".into(),
            secret_hash: Some(vec![0; 32]),
            api_audience: None,
            first_party: true,
            id_token_signed_response_alg: "RS256".into(),
            jwks: None,
            jwks_uri: None,
            is_management: false,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    /// A column name and how to spoil that column.
    type Spoil = fn(&mut ApplicationRow);

    #[test]
    fn a_well_formed_row_decodes_and_each_bad_column_is_named() {
        let app = row().decode().unwrap();
        assert_eq!(app.grant_types, vec![GrantType::ClientCredentials]);
        assert!(app.allowed_scopes.contains("a:read"));
        let cases: [(&str, Spoil); 6] = [
            ("redirect_uris", |r| {
                r.redirect_uris = r#"["http://evil.example/cb"]"#.into()
            }),
            ("grant_types", |r| r.grant_types = r#"["password"]"#.into()),
            ("allowed_scopes", |r| r.allowed_scopes = "not json".into()),
            ("token_endpoint_auth_method", |r| {
                r.token_endpoint_auth_method = "magic".into()
            }),
            ("secret_hash", |r| r.secret_hash = Some(vec![1; 3])),
            ("id_token_signed_response_alg", |r| {
                r.id_token_signed_response_alg = "none".into()
            }),
        ];
        for (column, spoil) in cases {
            let mut bad = row();
            spoil(&mut bad);
            match bad.decode() {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains(column), "{column}: {message}")
                }
                other => panic!("{column}: expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn string_lists_round_trip_as_json_arrays() {
        let text = encode_strings(["a", "b \"c\""]).unwrap();
        assert_eq!(
            decode_strings(&text, "t.c", "x").unwrap(),
            vec!["a", "b \"c\""]
        );
        assert!(matches!(
            decode_strings("{}", "t.c", "x"),
            Err(StoreError::Corrupt(_))
        ));
    }
}

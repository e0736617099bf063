//! Backend-neutral row forms: what a backend reads out of a row (plain text, bytes, booleans,
//! instants) and the ONE place where stored values become domain types. SQL differs per dialect;
//! this conversion must not, so both backends fetch a row form and call `decode`. A value that
//! does not parse back is [`StoreError::Corrupt`] naming the table, column and record.

mod webhooks;

pub use webhooks::{AttemptRow, DeliveryRow, SubscriptionRow, encode_event_types};

use crate::{CounterState, StoreError};
use std::fmt::Display;
use svc_domain::{
    Application, AuthorizationCode, ClientId, Consent, Email, GrantType, Interaction,
    InteractionId, OperatorToken, OperatorTokenId, PairwiseSecret, PasswordHash, RedirectUri,
    RefreshFamily, RefreshFamilyId, RefreshToken, Scope, ScopeSet, SecretHash, Session, SessionId,
    SigningAlg, Tenant, TenantId, TenantSlug, TenantStatus, TokenEndpointAuthMethod, User, UserId,
    UserStatus, UserToken, UserTokenPurpose,
};
use time::OffsetDateTime;

/// Encodes list-valued columns (redirect URIs, grant types, scopes) as a JSON array of strings.
pub fn encode_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<String, StoreError> {
    let items: Vec<&str> = items.into_iter().collect();
    serde_json::to_string(&items)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON array: {e}")))
}

/// Encodes a scope set the way every scope column stores it: a JSON array of the scopes, sorted.
pub fn encode_scopes(scopes: &ScopeSet) -> Result<String, StoreError> {
    encode_strings(scopes.iter().map(Scope::as_str))
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
    /// `post_logout_redirect_uris` (JSON array text).
    pub post_logout_redirect_uris: String,
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
        let post_logout_redirect_uris = decode_strings(
            &self.post_logout_redirect_uris,
            "applications.post_logout_redirect_uris",
            &id,
        )?
        .iter()
        .map(|uri| {
            RedirectUri::parse(uri).map_err(|e| corrupt("post_logout_redirect_uris", uri, &e))
        })
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
            post_logout_redirect_uris,
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

/// Names one stored record in [`StoreError::Corrupt`] messages and parses its columns: every
/// message reads `table.column value of record: why`.
struct Record<'a> {
    table: &'static str,
    name: &'a str,
}

impl Record<'_> {
    fn corrupt(&self, column: &str, value: &dyn Display, why: &dyn Display) -> StoreError {
        StoreError::Corrupt(format!(
            "{}.{column} {value} of {}: {why}",
            self.table, self.name
        ))
    }

    /// Parses a text column with `parse`, naming the column and value on failure.
    fn parse<T, E: Display>(
        &self,
        column: &str,
        value: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, StoreError> {
        parse(value).map_err(|e| self.corrupt(column, &format_args!("{value:?}"), &e))
    }

    /// Parses an optional text column.
    fn parse_opt<T, E: Display>(
        &self,
        column: &str,
        value: Option<&str>,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, StoreError> {
        value.map(|v| self.parse(column, v, parse)).transpose()
    }

    /// A 32-byte SHA-256 column.
    fn hash(&self, column: &str, bytes: &[u8]) -> Result<SecretHash, StoreError> {
        SecretHash::from_bytes(bytes).ok_or_else(|| {
            self.corrupt(
                column,
                &format_args!("({} bytes)", bytes.len()),
                &"not 32 bytes",
            )
        })
    }

    /// A JSON array of strings.
    fn strings(&self, column: &str, text: &str) -> Result<Vec<String>, StoreError> {
        serde_json::from_str(text).map_err(|e| {
            self.corrupt(
                column,
                &format_args!("{text:?}"),
                &format_args!("not a JSON array of strings: {e}"),
            )
        })
    }

    /// A JSON array of scopes (see [`encode_scopes`]).
    fn scopes(&self, column: &str, text: &str) -> Result<ScopeSet, StoreError> {
        self.strings(column, text)?
            .iter()
            .map(|scope| self.parse(column, scope, Scope::parse))
            .collect::<Result<Vec<_>, _>>()
            .map(ScopeSet::from_scopes)
    }
}

/// How a record keyed by a hash is named in messages: a short prefix of the hash (the hash of a
/// 256-bit secret; four bytes of it reveal nothing and are enough to find the row).
fn hash_name(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("hash {hex}…")
}

/// A `tenants` row as stored.
#[derive(Debug, Clone)]
pub struct TenantRow {
    /// `id`.
    pub id: String,
    /// `slug`.
    pub slug: String,
    /// `display_name`.
    pub display_name: String,
    /// `status`.
    pub status: String,
    /// `signup_enabled`.
    pub signup_enabled: bool,
    /// `pairwise_secret` (32 bytes).
    pub pairwise_secret: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
}

impl TenantRow {
    /// The tenant this row stores.
    pub fn decode(self) -> Result<Tenant, StoreError> {
        let r = Record {
            table: "tenants",
            name: &self.id,
        };
        Ok(Tenant {
            id: r.parse("id", &self.id, TenantId::parse)?,
            slug: r.parse("slug", &self.slug, TenantSlug::parse)?,
            status: r.parse("status", &self.status, |s| {
                TenantStatus::parse(s).ok_or("unknown status")
            })?,
            pairwise_secret: PairwiseSecret::from_bytes(&self.pairwise_secret).ok_or_else(
                || {
                    r.corrupt(
                        "pairwise_secret",
                        &format_args!("({} bytes)", self.pairwise_secret.len()),
                        &"not 32 bytes",
                    )
                },
            )?,
            display_name: self.display_name,
            signup_enabled: self.signup_enabled,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `users` row as stored.
#[derive(Debug, Clone)]
pub struct UserRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `email` (normalised).
    pub email: String,
    /// `email_verified`.
    pub email_verified: bool,
    /// `name`.
    pub name: Option<String>,
    /// `given_name`.
    pub given_name: Option<String>,
    /// `family_name`.
    pub family_name: Option<String>,
    /// `status`.
    pub status: String,
    /// `password_hash` (PHC string).
    pub password_hash: Option<String>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `updated_at`.
    pub updated_at: OffsetDateTime,
    /// `last_sign_in_at`.
    pub last_sign_in_at: Option<OffsetDateTime>,
}

impl UserRow {
    /// The user this row stores.
    pub fn decode(self) -> Result<User, StoreError> {
        let r = Record {
            table: "users",
            name: &self.id,
        };
        Ok(User {
            id: r.parse("id", &self.id, UserId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            email: r.parse("email", &self.email, Email::parse)?,
            status: r.parse("status", &self.status, |s| {
                UserStatus::parse(s).ok_or("unknown status")
            })?,
            email_verified: self.email_verified,
            name: self.name,
            given_name: self.given_name,
            family_name: self.family_name,
            password_hash: self.password_hash.map(PasswordHash::new),
            created_at: self.created_at,
            updated_at: self.updated_at,
            last_sign_in_at: self.last_sign_in_at,
        })
    }
}

/// A `sessions` row as stored.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `secret_hash` (32 bytes).
    pub secret_hash: Vec<u8>,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `auth_time`.
    pub auth_time: OffsetDateTime,
    /// `amr` (JSON array text).
    pub amr: String,
    /// `acr`.
    pub acr: Option<String>,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `last_seen_at`.
    pub last_seen_at: OffsetDateTime,
    /// `revoked_at`.
    pub revoked_at: Option<OffsetDateTime>,
    /// `user_agent`.
    pub user_agent: Option<String>,
    /// `ip`.
    pub ip: Option<String>,
}

impl SessionRow {
    /// The session this row stores.
    pub fn decode(self) -> Result<Session, StoreError> {
        let r = Record {
            table: "sessions",
            name: &self.id,
        };
        Ok(Session {
            id: r.parse("id", &self.id, SessionId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            secret_hash: r.hash("secret_hash", &self.secret_hash)?,
            amr: r.strings("amr", &self.amr)?,
            created_at: self.created_at,
            auth_time: self.auth_time,
            acr: self.acr,
            expires_at: self.expires_at,
            last_seen_at: self.last_seen_at,
            revoked_at: self.revoked_at,
            user_agent: self.user_agent,
            ip: self.ip,
        })
    }
}

/// A `user_tokens` row as stored.
#[derive(Debug, Clone)]
pub struct UserTokenRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `purpose`.
    pub purpose: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `used_at`.
    pub used_at: Option<OffsetDateTime>,
}

impl UserTokenRow {
    /// The one-time link token this row stores.
    pub fn decode(self) -> Result<UserToken, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "user_tokens",
            name: &name,
        };
        Ok(UserToken {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            purpose: r.parse("purpose", &self.purpose, |s| {
                UserTokenPurpose::parse(s).ok_or("unknown purpose")
            })?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

/// A `counters` row as stored.
#[derive(Debug, Clone)]
pub struct CounterRow {
    /// `key`.
    pub key: String,
    /// `count`.
    pub count: i64,
    /// `window_ends_at`.
    pub window_ends_at: OffsetDateTime,
}

impl CounterRow {
    /// The counter state this row stores.
    pub fn decode(self) -> Result<CounterState, StoreError> {
        let r = Record {
            table: "counters",
            name: &self.key,
        };
        Ok(CounterState {
            count: u32::try_from(self.count).map_err(|e| r.corrupt("count", &self.count, &e))?,
            window_ends_at: self.window_ends_at,
        })
    }
}

/// An `interactions` row as stored.
#[derive(Debug, Clone)]
pub struct InteractionRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `request` (opaque to storage).
    pub request: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
}

impl InteractionRow {
    /// The interaction this row stores.
    pub fn decode(self) -> Result<Interaction, StoreError> {
        let r = Record {
            table: "interactions",
            name: &self.id,
        };
        Ok(Interaction {
            id: r.parse("id", &self.id, InteractionId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            request: self.request,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

/// A `consents` row as stored.
#[derive(Debug, Clone)]
pub struct ConsentRow {
    /// `tenant_id`.
    pub tenant_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `subject`.
    pub subject: String,
    /// `granted_at`.
    pub granted_at: OffsetDateTime,
}

impl ConsentRow {
    /// The consent this row stores.
    pub fn decode(self) -> Result<Consent, StoreError> {
        let name = format!("{}/{}", self.user_id, self.client_id);
        let r = Record {
            table: "consents",
            name: &name,
        };
        Ok(Consent {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            subject: self.subject,
            granted_at: self.granted_at,
        })
    }
}

/// An `authorization_codes` row as stored.
#[derive(Debug, Clone)]
pub struct AuthorizationCodeRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `session_id`.
    pub session_id: String,
    /// `redirect_uri`.
    pub redirect_uri: String,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `code_challenge`.
    pub code_challenge: Option<String>,
    /// `nonce`.
    pub nonce: Option<String>,
    /// `auth_time`.
    pub auth_time: OffsetDateTime,
    /// `acr`.
    pub acr: Option<String>,
    /// `amr` (JSON array text).
    pub amr: String,
    /// `claims` (JSON text, opaque to storage).
    pub claims: Option<String>,
    /// `subject`.
    pub subject: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `redeemed_at`.
    pub redeemed_at: Option<OffsetDateTime>,
    /// `issued_family_id`.
    pub issued_family_id: Option<String>,
    /// `issued_access_jti`.
    pub issued_access_jti: Option<String>,
    /// `issued_access_expires_at`.
    pub issued_access_expires_at: Option<OffsetDateTime>,
}

impl AuthorizationCodeRow {
    /// The authorization code this row stores.
    pub fn decode(self) -> Result<AuthorizationCode, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "authorization_codes",
            name: &name,
        };
        Ok(AuthorizationCode {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            session_id: r.parse("session_id", &self.session_id, SessionId::parse)?,
            redirect_uri: r.parse("redirect_uri", &self.redirect_uri, RedirectUri::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            amr: r.strings("amr", &self.amr)?,
            issued_family: r.parse_opt(
                "issued_family_id",
                self.issued_family_id.as_deref(),
                RefreshFamilyId::parse,
            )?,
            code_challenge: self.code_challenge,
            nonce: self.nonce,
            auth_time: self.auth_time,
            acr: self.acr,
            claims: self.claims,
            subject: self.subject,
            created_at: self.created_at,
            expires_at: self.expires_at,
            redeemed_at: self.redeemed_at,
            issued_access_jti: self.issued_access_jti,
            issued_access_expires_at: self.issued_access_expires_at,
        })
    }
}

/// A `refresh_families` row as stored.
#[derive(Debug, Clone)]
pub struct RefreshFamilyRow {
    /// `id`.
    pub id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `client_id`.
    pub client_id: String,
    /// `user_id`.
    pub user_id: String,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `subject`.
    pub subject: String,
    /// `auth_time`.
    pub auth_time: OffsetDateTime,
    /// `acr`.
    pub acr: Option<String>,
    /// `amr` (JSON array text).
    pub amr: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `revoked_at`.
    pub revoked_at: Option<OffsetDateTime>,
    /// `revoke_reason`.
    pub revoke_reason: Option<String>,
}

impl RefreshFamilyRow {
    /// The refresh-token family this row stores.
    pub fn decode(self) -> Result<RefreshFamily, StoreError> {
        let r = Record {
            table: "refresh_families",
            name: &self.id,
        };
        Ok(RefreshFamily {
            id: r.parse("id", &self.id, RefreshFamilyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            client_id: r.parse("client_id", &self.client_id, ClientId::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            session_id: r.parse_opt("session_id", self.session_id.as_deref(), SessionId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            amr: r.strings("amr", &self.amr)?,
            subject: self.subject,
            auth_time: self.auth_time,
            acr: self.acr,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            revoke_reason: self.revoke_reason,
        })
    }
}

/// A `refresh_tokens` row as stored.
#[derive(Debug, Clone)]
pub struct RefreshTokenRow {
    /// `hash` (32 bytes).
    pub hash: Vec<u8>,
    /// `family_id`.
    pub family_id: String,
    /// `tenant_id`.
    pub tenant_id: String,
    /// `scope` (JSON array text).
    pub scope: String,
    /// `created_at`.
    pub created_at: OffsetDateTime,
    /// `expires_at`.
    pub expires_at: OffsetDateTime,
    /// `rotated_at`.
    pub rotated_at: Option<OffsetDateTime>,
}

impl RefreshTokenRow {
    /// The refresh token this row stores.
    pub fn decode(self) -> Result<RefreshToken, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "refresh_tokens",
            name: &name,
        };
        Ok(RefreshToken {
            hash: r.hash("hash", &self.hash)?,
            family_id: r.parse("family_id", &self.family_id, RefreshFamilyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            scope: r.scopes("scope", &self.scope)?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            rotated_at: self.rotated_at,
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
            post_logout_redirect_uris: "[]".into(),
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

    const AT: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;
    const TENANT: &str = "ten_01jd0000000000000000000000";
    const USER: &str = "usr_01jd0000000000000000000000";
    const CLIENT: &str = "app_01jd0000000000000000000000";
    const SESSION: &str = "ses_01jd0000000000000000000000";
    const FAMILY: &str = "rtf_01jd0000000000000000000000";

    /// A `table.column` and how to spoil that column of a row form `R`.
    type Case<'a, R> = (&'a str, fn(&mut R));

    /// `good` decodes; each spoiled copy is Corrupt naming its `table.column`, never the hash.
    fn check<R: Clone, T: std::fmt::Debug>(
        good: R,
        decode: fn(R) -> Result<T, StoreError>,
        cases: &[Case<'_, R>],
    ) {
        decode(good.clone()).unwrap();
        for (column, spoil) in cases {
            let mut bad = good.clone();
            spoil(&mut bad);
            match decode(bad) {
                Err(StoreError::Corrupt(message)) => {
                    assert!(message.contains(column), "{column}: {message}");
                    assert!(
                        !message.contains(&"07".repeat(32)),
                        "hash leaked: {message}"
                    );
                }
                other => panic!("{column}: expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn identity_rows_decode_and_name_each_bad_column() {
        let tenant = TenantRow {
            id: TENANT.into(),
            slug: "acme".into(),
            display_name: "Acme".into(),
            status: "active".into(),
            signup_enabled: true,
            pairwise_secret: vec![1; 32],
            created_at: AT,
            updated_at: AT,
        };
        check(
            tenant,
            TenantRow::decode,
            &[
                ("tenants.pairwise_secret", |r| {
                    r.pairwise_secret = vec![1; 3]
                }),
                ("tenants.status", |r| r.status = "deleted".into()),
            ],
        );
        let user = UserRow {
            id: USER.into(),
            tenant_id: TENANT.into(),
            email: "ada@example.com".into(),
            email_verified: true,
            name: None,
            given_name: None,
            family_name: None,
            status: "invited".into(),
            password_hash: Some("$argon2id$x".into()),
            created_at: AT,
            updated_at: AT,
            last_sign_in_at: None,
        };
        check(
            user,
            UserRow::decode,
            &[
                ("users.email", |r| r.email = "nope".into()),
                ("users.status", |r| r.status = "gone".into()),
                ("users.tenant_id", |r| r.tenant_id = USER.into()),
            ],
        );
        let session = SessionRow {
            id: SESSION.into(),
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            secret_hash: vec![7; 32],
            created_at: AT,
            auth_time: AT,
            amr: r#"["pwd"]"#.into(),
            acr: None,
            expires_at: AT,
            last_seen_at: AT,
            revoked_at: None,
            user_agent: None,
            ip: None,
        };
        check(
            session,
            SessionRow::decode,
            &[
                ("sessions.amr", |r| r.amr = "{}".into()),
                ("sessions.secret_hash", |r| r.secret_hash = vec![7; 31]),
            ],
        );
        let token = UserTokenRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            purpose: "invitation".into(),
            created_at: AT,
            expires_at: AT,
            used_at: None,
        };
        check(
            token,
            UserTokenRow::decode,
            &[("user_tokens.purpose", |r| r.purpose = "magic".into())],
        );
        let counter = CounterRow {
            key: "k".into(),
            count: 1,
            window_ends_at: AT,
        };
        check(
            counter,
            CounterRow::decode,
            &[("counters.count", |r| r.count = -1)],
        );
        let interaction = InteractionRow {
            id: "int_01jd0000000000000000000000".into(),
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            request: "{}".into(),
            created_at: AT,
            expires_at: AT,
        };
        check(
            interaction,
            InteractionRow::decode,
            &[("interactions.id", |r| r.id = USER.into())],
        );
        let consent = ConsentRow {
            tenant_id: TENANT.into(),
            user_id: USER.into(),
            client_id: CLIENT.into(),
            scope: r#"["openid","profile"]"#.into(),
            subject: "s".into(),
            granted_at: AT,
        };
        check(
            consent,
            ConsentRow::decode,
            &[
                ("consents.scope", |r| r.scope = r#"["a b"]"#.into()),
                ("consents.client_id", |r| r.client_id = USER.into()),
            ],
        );
    }

    #[test]
    fn grant_rows_decode_and_name_each_bad_column() {
        let code = AuthorizationCodeRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            user_id: USER.into(),
            session_id: SESSION.into(),
            redirect_uri: "https://a.example/cb".into(),
            scope: r#"["openid"]"#.into(),
            code_challenge: None,
            nonce: None,
            auth_time: AT,
            acr: None,
            amr: "[]".into(),
            claims: None,
            subject: USER.into(),
            created_at: AT,
            expires_at: AT,
            redeemed_at: None,
            issued_family_id: Some(FAMILY.into()),
            issued_access_jti: None,
            issued_access_expires_at: None,
        };
        check(
            code,
            AuthorizationCodeRow::decode,
            &[
                ("authorization_codes.hash", |r| r.hash = vec![7; 33]),
                ("authorization_codes.redirect_uri", |r| {
                    r.redirect_uri = "http://e.example".into()
                }),
                ("authorization_codes.scope", |r| r.scope = "openid".into()),
                ("authorization_codes.session_id", |r| {
                    r.session_id = USER.into()
                }),
                ("authorization_codes.issued_family_id", |r| {
                    r.issued_family_id = Some(USER.into())
                }),
            ],
        );
        let family = RefreshFamilyRow {
            id: FAMILY.into(),
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            user_id: USER.into(),
            session_id: Some(SESSION.into()),
            scope: r#"["offline_access"]"#.into(),
            subject: "s".into(),
            auth_time: AT,
            acr: None,
            amr: r#"["pwd"]"#.into(),
            created_at: AT,
            expires_at: AT,
            revoked_at: None,
            revoke_reason: None,
        };
        check(
            family,
            RefreshFamilyRow::decode,
            &[
                ("refresh_families.session_id", |r| {
                    r.session_id = Some(FAMILY.into())
                }),
                ("refresh_families.amr", |r| r.amr = "[1]".into()),
            ],
        );
        let token = RefreshTokenRow {
            hash: vec![7; 32],
            family_id: FAMILY.into(),
            tenant_id: TENANT.into(),
            scope: "[]".into(),
            created_at: AT,
            expires_at: AT,
            rotated_at: None,
        };
        check(
            token,
            RefreshTokenRow::decode,
            &[
                ("refresh_tokens.family_id", |r| r.family_id = USER.into()),
                ("refresh_tokens.hash", |r| r.hash = Vec::new()),
            ],
        );
    }

    #[test]
    fn scopes_are_stored_as_sorted_json_arrays() {
        let set = ScopeSet::parse("profile openid").unwrap();
        assert_eq!(encode_scopes(&set).unwrap(), r#"["openid","profile"]"#);
    }
}

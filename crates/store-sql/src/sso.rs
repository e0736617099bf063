//! Enterprise single sign-on: its statements, its row forms ([`ConnectionRow`], [`AttemptRow`],
//! [`LinkRow`]) and the `SsoReads`/`SsoWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant (and the organization, but for an attempt, found by its
//! hash), so another tenant's rows read as absent and no write reaches them. A connection is
//! stored by one upsert on its key (tenant, organization) that changes every column but
//! `created_at`; it references its organization by (tenant, id), and a link its organization and
//! its person the same way, so neither can point into another tenant. Deleting a connection
//! deletes its organization's links first, in the same transaction.
//!
//! An attempt is spent by one conditional `UPDATE … WHERE used_at IS NULL AND <unexpired>
//! RETURNING`, exactly like a WebAuthn ceremony (see `passkeys`): only the call that changed the
//! row gets it back, so one attempt admits one callback however many race. Its expiry is compared
//! on the `expires_at_ns` twin on SQLite and on `expires_at` itself on PostgreSQL.
//!
//! `scopes` is a JSON array of the scopes in the order configured (text on SQLite, `jsonb` on
//! PostgreSQL, which keeps an array's order). SQLite names no foreign key; a link has two, so the
//! SQLite backend's unnamed failure is told apart by whether the organization is the tenant's.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, encode_strings, hash_name};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    InteractionId, OrganizationId, SecretHash, SsoAttempt, SsoClientAuth, SsoConnection, SsoLink,
    TenantId, UpstreamMetadata, UserId,
};
use svc_store::{SsoReads, SsoWrites, StoreError};
use time::OffsetDateTime;

/// The foreign key of `sso_connections` to its organization, its only one.
const CONNECTION_ORGANIZATION_FKEY: &str = "sso_connections_organization_fkey";
/// The foreign key of `sso_attempts` to its tenant, its only one.
const ATTEMPT_TENANT_FKEY: &str = "sso_attempts_tenant_id_fkey";
/// The foreign key of `sso_links` to its organization.
const LINK_ORGANIZATION_FKEY: &str = "sso_links_organization_fkey";
/// The foreign key of `sso_links` to its person.
const LINK_USER_FKEY: &str = "sso_links_user_fkey";

const SELECT_CONNECTION: &str = "SELECT tenant_id, organization_id, issuer, \
     authorization_endpoint, token_endpoint, jwks_uri, userinfo_endpoint, iss_parameter, client_id, \
     token_endpoint_auth_method, sealed_secret, scopes, enforced, created_at, updated_at \
     FROM sso_connections \
     WHERE tenant_id = $1 AND organization_id = $2";
// Every column but the key and created_at is replaced.
const PUT_CONNECTION: &str = "INSERT INTO sso_connections (tenant_id, organization_id, issuer, \
     authorization_endpoint, token_endpoint, jwks_uri, userinfo_endpoint, iss_parameter, client_id, \
     token_endpoint_auth_method, sealed_secret, scopes, enforced, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
     ON CONFLICT (tenant_id, organization_id) DO UPDATE SET issuer = excluded.issuer, \
     authorization_endpoint = excluded.authorization_endpoint, \
     token_endpoint = excluded.token_endpoint, jwks_uri = excluded.jwks_uri, \
     userinfo_endpoint = excluded.userinfo_endpoint, \
     iss_parameter = excluded.iss_parameter, client_id = excluded.client_id, \
     token_endpoint_auth_method = excluded.token_endpoint_auth_method, \
     sealed_secret = excluded.sealed_secret, scopes = excluded.scopes, \
     enforced = excluded.enforced, updated_at = excluded.updated_at";
const DELETE_CONNECTION: &str =
    "DELETE FROM sso_connections WHERE tenant_id = $1 AND organization_id = $2";
const DELETE_ORGANIZATION_LINKS: &str =
    "DELETE FROM sso_links WHERE tenant_id = $1 AND organization_id = $2";

const INSERT_ATTEMPT: PerDialect = PerDialect {
    sqlite: "INSERT INTO sso_attempts (hash, tenant_id, organization_id, interaction_id, \
         created_at, expires_at, expires_at_ns, used_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    postgres: "INSERT INTO sso_attempts (hash, tenant_id, organization_id, interaction_id, \
         created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
};
const TAKE_ATTEMPT: PerDialect = PerDialect {
    sqlite: "UPDATE sso_attempts SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at_ns > $4 \
         RETURNING hash, tenant_id, organization_id, interaction_id, created_at, expires_at, \
         used_at",
    postgres: "UPDATE sso_attempts SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at > $4 \
         RETURNING hash, tenant_id, organization_id, interaction_id, created_at, expires_at, \
         used_at",
};

const SELECT_LINK: &str = "SELECT tenant_id, organization_id, subject, user_id, created_at \
     FROM sso_links WHERE tenant_id = $1 AND organization_id = $2 AND subject = $3";
const INSERT_LINK: &str = "INSERT INTO sso_links (tenant_id, organization_id, subject, user_id, \
     created_at) VALUES ($1, $2, $3, $4, $5)";
/// Which of a link's two foreign keys failed, on SQLite, which does not say.
const ORGANIZATION_EXISTS: &str = "SELECT id FROM organizations WHERE tenant_id = $1 AND id = $2";

#[async_trait]
impl<D: Dialect> SsoReads for SqlTx<D> {
    async fn sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Option<SsoConnection>, StoreError> {
        Stmt::new(SELECT_CONNECTION)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_connection::<D>)
            .await
    }

    async fn sso_link(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        subject: &str,
    ) -> Result<Option<SsoLink>, StoreError> {
        Stmt::new(SELECT_LINK)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(subject)
            .fetch_optional_with::<D, _>(self.conn(), decode_link::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> SsoWrites for SqlTx<D> {
    /// One upsert (see the module documentation).
    async fn put_sso_connection(&mut self, connection: &SsoConnection) -> Result<(), StoreError> {
        let provider = &connection.provider;
        Stmt::new(PUT_CONNECTION)
            .bind(connection.tenant_id.as_str())
            .bind(connection.organization_id.as_str())
            .bind(provider.issuer.as_str())
            .bind(provider.authorization_endpoint.as_str())
            .bind(provider.token_endpoint.as_str())
            .bind(provider.jwks_uri.as_str())
            .bind(provider.userinfo_endpoint.as_deref())
            .bind(provider.iss_parameter)
            .bind(connection.client_id.as_str())
            .bind(connection.client_auth.method())
            .bind(match &connection.client_auth {
                SsoClientAuth::SecretBasic { sealed_secret } => Some(sealed_secret.as_slice()),
                SsoClientAuth::PrivateKeyJwt => None,
            })
            .bind_json(encode_strings(
                connection.scopes.iter().map(String::as_str),
            )?)
            .bind(connection.enforced)
            .bind(connection.created_at)
            .bind(connection.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, CONNECTION_ORGANIZATION_FKEY))?;
        Ok(())
    }

    async fn delete_sso_connection(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<bool, StoreError> {
        Stmt::new(DELETE_ORGANIZATION_LINKS)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .execute::<D>(self.conn())
            .await?;
        let deleted = Stmt::new(DELETE_CONNECTION)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn insert_sso_attempt(&mut self, attempt: &SsoAttempt) -> Result<(), StoreError> {
        Stmt::new(INSERT_ATTEMPT.pick::<D>())
            .bind(attempt.hash.as_bytes())
            .bind(attempt.tenant_id.as_str())
            .bind(attempt.organization_id.as_str())
            .bind(attempt.interaction_id.as_ref().map(InteractionId::as_str))
            .bind(attempt.created_at)
            .bind(attempt.expires_at)
            .bind_twin(attempt.expires_at)
            .bind(attempt.used_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, ATTEMPT_TENANT_FKEY))?;
        Ok(())
    }

    /// One conditional `UPDATE … RETURNING` (see the module documentation).
    async fn take_sso_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SsoAttempt>, StoreError> {
        Stmt::new(TAKE_ATTEMPT.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_attempt::<D>)
            .await
    }

    /// PostgreSQL names the failed foreign key; SQLite does not, so its failure is the
    /// organization's when the organization is not the tenant's, else the person's. (Only the
    /// SQLite backend reports an unnamed one, and a failed statement leaves its transaction
    /// usable there.)
    async fn insert_sso_link(&mut self, link: &SsoLink) -> Result<(), StoreError> {
        let inserted = Stmt::new(INSERT_LINK)
            .bind(link.tenant_id.as_str())
            .bind(link.organization_id.as_str())
            .bind(link.subject.as_str())
            .bind(link.user_id.as_str())
            .bind(link.created_at)
            .execute::<D>(self.conn())
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(StoreError::Conflict { constraint })
                if constraint == naming::UNNAMED_FOREIGN_KEY =>
            {
                let organization = Stmt::new(ORGANIZATION_EXISTS)
                    .bind(link.tenant_id.as_str())
                    .bind(link.organization_id.as_str())
                    .fetch_optional::<D>(self.conn())
                    .await?;
                let constraint = if organization.is_some() {
                    LINK_USER_FKEY
                } else {
                    LINK_ORGANIZATION_FKEY
                };
                Err(StoreError::Conflict {
                    constraint: constraint.to_owned(),
                })
            }
            Err(other) => Err(other),
        }
    }
}

fn decode_connection<D: Dialect>(row: &Row<D>) -> Result<SsoConnection, StoreError> {
    let c = Columns::<D>::new(row, "sso_connections");
    ConnectionRow {
        tenant_id: c.get("tenant_id")?,
        organization_id: c.get("organization_id")?,
        issuer: c.get("issuer")?,
        authorization_endpoint: c.get("authorization_endpoint")?,
        token_endpoint: c.get("token_endpoint")?,
        jwks_uri: c.get("jwks_uri")?,
        userinfo_endpoint: c.get("userinfo_endpoint")?,
        iss_parameter: c.get("iss_parameter")?,
        client_id: c.get("client_id")?,
        token_endpoint_auth_method: c.get("token_endpoint_auth_method")?,
        sealed_secret: c.get("sealed_secret")?,
        scopes: c.json("scopes")?,
        enforced: c.get("enforced")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

fn decode_attempt<D: Dialect>(row: &Row<D>) -> Result<SsoAttempt, StoreError> {
    let c = Columns::<D>::new(row, "sso_attempts");
    AttemptRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        organization_id: c.get("organization_id")?,
        interaction_id: c.get("interaction_id")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}

fn decode_link<D: Dialect>(row: &Row<D>) -> Result<SsoLink, StoreError> {
    let c = Columns::<D>::new(row, "sso_links");
    LinkRow {
        tenant_id: c.get("tenant_id")?,
        organization_id: c.get("organization_id")?,
        subject: c.get("subject")?,
        user_id: c.get("user_id")?,
        created_at: c.get("created_at")?,
    }
    .decode()
}

/// A `sso_connections` row as stored. No `Debug`: it holds the sealed client secret.
#[derive(Clone)]
struct ConnectionRow {
    tenant_id: String,
    organization_id: String,
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    userinfo_endpoint: Option<String>,
    iss_parameter: bool,
    client_id: String,
    /// `client_secret_basic` or `private_key_jwt`.
    token_endpoint_auth_method: String,
    /// Never empty with `client_secret_basic`; absent with `private_key_jwt`.
    sealed_secret: Option<Vec<u8>>,
    /// JSON array text of scopes, in the order configured, never empty.
    scopes: String,
    enforced: bool,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl ConnectionRow {
    fn decode(self) -> Result<SsoConnection, StoreError> {
        let r = Record {
            table: "sso_connections",
            name: &self.organization_id,
        };
        let scopes = r.strings("scopes", &self.scopes)?;
        if scopes.is_empty() {
            return Err(r.corrupt("scopes", &self.scopes, &"no scope"));
        }
        let client_auth = match (self.token_endpoint_auth_method.as_str(), self.sealed_secret) {
            (SsoClientAuth::SECRET_BASIC, Some(sealed_secret)) if !sealed_secret.is_empty() => {
                SsoClientAuth::SecretBasic { sealed_secret }
            }
            (SsoClientAuth::PRIVATE_KEY_JWT, None) => SsoClientAuth::PrivateKeyJwt,
            (method, secret) => {
                return Err(r.corrupt(
                    "sealed_secret",
                    &format!("{} bytes", secret.map_or(0, |s| s.len())),
                    &format!("does not fit token_endpoint_auth_method {method:?}"),
                ));
            }
        };
        Ok(SsoConnection {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            organization_id: r.parse(
                "organization_id",
                &self.organization_id,
                OrganizationId::parse,
            )?,
            provider: UpstreamMetadata {
                issuer: self.issuer,
                authorization_endpoint: self.authorization_endpoint,
                token_endpoint: self.token_endpoint,
                jwks_uri: self.jwks_uri,
                userinfo_endpoint: self.userinfo_endpoint,
                iss_parameter: self.iss_parameter,
            },
            client_id: self.client_id,
            client_auth,
            scopes,
            enforced: self.enforced,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `sso_attempts` row as stored.
#[derive(Clone)]
struct AttemptRow {
    /// 32 bytes.
    hash: Vec<u8>,
    tenant_id: String,
    organization_id: String,
    interaction_id: Option<String>,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    used_at: Option<OffsetDateTime>,
}

impl AttemptRow {
    fn decode(self) -> Result<SsoAttempt, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "sso_attempts",
            name: &name,
        };
        Ok(SsoAttempt {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            organization_id: r.parse(
                "organization_id",
                &self.organization_id,
                OrganizationId::parse,
            )?,
            interaction_id: r.parse_opt(
                "interaction_id",
                self.interaction_id.as_deref(),
                InteractionId::parse,
            )?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

/// A `sso_links` row as stored.
#[derive(Debug, Clone)]
struct LinkRow {
    tenant_id: String,
    organization_id: String,
    subject: String,
    user_id: String,
    created_at: OffsetDateTime,
}

impl LinkRow {
    fn decode(self) -> Result<SsoLink, StoreError> {
        let r = Record {
            table: "sso_links",
            name: &self.subject,
        };
        Ok(SsoLink {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            organization_id: r.parse(
                "organization_id",
                &self.organization_id,
                OrganizationId::parse,
            )?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            subject: self.subject,
            created_at: self.created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, assert_twins, check};

    const ORG: &str = "org_01jd0000000000000000000000";
    const INTERACTION: &str = "int_01jd0000000000000000000000";

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(INSERT_ATTEMPT, 1), (TAKE_ATTEMPT, 0)]);
    }

    #[test]
    fn the_take_names_tenant_use_and_expiry_in_one_statement() {
        for sql in [TAKE_ATTEMPT.sqlite, TAKE_ATTEMPT.postgres] {
            assert!(sql.starts_with("UPDATE "), "{sql}");
            for condition in [
                "tenant_id = $1",
                "hash = $2",
                "used_at IS NULL",
                "RETURNING",
            ] {
                assert!(sql.contains(condition), "{condition}: {sql}");
            }
        }
        assert!(TAKE_ATTEMPT.sqlite.contains("expires_at_ns > $4"));
        assert!(TAKE_ATTEMPT.postgres.contains("expires_at > $4"));
    }

    #[test]
    fn the_upsert_keeps_created_at() {
        let (_, update) = PUT_CONNECTION.split_once("DO UPDATE SET").unwrap();
        assert!(!update.contains("created_at"), "{update}");
        for column in [
            "issuer",
            "token_endpoint_auth_method",
            "sealed_secret",
            "scopes",
            "enforced",
            "updated_at",
        ] {
            assert!(
                update.contains(&format!("{column} = excluded.{column}")),
                "{column}"
            );
        }
    }

    #[test]
    fn sso_rows_decode_and_name_each_bad_column() {
        let connection = ConnectionRow {
            tenant_id: TENANT.into(),
            organization_id: ORG.into(),
            issuer: "https://idp.example.com".into(),
            authorization_endpoint: "https://idp.example.com/authorize".into(),
            token_endpoint: "https://idp.example.com/token".into(),
            jwks_uri: "https://idp.example.com/jwks".into(),
            userinfo_endpoint: Some("https://idp.example.com/userinfo".into()),
            iss_parameter: true,
            client_id: "svc".into(),
            token_endpoint_auth_method: "client_secret_basic".into(),
            sealed_secret: Some(vec![0, 7, 0xff]),
            scopes: r#"["openid","profile","email"]"#.into(),
            enforced: false,
            created_at: AT,
            updated_at: AT,
        };
        let decoded = connection.clone().decode().unwrap();
        assert_eq!(decoded.scopes, ["openid", "profile", "email"], "in order");
        let mut keyed = connection.clone();
        keyed.token_endpoint_auth_method = "private_key_jwt".into();
        keyed.sealed_secret = None;
        assert_eq!(
            keyed.decode().unwrap().client_auth,
            SsoClientAuth::PrivateKeyJwt
        );
        check(
            connection,
            ConnectionRow::decode,
            &[
                ("sso_connections.tenant_id", |r| r.tenant_id = ORG.into()),
                ("sso_connections.organization_id", |r| {
                    r.organization_id = TENANT.into();
                }),
                ("sso_connections.scopes", |r| r.scopes = "openid".into()),
                ("sso_connections.scopes", |r| r.scopes = "[]".into()),
                ("sso_connections.sealed_secret", |r| {
                    r.sealed_secret = Some(Vec::new())
                }),
                ("sso_connections.sealed_secret", |r| r.sealed_secret = None),
                ("sso_connections.sealed_secret", |r| {
                    r.token_endpoint_auth_method = "private_key_jwt".into();
                }),
                ("sso_connections.sealed_secret", |r| {
                    r.token_endpoint_auth_method = "client_secret_post".into();
                }),
            ],
        );
        let attempt = AttemptRow {
            hash: vec![7; 32],
            tenant_id: TENANT.into(),
            organization_id: ORG.into(),
            interaction_id: Some(INTERACTION.into()),
            created_at: AT,
            expires_at: AT,
            used_at: None,
        };
        check(
            attempt,
            AttemptRow::decode,
            &[
                ("sso_attempts.hash", |r| r.hash = vec![7; 31]),
                ("sso_attempts.tenant_id", |r| r.tenant_id = USER.into()),
                ("sso_attempts.organization_id", |r| {
                    r.organization_id = USER.into();
                }),
                ("sso_attempts.interaction_id", |r| {
                    r.interaction_id = Some(ORG.into());
                }),
            ],
        );
        let link = LinkRow {
            tenant_id: TENANT.into(),
            organization_id: ORG.into(),
            subject: "248289761001".into(),
            user_id: USER.into(),
            created_at: AT,
        };
        check(
            link,
            LinkRow::decode,
            &[
                ("sso_links.tenant_id", |r| r.tenant_id = USER.into()),
                ("sso_links.organization_id", |r| {
                    r.organization_id = USER.into();
                }),
                ("sso_links.user_id", |r| r.user_id = ORG.into()),
            ],
        );
    }
}

//! Social sign-in: its statements, its row forms ([`ProviderRow`], [`AttemptRow`], [`LinkRow`],
//! [`PendingRow`]) and the `SocialReads`/`SocialWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant, so another tenant's rows read as absent and no write
//! reaches them. A provider is stored by one upsert on its key (tenant, slug) that changes every
//! column but `created_at`. Attempts, links and pending links reference their provider by
//! (tenant, slug) and their person by (tenant, id), so none can point into another tenant, and
//! the foreign keys' cascades delete them with their provider or person: deleting a provider is
//! one statement.
//!
//! An attempt is spent by one conditional `UPDATE … WHERE used_at IS NULL AND <unexpired>
//! RETURNING`, exactly like an SSO attempt (see `sso`); a pending link is taken by one
//! conditional `DELETE … RETURNING`, like a pushed request (see `pushed`): only the call that
//! changed the row gets it back, so each admits one callback or confirmation however many race.
//! Expiries are compared on the `expires_at_ns` twins on SQLite and on `expires_at` itself on
//! PostgreSQL; the purges live with the others in `grants`.
//!
//! A provider's protocol decides which endpoint columns it has (`oidc`: issuer and keys;
//! `oauth2`: a profile endpoint and perhaps GitHub's addresses endpoint), and its client
//! authentication whether Apple's team and key ids are set; `sealed_secret` holds whichever
//! secret is sealed. `scopes` is a JSON array in the order configured (text on SQLite, `jsonb`
//! on PostgreSQL), which may be empty. SQLite names no foreign key and reports a unique
//! constraint by its columns; the renames to PostgreSQL's names are here (see `naming`).

use crate::dialect::{Conn, Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, encode_strings, hash_name};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    InteractionId, PendingSocialLink, ProfileEndpoints, ProviderSlug, SecretHash, SocialAttempt,
    SocialClientAuth, SocialLink, SocialPreset, SocialProtocol, SocialProvider, TenantId,
    UpstreamMetadata, UserId,
};
use svc_store::{SocialReads, SocialWrites, StoreError};
use time::OffsetDateTime;

/// The foreign key of `social_providers` to its tenant, its only one.
const PROVIDER_TENANT_FKEY: &str = "social_providers_tenant_id_fkey";
/// The foreign keys of `social_attempts` to its provider and to the person linking.
const ATTEMPT_PROVIDER_FKEY: &str = "social_attempts_provider_fkey";
const ATTEMPT_LINK_FOR_FKEY: &str = "social_attempts_link_for_fkey";
/// The foreign keys of `social_links` to its provider and its person.
const LINK_PROVIDER_FKEY: &str = "social_links_provider_fkey";
const LINK_USER_FKEY: &str = "social_links_user_fkey";
/// One account of each provider per person: PostgreSQL's name, and what the SQLite backend
/// derives from the columns SQLite reports.
const LINK_USER_PROVIDER_KEY: &str = "social_links_user_provider_key";
const LINK_USER_PROVIDER_COLUMNS: &str = "social_links_tenant_id_user_id_provider_key";
/// The foreign keys of `pending_social_links` to its provider and its person.
const PENDING_PROVIDER_FKEY: &str = "pending_social_links_provider_fkey";
const PENDING_USER_FKEY: &str = "pending_social_links_user_fkey";

macro_rules! select_providers {
    ($where:literal) => {
        concat!(
            "SELECT tenant_id, slug, preset, display_name, protocol, issuer, \
             authorization_endpoint, token_endpoint, jwks_uri, userinfo_endpoint, emails_endpoint, \
             iss_parameter, client_id, token_endpoint_auth_method, sealed_secret, apple_team_id, \
             apple_key_id, scopes, form_post, enabled, created_at, updated_at \
             FROM social_providers ",
            $where
        )
    };
}

const SELECT_PROVIDER: &str = select_providers!("WHERE tenant_id = $1 AND slug = $2");
// Served by the primary key, in its order.
const SELECT_PROVIDERS: &str = select_providers!("WHERE tenant_id = $1 ORDER BY slug");
// Every column but the key and created_at is replaced.
const PUT_PROVIDER: &str = "INSERT INTO social_providers (tenant_id, slug, preset, display_name, \
     protocol, issuer, authorization_endpoint, token_endpoint, jwks_uri, userinfo_endpoint, \
     emails_endpoint, iss_parameter, client_id, token_endpoint_auth_method, sealed_secret, \
     apple_team_id, apple_key_id, scopes, form_post, enabled, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19, $20, $21, $22) \
     ON CONFLICT (tenant_id, slug) DO UPDATE SET preset = excluded.preset, \
     display_name = excluded.display_name, protocol = excluded.protocol, \
     issuer = excluded.issuer, authorization_endpoint = excluded.authorization_endpoint, \
     token_endpoint = excluded.token_endpoint, jwks_uri = excluded.jwks_uri, \
     userinfo_endpoint = excluded.userinfo_endpoint, \
     emails_endpoint = excluded.emails_endpoint, iss_parameter = excluded.iss_parameter, \
     client_id = excluded.client_id, \
     token_endpoint_auth_method = excluded.token_endpoint_auth_method, \
     sealed_secret = excluded.sealed_secret, apple_team_id = excluded.apple_team_id, \
     apple_key_id = excluded.apple_key_id, scopes = excluded.scopes, \
     form_post = excluded.form_post, enabled = excluded.enabled, \
     updated_at = excluded.updated_at";
// Its attempts, links and pending links go by the foreign keys' cascades.
const DELETE_PROVIDER: &str = "DELETE FROM social_providers WHERE tenant_id = $1 AND slug = $2";
/// Which of two foreign keys failed, on SQLite, which does not say.
const PROVIDER_EXISTS: &str =
    "SELECT slug FROM social_providers WHERE tenant_id = $1 AND slug = $2";

const INSERT_ATTEMPT: PerDialect = PerDialect {
    sqlite: "INSERT INTO social_attempts (hash, tenant_id, provider, interaction_id, link_for, \
         created_at, expires_at, expires_at_ns, used_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    postgres: "INSERT INTO social_attempts (hash, tenant_id, provider, interaction_id, link_for, \
         created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
};
const TAKE_ATTEMPT: PerDialect = PerDialect {
    sqlite: "UPDATE social_attempts SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at_ns > $4 \
         RETURNING hash, tenant_id, provider, interaction_id, link_for, created_at, expires_at, \
         used_at",
    postgres: "UPDATE social_attempts SET used_at = $3 \
         WHERE tenant_id = $1 AND hash = $2 AND used_at IS NULL AND expires_at > $4 \
         RETURNING hash, tenant_id, provider, interaction_id, link_for, created_at, expires_at, \
         used_at",
};

const SELECT_LINK: &str = "SELECT tenant_id, provider, subject, user_id, email, created_at \
     FROM social_links WHERE tenant_id = $1 AND provider = $2 AND subject = $3";
// Served by social_links_user_provider_key, in its order.
const SELECT_USER_LINKS: &str = "SELECT tenant_id, provider, subject, user_id, email, created_at \
     FROM social_links WHERE tenant_id = $1 AND user_id = $2 ORDER BY provider";
const INSERT_LINK: &str = "INSERT INTO social_links (tenant_id, provider, subject, user_id, \
     email, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
const DELETE_LINK: &str =
    "DELETE FROM social_links WHERE tenant_id = $1 AND user_id = $2 AND provider = $3";

const INSERT_PENDING: PerDialect = PerDialect {
    sqlite: "INSERT INTO pending_social_links (hash, tenant_id, provider, subject, user_id, \
         email, interaction_id, created_at, expires_at, expires_at_ns) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    postgres: "INSERT INTO pending_social_links (hash, tenant_id, provider, subject, user_id, \
         email, interaction_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
};
const SELECT_PENDING: PerDialect = PerDialect {
    sqlite: "SELECT hash, tenant_id, provider, subject, user_id, email, interaction_id, \
         created_at, expires_at FROM pending_social_links \
         WHERE tenant_id = $1 AND hash = $2 AND expires_at_ns > $3",
    postgres: "SELECT hash, tenant_id, provider, subject, user_id, email, interaction_id, \
         created_at, expires_at FROM pending_social_links \
         WHERE tenant_id = $1 AND hash = $2 AND expires_at > $3",
};
const TAKE_PENDING: PerDialect = PerDialect {
    sqlite: "DELETE FROM pending_social_links \
         WHERE tenant_id = $1 AND hash = $2 AND expires_at_ns > $3 \
         RETURNING hash, tenant_id, provider, subject, user_id, email, interaction_id, \
         created_at, expires_at",
    postgres: "DELETE FROM pending_social_links \
         WHERE tenant_id = $1 AND hash = $2 AND expires_at > $3 \
         RETURNING hash, tenant_id, provider, subject, user_id, email, interaction_id, \
         created_at, expires_at",
};

#[async_trait]
impl<D: Dialect> SocialReads for SqlTx<D> {
    async fn social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<Option<SocialProvider>, StoreError> {
        Stmt::new(SELECT_PROVIDER)
            .bind(tenant.as_str())
            .bind(slug.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode_provider::<D>)
            .await
    }

    async fn social_providers(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<SocialProvider>, StoreError> {
        Stmt::new(SELECT_PROVIDERS)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_provider::<D>)
            .await
    }

    async fn social_link(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
        subject: &str,
    ) -> Result<Option<SocialLink>, StoreError> {
        Stmt::new(SELECT_LINK)
            .bind(tenant.as_str())
            .bind(slug.as_str())
            .bind(subject)
            .fetch_optional_with::<D, _>(self.conn(), decode_link::<D>)
            .await
    }

    async fn social_links_of_user(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
    ) -> Result<Vec<SocialLink>, StoreError> {
        Stmt::new(SELECT_USER_LINKS)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode_link::<D>)
            .await
    }

    async fn pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError> {
        Stmt::new(SELECT_PENDING.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_pending::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> SocialWrites for SqlTx<D> {
    /// One upsert (see the module documentation).
    async fn put_social_provider(&mut self, provider: &SocialProvider) -> Result<(), StoreError> {
        let (protocol, issuer, jwks_uri, userinfo_endpoint, emails_endpoint, iss_parameter) =
            match &provider.protocol {
                SocialProtocol::Oidc(m) => (
                    PROTOCOL_OIDC,
                    Some(m.issuer.as_str()),
                    Some(m.jwks_uri.as_str()),
                    m.userinfo_endpoint.as_deref(),
                    None,
                    m.iss_parameter,
                ),
                SocialProtocol::OAuth2(p) => (
                    PROTOCOL_OAUTH2,
                    None,
                    None,
                    Some(p.userinfo_endpoint.as_str()),
                    p.emails_endpoint.as_deref(),
                    false,
                ),
            };
        let (apple_team_id, apple_key_id) = match &provider.client_auth {
            SocialClientAuth::AppleJwt {
                team_id, key_id, ..
            } => (Some(team_id.as_str()), Some(key_id.as_str())),
            SocialClientAuth::SecretBasic { .. } | SocialClientAuth::SecretPost { .. } => {
                (None, None)
            }
        };
        Stmt::new(PUT_PROVIDER)
            .bind(provider.tenant_id.as_str())
            .bind(provider.slug.as_str())
            .bind(provider.preset.as_str())
            .bind(provider.display_name.as_str())
            .bind(protocol)
            .bind(issuer)
            .bind(provider.protocol.authorization_endpoint())
            .bind(provider.protocol.token_endpoint())
            .bind(jwks_uri)
            .bind(userinfo_endpoint)
            .bind(emails_endpoint)
            .bind(iss_parameter)
            .bind(provider.client_id.as_str())
            .bind(provider.client_auth.method())
            .bind(provider.client_auth.sealed())
            .bind(apple_team_id)
            .bind(apple_key_id)
            .bind_json(encode_strings(provider.scopes.iter().map(String::as_str))?)
            .bind(provider.form_post)
            .bind(provider.enabled)
            .bind(provider.created_at)
            .bind(provider.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, PROVIDER_TENANT_FKEY))?;
        Ok(())
    }

    /// One delete; the foreign keys' cascades take its attempts, links and pending links.
    async fn delete_social_provider(
        &mut self,
        tenant: &TenantId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_PROVIDER)
            .bind(tenant.as_str())
            .bind(slug.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn insert_social_attempt(&mut self, attempt: &SocialAttempt) -> Result<(), StoreError> {
        let inserted = Stmt::new(INSERT_ATTEMPT.pick::<D>())
            .bind(attempt.hash.as_bytes())
            .bind(attempt.tenant_id.as_str())
            .bind(attempt.provider.as_str())
            .bind(attempt.interaction_id.as_ref().map(InteractionId::as_str))
            .bind(attempt.link_for.as_ref().map(UserId::as_str))
            .bind(attempt.created_at)
            .bind(attempt.expires_at)
            .bind_twin(attempt.expires_at)
            .bind(attempt.used_at)
            .execute::<D>(self.conn())
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(e) => Err(name_foreign_key::<D>(
                self.conn(),
                e,
                (&attempt.tenant_id, &attempt.provider),
                ATTEMPT_PROVIDER_FKEY,
                ATTEMPT_LINK_FOR_FKEY,
            )
            .await),
        }
    }

    /// One conditional `UPDATE … RETURNING` (see the module documentation).
    async fn take_social_attempt(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<SocialAttempt>, StoreError> {
        Stmt::new(TAKE_ATTEMPT.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind(now)
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_attempt::<D>)
            .await
    }

    async fn insert_social_link(&mut self, link: &SocialLink) -> Result<(), StoreError> {
        let inserted = Stmt::new(INSERT_LINK)
            .bind(link.tenant_id.as_str())
            .bind(link.provider.as_str())
            .bind(link.subject.as_str())
            .bind(link.user_id.as_str())
            .bind(link.email.as_deref())
            .bind(link.created_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::rename(e, LINK_USER_PROVIDER_COLUMNS, LINK_USER_PROVIDER_KEY));
        match inserted {
            Ok(_) => Ok(()),
            Err(e) => Err(name_foreign_key::<D>(
                self.conn(),
                e,
                (&link.tenant_id, &link.provider),
                LINK_PROVIDER_FKEY,
                LINK_USER_FKEY,
            )
            .await),
        }
    }

    async fn delete_social_link(
        &mut self,
        tenant: &TenantId,
        user: &UserId,
        slug: &ProviderSlug,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE_LINK)
            .bind(tenant.as_str())
            .bind(user.as_str())
            .bind(slug.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }

    async fn insert_pending_social_link(
        &mut self,
        pending: &PendingSocialLink,
    ) -> Result<(), StoreError> {
        let inserted = Stmt::new(INSERT_PENDING.pick::<D>())
            .bind(pending.hash.as_bytes())
            .bind(pending.tenant_id.as_str())
            .bind(pending.provider.as_str())
            .bind(pending.subject.as_str())
            .bind(pending.user_id.as_str())
            .bind(pending.email.as_str())
            .bind(pending.interaction_id.as_ref().map(InteractionId::as_str))
            .bind(pending.created_at)
            .bind(pending.expires_at)
            .bind_twin(pending.expires_at)
            .execute::<D>(self.conn())
            .await;
        match inserted {
            Ok(_) => Ok(()),
            Err(e) => Err(name_foreign_key::<D>(
                self.conn(),
                e,
                (&pending.tenant_id, &pending.provider),
                PENDING_PROVIDER_FKEY,
                PENDING_USER_FKEY,
            )
            .await),
        }
    }

    /// One conditional `DELETE … RETURNING` (see the module documentation).
    async fn take_pending_social_link(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
        now: OffsetDateTime,
    ) -> Result<Option<PendingSocialLink>, StoreError> {
        Stmt::new(TAKE_PENDING.pick::<D>())
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .bind_instant(now)
            .fetch_optional_with::<D, _>(self.conn(), decode_pending::<D>)
            .await
    }
}

/// Names an unnamed failed foreign key of a row referencing a provider and a person: the
/// provider's when the tenant has no such provider, else the person's. PostgreSQL names the
/// failed foreign key itself, so only the SQLite backend reports an unnamed one (and a failed
/// statement leaves its transaction usable there for this one look-up); any other error is
/// returned unchanged.
async fn name_foreign_key<D: Dialect>(
    conn: &mut Conn<D>,
    err: StoreError,
    (tenant, provider): (&TenantId, &ProviderSlug),
    provider_fkey: &str,
    user_fkey: &str,
) -> StoreError {
    match err {
        StoreError::Conflict { constraint } if constraint == naming::UNNAMED_FOREIGN_KEY => {
            let found = Stmt::new(PROVIDER_EXISTS)
                .bind(tenant.as_str())
                .bind(provider.as_str())
                .fetch_optional::<D>(conn)
                .await;
            match found {
                Ok(found) => StoreError::Conflict {
                    constraint: if found.is_some() {
                        user_fkey
                    } else {
                        provider_fkey
                    }
                    .to_owned(),
                },
                Err(e) => e,
            }
        }
        other => other,
    }
}

/// `social_providers.protocol` of an OpenID provider.
const PROTOCOL_OIDC: &str = "oidc";
/// `social_providers.protocol` of a plain OAuth 2.0 server.
const PROTOCOL_OAUTH2: &str = "oauth2";

fn decode_provider<D: Dialect>(row: &Row<D>) -> Result<SocialProvider, StoreError> {
    let c = Columns::<D>::new(row, "social_providers");
    ProviderRow {
        tenant_id: c.get("tenant_id")?,
        slug: c.get("slug")?,
        preset: c.get("preset")?,
        display_name: c.get("display_name")?,
        protocol: c.get("protocol")?,
        issuer: c.get("issuer")?,
        authorization_endpoint: c.get("authorization_endpoint")?,
        token_endpoint: c.get("token_endpoint")?,
        jwks_uri: c.get("jwks_uri")?,
        userinfo_endpoint: c.get("userinfo_endpoint")?,
        emails_endpoint: c.get("emails_endpoint")?,
        iss_parameter: c.get("iss_parameter")?,
        client_id: c.get("client_id")?,
        token_endpoint_auth_method: c.get("token_endpoint_auth_method")?,
        sealed_secret: c.get("sealed_secret")?,
        apple_team_id: c.get("apple_team_id")?,
        apple_key_id: c.get("apple_key_id")?,
        scopes: c.json("scopes")?,
        form_post: c.get("form_post")?,
        enabled: c.get("enabled")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

fn decode_attempt<D: Dialect>(row: &Row<D>) -> Result<SocialAttempt, StoreError> {
    let c = Columns::<D>::new(row, "social_attempts");
    AttemptRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        provider: c.get("provider")?,
        interaction_id: c.get("interaction_id")?,
        link_for: c.get("link_for")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        used_at: c.get("used_at")?,
    }
    .decode()
}

fn decode_link<D: Dialect>(row: &Row<D>) -> Result<SocialLink, StoreError> {
    let c = Columns::<D>::new(row, "social_links");
    LinkRow {
        tenant_id: c.get("tenant_id")?,
        provider: c.get("provider")?,
        subject: c.get("subject")?,
        user_id: c.get("user_id")?,
        email: c.get("email")?,
        created_at: c.get("created_at")?,
    }
    .decode()
}

fn decode_pending<D: Dialect>(row: &Row<D>) -> Result<PendingSocialLink, StoreError> {
    let c = Columns::<D>::new(row, "pending_social_links");
    PendingRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        provider: c.get("provider")?,
        subject: c.get("subject")?,
        user_id: c.get("user_id")?,
        email: c.get("email")?,
        interaction_id: c.get("interaction_id")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
    }
    .decode()
}

/// A `social_providers` row as stored. No `Debug`: it holds the sealed secret or key.
#[derive(Clone)]
struct ProviderRow {
    tenant_id: String,
    slug: String,
    preset: String,
    display_name: String,
    /// `oidc` or `oauth2`, which decides the endpoint columns set.
    protocol: String,
    /// Set exactly with `oidc`.
    issuer: Option<String>,
    authorization_endpoint: String,
    token_endpoint: String,
    /// Set exactly with `oidc`.
    jwks_uri: Option<String>,
    /// Always set with `oauth2`; with `oidc` when the provider names one.
    userinfo_endpoint: Option<String>,
    /// Only with `oauth2`, when the provider has one.
    emails_endpoint: Option<String>,
    iss_parameter: bool,
    client_id: String,
    /// `client_secret_basic`, `client_secret_post` or `apple_client_secret_jwt`.
    token_endpoint_auth_method: String,
    /// The sealed secret or Apple key, never empty.
    sealed_secret: Vec<u8>,
    /// Set exactly with `apple_client_secret_jwt`, like `apple_key_id`.
    apple_team_id: Option<String>,
    apple_key_id: Option<String>,
    /// JSON array text of scopes, in the order configured, perhaps empty.
    scopes: String,
    form_post: bool,
    enabled: bool,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl ProviderRow {
    fn decode(self) -> Result<SocialProvider, StoreError> {
        let r = Record {
            table: "social_providers",
            name: &self.slug,
        };
        let scopes = r.strings("scopes", &self.scopes)?;
        let preset = r.parse("preset", &self.preset, |p| {
            SocialPreset::parse(p).ok_or("not a preset")
        })?;
        let protocol = match (
            self.protocol.as_str(),
            self.issuer,
            self.jwks_uri,
            self.userinfo_endpoint,
            self.emails_endpoint,
        ) {
            (PROTOCOL_OIDC, Some(issuer), Some(jwks_uri), userinfo_endpoint, None) => {
                SocialProtocol::Oidc(UpstreamMetadata {
                    issuer,
                    authorization_endpoint: self.authorization_endpoint,
                    token_endpoint: self.token_endpoint,
                    jwks_uri,
                    userinfo_endpoint,
                    iss_parameter: self.iss_parameter,
                })
            }
            (PROTOCOL_OAUTH2, None, None, Some(userinfo_endpoint), emails_endpoint) => {
                SocialProtocol::OAuth2(ProfileEndpoints {
                    authorization_endpoint: self.authorization_endpoint,
                    token_endpoint: self.token_endpoint,
                    userinfo_endpoint,
                    emails_endpoint,
                })
            }
            (protocol, ..) => {
                return Err(r.corrupt(
                    "protocol",
                    &format_args!("{protocol:?}"),
                    &"unknown, or its endpoints do not fit it",
                ));
            }
        };
        if self.sealed_secret.is_empty() {
            return Err(r.corrupt("sealed_secret", &"(0 bytes)", &"empty"));
        }
        let sealed = self.sealed_secret;
        let client_auth = match (
            self.token_endpoint_auth_method.as_str(),
            self.apple_team_id,
            self.apple_key_id,
        ) {
            (SocialClientAuth::SECRET_BASIC, None, None) => SocialClientAuth::SecretBasic {
                sealed_secret: sealed,
            },
            (SocialClientAuth::SECRET_POST, None, None) => SocialClientAuth::SecretPost {
                sealed_secret: sealed,
            },
            (SocialClientAuth::APPLE_JWT, Some(team_id), Some(key_id)) => {
                SocialClientAuth::AppleJwt {
                    team_id,
                    key_id,
                    sealed_key: sealed,
                }
            }
            (method, ..) => {
                return Err(r.corrupt(
                    "token_endpoint_auth_method",
                    &format_args!("{method:?}"),
                    &"unknown, or Apple's team and key ids do not fit it",
                ));
            }
        };
        Ok(SocialProvider {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            slug: r.parse("slug", &self.slug, ProviderSlug::parse)?,
            preset,
            display_name: self.display_name,
            protocol,
            client_id: self.client_id,
            client_auth,
            scopes,
            form_post: self.form_post,
            enabled: self.enabled,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `social_attempts` row as stored.
#[derive(Clone)]
struct AttemptRow {
    /// 32 bytes.
    hash: Vec<u8>,
    tenant_id: String,
    provider: String,
    interaction_id: Option<String>,
    link_for: Option<String>,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    used_at: Option<OffsetDateTime>,
}

impl AttemptRow {
    fn decode(self) -> Result<SocialAttempt, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "social_attempts",
            name: &name,
        };
        Ok(SocialAttempt {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            provider: r.parse("provider", &self.provider, ProviderSlug::parse)?,
            interaction_id: r.parse_opt(
                "interaction_id",
                self.interaction_id.as_deref(),
                InteractionId::parse,
            )?,
            link_for: r.parse_opt("link_for", self.link_for.as_deref(), UserId::parse)?,
            created_at: self.created_at,
            expires_at: self.expires_at,
            used_at: self.used_at,
        })
    }
}

/// A `social_links` row as stored.
#[derive(Debug, Clone)]
struct LinkRow {
    tenant_id: String,
    provider: String,
    subject: String,
    user_id: String,
    email: Option<String>,
    created_at: OffsetDateTime,
}

impl LinkRow {
    fn decode(self) -> Result<SocialLink, StoreError> {
        let r = Record {
            table: "social_links",
            name: &self.subject,
        };
        Ok(SocialLink {
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            provider: r.parse("provider", &self.provider, ProviderSlug::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            subject: self.subject,
            email: self.email,
            created_at: self.created_at,
        })
    }
}

/// A `pending_social_links` row as stored.
#[derive(Clone)]
struct PendingRow {
    /// 32 bytes.
    hash: Vec<u8>,
    tenant_id: String,
    provider: String,
    subject: String,
    user_id: String,
    email: String,
    interaction_id: Option<String>,
    created_at: OffsetDateTime,
    expires_at: OffsetDateTime,
}

impl PendingRow {
    fn decode(self) -> Result<PendingSocialLink, StoreError> {
        let name = hash_name(&self.hash);
        let r = Record {
            table: "pending_social_links",
            name: &name,
        };
        Ok(PendingSocialLink {
            hash: r.hash("hash", &self.hash)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            provider: r.parse("provider", &self.provider, ProviderSlug::parse)?,
            user_id: r.parse("user_id", &self.user_id, UserId::parse)?,
            interaction_id: r.parse_opt(
                "interaction_id",
                self.interaction_id.as_deref(),
                InteractionId::parse,
            )?,
            subject: self.subject,
            email: self.email,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

#[cfg(test)]
mod tests;

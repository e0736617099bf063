//! The application and operator-token aggregates: their statements, their row forms, and the
//! `ApplicationReads`/`ApplicationWrites` and `OperatorTokenReads`/`OperatorTokenWrites` ports
//! for [`SqlTx`].
//!
//! The list-valued columns (redirect URIs, grant types, scopes) are JSON arrays: text on SQLite,
//! `jsonb` on PostgreSQL, bound with [`Stmt::bind_json`] and read with [`Columns::json`], so the
//! statements are the same on every dialect.

use crate::dialect::{Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, decode_strings, encode_scopes, encode_strings};
use crate::sorted::{self, Sorted};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    Application, ClientId, ClientIdUrl, GrantType, LogoutChannels, MetadataDocument, OperatorToken,
    OperatorTokenId, OrganizationUsage, RedirectUri, Scope, ScopeSet, SecretHash, SigningAlg,
    TenantId, TokenEndpointAuthMethod, acr_rank,
};
use svc_store::{
    ApplicationReads, ApplicationWrites, OperatorTokenReads, OperatorTokenWrites, Order,
    StoreError, UpdateOutcome,
};
use time::OffsetDateTime;

/// The foreign key to `tenants`, the only one of `applications` (SQLite reports a failed foreign
/// key without naming it).
const TENANT_FKEY: &str = "applications_tenant_id_fkey";

/// Every column of `applications`, in the order `insert_application` binds them (`decode` reads
/// by name); a macro so the statements stay `&'static str` constants.
macro_rules! columns {
    () => {
        "id, tenant_id, name, redirect_uris, grant_types, token_endpoint_auth_method, \
         allowed_scopes, secret_hash, api_audience, first_party, id_token_signed_response_alg, \
         jwks, jwks_uri, is_management, created_at, updated_at, post_logout_redirect_uris, \
         minimum_acr, organization_usage, require_pushed_authorization_requests, \
         dpop_bound_access_tokens, backchannel_logout_uri, backchannel_logout_session_required, \
         frontchannel_logout_uri, frontchannel_logout_session_required, \
         authorization_details_types, metadata_url, metadata_fresh_until"
    };
}

const SELECT_ONE: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM applications WHERE tenant_id = $1 AND id = $2"
);
// `$2` is the cursor or the bound of its direction (`sorted::cursor`): a plain index range scan.
const LIST: Sorted = Sorted {
    asc: concat!(
        "SELECT ",
        columns!(),
        " FROM applications WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3"
    ),
    desc: concat!(
        "SELECT ",
        columns!(),
        " FROM applications WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
    ),
};
const INSERT: &str = concat!(
    "INSERT INTO applications (",
    columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
     $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)"
);
// Never id, tenant_id, created_at or is_management; only the revision read ($17). Equality on
// `updated_at` is exact on both dialects: PostgreSQL compares `timestamptz` values, and SQLite's
// text has one spelling per instant (UTC RFC 3339, see the SQLite dialect), so no `_ns` twin is
// needed for an equality. Under READ COMMITTED, PostgreSQL re-evaluates the condition on the
// newest committed row version, so a writer that committed since the read makes this a no-op.
const UPDATE: &str = "UPDATE applications SET name = $3, redirect_uris = $4, grant_types = $5, \
     token_endpoint_auth_method = $6, allowed_scopes = $7, secret_hash = $8, api_audience = $9, \
     first_party = $10, id_token_signed_response_alg = $11, jwks = $12, jwks_uri = $13, \
     updated_at = $14, post_logout_redirect_uris = $15, minimum_acr = $16, \
     organization_usage = $18, require_pushed_authorization_requests = $19, \
     dpop_bound_access_tokens = $20, backchannel_logout_uri = $21, \
     backchannel_logout_session_required = $22, frontchannel_logout_uri = $23, \
     frontchannel_logout_session_required = $24, authorization_details_types = $25, \
     metadata_url = $26, metadata_fresh_until = $27 \
     WHERE tenant_id = $1 AND id = $2 AND updated_at = $17";
/// Every application's detail types that has any (discovery reads it, cached by clients for an
/// hour; a tenant has few applications with RAR types).
const DETAIL_TYPES: PerDialect = PerDialect {
    sqlite: "SELECT authorization_details_types FROM applications \
             WHERE tenant_id = $1 AND authorization_details_types <> '[]'",
    postgres: "SELECT authorization_details_types FROM applications \
               WHERE tenant_id = $1 AND authorization_details_types <> '[]'::jsonb",
};
/// Whether the application exists at all: tells a stale revision from a missing record after a
/// conditional update changed nothing.
/// The application a client ID metadata document became (unique per tenant, partial index).
const BY_METADATA_URL: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM applications WHERE tenant_id = $1 AND metadata_url = $2"
);
const EXISTS: &str = "SELECT id FROM applications WHERE tenant_id = $1 AND id = $2";
const DELETE: &str = "DELETE FROM applications WHERE tenant_id = $1 AND id = $2";

const TOKEN_BY_HASH: &str =
    "SELECT id, name, token_hash, created_at FROM operator_tokens WHERE token_hash = $1";
const INSERT_TOKEN: &str =
    "INSERT INTO operator_tokens (id, name, token_hash, created_at) VALUES ($1, $2, $3, $4)";

#[async_trait]
impl<D: Dialect> ApplicationReads for SqlTx<D> {
    async fn application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<Option<Application>, StoreError> {
        Stmt::new(SELECT_ONE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn application_by_metadata_url(
        &mut self,
        tenant: &TenantId,
        url: &str,
    ) -> Result<Option<Application>, StoreError> {
        Stmt::new(BY_METADATA_URL)
            .bind(tenant.as_str())
            .bind(url)
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn list_applications(
        &mut self,
        tenant: &TenantId,
        after: Option<&ClientId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Application>, StoreError> {
        let rows = Stmt::new(LIST.pick(order))
            .bind(tenant.as_str())
            .bind(sorted::cursor(after.map(ClientId::as_str), order))
            .bind(i64::from(limit))
            .fetch_all::<D>(self.conn())
            .await?;
        rows.iter().map(decode::<D>).collect()
    }

    async fn application_detail_types(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<String>, StoreError> {
        let rows = Stmt::new(DETAIL_TYPES.pick::<D>())
            .bind(tenant.as_str())
            .fetch_all::<D>(self.conn())
            .await?;
        let mut names = std::collections::BTreeSet::new();
        for row in &rows {
            let text =
                Columns::<D>::new(row, "applications").json("authorization_details_types")?;
            let types: Vec<svc_domain::DetailType> = serde_json::from_str(&text).map_err(|e| {
                StoreError::Corrupt(format!("applications.authorization_details_types: {e}"))
            })?;
            names.extend(types.into_iter().map(|t| t.name));
        }
        Ok(names.into_iter().collect())
    }
}

#[async_trait]
impl<D: Dialect> ApplicationWrites for SqlTx<D> {
    async fn insert_application(&mut self, app: &Application) -> Result<(), StoreError> {
        let lists = lists(app)?;
        Stmt::new(INSERT)
            .bind(app.id.as_str())
            .bind(app.tenant_id.as_str())
            .bind(app.name.as_str())
            .bind_json(lists.redirect_uris)
            .bind_json(lists.grant_types)
            .bind(app.token_endpoint_auth_method.as_str())
            .bind_json(lists.allowed_scopes)
            .bind(app.secret_hash.as_ref().map(|h| h.as_bytes().as_slice()))
            .bind(app.api_audience.as_deref())
            .bind(app.first_party)
            .bind(app.id_token_signed_response_alg.as_str())
            .bind(app.jwks.as_deref())
            .bind(app.jwks_uri.as_deref())
            .bind(app.is_management)
            .bind(app.created_at)
            .bind(app.updated_at)
            .bind_json(lists.post_logout_redirect_uris)
            .bind(app.minimum_acr.as_deref())
            .bind(app.organization_usage.as_str())
            .bind(app.require_pushed_authorization_requests)
            .bind(app.dpop_bound_access_tokens)
            .bind(app.logout.backchannel_uri.as_deref())
            .bind(app.logout.backchannel_session_required)
            .bind(app.logout.frontchannel_uri.as_deref())
            .bind(app.logout.frontchannel_session_required)
            .bind_json(lists.authorization_details_types.clone())
            .bind(app.metadata_document.as_ref().map(|d| d.url.as_str()))
            .bind(app.metadata_document.as_ref().map(|d| d.fresh_until))
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, TENANT_FKEY))?;
        Ok(())
    }

    async fn update_application(
        &mut self,
        app: &Application,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let lists = lists(app)?;
        let changed = Stmt::new(UPDATE)
            .bind(app.tenant_id.as_str())
            .bind(app.id.as_str())
            .bind(app.name.as_str())
            .bind_json(lists.redirect_uris)
            .bind_json(lists.grant_types)
            .bind(app.token_endpoint_auth_method.as_str())
            .bind_json(lists.allowed_scopes)
            .bind(app.secret_hash.as_ref().map(|h| h.as_bytes().as_slice()))
            .bind(app.api_audience.as_deref())
            .bind(app.first_party)
            .bind(app.id_token_signed_response_alg.as_str())
            .bind(app.jwks.as_deref())
            .bind(app.jwks_uri.as_deref())
            .bind(app.updated_at)
            .bind_json(lists.post_logout_redirect_uris)
            .bind(app.minimum_acr.as_deref())
            .bind(read_at)
            .bind(app.organization_usage.as_str())
            .bind(app.require_pushed_authorization_requests)
            .bind(app.dpop_bound_access_tokens)
            .bind(app.logout.backchannel_uri.as_deref())
            .bind(app.logout.backchannel_session_required)
            .bind(app.logout.frontchannel_uri.as_deref())
            .bind(app.logout.frontchannel_session_required)
            .bind_json(lists.authorization_details_types.clone())
            .bind(app.metadata_document.as_ref().map(|d| d.url.as_str()))
            .bind(app.metadata_document.as_ref().map(|d| d.fresh_until))
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(app.tenant_id.as_str())
            .bind(app.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    async fn delete_application(
        &mut self,
        tenant: &TenantId,
        id: &ClientId,
    ) -> Result<(), StoreError> {
        let changed = Stmt::new(DELETE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

#[async_trait]
impl<D: Dialect> OperatorTokenReads for SqlTx<D> {
    async fn operator_token_by_hash(
        &mut self,
        hash: &SecretHash,
    ) -> Result<Option<OperatorToken>, StoreError> {
        Stmt::new(TOKEN_BY_HASH)
            .bind(hash.as_bytes().as_slice())
            .fetch_optional_with::<D, _>(self.conn(), decode_token::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> OperatorTokenWrites for SqlTx<D> {
    async fn insert_operator_token(&mut self, token: &OperatorToken) -> Result<(), StoreError> {
        Stmt::new(INSERT_TOKEN)
            .bind(token.id.as_str())
            .bind(token.name.as_str())
            .bind(token.token_hash.as_bytes().as_slice())
            .bind(token.created_at)
            .execute::<D>(self.conn())
            .await?;
        Ok(())
    }
}

/// The list-valued columns of an application, encoded as JSON arrays.
struct Lists {
    redirect_uris: String,
    grant_types: String,
    allowed_scopes: String,
    post_logout_redirect_uris: String,
    authorization_details_types: String,
}

fn lists(app: &Application) -> Result<Lists, StoreError> {
    Ok(Lists {
        redirect_uris: encode_strings(app.redirect_uris.iter().map(RedirectUri::as_str))?,
        grant_types: encode_strings(app.grant_types.iter().map(|g| g.as_str()))?,
        allowed_scopes: encode_scopes(&app.allowed_scopes)?,
        post_logout_redirect_uris: encode_strings(
            app.post_logout_redirect_uris
                .iter()
                .map(RedirectUri::as_str),
        )?,
        authorization_details_types: serde_json::to_string(&app.authorization_details_types)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode detail types: {e}")))?,
    })
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Application, StoreError> {
    let c = Columns::<D>::new(row, "applications");
    ApplicationRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        name: c.get("name")?,
        redirect_uris: c.json("redirect_uris")?,
        post_logout_redirect_uris: c.json("post_logout_redirect_uris")?,
        grant_types: c.json("grant_types")?,
        allowed_scopes: c.json("allowed_scopes")?,
        token_endpoint_auth_method: c.get("token_endpoint_auth_method")?,
        secret_hash: c.get("secret_hash")?,
        api_audience: c.get("api_audience")?,
        first_party: c.get("first_party")?,
        id_token_signed_response_alg: c.get("id_token_signed_response_alg")?,
        jwks: c.get("jwks")?,
        jwks_uri: c.get("jwks_uri")?,
        is_management: c.get("is_management")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
        minimum_acr: c.get("minimum_acr")?,
        organization_usage: c.get("organization_usage")?,
        require_pushed_authorization_requests: c.get("require_pushed_authorization_requests")?,
        dpop_bound_access_tokens: c.get("dpop_bound_access_tokens")?,
        backchannel_logout_uri: c.get("backchannel_logout_uri")?,
        backchannel_logout_session_required: c.get("backchannel_logout_session_required")?,
        frontchannel_logout_uri: c.get("frontchannel_logout_uri")?,
        frontchannel_logout_session_required: c.get("frontchannel_logout_session_required")?,
        authorization_details_types: c.json("authorization_details_types")?,
        metadata_url: c.get("metadata_url")?,
        metadata_fresh_until: c.get("metadata_fresh_until")?,
    }
    .decode()
}

fn decode_token<D: Dialect>(row: &Row<D>) -> Result<OperatorToken, StoreError> {
    let c = Columns::<D>::new(row, "operator_tokens");
    OperatorTokenRow {
        id: c.get("id")?,
        name: c.get("name")?,
        token_hash: c.get("token_hash")?,
        created_at: c.get("created_at")?,
    }
    .decode()
}

/// An `applications` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct ApplicationRow {
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
    /// `authorization_details_types` (JSON array of RAR types with their schemas).
    pub authorization_details_types: String,
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
    /// `minimum_acr`.
    pub minimum_acr: Option<String>,
    /// `organization_usage`.
    pub organization_usage: String,
    /// `require_pushed_authorization_requests`.
    pub require_pushed_authorization_requests: bool,
    /// `dpop_bound_access_tokens`.
    pub dpop_bound_access_tokens: bool,
    /// `backchannel_logout_uri`.
    pub backchannel_logout_uri: Option<String>,
    /// `backchannel_logout_session_required`.
    pub backchannel_logout_session_required: bool,
    /// `frontchannel_logout_uri`.
    pub frontchannel_logout_uri: Option<String>,
    /// `frontchannel_logout_session_required`.
    pub frontchannel_logout_session_required: bool,
    /// `metadata_url`.
    pub metadata_url: Option<String>,
    /// `metadata_fresh_until`.
    pub metadata_fresh_until: Option<OffsetDateTime>,
}

impl ApplicationRow {
    /// The application this row stores.
    pub(crate) fn decode(self) -> Result<Application, StoreError> {
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
        let minimum_acr = Record {
            table: "applications",
            name: &id,
        }
        .parse_opt("minimum_acr", self.minimum_acr.as_deref(), |acr| {
            acr_rank(acr)
                .map(|_| acr.to_owned())
                .ok_or("not an assurance level of this service")
        })?;
        let metadata_document = match (self.metadata_url, self.metadata_fresh_until) {
            (Some(url), Some(fresh_until)) => Some(MetadataDocument {
                // Checked when adopted; `http` only ever stored outside production.
                url: ClientIdUrl::parse(&url, true)
                    .map_err(|e| corrupt("metadata_url", &url, &e))?,
                fresh_until,
            }),
            (None, None) => None,
            _ => {
                return Err(corrupt(
                    "metadata_url",
                    "",
                    &"without its freshness (or the reverse)",
                ));
            }
        };
        Ok(Application {
            metadata_document,
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
            minimum_acr,
            organization_usage: OrganizationUsage::parse(&self.organization_usage).ok_or_else(
                || {
                    corrupt(
                        "organization_usage",
                        &self.organization_usage,
                        &"unknown usage",
                    )
                },
            )?,
            require_pushed_authorization_requests: self.require_pushed_authorization_requests,
            dpop_bound_access_tokens: self.dpop_bound_access_tokens,
            // Checked when registered; not recompiled on every read (the hot path reads
            // applications, and a request compiles the one schema it uses).
            authorization_details_types: serde_json::from_str(&self.authorization_details_types)
                .map_err(|e| corrupt("authorization_details_types", "(JSON)", &e))?,
            logout: LogoutChannels {
                backchannel_uri: self.backchannel_logout_uri,
                backchannel_session_required: self.backchannel_logout_session_required,
                frontchannel_uri: self.frontchannel_logout_uri,
                frontchannel_session_required: self.frontchannel_logout_session_required,
            },
            created_at: self.created_at,
            updated_at: self.updated_at,
            id: ClientId::parse(&id).map_err(|e| corrupt("id", &id, &e))?,
        })
    }
}

/// An `operator_tokens` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct OperatorTokenRow {
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
    pub(crate) fn decode(self) -> Result<OperatorToken, StoreError> {
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
            minimum_acr: Some("urn:svc:aal2".into()),
            organization_usage: "require".into(),
            require_pushed_authorization_requests: true,
            dpop_bound_access_tokens: true,
            backchannel_logout_uri: Some("https://a.example/logout".into()),
            backchannel_logout_session_required: true,
            frontchannel_logout_uri: None,
            frontchannel_logout_session_required: false,
            authorization_details_types: r#"[{"type":"t","description":"d","schema":{}}]"#.into(),
            metadata_url: Some("https://a.example/client.json".into()),
            metadata_fresh_until: Some(OffsetDateTime::UNIX_EPOCH),
        }
    }

    /// A column name and how to spoil that column.
    type Spoil = fn(&mut ApplicationRow);

    #[test]
    fn a_well_formed_row_decodes_and_each_bad_column_is_named() {
        let app = row().decode().unwrap();
        assert_eq!(app.grant_types, vec![GrantType::ClientCredentials]);
        assert!(app.allowed_scopes.contains("a:read"));
        assert_eq!(app.minimum_acr.as_deref(), Some(svc_domain::ACR_AAL2));
        assert!(app.require_pushed_authorization_requests);
        let without = ApplicationRow {
            minimum_acr: None,
            ..row()
        };
        assert_eq!(without.decode().unwrap().minimum_acr, None);
        assert_eq!(app.authorization_details_types[0].name, "t");
        assert_eq!(
            app.wire_client_id(),
            "https://a.example/client.json",
            "a document's URL is its client_id on the wire"
        );
        let cases: [(&str, Spoil); 13] = [
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
            ("minimum_acr", |r| {
                r.minimum_acr = Some("urn:svc:aal3".into())
            }),
            ("minimum_acr", |r| r.minimum_acr = Some(String::new())),
            ("organization_usage", |r| {
                r.organization_usage = "deny".into()
            }),
            ("authorization_details_types", |r| {
                r.authorization_details_types = r#"[{"type":"t"}]"#.into()
            }),
            ("metadata_url", |r| {
                r.metadata_url = Some("ftp://a.example/client.json".into())
            }),
            ("metadata_url", |r| r.metadata_url = None),
            ("metadata_url", |r| r.metadata_fresh_until = None),
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
    fn an_operator_token_row_decodes_and_each_bad_column_is_named() {
        let good = OperatorTokenRow {
            id: "opt_01jd0000000000000000000000".into(),
            name: "ci".into(),
            token_hash: vec![7; 32],
            created_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert_eq!(good.clone().decode().unwrap().name, "ci");
        let mut bad = good.clone();
        bad.id = "app_01jd0000000000000000000000".into();
        assert!(matches!(
            bad.decode(),
            Err(StoreError::Corrupt(m)) if m.contains("operator_tokens.id")
        ));
        let mut bad = good;
        bad.token_hash = vec![7; 31];
        assert!(matches!(
            bad.decode(),
            Err(StoreError::Corrupt(m)) if m.contains("operator_tokens.token_hash")
        ));
    }

    #[test]
    fn a_failed_foreign_key_is_named_after_the_tenant_reference() {
        let named = |constraint: &str| match naming::foreign_key(
            StoreError::Conflict {
                constraint: constraint.to_owned(),
            },
            TENANT_FKEY,
        ) {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        };
        assert_eq!(
            named(naming::UNNAMED_FOREIGN_KEY).as_deref(),
            Some(TENANT_FKEY)
        );
        assert_eq!(
            named("applications_pkey").as_deref(),
            Some("applications_pkey")
        );
    }
}

//! Authorization codes: their statements, their row form ([`AuthorizationCodeRow`]) and the
//! code operations of the `GrantWrites` port (implemented for [`crate::SqlTx`] in `grants`).
//!
//! Redemption is one conditional `UPDATE ... WHERE redeemed_at IS NULL RETURNING`: only the call
//! that changed the row gets it back, so a code is redeemed once however many requests race. On
//! PostgreSQL a concurrent redemption waits for the first one's row lock; under READ COMMITTED
//! it then re-evaluates `redeemed_at IS NULL` against the committed row and changes nothing. On
//! SQLite writers are serialised by `BEGIN IMMEDIATE` too. When nothing changed, a plain read
//! (which now sees the committed redemption) tells a replay (`Again`) from a code that does not
//! exist for the tenant (`Unknown`). `scope` and `amr` are JSON arrays (`jsonb` on PostgreSQL);
//! SQLite also writes the `expires_at_ns` twin, for the purge.
//!
//! A code approved on a device ([`CodeBinding::Device`]) or for a backchannel request
//! ([`CodeBinding::Backchannel`]) has no redirect URI; its `redirect_uri` column holds the
//! grant's URN ([`DEVICE_CODE_GRANT`], [`CIBA_GRANT`]), which no registered redirect URI can
//! equal (registration refuses a `urn:` scheme).

use crate::dialect::{Conn, Dialect, PerDialect};
use crate::naming;
use crate::record::{Record, hash_name};
use crate::{Columns, Row, Stmt, encode_scopes, encode_strings};
use svc_domain::{
    ApiResourceId, AuthorizationCode, CIBA_GRANT, ClientId, CodeBinding, DEVICE_CODE_GRANT,
    OrganizationId, RedirectUri, RefreshFamilyId, SecretHash, SessionId, TenantId, UserId,
};
use svc_store::{CodeRedemption, StoreError};
use time::OffsetDateTime;

macro_rules! code_columns {
    () => {
        "hash, tenant_id, client_id, user_id, session_id, redirect_uri, scope, code_challenge, \
         nonce, auth_time, acr, amr, claims, subject, organization_id, created_at, expires_at, \
         redeemed_at, issued_family_id, issued_access_jti, issued_access_expires_at, resource_id, dpop_jkt, \
         authorization_details"
    };
}

const SELECT: &str = concat!(
    "SELECT ",
    code_columns!(),
    " FROM authorization_codes WHERE tenant_id = $1 AND hash = $2"
);
const REDEEM: &str = concat!(
    "UPDATE authorization_codes SET redeemed_at = $3 \
     WHERE tenant_id = $1 AND hash = $2 AND redeemed_at IS NULL RETURNING ",
    code_columns!()
);
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO authorization_codes (hash, tenant_id, client_id, user_id, session_id, \
         redirect_uri, scope, code_challenge, nonce, auth_time, acr, amr, claims, subject, \
         organization_id, created_at, expires_at, expires_at_ns, redeemed_at, issued_family_id, \
         issued_access_jti, issued_access_expires_at, resource_id, dpop_jkt, \
         authorization_details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
         $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)",
    postgres: "INSERT INTO authorization_codes (hash, tenant_id, client_id, user_id, \
         session_id, redirect_uri, scope, code_challenge, nonce, auth_time, acr, amr, claims, \
         subject, organization_id, created_at, expires_at, redeemed_at, issued_family_id, \
         issued_access_jti, issued_access_expires_at, resource_id, dpop_jkt, \
         authorization_details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
         $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)",
};
const RECORD_ISSUANCE: &str = "UPDATE authorization_codes SET issued_family_id = $3, \
     issued_access_jti = $4, issued_access_expires_at = $5 WHERE tenant_id = $1 AND hash = $2";

pub(crate) async fn insert<D: Dialect>(
    conn: &mut Conn<D>,
    code: &AuthorizationCode,
) -> Result<(), StoreError> {
    Stmt::new(INSERT.pick::<D>())
        .bind(code.hash.as_bytes())
        .bind(code.tenant_id.as_str())
        .bind(code.client_id.as_str())
        .bind(code.user_id.as_str())
        .bind(code.session_id.as_str())
        .bind(match &code.binding {
            CodeBinding::Redirect(uri) => uri.as_str(),
            CodeBinding::Device => DEVICE_CODE_GRANT,
            CodeBinding::Backchannel => CIBA_GRANT,
        })
        .bind_json(encode_scopes(&code.scope)?)
        .bind(code.code_challenge.as_deref())
        .bind(code.nonce.as_deref())
        .bind(code.auth_time)
        .bind(code.acr.as_deref())
        .bind_json(encode_strings(code.amr.iter().map(String::as_str))?)
        .bind(code.claims.as_deref())
        .bind(code.subject.as_str())
        .bind(code.organization_id.as_ref().map(OrganizationId::as_str))
        .bind(code.created_at)
        .bind(code.expires_at)
        .bind_twin(code.expires_at)
        .bind(code.redeemed_at)
        .bind(code.issued_family.as_ref().map(RefreshFamilyId::as_str))
        .bind(code.issued_access_jti.as_deref())
        .bind(code.issued_access_expires_at)
        .bind(code.resource_id.as_ref().map(ApiResourceId::as_str))
        .bind(code.dpop_jkt.as_deref())
        .bind(code.authorization_details.as_ref().map(|d| d.to_json()))
        .execute::<D>(conn)
        .await
        .map_err(|e| naming::foreign_key(e, "authorization_codes_tenant_id_fkey"))?;
    Ok(())
}

pub(crate) async fn redeem<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    hash: &SecretHash,
    now: OffsetDateTime,
) -> Result<CodeRedemption, StoreError> {
    let redeemed = Stmt::new(REDEEM)
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .bind(now)
        .fetch_optional::<D>(&mut *conn)
        .await?;
    if let Some(row) = redeemed {
        return Ok(CodeRedemption::First(decode::<D>(&row)?));
    }
    let before = Stmt::new(SELECT)
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .fetch_optional::<D>(conn)
        .await?;
    Ok(match before {
        Some(row) => CodeRedemption::Again(decode::<D>(&row)?),
        None => CodeRedemption::Unknown,
    })
}

/// [`StoreError::NotFound`] when the code does not exist (any more) for the tenant.
pub(crate) async fn record_issuance<D: Dialect>(
    conn: &mut Conn<D>,
    tenant: &TenantId,
    hash: &SecretHash,
    family: Option<&RefreshFamilyId>,
    access_jti: &str,
    access_expires_at: OffsetDateTime,
) -> Result<(), StoreError> {
    let changed = Stmt::new(RECORD_ISSUANCE)
        .bind(tenant.as_str())
        .bind(hash.as_bytes())
        .bind(family.map(RefreshFamilyId::as_str))
        .bind(access_jti)
        .bind(access_expires_at)
        .execute::<D>(conn)
        .await?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<AuthorizationCode, StoreError> {
    let c = Columns::<D>::new(row, "authorization_codes");
    AuthorizationCodeRow {
        hash: c.get("hash")?,
        tenant_id: c.get("tenant_id")?,
        client_id: c.get("client_id")?,
        user_id: c.get("user_id")?,
        session_id: c.get("session_id")?,
        redirect_uri: c.get("redirect_uri")?,
        scope: c.json("scope")?,
        code_challenge: c.get("code_challenge")?,
        nonce: c.get("nonce")?,
        auth_time: c.get("auth_time")?,
        acr: c.get("acr")?,
        amr: c.json("amr")?,
        claims: c.get("claims")?,
        subject: c.get("subject")?,
        organization_id: c.get("organization_id")?,
        created_at: c.get("created_at")?,
        expires_at: c.get("expires_at")?,
        redeemed_at: c.get("redeemed_at")?,
        issued_family_id: c.get("issued_family_id")?,
        issued_access_jti: c.get("issued_access_jti")?,
        issued_access_expires_at: c.get("issued_access_expires_at")?,
        resource_id: c.get("resource_id")?,
        dpop_jkt: c.get("dpop_jkt")?,
        authorization_details: c.get("authorization_details")?,
    }
    .decode()
}

/// An `authorization_codes` row as stored.
#[derive(Debug, Clone)]
pub(crate) struct AuthorizationCodeRow {
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
    /// `organization_id`.
    pub organization_id: Option<String>,
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
    /// `resource_id`.
    pub resource_id: Option<String>,
    /// `dpop_jkt`.
    pub dpop_jkt: Option<String>,
    /// `authorization_details` (JSON text).
    pub authorization_details: Option<String>,
}

impl AuthorizationCodeRow {
    /// The authorization code this row stores.
    pub(crate) fn decode(self) -> Result<AuthorizationCode, StoreError> {
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
            binding: if self.redirect_uri == DEVICE_CODE_GRANT {
                CodeBinding::Device
            } else if self.redirect_uri == CIBA_GRANT {
                CodeBinding::Backchannel
            } else {
                CodeBinding::Redirect(r.parse(
                    "redirect_uri",
                    &self.redirect_uri,
                    RedirectUri::parse,
                )?)
            },
            scope: r.scopes("scope", &self.scope)?,
            amr: r.strings("amr", &self.amr)?,
            organization_id: r.parse_opt(
                "organization_id",
                self.organization_id.as_deref(),
                OrganizationId::parse,
            )?,
            resource_id: r.parse_opt(
                "resource_id",
                self.resource_id.as_deref(),
                ApiResourceId::parse,
            )?,
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
            authorization_details: r.details(
                "authorization_details",
                self.authorization_details.as_deref(),
            )?,
            dpop_jkt: self.dpop_jkt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, CLIENT, FAMILY, SESSION, TENANT, USER, assert_twins, check};

    #[test]
    fn each_dialect_binds_as_many_values_as_it_has_placeholders() {
        assert_twins(&[(INSERT, 1)]);
    }

    #[test]
    fn code_rows_decode_and_name_each_bad_column() {
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
            organization_id: None,
            resource_id: None,
            dpop_jkt: None,
            authorization_details: Some(r#"[{"type":"t"}]"#.into()),
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
                ("authorization_codes.authorization_details", |r| {
                    r.authorization_details = Some("{}".into())
                }),
            ],
        );
    }
}

//! Domains organizations claim: their statements, their row form ([`DomainRow`]) and the
//! `DomainReads`/`DomainWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant and the organization (but the lookup of a verified name,
//! which spans the tenant's organizations), so another tenant's or organization's claim reads as
//! absent and no write reaches it. A claim references its organization by (tenant, id) and goes
//! with it (the foreign key's cascade). PostgreSQL names the two unique rules in a violation;
//! SQLite reports their columns, renamed here to the PostgreSQL names. An update is conditional
//! on the revision read (`updated_at`, compared for equality, as for organizations).
//!
//! `auto_join_roles` is a JSON array of role keys (text on SQLite, `jsonb` on PostgreSQL),
//! written sorted from the set, never empty.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_strings};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    DomainId, DomainName, DomainStatus, OrganizationId, RoleKey, TenantId, VerifiedDomain,
};
use svc_store::{DomainReads, DomainWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

/// One claim of a name per organization, as both backends report it.
const ORG_NAME_KEY: &str = "verified_domains_org_name_key";
/// What SQLite's message (its columns) becomes in the SQLite backend.
const ORG_NAME_KEY_BY_COLUMNS: &str = "verified_domains_tenant_id_organization_id_name_key";
/// One verified claim of a name per tenant (a partial unique index).
const VERIFIED_KEY: &str = "verified_domains_tenant_name_verified_key";
/// What SQLite's message (the index's columns) becomes in the SQLite backend.
const VERIFIED_KEY_BY_COLUMNS: &str = "verified_domains_tenant_id_name_key";
/// The foreign key to `organizations`, the only one of `verified_domains`.
const ORGANIZATION_FKEY: &str = "verified_domains_organization_fkey";

macro_rules! select_domains {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, organization_id, name, status, token, verified_at, \
             last_checked_at, auto_join, auto_join_roles, created_at, updated_at \
             FROM verified_domains ",
            $where
        )
    };
}

const SELECT_ONE: &str =
    select_domains!("WHERE tenant_id = $1 AND organization_id = $2 AND id = $3");
const OF_ORGANIZATION: &str =
    select_domains!("WHERE tenant_id = $1 AND organization_id = $2 ORDER BY id");
// Served by the partial unique index on (tenant_id, name) of verified claims.
const VERIFIED_BY_NAME: &str =
    select_domains!("WHERE tenant_id = $1 AND name = $2 AND status = 'verified'");
const INSERT: &str = "INSERT INTO verified_domains (id, tenant_id, organization_id, name, status, \
     token, verified_at, last_checked_at, auto_join, auto_join_roles, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
// Never the keys, the name or created_at; only at the revision read ($11).
const UPDATE: &str = "UPDATE verified_domains SET status = $4, token = $5, verified_at = $6, \
     last_checked_at = $7, auto_join = $8, auto_join_roles = $9, updated_at = $10 \
     WHERE tenant_id = $1 AND organization_id = $2 AND id = $3 AND updated_at = $11";
/// Tells a stale revision from a missing claim after a conditional update changed nothing.
const EXISTS: &str =
    "SELECT id FROM verified_domains WHERE tenant_id = $1 AND organization_id = $2 AND id = $3";
const DELETE: &str =
    "DELETE FROM verified_domains WHERE tenant_id = $1 AND organization_id = $2 AND id = $3";

#[async_trait]
impl<D: Dialect> DomainReads for SqlTx<D> {
    async fn domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<Option<VerifiedDomain>, StoreError> {
        Stmt::new(SELECT_ONE)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn domains_of_organization(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
    ) -> Result<Vec<VerifiedDomain>, StoreError> {
        Stmt::new(OF_ORGANIZATION)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn verified_domain_by_name(
        &mut self,
        tenant: &TenantId,
        name: &DomainName,
    ) -> Result<Option<VerifiedDomain>, StoreError> {
        Stmt::new(VERIFIED_BY_NAME)
            .bind(tenant.as_str())
            .bind(name.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> DomainWrites for SqlTx<D> {
    async fn insert_domain(&mut self, domain: &VerifiedDomain) -> Result<(), StoreError> {
        Stmt::new(INSERT)
            .bind(domain.id.as_str())
            .bind(domain.tenant_id.as_str())
            .bind(domain.organization_id.as_str())
            .bind(domain.name.as_str())
            .bind(domain.status.as_str())
            .bind(domain.token.as_str())
            .bind(domain.verified_at)
            .bind(domain.last_checked_at)
            .bind(domain.auto_join)
            .bind_json(encode_roles(&domain.auto_join_roles)?)
            .bind(domain.created_at)
            .bind(domain.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        Ok(())
    }

    async fn update_domain_if_unchanged(
        &mut self,
        domain: &VerifiedDomain,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let changed = Stmt::new(UPDATE)
            .bind(domain.tenant_id.as_str())
            .bind(domain.organization_id.as_str())
            .bind(domain.id.as_str())
            .bind(domain.status.as_str())
            .bind(domain.token.as_str())
            .bind(domain.verified_at)
            .bind(domain.last_checked_at)
            .bind(domain.auto_join)
            .bind_json(encode_roles(&domain.auto_join_roles)?)
            .bind(domain.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(domain.tenant_id.as_str())
            .bind(domain.organization_id.as_str())
            .bind(domain.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    async fn delete_domain(
        &mut self,
        tenant: &TenantId,
        org: &OrganizationId,
        id: &DomainId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE)
            .bind(tenant.as_str())
            .bind(org.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }
}

/// Gives the conflicts SQLite reports by column (or not at all) the names PostgreSQL reports.
fn name_conflict(err: StoreError) -> StoreError {
    let err = naming::rename(err, ORG_NAME_KEY_BY_COLUMNS, ORG_NAME_KEY);
    let err = naming::rename(err, VERIFIED_KEY_BY_COLUMNS, VERIFIED_KEY);
    naming::foreign_key(err, ORGANIZATION_FKEY)
}

/// The roles as stored: a JSON array of the keys, sorted (the set's order).
fn encode_roles(roles: &BTreeSet<RoleKey>) -> Result<String, StoreError> {
    encode_strings(roles.iter().map(RoleKey::as_str))
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<VerifiedDomain, StoreError> {
    let c = Columns::<D>::new(row, "verified_domains");
    DomainRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        organization_id: c.get("organization_id")?,
        name: c.get("name")?,
        status: c.get("status")?,
        token: c.get("token")?,
        verified_at: c.get("verified_at")?,
        last_checked_at: c.get("last_checked_at")?,
        auto_join: c.get("auto_join")?,
        auto_join_roles: c.json("auto_join_roles")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

/// A `verified_domains` row as stored.
#[derive(Debug, Clone)]
struct DomainRow {
    id: String,
    tenant_id: String,
    organization_id: String,
    name: String,
    status: String,
    token: String,
    verified_at: Option<OffsetDateTime>,
    last_checked_at: Option<OffsetDateTime>,
    auto_join: bool,
    /// JSON array text of role keys, never empty.
    auto_join_roles: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl DomainRow {
    fn decode(self) -> Result<VerifiedDomain, StoreError> {
        let r = Record {
            table: "verified_domains",
            name: &self.id,
        };
        let roles = r
            .strings("auto_join_roles", &self.auto_join_roles)?
            .iter()
            .map(|role| r.parse("auto_join_roles", role, RoleKey::parse))
            .collect::<Result<BTreeSet<_>, _>>()?;
        if roles.is_empty() {
            return Err(r.corrupt("auto_join_roles", &self.auto_join_roles, &"no role"));
        }
        let status = r.parse("status", &self.status, |s| {
            DomainStatus::parse(s).ok_or("unknown status")
        })?;
        if (status == DomainStatus::Verified) != self.verified_at.is_some() {
            return Err(r.corrupt(
                "verified_at",
                &format_args!("{:?}", self.verified_at),
                &"set exactly when verified",
            ));
        }
        Ok(VerifiedDomain {
            id: r.parse("id", &self.id, DomainId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            organization_id: r.parse(
                "organization_id",
                &self.organization_id,
                OrganizationId::parse,
            )?,
            name: r.parse("name", &self.name, DomainName::parse)?,
            status,
            token: self.token,
            verified_at: self.verified_at,
            last_checked_at: self.last_checked_at,
            auto_join: self.auto_join,
            auto_join_roles: roles,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check};

    const ORG: &str = "org_01jd0000000000000000000000";
    const DOMAIN: &str = "dom_01jd0000000000000000000000";

    #[test]
    fn domain_rows_decode_and_name_each_bad_column() {
        let row = DomainRow {
            id: DOMAIN.into(),
            tenant_id: TENANT.into(),
            organization_id: ORG.into(),
            name: "example.com".into(),
            status: "verified".into(),
            token: "tok".into(),
            verified_at: Some(AT),
            last_checked_at: Some(AT),
            auto_join: true,
            auto_join_roles: r#"["member","admin"]"#.into(),
            created_at: AT,
            updated_at: AT,
        };
        let decoded = row.clone().decode().unwrap();
        assert_eq!(decoded.status, DomainStatus::Verified);
        assert_eq!(decoded.auto_join_roles.len(), 2);
        check(
            row,
            DomainRow::decode,
            &[
                ("verified_domains.id", |r| r.id = USER.into()),
                ("verified_domains.tenant_id", |r| r.tenant_id = ORG.into()),
                ("verified_domains.organization_id", |r| {
                    r.organization_id = TENANT.into();
                }),
                ("verified_domains.name", |r| r.name = "localhost".into()),
                ("verified_domains.status", |r| r.status = "gone".into()),
                ("verified_domains.verified_at", |r| r.verified_at = None),
                ("verified_domains.auto_join_roles", |r| {
                    r.auto_join_roles = "[]".into();
                }),
                ("verified_domains.auto_join_roles", |r| {
                    r.auto_join_roles = r#"["Owner"]"#.into();
                }),
            ],
        );
    }

    #[test]
    fn conflicts_get_the_names_postgresql_reports() {
        let named = |constraint: &str| match name_conflict(StoreError::Conflict {
            constraint: constraint.to_owned(),
        }) {
            StoreError::Conflict { constraint } => Some(constraint),
            _ => None,
        };
        assert_eq!(
            named(ORG_NAME_KEY_BY_COLUMNS).as_deref(),
            Some(ORG_NAME_KEY)
        );
        assert_eq!(
            named(VERIFIED_KEY_BY_COLUMNS).as_deref(),
            Some(VERIFIED_KEY)
        );
        assert_eq!(
            named(naming::UNNAMED_FOREIGN_KEY).as_deref(),
            Some(ORGANIZATION_FKEY)
        );
    }
}

//! Access-control policies: their statements, their row form ([`PolicyRow`]) and the
//! `PolicyReads`/`PolicyWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant. The name is unique per tenant: PostgreSQL names the
//! constraint `access_policies_tenant_name_key`, SQLite reports its columns
//! (`access_policies_tenant_id_name_key`), renamed here. The lists are JSON arrays of strings
//! (text on SQLite, `jsonb` on PostgreSQL), written sorted from the sets; each entry is parsed
//! back into its type on the way out, so a row edited by hand is [`StoreError::Corrupt`] naming
//! its column rather than a policy that silently means something else.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_strings};
use crate::{Columns, Row, SqlTx, Stmt};
use async_trait::async_trait;
use svc_domain::{
    AccessPolicy, ClientId, OrganizationId, PolicyId, PolicyRules, PolicyTargets, RoleKey, TenantId,
};
use svc_store::{PolicyReads, PolicyWrites, StoreError, UpdateOutcome};
use time::OffsetDateTime;

/// The unique key on the name, as both backends report it.
const NAME_KEY: &str = "access_policies_tenant_name_key";
/// What SQLite's message (`access_policies.tenant_id, access_policies.name`) becomes.
const NAME_KEY_BY_COLUMNS: &str = "access_policies_tenant_id_name_key";
/// The foreign key to `tenants`, the only one (SQLite reports a failed one without its name).
const TENANT_FKEY: &str = "access_policies_tenant_id_fkey";

macro_rules! select_policies {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, name, description, enabled, applications, organizations, \
             roles, require_acr, allowed_ip_ranges, sign_in_methods, max_session_age_secs, \
             created_at, updated_at FROM access_policies ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_policies!("WHERE tenant_id = $1 AND id = $2");
const SELECT_ALL: &str = select_policies!("WHERE tenant_id = $1 ORDER BY id");
const INSERT: &str = "INSERT INTO access_policies (id, tenant_id, name, description, enabled, \
     applications, organizations, roles, require_acr, allowed_ip_ranges, sign_in_methods, \
     max_session_age_secs, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";
// Only at the revision read ($14), exact on both dialects (see organizations).
const UPDATE: &str = "UPDATE access_policies SET name = $3, description = $4, enabled = $5, \
     applications = $6, organizations = $7, roles = $8, require_acr = $9, \
     allowed_ip_ranges = $10, sign_in_methods = $11, max_session_age_secs = $12, \
     updated_at = $13 WHERE tenant_id = $1 AND id = $2 AND updated_at = $14";
const EXISTS: &str = "SELECT id FROM access_policies WHERE tenant_id = $1 AND id = $2";
const DELETE: &str = "DELETE FROM access_policies WHERE tenant_id = $1 AND id = $2";

#[async_trait]
impl<D: Dialect> PolicyReads for SqlTx<D> {
    async fn access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<Option<AccessPolicy>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn access_policies(
        &mut self,
        tenant: &TenantId,
    ) -> Result<Vec<AccessPolicy>, StoreError> {
        Stmt::new(SELECT_ALL)
            .bind(tenant.as_str())
            .fetch_all_with::<D, _>(self.conn(), decode::<D>)
            .await
    }
}

#[async_trait]
impl<D: Dialect> PolicyWrites for SqlTx<D> {
    async fn insert_access_policy(&mut self, policy: &AccessPolicy) -> Result<(), StoreError> {
        let lists = Lists::of(policy)?;
        Stmt::new(INSERT)
            .bind(policy.id.as_str())
            .bind(policy.tenant_id.as_str())
            .bind(policy.name.as_str())
            .bind(policy.description.as_str())
            .bind(policy.enabled)
            .bind_json(lists.applications)
            .bind_json(lists.organizations)
            .bind_json(lists.roles)
            .bind(policy.rules.require_acr.clone())
            .bind_json(lists.ranges)
            .bind_json(lists.methods)
            .bind(session_age(&policy.rules)?)
            .bind(policy.created_at)
            .bind(policy.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        Ok(())
    }

    async fn update_access_policy_if_unchanged(
        &mut self,
        policy: &AccessPolicy,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let lists = Lists::of(policy)?;
        let changed = Stmt::new(UPDATE)
            .bind(policy.tenant_id.as_str())
            .bind(policy.id.as_str())
            .bind(policy.name.as_str())
            .bind(policy.description.as_str())
            .bind(policy.enabled)
            .bind_json(lists.applications)
            .bind_json(lists.organizations)
            .bind_json(lists.roles)
            .bind(policy.rules.require_acr.clone())
            .bind_json(lists.ranges)
            .bind_json(lists.methods)
            .bind(session_age(&policy.rules)?)
            .bind(policy.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await
            .map_err(name_conflict)?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(policy.tenant_id.as_str())
            .bind(policy.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    async fn delete_access_policy(
        &mut self,
        tenant: &TenantId,
        id: &PolicyId,
    ) -> Result<bool, StoreError> {
        let deleted = Stmt::new(DELETE)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .execute::<D>(self.conn())
            .await?;
        Ok(deleted > 0)
    }
}

/// Gives the conflicts SQLite reports by column (or not at all) the names PostgreSQL reports.
fn name_conflict(err: StoreError) -> StoreError {
    naming::foreign_key(
        naming::rename(err, NAME_KEY_BY_COLUMNS, NAME_KEY),
        TENANT_FKEY,
    )
}

/// The list columns of a policy as stored: JSON arrays of strings, sorted.
struct Lists {
    applications: String,
    organizations: String,
    roles: String,
    ranges: String,
    methods: String,
}

impl Lists {
    fn of(policy: &AccessPolicy) -> Result<Self, StoreError> {
        let targets = &policy.targets;
        // In the policy's order (the use cases sort them as networks, IPv4 first).
        let ranges: Vec<String> = policy
            .rules
            .allowed_ip_ranges
            .iter()
            .map(ToString::to_string)
            .collect();
        Ok(Self {
            applications: encode_strings(targets.applications.iter().map(ClientId::as_str))?,
            organizations: encode_strings(
                targets.organizations.iter().map(OrganizationId::as_str),
            )?,
            roles: encode_strings(targets.roles.iter().map(RoleKey::as_str))?,
            ranges: encode_strings(ranges.iter().map(String::as_str))?,
            methods: encode_strings(policy.rules.sign_in_methods.iter().map(String::as_str))?,
        })
    }
}

fn session_age(rules: &PolicyRules) -> Result<Option<i64>, StoreError> {
    rules
        .max_session_age_secs
        .map(|s| {
            i64::try_from(s).map_err(|_| StoreError::Corrupt("session age out of range".into()))
        })
        .transpose()
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<AccessPolicy, StoreError> {
    let c = Columns::<D>::new(row, "access_policies");
    PolicyRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        name: c.get("name")?,
        description: c.get("description")?,
        enabled: c.get("enabled")?,
        applications: c.json("applications")?,
        organizations: c.json("organizations")?,
        roles: c.json("roles")?,
        require_acr: c.get("require_acr")?,
        allowed_ip_ranges: c.json("allowed_ip_ranges")?,
        sign_in_methods: c.json("sign_in_methods")?,
        max_session_age_secs: c.get("max_session_age_secs")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

/// An `access_policies` row as stored.
#[derive(Debug, Clone)]
struct PolicyRow {
    id: String,
    tenant_id: String,
    name: String,
    description: String,
    enabled: bool,
    /// JSON array text of client ids.
    applications: String,
    /// JSON array text of organization ids.
    organizations: String,
    /// JSON array text of role keys.
    roles: String,
    require_acr: Option<String>,
    /// JSON array text of networks (`10.0.0.0/8`).
    allowed_ip_ranges: String,
    /// JSON array text of `amr` values.
    sign_in_methods: String,
    max_session_age_secs: Option<i64>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl PolicyRow {
    fn decode(self) -> Result<AccessPolicy, StoreError> {
        let r = Record {
            table: "access_policies",
            name: &self.id,
        };
        let each = |column: &str, text: &str| r.strings(column, text);
        let targets = PolicyTargets {
            applications: each("applications", &self.applications)?
                .iter()
                .map(|s| r.parse("applications", s, ClientId::parse))
                .collect::<Result<_, _>>()?,
            organizations: each("organizations", &self.organizations)?
                .iter()
                .map(|s| r.parse("organizations", s, OrganizationId::parse))
                .collect::<Result<_, _>>()?,
            roles: each("roles", &self.roles)?
                .iter()
                .map(|s| r.parse("roles", s, RoleKey::parse))
                .collect::<Result<_, _>>()?,
        };
        let rules = PolicyRules {
            require_acr: self.require_acr,
            allowed_ip_ranges: each("allowed_ip_ranges", &self.allowed_ip_ranges)?
                .iter()
                .map(|s| r.parse("allowed_ip_ranges", s, str::parse::<ipnet::IpNet>))
                .collect::<Result<_, _>>()?,
            sign_in_methods: each("sign_in_methods", &self.sign_in_methods)?
                .into_iter()
                .collect(),
            max_session_age_secs: self
                .max_session_age_secs
                .map(|s| {
                    u64::try_from(s).map_err(|_| r.corrupt("max_session_age_secs", &s, &"negative"))
                })
                .transpose()?,
        };
        rules
            .check()
            .map_err(|e| r.corrupt("rules", &self.id, &e))?;
        Ok(AccessPolicy {
            id: r.parse("id", &self.id, PolicyId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            name: self.name,
            description: self.description,
            enabled: self.enabled,
            targets,
            rules,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check};

    const POLICY: &str = "pol_01jd0000000000000000000000";

    fn row() -> PolicyRow {
        PolicyRow {
            id: POLICY.into(),
            tenant_id: TENANT.into(),
            name: "finance \"mfa\"".into(),
            description: String::new(),
            enabled: true,
            applications: r#"["app_01jd0000000000000000000000"]"#.into(),
            organizations: "[]".into(),
            roles: r#"["accountant"]"#.into(),
            require_acr: Some("urn:svc:aal2".into()),
            allowed_ip_ranges: r#"["10.0.0.0/8","2001:db8::/32"]"#.into(),
            sign_in_methods: r#"["hwk"]"#.into(),
            max_session_age_secs: Some(3600),
            created_at: AT,
            updated_at: AT,
        }
    }

    #[test]
    fn policy_rows_decode_and_name_each_bad_column() {
        let decoded = row().decode().unwrap();
        assert_eq!(decoded.rules.allowed_ip_ranges.len(), 2);
        assert_eq!(decoded.rules.max_session_age_secs, Some(3600));
        assert!(
            decoded
                .targets
                .roles
                .contains(&RoleKey::parse("accountant").unwrap())
        );
        check(
            row(),
            PolicyRow::decode,
            &[
                ("access_policies.id", |r| r.id = USER.into()),
                ("access_policies.tenant_id", |r| r.tenant_id = POLICY.into()),
                ("access_policies.applications", |r| {
                    r.applications = r#"["usr_x"]"#.into()
                }),
                ("access_policies.organizations", |r| {
                    r.organizations = "{".into()
                }),
                ("access_policies.roles", |r| r.roles = r#"["Admin"]"#.into()),
                ("access_policies.allowed_ip_ranges", |r| {
                    r.allowed_ip_ranges = r#"["10.0.0.0/33"]"#.into();
                }),
                ("access_policies.max_session_age_secs", |r| {
                    r.max_session_age_secs = Some(-1);
                }),
                ("access_policies.rules", |r| {
                    r.sign_in_methods = r#"["sms"]"#.into()
                }),
            ],
        );
    }
}

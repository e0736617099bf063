//! Invitations: their statements, their row form ([`InvitationRow`]) and the
//! `InvitationReads`/`InvitationWrites` ports for [`SqlTx`].
//!
//! Every statement names the tenant. The deadline is compared in SQL (acceptance, the state
//! filter): on SQLite through its `expires_at_ns` twin, on PostgreSQL the `timestamptz` itself,
//! hence the [`PerDialect`] statements. Acceptance is one conditional `UPDATE` from `pending`,
//! at the link hash read and before the deadline, so two acceptances never both change the row.
//! Resends and revocations are conditional on the revision read (`updated_at`), as for
//! organizations. `roles` is a JSON array of role keys (text on SQLite, `jsonb` on PostgreSQL),
//! written sorted from the set.
//!
//! SQLite names a failed foreign key nowhere; an insert has two (tenant, organization), so an
//! unnamed failure is given the organization's name when the invitation names one (the use case
//! read the tenant) and the tenant's otherwise.

use crate::dialect::Dialect;
use crate::naming;
use crate::record::{Record, encode_strings, hash_name};
use crate::sorted;
use crate::{Columns, PerDialect, Row, SqlTx, Stmt};
use async_trait::async_trait;
use std::collections::BTreeSet;
use svc_domain::{
    Email, Invitation, InvitationId, InvitationState, InvitationStatus, OrganizationId, RoleKey,
    SecretHash, TenantId, UserId,
};
use svc_store::{
    InvitationFilter, InvitationReads, InvitationWrites, Order, StoreError, UpdateOutcome,
};
use time::OffsetDateTime;

/// The foreign key to `tenants`.
const TENANT_FKEY: &str = "invitations_tenant_id_fkey";
/// The foreign key to `organizations`.
const ORGANIZATION_FKEY: &str = "invitations_organization_fkey";

macro_rules! select_invitations {
    ($where:literal) => {
        concat!(
            "SELECT id, tenant_id, email, organization_id, roles, status, token_hash, expires_at, \
             invited_by, accepted_by, accepted_at, created_at, updated_at FROM invitations ",
            $where
        )
    };
}

const SELECT_BY_ID: &str = select_invitations!("WHERE tenant_id = $1 AND id = $2");
const SELECT_BY_TOKEN: &str = select_invitations!("WHERE tenant_id = $1 AND token_hash = $2");
// The partial unique index's own expression, so the lookup is that index's scan.
const SELECT_PENDING: &str = select_invitations!(
    "WHERE tenant_id = $1 AND email = $2 AND coalesce(organization_id, '') = $3 \
     AND status = 'pending'"
);
/// The start of a listing; filters, cursor and order are appended.
const SELECT_LIST: &str = select_invitations!("WHERE tenant_id = ");
/// A pending invitation before (`LIVE`) or at or after (`DEAD`) its deadline, to be followed by
/// the instant.
const LIVE: PerDialect = PerDialect {
    sqlite: " AND status = 'pending' AND expires_at_ns > ",
    postgres: " AND status = 'pending' AND expires_at > ",
};
const DEAD: PerDialect = PerDialect {
    sqlite: " AND status = 'pending' AND expires_at_ns <= ",
    postgres: " AND status = 'pending' AND expires_at <= ",
};
const INSERT: PerDialect = PerDialect {
    sqlite: "INSERT INTO invitations (id, tenant_id, email, organization_id, roles, status, \
         token_hash, expires_at, expires_at_ns, invited_by, accepted_by, accepted_at, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
    postgres: "INSERT INTO invitations (id, tenant_id, email, organization_id, roles, status, \
         token_hash, expires_at, invited_by, accepted_by, accepted_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
};
// Only what a resend or a revocation changes, at the revision read.
const UPDATE: PerDialect = PerDialect {
    sqlite: "UPDATE invitations SET status = $3, token_hash = $4, expires_at = $5, \
         expires_at_ns = $6, updated_at = $7 WHERE tenant_id = $1 AND id = $2 AND updated_at = $8",
    postgres: "UPDATE invitations SET status = $3, token_hash = $4, expires_at = $5, \
         updated_at = $6 WHERE tenant_id = $1 AND id = $2 AND updated_at = $7",
};
const EXISTS: &str = "SELECT id FROM invitations WHERE tenant_id = $1 AND id = $2";
const ACCEPT: PerDialect = PerDialect {
    sqlite: "UPDATE invitations SET status = 'accepted', accepted_by = $4, accepted_at = $5, \
         updated_at = $5 WHERE tenant_id = $1 AND id = $2 AND token_hash = $3 \
         AND status = 'pending' AND expires_at_ns > $6",
    postgres: "UPDATE invitations SET status = 'accepted', accepted_by = $4, accepted_at = $5, \
         updated_at = $5 WHERE tenant_id = $1 AND id = $2 AND token_hash = $3 \
         AND status = 'pending' AND expires_at > $6",
};

#[async_trait]
impl<D: Dialect> InvitationReads for SqlTx<D> {
    async fn invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
    ) -> Result<Option<Invitation>, StoreError> {
        Stmt::new(SELECT_BY_ID)
            .bind(tenant.as_str())
            .bind(id.as_str())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn invitation_by_token(
        &mut self,
        tenant: &TenantId,
        hash: &SecretHash,
    ) -> Result<Option<Invitation>, StoreError> {
        Stmt::new(SELECT_BY_TOKEN)
            .bind(tenant.as_str())
            .bind(hash.as_bytes())
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn pending_invitation(
        &mut self,
        tenant: &TenantId,
        email: &Email,
        organization: Option<&OrganizationId>,
    ) -> Result<Option<Invitation>, StoreError> {
        Stmt::new(SELECT_PENDING)
            .bind(tenant.as_str())
            .bind(email.as_str())
            .bind(organization.map_or("", OrganizationId::as_str))
            .fetch_optional_with::<D, _>(self.conn(), decode::<D>)
            .await
    }

    async fn list_invitations(
        &mut self,
        tenant: &TenantId,
        filter: &InvitationFilter,
        after: Option<&InvitationId>,
        order: Order,
        limit: u32,
    ) -> Result<Vec<Invitation>, StoreError> {
        let mut stmt = Stmt::dynamic(SELECT_LIST);
        stmt.push_bind(tenant.as_str());
        if let Some(after) = after {
            stmt.push(sorted::past(order)).push_bind(after.as_str());
        }
        if let Some(org) = &filter.organization_id {
            stmt.push(" AND organization_id = ").push_bind(org.as_str());
        }
        let now = filter.now.unwrap_or(OffsetDateTime::UNIX_EPOCH);
        match filter.state {
            None => {}
            Some(InvitationState::Pending) => {
                stmt.push(LIVE.pick::<D>()).push_bind_instant(now);
            }
            Some(InvitationState::Expired) => {
                stmt.push(DEAD.pick::<D>()).push_bind_instant(now);
            }
            Some(InvitationState::Accepted) => {
                stmt.push(" AND status = 'accepted'");
            }
            Some(InvitationState::Revoked) => {
                stmt.push(" AND status = 'revoked'");
            }
        }
        stmt.push(sorted::order_by(order))
            .push_bind(i64::from(limit));
        let rows = stmt.fetch_all::<D>(self.conn()).await?;
        rows.iter().map(decode::<D>).collect()
    }
}

#[async_trait]
impl<D: Dialect> InvitationWrites for SqlTx<D> {
    async fn insert_invitation(&mut self, invitation: &Invitation) -> Result<(), StoreError> {
        let fkey = if invitation.organization_id.is_some() {
            ORGANIZATION_FKEY
        } else {
            TENANT_FKEY
        };
        Stmt::new(INSERT.pick::<D>())
            .bind(invitation.id.as_str())
            .bind(invitation.tenant_id.as_str())
            .bind(invitation.email.as_str())
            .bind(
                invitation
                    .organization_id
                    .as_ref()
                    .map(OrganizationId::as_str),
            )
            .bind_json(encode_roles(&invitation.roles)?)
            .bind(invitation.status.as_str())
            .bind(invitation.token_hash.as_bytes())
            .bind(invitation.expires_at)
            .bind_twin(invitation.expires_at)
            .bind(invitation.invited_by.as_str())
            .bind(invitation.accepted_by.as_ref().map(UserId::as_str))
            .bind(invitation.accepted_at)
            .bind(invitation.created_at)
            .bind(invitation.updated_at)
            .execute::<D>(self.conn())
            .await
            .map_err(|e| naming::foreign_key(e, fkey))?;
        Ok(())
    }

    async fn update_invitation_if_unchanged(
        &mut self,
        invitation: &Invitation,
        read_at: OffsetDateTime,
    ) -> Result<UpdateOutcome, StoreError> {
        let changed = Stmt::new(UPDATE.pick::<D>())
            .bind(invitation.tenant_id.as_str())
            .bind(invitation.id.as_str())
            .bind(invitation.status.as_str())
            .bind(invitation.token_hash.as_bytes())
            .bind(invitation.expires_at)
            .bind_twin(invitation.expires_at)
            .bind(invitation.updated_at)
            .bind(read_at)
            .execute::<D>(self.conn())
            .await?;
        if changed > 0 {
            return Ok(UpdateOutcome::Applied);
        }
        let exists = Stmt::new(EXISTS)
            .bind(invitation.tenant_id.as_str())
            .bind(invitation.id.as_str())
            .fetch_optional::<D>(self.conn())
            .await?
            .is_some();
        if exists {
            Ok(UpdateOutcome::Stale)
        } else {
            Err(StoreError::NotFound)
        }
    }

    async fn accept_invitation(
        &mut self,
        tenant: &TenantId,
        id: &InvitationId,
        hash: &SecretHash,
        user: &UserId,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let changed = Stmt::new(ACCEPT.pick::<D>())
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(hash.as_bytes())
            .bind(user.as_str())
            .bind(now)
            .bind_instant(now)
            .execute::<D>(self.conn())
            .await?;
        Ok(changed > 0)
    }
}

/// The roles as stored: a JSON array of the keys, sorted (the set's order).
fn encode_roles(roles: &BTreeSet<RoleKey>) -> Result<String, StoreError> {
    encode_strings(roles.iter().map(RoleKey::as_str))
}

fn decode<D: Dialect>(row: &Row<D>) -> Result<Invitation, StoreError> {
    let c = Columns::<D>::new(row, "invitations");
    InvitationRow {
        id: c.get("id")?,
        tenant_id: c.get("tenant_id")?,
        email: c.get("email")?,
        organization_id: c.get("organization_id")?,
        roles: c.json("roles")?,
        status: c.get("status")?,
        token_hash: c.get("token_hash")?,
        expires_at: c.get("expires_at")?,
        invited_by: c.get("invited_by")?,
        accepted_by: c.get("accepted_by")?,
        accepted_at: c.get("accepted_at")?,
        created_at: c.get("created_at")?,
        updated_at: c.get("updated_at")?,
    }
    .decode()
}

/// An `invitations` row as stored.
#[derive(Debug, Clone)]
struct InvitationRow {
    id: String,
    tenant_id: String,
    email: String,
    organization_id: Option<String>,
    /// JSON array text of role keys.
    roles: String,
    status: String,
    token_hash: Vec<u8>,
    expires_at: OffsetDateTime,
    invited_by: String,
    accepted_by: Option<String>,
    accepted_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl InvitationRow {
    fn decode(self) -> Result<Invitation, StoreError> {
        let r = Record {
            table: "invitations",
            name: &self.id,
        };
        let roles = r
            .strings("roles", &self.roles)?
            .iter()
            .map(|role| r.parse("roles", role, RoleKey::parse))
            .collect::<Result<BTreeSet<_>, _>>()?;
        let token_hash = SecretHash::from_bytes(&self.token_hash).ok_or_else(|| {
            r.corrupt("token_hash", &hash_name(&self.token_hash), &"not 32 bytes")
        })?;
        Ok(Invitation {
            id: r.parse("id", &self.id, InvitationId::parse)?,
            tenant_id: r.parse("tenant_id", &self.tenant_id, TenantId::parse)?,
            email: r.parse("email", &self.email, Email::parse)?,
            organization_id: r.parse_opt(
                "organization_id",
                self.organization_id.as_deref(),
                OrganizationId::parse,
            )?,
            roles,
            status: r.parse("status", &self.status, |s| {
                InvitationStatus::parse(s).ok_or("unknown status")
            })?,
            token_hash,
            expires_at: self.expires_at,
            invited_by: self.invited_by,
            accepted_by: r.parse_opt("accepted_by", self.accepted_by.as_deref(), UserId::parse)?,
            accepted_at: self.accepted_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::tests::{AT, TENANT, USER, check, placeholders};

    const INVITATION: &str = "inv_01jd0000000000000000000000";
    const ORG: &str = "org_01jd0000000000000000000000";

    #[test]
    fn invitation_rows_decode_and_name_each_bad_column() {
        let row = InvitationRow {
            id: INVITATION.into(),
            tenant_id: TENANT.into(),
            email: "ada@example.com".into(),
            organization_id: Some(ORG.into()),
            roles: r#"["member","admin"]"#.into(),
            status: "accepted".into(),
            token_hash: vec![7; 32],
            expires_at: AT,
            invited_by: "client:app_x".into(),
            accepted_by: Some(USER.into()),
            accepted_at: Some(AT),
            created_at: AT,
            updated_at: AT,
        };
        let decoded = row.clone().decode().unwrap();
        assert_eq!(decoded.status, InvitationStatus::Accepted);
        assert_eq!(
            decoded
                .roles
                .iter()
                .map(RoleKey::as_str)
                .collect::<Vec<_>>(),
            ["admin", "member"]
        );
        check(
            row,
            InvitationRow::decode,
            &[
                ("invitations.id", |r| r.id = USER.into()),
                ("invitations.tenant_id", |r| r.tenant_id = ORG.into()),
                ("invitations.email", |r| r.email = "nobody".into()),
                ("invitations.organization_id", |r| {
                    r.organization_id = Some(TENANT.into());
                }),
                ("invitations.roles", |r| r.roles = "{}".into()),
                ("invitations.roles", |r| r.roles = r#"["Owner"]"#.into()),
                ("invitations.status", |r| r.status = "expired".into()),
                ("invitations.token_hash", |r| r.token_hash = vec![7; 31]),
                ("invitations.accepted_by", |r| {
                    r.accepted_by = Some(ORG.into());
                }),
            ],
        );
    }

    #[test]
    fn statements_bind_as_many_values_as_their_dialect_names() {
        assert_eq!(placeholders(INSERT.sqlite), 14);
        assert_eq!(placeholders(INSERT.postgres), 13);
        assert_eq!(placeholders(UPDATE.sqlite), 8);
        assert_eq!(placeholders(UPDATE.postgres), 7);
        assert_eq!(placeholders(ACCEPT.sqlite), 6);
        assert_eq!(placeholders(ACCEPT.postgres), 6);
    }
}

-- Tenant roles: the roles a person holds in their tenant as a whole (this version has one, the
-- built-in `tenant_admin` of the tenant's human administrators), one row per person and role.
-- Constraint names match the PostgreSQL migration so both backends report the same name on a
-- conflict.
--
-- Which role keys exist is the use cases' rule (svc_domain::TENANT_ROLES), not the schema's, as
-- for organization roles, so a later version can add roles without a migration. A person's roles
-- are replaced as a set: the rows of roles no longer held are deleted, those of new roles
-- inserted, and the row of a role kept stays as it is (its `created_at` is when the role was
-- granted). No role means no row. Every row goes with its tenant.
--
-- Users are never deleted (removal leaves a tombstone, and removal clears the person's roles)
-- and `users` has no unique key on (tenant_id, id) that a reference carrying the tenant could
-- use, so nothing references `users`, as for `organization_members` and `passkeys`: the use
-- cases check that the person is a user of the tenant.
--
-- Timestamps are RFC 3339 text in UTC. `created_at` is never compared in SQL, so it has no `_ns`
-- twin.

CREATE TABLE user_roles (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- Also serves reading a person's roles and the foreign key's cascade.
    CONSTRAINT user_roles_pkey PRIMARY KEY (tenant_id, user_id, role_key),
    CONSTRAINT user_roles_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

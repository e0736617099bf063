-- Roles granted through directory groups (issue 20: SCIM groups mapped to roles): a tenant
-- administrator maps one of the tenant's own SCIM groups (`organization_id` NULL) to tenant
-- roles, and every member of the group holds them for as long as they are a member, besides
-- the roles given to them directly (`user_roles`). One row per group and role.
--
-- A row goes with its group (the directory deleting the group takes the roles away at once).
-- Role keys are not references, as in `user_roles` (the built-in `tenant_admin` has no row in
-- `roles`): deleting a custom role counts these rows as holders and is refused while any
-- exists. Timestamps are RFC 3339 text in UTC (never compared in SQL). Constraint and index
-- names match the PostgreSQL migration.

CREATE TABLE scim_group_roles (
    tenant_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    role_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT scim_group_roles_pkey PRIMARY KEY (group_id, role_key),
    CONSTRAINT scim_group_roles_group_fkey FOREIGN KEY (group_id)
        REFERENCES scim_groups (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- Holders of a role (deletion of a custom role) by tenant and key.
CREATE INDEX scim_group_roles_role_idx ON scim_group_roles (tenant_id, role_key);

-- SCIM 2.0 groups (RFC 7643 §4.2): the groups a directory maintains at a tenant's `/scim/v2`,
-- each in the scope of the token that created it (the tenant when `organization_id` is NULL,
-- else that organization), and their members (people of the tenant).
--
-- `displayName` is unique per scope, compared case-insensitively, through an index on
-- `lower(display_name)` with the organization folded to '' for the tenant's own groups. A
-- member row goes with its group or its person; removing an organization removes its groups.
-- Constraint and index names match the PostgreSQL migration.

CREATE TABLE scim_groups (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    organization_id TEXT,
    display_name TEXT NOT NULL,
    external_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT scim_groups_pkey PRIMARY KEY (id),
    CONSTRAINT scim_groups_display_name_check CHECK (length(display_name) > 0),
    CONSTRAINT scim_groups_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT scim_groups_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX scim_groups_display_name_key
    ON scim_groups (tenant_id, COALESCE(organization_id, ''), lower(display_name));
CREATE INDEX scim_groups_scope_idx ON scim_groups (tenant_id, organization_id, id);

CREATE TABLE scim_group_members (
    tenant_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    CONSTRAINT scim_group_members_pkey PRIMARY KEY (group_id, user_id),
    CONSTRAINT scim_group_members_group_fkey FOREIGN KEY (group_id)
        REFERENCES scim_groups (id) ON DELETE CASCADE,
    CONSTRAINT scim_group_members_user_fkey FOREIGN KEY (user_id)
        REFERENCES users (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX scim_group_members_user_idx ON scim_group_members (tenant_id, user_id, group_id);

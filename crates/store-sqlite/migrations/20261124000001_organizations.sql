-- Organizations: the customer companies of a B2B tenant, and the people who are members of them
-- with their organization roles. Plus the management API scopes that now serve them. Constraint
-- and index names match the PostgreSQL migration so both backends report the same name on a
-- conflict.
--
-- An organization's slug is unique in its tenant. Its `metadata` is the tenant's free JSON
-- object, kept as the text the repository wrote (serde_json's spelling of the object), so it
-- reads back identically on both backends. The key is (tenant_id, id), as for
-- `refresh_families`, so that a membership's organization reference carries its tenant too: a
-- membership can never join another tenant's organization. A membership's `roles` is a JSON
-- array of role keys, sorted and never empty, like every list-valued column. Deleting an
-- organization deletes its memberships (the foreign key's cascade), and every row goes with its
-- tenant.
--
-- Users are never deleted (removal leaves a tombstone) and `users` has no unique key on
-- (tenant_id, id) that a reference carrying the tenant could use, so nothing references `users`,
-- as for `passkeys` and `recovery_guardians`: the use cases check that a new member is a person
-- of the tenant.
--
-- Timestamps are RFC 3339 text in UTC. None is compared in SQL but for equality (the revision
-- `updated_at` an update is conditional on), which the text decides exactly (one spelling per
-- instant), so none has an `_ns` twin.

CREATE TABLE organizations (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    metadata TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves listing a tenant's organizations in id order.
    CONSTRAINT organizations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT organizations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    -- SQLite reports a violation by column (`organizations.tenant_id, organizations.slug`); the
    -- repository renames it to this name, which PostgreSQL reports.
    CONSTRAINT organizations_tenant_slug_key UNIQUE (tenant_id, slug),
    CONSTRAINT organizations_metadata_check
        CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
    CONSTRAINT organizations_status_check CHECK (status IN ('active', 'suspended'))
) STRICT, WITHOUT ROWID;

-- Memberships. Their one foreign key is their organization's, through which they go with the
-- organization and so with its tenant: a second one to `tenants` would add nothing, and would
-- make which rule an insert for an unknown tenant breaks differ between the backends.
CREATE TABLE organization_members (
    tenant_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    roles TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves listing an organization's members in user-id order and the foreign key's
    -- cascade.
    CONSTRAINT organization_members_pkey PRIMARY KEY (tenant_id, organization_id, user_id),
    CONSTRAINT organization_members_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT organization_members_roles_check CHECK (json_valid(roles)
        AND json_type(roles) = 'array' AND json_array_length(roles) >= 1)
) STRICT, WITHOUT ROWID;

-- A person's memberships, in organization-id order.
CREATE INDEX organization_members_tenant_id_user_id_idx
    ON organization_members (tenant_id, user_id, organization_id);

-- The management API serves organizations now (svc_domain::MANAGEMENT_API_SCOPES): every
-- tenant's management application gets back the two scopes 20261123000001_management_scopes
-- took away. The union drops a scope it already holds; the array is rebuilt in byte order (the
-- BINARY collation, Rust's string order), sorted like every scope column. Ordinary
-- applications keep whatever they registered.
UPDATE applications
SET allowed_scopes = (
    SELECT json_group_array(scope ORDER BY scope)
    FROM (
        SELECT value AS scope FROM json_each(applications.allowed_scopes)
        UNION
        SELECT value FROM json_each('["organizations:read","organizations:write"]')
    )
)
WHERE is_management = 1;

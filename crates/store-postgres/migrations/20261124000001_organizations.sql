-- Organizations: the customer companies of a B2B tenant, and the people who are members of them
-- with their organization roles. Plus the management API scopes that now serve them. Constraint
-- and index names match the SQLite migration so both backends report the same name on a
-- conflict.
--
-- An organization's slug is unique in its tenant. Its `metadata` is the tenant's free JSON
-- object. It is text, not jsonb, like `passkeys.credential`: kept as the repository wrote it,
-- so it reads back identically on both backends (jsonb would respell numbers, `1e15` coming
-- back as an integer, and refuses the escape `\u0000`, which is valid JSON); the check still
-- refuses any JSON but an object. (Text that is not JSON at all fails the check's cast instead:
-- an error, not a check violation. The repository never writes such text.) The key is
-- (tenant_id, id), as for `refresh_families`, so that a membership's organization reference
-- carries its tenant too: a membership can never join another tenant's organization. A
-- membership's `roles` is a jsonb array of role keys, sorted and never empty, like every
-- list-valued column. Deleting an organization deletes its memberships (the foreign key's
-- cascade), and every row goes with its tenant.
--
-- Users are never deleted (removal leaves a tombstone) and `users` has no unique key on
-- (tenant_id, id) that a reference carrying the tenant could use, so nothing references `users`,
-- as for `passkeys` and `recovery_guardians`: the use cases check that a new member is a person
-- of the tenant. Ids use the "C" collation like `tenants.id`.

CREATE TABLE organizations (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    slug text COLLATE "C" NOT NULL,
    name text NOT NULL,
    metadata text NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves listing a tenant's organizations in id order.
    CONSTRAINT organizations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT organizations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT organizations_tenant_slug_key UNIQUE (tenant_id, slug),
    CONSTRAINT organizations_metadata_check CHECK (json_typeof(metadata::json) = 'object'),
    CONSTRAINT organizations_status_check CHECK (status IN ('active', 'suspended'))
);

-- Memberships. Their one foreign key is their organization's, through which they go with the
-- organization and so with its tenant: a second one to `tenants` would add nothing, and would
-- make which rule an insert for an unknown tenant breaks differ between the backends.
CREATE TABLE organization_members (
    tenant_id text COLLATE "C" NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    roles jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves listing an organization's members in user-id order and the foreign key's
    -- cascade.
    CONSTRAINT organization_members_pkey PRIMARY KEY (tenant_id, organization_id, user_id),
    CONSTRAINT organization_members_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    -- Compared with the empty array rather than measured: jsonb_array_length fails (an error,
    -- not a violation) on anything but an array, and AND does not promise to test the type first.
    CONSTRAINT organization_members_roles_check
        CHECK (jsonb_typeof(roles) = 'array' AND roles <> '[]'::jsonb)
);

-- A person's memberships, in organization-id order.
CREATE INDEX organization_members_tenant_id_user_id_idx
    ON organization_members (tenant_id, user_id, organization_id);

-- The management API serves organizations now (svc_domain::MANAGEMENT_API_SCOPES): every
-- tenant's management application gets back the two scopes 20261123000001_management_scopes
-- took away. The union drops a scope it already holds; the array is rebuilt in byte order (the
-- "C" collation, Rust's string order), sorted like every scope column. Ordinary applications
-- keep whatever they registered.
UPDATE applications
SET allowed_scopes = (
    SELECT jsonb_agg(scope ORDER BY scope COLLATE "C")
    FROM (
        SELECT jsonb_array_elements_text(applications.allowed_scopes) AS scope
        UNION
        SELECT unnest(ARRAY['organizations:read', 'organizations:write'])
    ) AS granted
)
WHERE is_management;

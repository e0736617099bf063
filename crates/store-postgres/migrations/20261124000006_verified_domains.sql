-- Verified domains: the DNS names an organization claims, and proves it controls by publishing
-- its claim's token (a TXT record at `_svc-verification.<name>` or an HTTPS well-known file).
-- Constraint and index names match the SQLite migration so both backends report the same name
-- on a conflict.
--
-- A claim belongs to one organization, referenced by (tenant_id, id) so it can never point into
-- another tenant, and goes with it (the foreign key's cascade), and so with its tenant. An
-- organization claims a name once; several organizations of a tenant may claim the same name
-- while it is pending, but at most one holds it verified (the partial unique index, which also
-- serves the lookup of a verified name for auto-join and home-realm discovery). `verified_at`
-- is set exactly when the claim is verified. `auto_join_roles` is a jsonb array of organization
-- role keys, sorted and never empty, like every list-valued column. Ids and names use the "C"
-- collation like `tenants.id`.

CREATE TABLE verified_domains (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    organization_id text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    status text NOT NULL,
    token text NOT NULL,
    verified_at timestamptz,
    last_checked_at timestamptz,
    auto_join boolean NOT NULL,
    auto_join_roles jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves reading and listing an organization's claims and the foreign key's cascade.
    CONSTRAINT verified_domains_pkey PRIMARY KEY (tenant_id, organization_id, id),
    CONSTRAINT verified_domains_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT verified_domains_org_name_key UNIQUE (tenant_id, organization_id, name),
    CONSTRAINT verified_domains_status_check CHECK (status IN ('pending', 'verified')),
    CONSTRAINT verified_domains_verified_at_check
        CHECK ((status = 'verified') = (verified_at IS NOT NULL)),
    CONSTRAINT verified_domains_token_check CHECK (length(token) >= 16),
    -- Compared with the empty array rather than measured (see organization_members_roles_check).
    CONSTRAINT verified_domains_auto_join_roles_check
        CHECK (jsonb_typeof(auto_join_roles) = 'array' AND auto_join_roles <> '[]'::jsonb)
);

-- One verified claim of a name per tenant.
CREATE UNIQUE INDEX verified_domains_tenant_name_verified_key
    ON verified_domains (tenant_id, name) WHERE status = 'verified';

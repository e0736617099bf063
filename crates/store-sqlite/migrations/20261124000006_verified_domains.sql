-- Verified domains: the DNS names an organization claims, and proves it controls by publishing
-- its claim's token (a TXT record at `_svc-verification.<name>` or an HTTPS well-known file).
-- Constraint and index names match the PostgreSQL migration so both backends report the same
-- name on a conflict.
--
-- A claim belongs to one organization, referenced by (tenant_id, id) so it can never point into
-- another tenant, and goes with it (the foreign key's cascade), and so with its tenant. An
-- organization claims a name once; several organizations of a tenant may claim the same name
-- while it is pending, but at most one holds it verified (the partial unique index, which also
-- serves the lookup of a verified name for auto-join and home-realm discovery). `verified_at`
-- is set exactly when the claim is verified. `auto_join_roles` is a JSON array of organization
-- role keys, sorted and never empty, like every list-valued column.
--
-- Timestamps are RFC 3339 text in UTC; none is compared in SQL but for equality (the revision
-- `updated_at` an update is conditional on), so none has an `_ns` twin.

CREATE TABLE verified_domains (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    token TEXT NOT NULL,
    verified_at TEXT,
    last_checked_at TEXT,
    auto_join INTEGER NOT NULL,
    auto_join_roles TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves reading and listing an organization's claims and the foreign key's cascade.
    CONSTRAINT verified_domains_pkey PRIMARY KEY (tenant_id, organization_id, id),
    CONSTRAINT verified_domains_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    -- SQLite reports a violation by column; the repository renames it to this name.
    CONSTRAINT verified_domains_org_name_key UNIQUE (tenant_id, organization_id, name),
    CONSTRAINT verified_domains_status_check CHECK (status IN ('pending', 'verified')),
    CONSTRAINT verified_domains_verified_at_check
        CHECK ((status = 'verified') = (verified_at IS NOT NULL)),
    CONSTRAINT verified_domains_auto_join_check CHECK (auto_join IN (0, 1)),
    CONSTRAINT verified_domains_token_check CHECK (length(token) >= 16),
    CONSTRAINT verified_domains_auto_join_roles_check CHECK (json_valid(auto_join_roles)
        AND json_type(auto_join_roles) = 'array' AND json_array_length(auto_join_roles) >= 1)
) STRICT, WITHOUT ROWID;

-- One verified claim of a name per tenant. SQLite reports a violation by column
-- (`verified_domains_tenant_id_name_key`), renamed by the repository.
CREATE UNIQUE INDEX verified_domains_tenant_name_verified_key
    ON verified_domains (tenant_id, name) WHERE status = 'verified';

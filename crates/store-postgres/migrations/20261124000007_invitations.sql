-- Invitations: an administrator asks a person, by address, to join the tenant (with tenant
-- roles) or one of its organizations (with organization roles); the person accepts through the
-- mailed link. Constraint and index names match the SQLite migration.
--
-- `email` is the normalised address (trimmed and lowercased by the domain, as for users), so
-- equality is the case-insensitive comparison. `organization_id` is NULL for an invitation to the
-- tenant itself; otherwise it references the organization by (tenant_id, id) (MATCH SIMPLE: a
-- NULL organization checks nothing), so an invitation cannot name another tenant's organization
-- and goes with the organization when it is deleted. Nothing references `users`: `accepted_by`
-- is the id of the person who accepted.
--
-- `token_hash` is the SHA-256 of the link's secret, never the secret; a resend replaces it. At
-- most one invitation per (tenant, address, target) is `pending`: the partial unique index
-- `invitations_pending_key` (the target is the organization's id, or '' for the tenant).
-- "Expired" is not stored: a pending invitation past `expires_at`.

CREATE TABLE invitations (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    email text COLLATE "C" NOT NULL,
    organization_id text COLLATE "C",
    roles jsonb NOT NULL,
    status text NOT NULL,
    token_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    invited_by text NOT NULL,
    accepted_by text COLLATE "C",
    accepted_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves listing a tenant's invitations in id order.
    CONSTRAINT invitations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT invitations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT invitations_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT invitations_token_hash_key UNIQUE (token_hash),
    CONSTRAINT invitations_token_hash_check CHECK (octet_length(token_hash) = 32),
    CONSTRAINT invitations_roles_check CHECK (jsonb_typeof(roles) = 'array'),
    CONSTRAINT invitations_status_check CHECK (status IN ('pending', 'accepted', 'revoked')),
    CONSTRAINT invitations_accepted_check
        CHECK ((status = 'accepted') = (accepted_by IS NOT NULL AND accepted_at IS NOT NULL))
);

-- One pending invitation per address and target.
CREATE UNIQUE INDEX invitations_pending_key
    ON invitations (tenant_id, email, coalesce(organization_id, ''))
    WHERE status = 'pending';

-- An organization's invitations (the listing filter and the foreign key's cascade).
CREATE INDEX invitations_tenant_id_organization_id_idx
    ON invitations (tenant_id, organization_id, id);

-- Invitations: an administrator asks a person, by address, to join the tenant (with tenant
-- roles) or one of its organizations (with organization roles); the person accepts through the
-- mailed link. Constraint and index names match the PostgreSQL migration so both backends report
-- the same name on a conflict.
--
-- `email` is the normalised address (trimmed and lowercased by the domain, as for users), so
-- equality is the case-insensitive comparison. `organization_id` is NULL for an invitation to the
-- tenant itself; otherwise it references the organization by (tenant_id, id), so an invitation
-- cannot name another tenant's organization and goes with the organization when it is deleted.
-- Nothing references `users` (people are removed by status, never deleted): `accepted_by` is the
-- id of the person who accepted, as text.
--
-- `token_hash` is the SHA-256 of the link's secret, never the secret; a resend replaces it. At
-- most one invitation per (tenant, address, target) is `pending`: the partial unique index
-- `invitations_pending_key` (the target is the organization's id, or '' for the tenant), which
-- SQLite reports by its name. "Expired" is not stored: a pending invitation past `expires_at`.
--
-- Timestamps are RFC 3339 text in UTC; `expires_at` is compared in SQL (acceptance, the state
-- filter), so it has an integer `_ns` twin. `updated_at` is compared only for equality (the
-- revision a change is conditional on), which the text decides exactly.

CREATE TABLE invitations (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    email TEXT NOT NULL,
    organization_id TEXT,
    roles TEXT NOT NULL,
    status TEXT NOT NULL,
    token_hash BLOB NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    invited_by TEXT NOT NULL,
    accepted_by TEXT,
    accepted_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves listing a tenant's invitations in id order.
    CONSTRAINT invitations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT invitations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT invitations_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT invitations_token_hash_key UNIQUE (token_hash),
    CONSTRAINT invitations_token_hash_check CHECK (length(token_hash) = 32),
    CONSTRAINT invitations_roles_check CHECK (json_valid(roles) AND json_type(roles) = 'array'),
    CONSTRAINT invitations_status_check CHECK (status IN ('pending', 'accepted', 'revoked')),
    CONSTRAINT invitations_accepted_check
        CHECK ((status = 'accepted') = (accepted_by IS NOT NULL AND accepted_at IS NOT NULL))
) STRICT, WITHOUT ROWID;

-- One pending invitation per address and target.
CREATE UNIQUE INDEX invitations_pending_key
    ON invitations (tenant_id, email, coalesce(organization_id, ''))
    WHERE status = 'pending';

-- An organization's invitations (the listing filter and the foreign key's cascade).
CREATE INDEX invitations_tenant_id_organization_id_idx
    ON invitations (tenant_id, organization_id, id);

-- SCIM 2.0 provisioning (RFC 7643, RFC 7644): the bearer tokens directories present at a tenant's
-- `/scim/v2` (tenant-wide, or limited to one organization), and the SCIM attributes of a person
-- that their user record does not hold (`userName`, `externalId`).
--
-- Only the SHA-256 of a token is stored, like every other bearer value; it is looked up by that
-- hash, within its tenant. A revoked token stays (listed as revoked). `userName` is unique per
-- tenant, compared case-insensitively (RFC 7643 §4.1.1 `caseExact: false`), through an index on
-- `lower(user_name)`. A person created outside SCIM has no row: their `userName` is their email.
-- Constraint and index names match the SQLite migration.

CREATE TABLE scim_tokens (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    organization_id text COLLATE "C",
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT scim_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT scim_tokens_token_hash_check CHECK (octet_length(token_hash) = 32),
    CONSTRAINT scim_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT scim_tokens_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE
);

CREATE UNIQUE INDEX scim_tokens_token_hash_key ON scim_tokens (token_hash);
CREATE INDEX scim_tokens_tenant_id_idx ON scim_tokens (tenant_id, id);

CREATE TABLE scim_users (
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    user_name text COLLATE "C" NOT NULL,
    external_id text COLLATE "C",
    updated_at timestamptz NOT NULL,
    CONSTRAINT scim_users_pkey PRIMARY KEY (tenant_id, user_id),
    CONSTRAINT scim_users_user_name_check CHECK (length(user_name) > 0),
    CONSTRAINT scim_users_user_fkey FOREIGN KEY (user_id)
        REFERENCES users (id) ON DELETE CASCADE
);

CREATE UNIQUE INDEX scim_users_user_name_key ON scim_users (tenant_id, lower(user_name));
CREATE INDEX scim_users_user_id_idx ON scim_users (user_id);

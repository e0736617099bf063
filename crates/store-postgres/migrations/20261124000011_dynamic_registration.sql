-- Dynamic client registration (RFC 7591, RFC 7592): each tenant's registration policy, its initial
-- access tokens (RFC 7591 §3, for the `protected` policy), and the registration access token of
-- each application registered at `/oauth/register`.
--
-- A tenant without a row in `registration_policies` has the policy `disabled`. Only the SHA-256
-- of a registration access token is stored, like every other bearer value; the row goes with its
-- application (and tenant). Applications created through the management API have no row, so
-- they cannot be read, replaced or deleted through `/oauth/register/{client_id}`. Constraint
-- names match the SQLite migration.

CREATE TABLE registration_policies (
    tenant_id text COLLATE "C" NOT NULL,
    policy text NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT registration_policies_pkey PRIMARY KEY (tenant_id),
    CONSTRAINT registration_policies_policy_check CHECK (policy IN ('disabled', 'open', 'protected')),
    CONSTRAINT registration_policies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE TABLE registration_access_tokens (
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT registration_access_tokens_pkey PRIMARY KEY (tenant_id, client_id),
    CONSTRAINT registration_access_tokens_token_hash_check CHECK (octet_length(token_hash) = 32),
    CONSTRAINT registration_access_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT registration_access_tokens_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
);

CREATE INDEX registration_access_tokens_client_id_idx ON registration_access_tokens (client_id);

-- Spending a use is one conditional UPDATE (unexpired, uses below max_uses).
CREATE TABLE initial_access_tokens (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    token_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    max_uses bigint,
    uses bigint NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT initial_access_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT initial_access_tokens_token_hash_check CHECK (octet_length(token_hash) = 32),
    CONSTRAINT initial_access_tokens_uses_check
        CHECK (uses >= 0 AND (max_uses IS NULL OR (max_uses > 0 AND uses <= max_uses))),
    CONSTRAINT initial_access_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX initial_access_tokens_tenant_id_idx ON initial_access_tokens (tenant_id);

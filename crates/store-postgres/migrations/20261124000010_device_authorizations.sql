-- The device authorization grant (RFC 8628): what `/oauth/device/code` starts and the device
-- polls for. Only hashes are stored: of the device code (the key, like every bearer value) and
-- of the user code (unique among the tenant's rows, so a typed code finds one request).
--
-- `status` moves once, from `pending` to `approved` or `denied` (a conditional UPDATE). An
-- approval also stores an authorization code under the same hash (its `redirect_uri` column
-- holds the grant's URN), which the device's next poll redeems once. `interval_secs` grows by
-- 5 at every poll that came too soon (RFC 8628 §3.5). Rows are purged a day after they expire.
-- Constraint and index names match the SQLite migration.

CREATE TABLE device_authorizations (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    user_code bytea NOT NULL,
    scope jsonb NOT NULL,
    status text NOT NULL,
    user_id text COLLATE "C",
    interval_secs bigint NOT NULL,
    last_polled_at timestamptz,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT device_authorizations_pkey PRIMARY KEY (tenant_id, hash),
    CONSTRAINT device_authorizations_user_code_key UNIQUE (tenant_id, user_code),
    CONSTRAINT device_authorizations_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT device_authorizations_user_code_check CHECK (octet_length(user_code) = 32),
    CONSTRAINT device_authorizations_status_check
        CHECK (status IN ('pending', 'approved', 'denied')),
    CONSTRAINT device_authorizations_decided_check
        CHECK ((status = 'pending') = (user_id IS NULL)),
    CONSTRAINT device_authorizations_interval_check CHECK (interval_secs BETWEEN 1 AND 3600),
    CONSTRAINT device_authorizations_scope_check CHECK (jsonb_typeof(scope) = 'array'),
    CONSTRAINT device_authorizations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX device_authorizations_expires_at_idx ON device_authorizations (expires_at);

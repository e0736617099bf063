-- Backchannel authentication requests (OpenID CIBA, poll mode): what `/bc-authorize` starts and
-- the client polls for. Only the SHA-256 of the `auth_req_id` is stored. `user_id` is the person
-- asked, NULL for a decoy (a hint that names nobody who can sign in): a decoy is never listed,
-- never decided, and expires like the others.
--
-- `status` moves once, from `pending` to `approved` or `denied`, by the person (a conditional
-- UPDATE on `user_id`). An approval also stores an authorization code under the same hash (its
-- `redirect_uri` column holds the grant's URN), which the next poll redeems once.
-- `interval_secs` grows by 5 at every poll that came too soon. Rows are purged a day after they
-- expire. Constraint and index names match the SQLite migration.

CREATE TABLE backchannel_requests (
    id text COLLATE "C" NOT NULL,
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C",
    scope jsonb NOT NULL,
    binding_message text,
    status text NOT NULL,
    interval_secs bigint NOT NULL,
    last_polled_at timestamptz,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT backchannel_requests_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT backchannel_requests_hash_key UNIQUE (tenant_id, hash),
    CONSTRAINT backchannel_requests_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT backchannel_requests_status_check
        CHECK (status IN ('pending', 'approved', 'denied')),
    CONSTRAINT backchannel_requests_decoy_check CHECK (user_id IS NOT NULL OR status = 'pending'),
    CONSTRAINT backchannel_requests_interval_check CHECK (interval_secs BETWEEN 1 AND 3600),
    CONSTRAINT backchannel_requests_scope_check CHECK (jsonb_typeof(scope) = 'array'),
    CONSTRAINT backchannel_requests_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX backchannel_requests_user_idx ON backchannel_requests (tenant_id, user_id, status);
CREATE INDEX backchannel_requests_expires_at_idx ON backchannel_requests (expires_at);

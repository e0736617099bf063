-- A person's login history: one row per sign-in attempt on an existing account (time, address,
-- user agent, method, result), read newest first by the tenant API and the account page. Ids are
-- time-ordered (`lgn_` + ULID) in the "C" collation, so the listing orders and pages by id alone.
-- Rows go with their tenant.
CREATE TABLE login_history (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    occurred_at timestamptz NOT NULL,
    method text NOT NULL,
    result text NOT NULL,
    client_ip text,
    user_agent text,
    CONSTRAINT login_history_pkey PRIMARY KEY (id),
    CONSTRAINT login_history_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT login_history_method_check CHECK (method IN ('password')),
    CONSTRAINT login_history_result_check
        CHECK (result IN ('success', 'invalid_credentials', 'locked')),
    CONSTRAINT login_history_user_agent_check CHECK (char_length(user_agent) <= 256)
);

CREATE INDEX login_history_tenant_id_user_id_id_idx ON login_history (tenant_id, user_id, id);

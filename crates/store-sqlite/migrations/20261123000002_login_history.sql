-- A person's login history: one row per sign-in attempt on an existing account (time, address,
-- user agent, method, result), read newest first by the tenant API and the account page. Ids are
-- time-ordered (`lgn_` + ULID), so the listing orders and pages by id alone; nothing compares
-- `occurred_at` in SQL, so it has no `_ns` twin. Rows go with their tenant.
CREATE TABLE login_history (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    method TEXT NOT NULL,
    result TEXT NOT NULL,
    client_ip TEXT,
    user_agent TEXT,
    CONSTRAINT login_history_pkey PRIMARY KEY (id),
    CONSTRAINT login_history_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT login_history_method_check CHECK (method IN ('password')),
    CONSTRAINT login_history_result_check
        CHECK (result IN ('success', 'invalid_credentials', 'locked')),
    CONSTRAINT login_history_user_agent_check CHECK (length(user_agent) <= 256)
) STRICT, WITHOUT ROWID;

CREATE INDEX login_history_tenant_id_user_id_id_idx ON login_history (tenant_id, user_id, id);

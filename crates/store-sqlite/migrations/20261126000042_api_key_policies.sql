-- Each tenant's policy for the API keys its people create for themselves on the account page
-- (issue 19 item 5): whether they may, for which of its APIs (`resource_ids`, a JSON array of
-- API resource ids; an id whose API was deleted since is ignored when read), how many live
-- keys one person holds, how many days one lives at most, and whether people may also make keys
-- for the agents they own (`agent_keys`). A tenant without a row lets
-- nobody. `api_keys_subject_idx` finds a person's (or an agent's) keys. Constraint names match
-- the PostgreSQL migration.

CREATE TABLE api_key_policies (
    tenant_id TEXT NOT NULL,
    self_service INTEGER NOT NULL,
    resource_ids TEXT NOT NULL,
    max_per_person INTEGER NOT NULL,
    max_lifetime_days INTEGER NOT NULL,
    agent_keys INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT api_key_policies_pkey PRIMARY KEY (tenant_id),
    CONSTRAINT api_key_policies_self_service_check CHECK (self_service IN (0, 1)),
    CONSTRAINT api_key_policies_agent_keys_check CHECK (agent_keys IN (0, 1)),
    CONSTRAINT api_key_policies_max_per_person_check CHECK (max_per_person BETWEEN 1 AND 20),
    CONSTRAINT api_key_policies_max_lifetime_days_check
        CHECK (max_lifetime_days BETWEEN 1 AND 365),
    CONSTRAINT api_key_policies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX api_keys_subject_idx ON api_keys (tenant_id, subject, id) WHERE subject IS NOT NULL;

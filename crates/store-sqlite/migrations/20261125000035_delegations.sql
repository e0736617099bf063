-- Delegations (issue 19 item 2): a person lets a registered agent act for them, within the
-- permissions and APIs they chose, until a time. Constraint and index names match the
-- PostgreSQL migration so both backends report the same name.
--
-- `scopes` and `resources` are JSON arrays of strings, like every list-valued column. Liveness
-- (not revoked, not expired) is decided by the caller on the few rows of one person and agent,
-- so no timestamp is compared in SQL and none has an `_ns` twin. Delegations are kept after
-- revocation (the audit log and `act` claims keep naming them) and go with their tenant; the
-- person and the agent are not foreign keys (people are removed by status, agents revoked).

CREATE TABLE delegations (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    resources TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    CONSTRAINT delegations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT delegations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT delegations_scopes_check
        CHECK (json_valid(scopes) AND json_type(scopes) = 'array'),
    CONSTRAINT delegations_resources_check
        CHECK (json_valid(resources) AND json_type(resources) = 'array')
) STRICT, WITHOUT ROWID;

-- A person's delegations, newest first, and those to one agent.
CREATE INDEX delegations_user_idx ON delegations (tenant_id, user_id, agent_id, id);

-- Every person's delegations to one agent, newest first (administrators looking at an agent).
CREATE INDEX delegations_agent_idx ON delegations (tenant_id, agent_id, id);

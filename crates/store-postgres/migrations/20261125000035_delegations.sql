-- Delegations (issue 19 item 2): a person lets a registered agent act for them, within the
-- permissions and APIs they chose, until a time. Constraint and index names match the SQLite
-- migration so both backends report the same name.
--
-- `scopes` and `resources` are jsonb arrays of strings, like every list-valued column.
-- Liveness (not revoked, not expired) is decided by the caller on the few rows of one person
-- and agent. Delegations are kept after revocation (the audit log and `act` claims keep naming
-- them) and go with their tenant; the person and the agent are not foreign keys (people are
-- removed by status, agents revoked). Ids use the "C" collation like `tenants.id`.

CREATE TABLE delegations (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    agent_id text COLLATE "C" NOT NULL,
    scopes jsonb NOT NULL,
    resources jsonb NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT delegations_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT delegations_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT delegations_scopes_check CHECK (jsonb_typeof(scopes) = 'array'),
    CONSTRAINT delegations_resources_check CHECK (jsonb_typeof(resources) = 'array')
);

-- A person's delegations, newest first, and those to one agent.
CREATE INDEX delegations_user_idx ON delegations (tenant_id, user_id, agent_id, id);

-- Every person's delegations to one agent, newest first (administrators looking at an agent).
CREATE INDEX delegations_agent_idx ON delegations (tenant_id, agent_id, id);

-- Registered agents (issue 19): software that acts with a key it registered. Constraint and
-- index names match the SQLite migration so both backends report the same name.
--
-- The owner is a person or an application of the tenant, by id (`usr_…`/`app_…`), in one
-- column: nothing references `users` (see the organizations migration) and an application may
-- go while its agents stay, so the use cases check the owner when an agent is registered. The
-- key set and metadata are text, not jsonb, like `organizations.metadata`: kept as the
-- repository wrote them so they read back identically on both backends; the checks still
-- refuse any JSON but an object. `allowed_scopes` and `allowed_resources` are jsonb arrays of
-- strings, like every list-valued column. Agents are never deleted but with their tenant:
-- revocation is a status. Ids use the "C" collation like `tenants.id`.

CREATE TABLE agents (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    owner_id text COLLATE "C" NOT NULL,
    jwks text NOT NULL,
    allowed_scopes jsonb NOT NULL,
    allowed_resources jsonb NOT NULL,
    metadata text NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    revoked_at timestamptz,
    -- Also serves listing a tenant's agents in id order.
    CONSTRAINT agents_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT agents_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT agents_name_check CHECK (length(name) > 0),
    CONSTRAINT agents_jwks_check CHECK (json_typeof(jwks::json) = 'object'),
    CONSTRAINT agents_allowed_scopes_check CHECK (jsonb_typeof(allowed_scopes) = 'array'),
    CONSTRAINT agents_allowed_resources_check CHECK (jsonb_typeof(allowed_resources) = 'array'),
    CONSTRAINT agents_metadata_check CHECK (json_typeof(metadata::json) = 'object'),
    CONSTRAINT agents_status_check CHECK (status IN ('active', 'suspended', 'revoked')),
    -- A revoked agent says when; no other does.
    CONSTRAINT agents_revoked_at_check CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);

-- The agents a person or an application answers for.
CREATE INDEX agents_owner_idx ON agents (tenant_id, owner_id, id);

-- Agents are served (`/api/v1/agents`): every tenant's management application gains the
-- contract's `agents:read` and `agents:write`, kept sorted like every scope column.
UPDATE applications
SET allowed_scopes = (
    SELECT jsonb_agg(scope ORDER BY scope COLLATE "C")
    FROM (
        SELECT jsonb_array_elements_text(applications.allowed_scopes) AS scope
        UNION
        SELECT unnest(ARRAY['agents:read', 'agents:write'])
    ) AS granted
)
WHERE is_management;

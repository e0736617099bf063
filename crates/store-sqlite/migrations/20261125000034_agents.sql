-- Registered agents (issue 19): software that acts with a key it registered. Constraint and
-- index names match the PostgreSQL migration so both backends report the same name.
--
-- The owner is a person or an application of the tenant, by id (`usr_…`/`app_…`), in one
-- column: nothing references `users` (see the organizations migration) and an application may
-- go while its agents stay, so the use cases check the owner when an agent is registered. The
-- key set and metadata are the JSON text the repository wrote (read back identically on both
-- backends); `allowed_scopes` and `allowed_resources` are JSON arrays of strings, like every
-- list-valued column. Agents are never deleted but with their tenant: revocation is a status.
--
-- Timestamps are RFC 3339 text in UTC, compared in SQL only for equality (the revision an
-- update is conditional on), so none has an `_ns` twin.

CREATE TABLE agents (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    jwks TEXT NOT NULL,
    allowed_scopes TEXT NOT NULL,
    allowed_resources TEXT NOT NULL,
    metadata TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    revoked_at TEXT,
    -- Also serves listing a tenant's agents in id order.
    CONSTRAINT agents_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT agents_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT agents_name_check CHECK (length(name) > 0),
    CONSTRAINT agents_jwks_check CHECK (json_valid(jwks) AND json_type(jwks) = 'object'),
    CONSTRAINT agents_allowed_scopes_check
        CHECK (json_valid(allowed_scopes) AND json_type(allowed_scopes) = 'array'),
    CONSTRAINT agents_allowed_resources_check
        CHECK (json_valid(allowed_resources) AND json_type(allowed_resources) = 'array'),
    CONSTRAINT agents_metadata_check CHECK (json_valid(metadata) AND json_type(metadata) = 'object'),
    CONSTRAINT agents_status_check CHECK (status IN ('active', 'suspended', 'revoked')),
    -- A revoked agent says when; no other does.
    CONSTRAINT agents_revoked_at_check CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
) STRICT, WITHOUT ROWID;

-- The agents a person or an application answers for.
CREATE INDEX agents_owner_idx ON agents (tenant_id, owner_id, id);

-- Agents are served (`/api/v1/agents`): every tenant's management application gains the
-- contract's `agents:read` and `agents:write`, kept sorted like every scope column.
UPDATE applications
SET allowed_scopes = (
    SELECT json_group_array(scope ORDER BY scope)
    FROM (
        SELECT value AS scope FROM json_each(applications.allowed_scopes)
        UNION
        SELECT value FROM json_each('["agents:read","agents:write"]')
    )
)
WHERE is_management = 1;

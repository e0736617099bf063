-- API keys (CONTRACTS.md "Organizations, roles, keys, SCIM"): a tenant's long-lived management
-- credentials (`svck_…`), or keys that act as a person or an agent (`subject`, `usr_…`/`agt_…`)
-- at one of the tenant's APIs (`resource_id`; deleting the API deletes its keys). Only a keyed
-- hash of a key is stored (HMAC-SHA-256 under the deployment's KMS-wrapped data key, never in
-- this database in the clear); a revoked key is kept so the audit log keeps pointing at
-- something. `scopes` is a JSON array of scope strings.
--
-- A rotation brings the old key's expiry forward to the end of its overlap. Constraint and index
-- names match the SQLite migration (which adds the `expires_at_ns` twin it compares).

CREATE TABLE api_keys (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    scopes text COLLATE "C" NOT NULL,
    key_hash bytea NOT NULL,
    created_by text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    last_used_at timestamptz,
    revoked_at timestamptz,
    rotated_from text COLLATE "C",
    resource_id text COLLATE "C",
    subject text COLLATE "C",
    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_reach_check CHECK ((resource_id IS NULL) = (subject IS NULL)),
    CONSTRAINT api_keys_resource_id_fkey FOREIGN KEY (tenant_id, resource_id)
        REFERENCES api_resources (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT api_keys_key_hash_check CHECK (octet_length(key_hash) = 32),
    CONSTRAINT api_keys_name_check CHECK (length(name) > 0),
    CONSTRAINT api_keys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id, id);

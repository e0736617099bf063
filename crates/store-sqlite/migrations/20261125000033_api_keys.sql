-- API keys (CONTRACTS.md "Organizations, roles, keys, SCIM"): a tenant's long-lived management
-- credentials (`svck_…`), or keys that act as a person or an agent (`subject`, `usr_…`/`agt_…`)
-- at one of the tenant's APIs (`resource_id`; deleting the API deletes its keys). Only a keyed
-- hash of a key is stored (HMAC-SHA-256 under the deployment's KMS-wrapped data key, never in
-- this database in the clear); a revoked key is kept so the audit log keeps pointing at
-- something. `scopes` is a JSON array of scope strings.
--
-- `expires_at_ns` is the nanosecond twin of `expires_at` that SQLite compares (counting a
-- tenant's live keys); PostgreSQL compares the `timestamptz` itself. A rotation brings the old
-- key's expiry forward to the end of its overlap. Constraint and index names match the
-- PostgreSQL migration.

CREATE TABLE api_keys (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    key_hash BLOB NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    expires_at_ns INTEGER,
    last_used_at TEXT,
    revoked_at TEXT,
    rotated_from TEXT,
    resource_id TEXT,
    subject TEXT,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_reach_check CHECK ((resource_id IS NULL) = (subject IS NULL)),
    CONSTRAINT api_keys_resource_id_fkey FOREIGN KEY (tenant_id, resource_id)
        REFERENCES api_resources (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT api_keys_key_hash_check CHECK (length(key_hash) = 32),
    CONSTRAINT api_keys_name_check CHECK (length(name) > 0),
    CONSTRAINT api_keys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id, id);

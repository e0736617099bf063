-- Applications (OAuth clients), operator tokens, the audit log, and the two coordination tables
-- of the protocol: idempotency keys and single-use client-assertion ids. Constraint and index
-- names match the PostgreSQL migration so both backends report the same name on a conflict.
--
-- Timestamps are RFC 3339 text in UTC, as in `tenants`. That text does not order chronologically
-- below one second (see src/timestamps.rs), so every timestamp the queries compare in SQL has an
-- `_ns` twin: the same instant as integer nanoseconds since the Unix epoch, always written from
-- the same value. The text column is what is read back; the integer is what is compared.
-- List-valued columns (redirect URIs, grants, scopes) are JSON arrays of strings.

CREATE TABLE applications (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    allowed_scopes TEXT NOT NULL,
    secret_hash BLOB,
    api_audience TEXT,
    first_party INTEGER NOT NULL,
    id_token_signed_response_alg TEXT NOT NULL,
    jwks TEXT,
    jwks_uri TEXT,
    is_management INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT applications_pkey PRIMARY KEY (id),
    CONSTRAINT applications_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT applications_redirect_uris_check
        CHECK (json_valid(redirect_uris) AND json_type(redirect_uris) = 'array'),
    CONSTRAINT applications_grant_types_check
        CHECK (json_valid(grant_types) AND json_type(grant_types) = 'array'),
    CONSTRAINT applications_allowed_scopes_check
        CHECK (json_valid(allowed_scopes) AND json_type(allowed_scopes) = 'array'),
    CONSTRAINT applications_token_endpoint_auth_method_check CHECK (token_endpoint_auth_method IN
        ('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt')),
    CONSTRAINT applications_secret_hash_check
        CHECK (secret_hash IS NULL OR length(secret_hash) = 32),
    CONSTRAINT applications_first_party_check CHECK (first_party IN (0, 1)),
    CONSTRAINT applications_id_token_signed_response_alg_check
        CHECK (id_token_signed_response_alg IN ('ES256', 'EdDSA', 'RS256')),
    CONSTRAINT applications_is_management_check CHECK (is_management IN (0, 1))
) STRICT, WITHOUT ROWID;

-- Every read is `WHERE tenant_id = ? AND id ...`; listing pages through one tenant in id order.
CREATE INDEX applications_tenant_id_id_idx ON applications (tenant_id, id);

-- Control-plane operator tokens: only the SHA-256 of the token is stored, and looked up by it.
CREATE TABLE operator_tokens (
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    token_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT operator_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT operator_tokens_token_hash_key UNIQUE (token_hash),
    CONSTRAINT operator_tokens_token_hash_check CHECK (length(token_hash) = 32)
) STRICT, WITHOUT ROWID;

-- The audit log, append-only. `tenant_id` deliberately has no foreign key: entries outlive a
-- deleted tenant (the deletion itself is audited), and NULL means a deployment-wide action.
-- Ids are time-sortable ULIDs, so newest first is `ORDER BY id DESC`.
CREATE TABLE audit_log (
    id TEXT NOT NULL,
    tenant_id TEXT,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    request_id TEXT,
    client_ip TEXT,
    outcome TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    occurred_at_ns INTEGER NOT NULL,
    CONSTRAINT audit_log_pkey PRIMARY KEY (id),
    CONSTRAINT audit_log_outcome_check CHECK (outcome IN ('success', 'failure'))
) STRICT, WITHOUT ROWID;

CREATE INDEX audit_log_tenant_id_id_idx ON audit_log (tenant_id, id);

-- Idempotency keys: the first request's fingerprint and, once it finished, its response.
CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER,
    body TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key),
    CONSTRAINT idempotency_keys_status_check CHECK (status BETWEEN 100 AND 999)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at_ns);

-- Client-assertion `jti`s already used, per tenant and client, until they expire (RFC 7523 §3).
-- No foreign keys: rows are short-lived and `purge_expired` removes them.
CREATE TABLE assertion_ids (
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    CONSTRAINT assertion_ids_pkey PRIMARY KEY (tenant_id, client_id, jti)
) STRICT, WITHOUT ROWID;

CREATE INDEX assertion_ids_expires_at_idx ON assertion_ids (expires_at_ns);

-- Applications (OAuth clients), operator tokens, the audit log, and the two coordination tables
-- of the protocol: idempotency keys and single-use client-assertion ids. Constraint and index
-- names match the SQLite migration so both backends report the same name on a conflict.
-- Ids and keys use the "C" collation like `tenants.id`: bytewise order, the same as SQLite's and
-- Rust's. List-valued columns (redirect URIs, grants, scopes) are jsonb arrays of strings.

CREATE TABLE applications (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    redirect_uris jsonb NOT NULL,
    grant_types jsonb NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    allowed_scopes jsonb NOT NULL,
    secret_hash bytea,
    api_audience text,
    first_party boolean NOT NULL,
    id_token_signed_response_alg text NOT NULL,
    jwks text,
    jwks_uri text,
    is_management boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT applications_pkey PRIMARY KEY (id),
    CONSTRAINT applications_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT applications_redirect_uris_check CHECK (jsonb_typeof(redirect_uris) = 'array'),
    CONSTRAINT applications_grant_types_check CHECK (jsonb_typeof(grant_types) = 'array'),
    CONSTRAINT applications_allowed_scopes_check CHECK (jsonb_typeof(allowed_scopes) = 'array'),
    CONSTRAINT applications_token_endpoint_auth_method_check CHECK (token_endpoint_auth_method IN
        ('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt')),
    CONSTRAINT applications_secret_hash_check
        CHECK (secret_hash IS NULL OR octet_length(secret_hash) = 32),
    CONSTRAINT applications_id_token_signed_response_alg_check
        CHECK (id_token_signed_response_alg IN ('ES256', 'EdDSA', 'RS256'))
);

-- Every read is `WHERE tenant_id = $1 AND id ...`; listing pages through one tenant in id order.
CREATE INDEX applications_tenant_id_id_idx ON applications (tenant_id, id);

-- Control-plane operator tokens: only the SHA-256 of the token is stored, and looked up by it.
CREATE TABLE operator_tokens (
    id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT operator_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT operator_tokens_token_hash_key UNIQUE (token_hash),
    CONSTRAINT operator_tokens_token_hash_check CHECK (octet_length(token_hash) = 32)
);

-- The audit log, append-only. `tenant_id` deliberately has no foreign key: entries outlive a
-- deleted tenant (the deletion itself is audited), and NULL means a deployment-wide action.
-- Ids are time-sortable ULIDs, so newest first is `ORDER BY id DESC`.
CREATE TABLE audit_log (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C",
    actor text NOT NULL,
    action text NOT NULL,
    target text,
    request_id text,
    client_ip text,
    outcome text NOT NULL,
    occurred_at timestamptz NOT NULL,
    CONSTRAINT audit_log_pkey PRIMARY KEY (id),
    CONSTRAINT audit_log_outcome_check CHECK (outcome IN ('success', 'failure'))
);

CREATE INDEX audit_log_tenant_id_id_idx ON audit_log (tenant_id, id);

-- Idempotency keys: the first request's fingerprint and, once it finished, its response.
CREATE TABLE idempotency_keys (
    scope text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    status integer,
    body text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key),
    CONSTRAINT idempotency_keys_status_check CHECK (status BETWEEN 100 AND 999)
);

CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- Client-assertion `jti`s already used, per tenant and client, until they expire (RFC 7523 §3).
-- No foreign keys: rows are short-lived and `purge_expired` removes them.
CREATE TABLE assertion_ids (
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    jti text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT assertion_ids_pkey PRIMARY KEY (tenant_id, client_id, jti)
);

CREATE INDEX assertion_ids_expires_at_idx ON assertion_ids (expires_at);

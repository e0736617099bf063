-- Signing keys: each tenant's JWS keys and where each stands in its rotation. Constraint and
-- index names match the PostgreSQL migration so both backends report the same name on a conflict.
-- Timestamps are RFC 3339 text in UTC, as in `tenants`. The private key is stored only sealed:
-- `wrapped_dek` (the data key, wrapped by the KMS) and `ciphertext` (the PKCS#8 key under it).
CREATE TABLE signing_keys (
    tenant_id TEXT NOT NULL,
    kid TEXT NOT NULL,
    alg TEXT NOT NULL,
    state TEXT NOT NULL,
    public_jwk TEXT NOT NULL,
    wrapped_dek BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    created_at TEXT NOT NULL,
    activates_at TEXT NOT NULL,
    retired_at TEXT,
    remove_after TEXT,
    CONSTRAINT signing_keys_pkey PRIMARY KEY (tenant_id, kid),
    CONSTRAINT signing_keys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT signing_keys_alg_check CHECK (alg IN ('ES256', 'EdDSA', 'RS256')),
    CONSTRAINT signing_keys_state_check CHECK (state IN ('next', 'active', 'retired'))
) STRICT, WITHOUT ROWID;

-- At most one signing key and one announced successor per tenant and algorithm: what makes
-- rotation exactly-once even if two workers race past the lock. SQLite checks these per row, so
-- a rotation retires the old active key before promoting the next one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (tenant_id, alg) WHERE state = 'active';
CREATE UNIQUE INDEX signing_keys_one_next ON signing_keys (tenant_id, alg) WHERE state = 'next';

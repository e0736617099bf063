-- Signing keys: each tenant's JWS keys and where each stands in its rotation. Constraint and
-- index names match the SQLite migration so both backends report the same name on a conflict.
-- Ids and kids use the "C" collation like `tenants.id`: bytewise order, the same as SQLite's and
-- Rust's. The private key is stored only sealed: `wrapped_dek` (the data key, wrapped by the KMS)
-- and `ciphertext` (the PKCS#8 key under it).
CREATE TABLE signing_keys (
    tenant_id text COLLATE "C" NOT NULL,
    kid text COLLATE "C" NOT NULL,
    alg text NOT NULL,
    state text NOT NULL,
    public_jwk text NOT NULL,
    wrapped_dek bytea NOT NULL,
    ciphertext bytea NOT NULL,
    created_at timestamptz NOT NULL,
    activates_at timestamptz NOT NULL,
    retired_at timestamptz,
    remove_after timestamptz,
    CONSTRAINT signing_keys_pkey PRIMARY KEY (tenant_id, kid),
    CONSTRAINT signing_keys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT signing_keys_alg_check CHECK (alg IN ('ES256', 'EdDSA', 'RS256')),
    CONSTRAINT signing_keys_state_check CHECK (state IN ('next', 'active', 'retired'))
);

-- At most one signing key and one announced successor per tenant and algorithm: what makes
-- rotation exactly-once even if two workers race past the advisory lock. Checked per statement,
-- so a rotation retires the old active key before promoting the next one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (tenant_id, alg) WHERE state = 'active';
CREATE UNIQUE INDEX signing_keys_one_next ON signing_keys (tenant_id, alg) WHERE state = 'next';

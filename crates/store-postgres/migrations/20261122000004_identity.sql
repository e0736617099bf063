-- The hosted sign-in's records and what the authorization-code flow leaves behind: tenant users,
-- browser sessions, one-time link tokens, fixed-window counters, pending interactions, consents,
-- authorization codes, refresh-token families and tokens, and revoked access-token ids. Plus the
-- tenant's sign-up switch and pairwise-subject key, and applications' post-logout redirect URIs.
-- Constraint and index names match the SQLite migration so both backends report the same name on
-- a conflict.
--
-- Ids and keys use the "C" collation like `tenants.id`: bytewise order, the same as SQLite's and
-- Rust's. List-valued columns (scopes, `amr`) are jsonb arrays of strings, like
-- `applications.allowed_scopes`. Bearer values (session cookies, codes, refresh tokens, link
-- tokens) are stored only as their 32-byte SHA-256.
--
-- Every tenant-owned table references `tenants` ON DELETE CASCADE, so deleting a tenant removes
-- all of it; `counters` are keyed by caller-namespaced strings and belong to no tenant.

ALTER TABLE tenants ADD COLUMN signup_enabled boolean NOT NULL DEFAULT false;

-- Existing tenants get a random key: two v4 UUIDs from the server's cryptographic generator
-- (built in since PostgreSQL 13, no extension needed), 244 random bits. New tenants always bind
-- a generated secret, so the column has no default.
ALTER TABLE tenants ADD COLUMN pairwise_secret bytea;
UPDATE tenants SET pairwise_secret = decode(
    replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex');
ALTER TABLE tenants ALTER COLUMN pairwise_secret SET NOT NULL;
ALTER TABLE tenants ADD CONSTRAINT tenants_pairwise_secret_check
    CHECK (octet_length(pairwise_secret) = 32);

ALTER TABLE applications ADD COLUMN post_logout_redirect_uris jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE applications ADD CONSTRAINT applications_post_logout_redirect_uris_check
    CHECK (jsonb_typeof(post_logout_redirect_uris) = 'array');

-- Tenant users. Removed users stay as tombstones (ids are never reused), so the address is unique
-- only among the users that are not removed: a removed person's address can sign up again.
CREATE TABLE users (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    email text COLLATE "C" NOT NULL,
    email_verified boolean NOT NULL,
    name text,
    given_name text,
    family_name text,
    status text NOT NULL,
    password_hash text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    last_sign_in_at timestamptz,
    CONSTRAINT users_pkey PRIMARY KEY (id),
    CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT users_status_check
        CHECK (status IN ('invited', 'pre_provisioned', 'active', 'suspended', 'removed'))
);

-- A partial unique index, so a violation names the index (the port's constraint name).
CREATE UNIQUE INDEX users_tenant_email_key ON users (tenant_id, email) WHERE status <> 'removed';
-- Listing pages through one tenant in id order.
CREATE INDEX users_tenant_id_id_idx ON users (tenant_id, id);

-- Browser sessions, found by the hash of their cookie.
CREATE TABLE sessions (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    secret_hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    auth_time timestamptz NOT NULL,
    amr jsonb NOT NULL,
    acr text,
    expires_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    revoked_at timestamptz,
    user_agent text,
    ip text,
    CONSTRAINT sessions_pkey PRIMARY KEY (id),
    CONSTRAINT sessions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT sessions_tenant_id_secret_hash_key UNIQUE (tenant_id, secret_hash),
    CONSTRAINT sessions_secret_hash_check CHECK (octet_length(secret_hash) = 32),
    CONSTRAINT sessions_amr_check CHECK (jsonb_typeof(amr) = 'array')
);

-- A user's sessions (active-sessions list, revocation on suspension or password change).
CREATE INDEX sessions_tenant_id_user_id_idx ON sessions (tenant_id, user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- One-time link tokens (email verification, password reset, invitation).
CREATE TABLE user_tokens (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    purpose text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT user_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT user_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT user_tokens_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT user_tokens_purpose_check
        CHECK (purpose IN ('verify_email', 'reset_password', 'invitation'))
);

-- Invalidation of a user's outstanding links of one purpose.
CREATE INDEX user_tokens_tenant_id_user_id_idx ON user_tokens (tenant_id, user_id, purpose);
CREATE INDEX user_tokens_expires_at_idx ON user_tokens (expires_at);

-- Fixed-window counters (brute-force protection), shared by every instance.
CREATE TABLE counters (
    key text COLLATE "C" NOT NULL,
    count bigint NOT NULL,
    window_ends_at timestamptz NOT NULL,
    CONSTRAINT counters_pkey PRIMARY KEY (key),
    CONSTRAINT counters_count_check CHECK (count > 0)
);

CREATE INDEX counters_window_ends_at_idx ON counters (window_ends_at);

-- Authorization requests waiting for the person to sign in or consent. `request` is the OAuth
-- engine's serialisation, opaque here.
CREATE TABLE interactions (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    request text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT interactions_pkey PRIMARY KEY (id),
    CONSTRAINT interactions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX interactions_expires_at_idx ON interactions (expires_at);

-- What each person allowed each application. UserInfo maps an application's `sub` (pairwise for
-- third parties) back to the person, hence the index on the subject.
CREATE TABLE consents (
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    scope jsonb NOT NULL,
    subject text COLLATE "C" NOT NULL,
    granted_at timestamptz NOT NULL,
    CONSTRAINT consents_pkey PRIMARY KEY (tenant_id, user_id, client_id),
    CONSTRAINT consents_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT consents_scope_check CHECK (jsonb_typeof(scope) = 'array')
);

CREATE INDEX consents_tenant_id_client_id_subject_idx ON consents (tenant_id, client_id, subject);

-- Authorization codes, found by hash. A redeemed code is kept (with what its redemption issued)
-- until a day past its expiry, so a replay is recognised and can revoke what was issued.
CREATE TABLE authorization_codes (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    redirect_uri text NOT NULL,
    scope jsonb NOT NULL,
    code_challenge text,
    nonce text,
    auth_time timestamptz NOT NULL,
    acr text,
    amr jsonb NOT NULL,
    claims text,
    subject text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    redeemed_at timestamptz,
    issued_family_id text COLLATE "C",
    issued_access_jti text,
    issued_access_expires_at timestamptz,
    CONSTRAINT authorization_codes_pkey PRIMARY KEY (hash),
    CONSTRAINT authorization_codes_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT authorization_codes_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT authorization_codes_scope_check CHECK (jsonb_typeof(scope) = 'array'),
    CONSTRAINT authorization_codes_amr_check CHECK (jsonb_typeof(amr) = 'array')
);

CREATE INDEX authorization_codes_expires_at_idx ON authorization_codes (expires_at);

-- Refresh-token families. The key is (tenant_id, id) so that a token's family reference carries
-- its tenant too: a token can never join another tenant's family.
CREATE TABLE refresh_families (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C",
    scope jsonb NOT NULL,
    subject text NOT NULL,
    auth_time timestamptz NOT NULL,
    acr text,
    amr jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    revoke_reason text,
    CONSTRAINT refresh_families_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT refresh_families_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT refresh_families_scope_check CHECK (jsonb_typeof(scope) = 'array'),
    CONSTRAINT refresh_families_amr_check CHECK (jsonb_typeof(amr) = 'array')
);

-- A user's families (revocation on suspension, removal, password reset).
CREATE INDEX refresh_families_tenant_id_user_id_idx ON refresh_families (tenant_id, user_id);
CREATE INDEX refresh_families_expires_at_idx ON refresh_families (expires_at);
CREATE INDEX refresh_families_revoked_at_idx ON refresh_families (revoked_at);

-- Refresh tokens, found by hash. A rotated token is kept as long as its family, so presenting it
-- again is recognised as reuse.
CREATE TABLE refresh_tokens (
    hash bytea NOT NULL,
    family_id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    scope jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    rotated_at timestamptz,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT refresh_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT refresh_tokens_family_id_fkey FOREIGN KEY (tenant_id, family_id)
        REFERENCES refresh_families (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT refresh_tokens_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT refresh_tokens_scope_check CHECK (jsonb_typeof(scope) = 'array')
);

-- The family's tokens (purge, and the foreign key's cascade).
CREATE INDEX refresh_tokens_tenant_id_family_id_idx ON refresh_tokens (tenant_id, family_id);

-- Access-token `jti`s revoked before their expiry, remembered until then.
CREATE TABLE revoked_access_tokens (
    tenant_id text COLLATE "C" NOT NULL,
    jti text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT revoked_access_tokens_pkey PRIMARY KEY (tenant_id, jti),
    CONSTRAINT revoked_access_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX revoked_access_tokens_expires_at_idx ON revoked_access_tokens (expires_at);

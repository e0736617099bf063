-- The hosted sign-in's records and what the authorization-code flow leaves behind: tenant users,
-- browser sessions, one-time link tokens, fixed-window counters, pending interactions, consents,
-- authorization codes, refresh-token families and tokens, and revoked access-token ids. Plus the
-- tenant's sign-up switch and pairwise-subject key, and applications' post-logout redirect URIs.
-- Constraint and index names match the PostgreSQL migration so both backends report the same
-- name on a conflict.
--
-- Timestamps are RFC 3339 text in UTC, as in `tenants`. That text does not order chronologically
-- below one second (see src/timestamps.rs), so every timestamp the queries compare in SQL has an
-- `_ns` twin (integer nanoseconds since the Unix epoch, written from the same value): the text is
-- what is read back, the integer is what is compared. List-valued columns (scopes, `amr`) are JSON
-- arrays of strings, like `applications.allowed_scopes`. Bearer values (session cookies, codes,
-- refresh tokens, link tokens) are stored only as their 32-byte SHA-256.
--
-- Every tenant-owned table references `tenants` ON DELETE CASCADE, so deleting a tenant removes
-- all of it; `counters` are keyed by caller-namespaced strings and belong to no tenant.

-- SQLite adds a NOT NULL column only with a constant default, so existing tenants first get 32
-- zero bytes, then random ones; the insert of a new tenant always binds a generated secret.
ALTER TABLE tenants ADD COLUMN signup_enabled INTEGER NOT NULL DEFAULT 0
    CONSTRAINT tenants_signup_enabled_check CHECK (signup_enabled IN (0, 1));
ALTER TABLE tenants ADD COLUMN pairwise_secret BLOB NOT NULL
    DEFAULT x'0000000000000000000000000000000000000000000000000000000000000000'
    CONSTRAINT tenants_pairwise_secret_check CHECK (length(pairwise_secret) = 32);
UPDATE tenants SET pairwise_secret = randomblob(32);

ALTER TABLE applications ADD COLUMN post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]'
    CONSTRAINT applications_post_logout_redirect_uris_check
    CHECK (json_valid(post_logout_redirect_uris)
        AND json_type(post_logout_redirect_uris) = 'array');

-- Tenant users. Removed users stay as tombstones (ids are never reused), so the address is unique
-- only among the users that are not removed: a removed person's address can sign up again.
CREATE TABLE users (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    email TEXT NOT NULL,
    email_verified INTEGER NOT NULL,
    name TEXT,
    given_name TEXT,
    family_name TEXT,
    status TEXT NOT NULL,
    password_hash TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_sign_in_at TEXT,
    CONSTRAINT users_pkey PRIMARY KEY (id),
    CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT users_email_verified_check CHECK (email_verified IN (0, 1)),
    CONSTRAINT users_status_check
        CHECK (status IN ('invited', 'pre_provisioned', 'active', 'suspended', 'removed'))
) STRICT, WITHOUT ROWID;

-- SQLite reports a violation by column (`users.tenant_id, users.email`); the repository renames
-- it to this index's name, which PostgreSQL reports.
CREATE UNIQUE INDEX users_tenant_email_key ON users (tenant_id, email) WHERE status <> 'removed';
-- Listing pages through one tenant in id order.
CREATE INDEX users_tenant_id_id_idx ON users (tenant_id, id);

-- Browser sessions, found by the hash of their cookie.
CREATE TABLE sessions (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    secret_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    auth_time TEXT NOT NULL,
    amr TEXT NOT NULL,
    acr TEXT,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    last_seen_at TEXT NOT NULL,
    revoked_at TEXT,
    revoked_at_ns INTEGER,
    user_agent TEXT,
    ip TEXT,
    CONSTRAINT sessions_pkey PRIMARY KEY (id),
    CONSTRAINT sessions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT sessions_tenant_id_secret_hash_key UNIQUE (tenant_id, secret_hash),
    CONSTRAINT sessions_secret_hash_check CHECK (length(secret_hash) = 32),
    CONSTRAINT sessions_amr_check CHECK (json_valid(amr) AND json_type(amr) = 'array')
) STRICT, WITHOUT ROWID;

-- A user's sessions (active-sessions list, revocation on suspension or password change).
CREATE INDEX sessions_tenant_id_user_id_idx ON sessions (tenant_id, user_id);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at_ns);

-- One-time link tokens (email verification, password reset, invitation).
CREATE TABLE user_tokens (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    purpose TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    used_at TEXT,
    CONSTRAINT user_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT user_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT user_tokens_hash_check CHECK (length(hash) = 32),
    CONSTRAINT user_tokens_purpose_check
        CHECK (purpose IN ('verify_email', 'reset_password', 'invitation'))
) STRICT, WITHOUT ROWID;

-- Invalidation of a user's outstanding links of one purpose.
CREATE INDEX user_tokens_tenant_id_user_id_idx ON user_tokens (tenant_id, user_id, purpose);
CREATE INDEX user_tokens_expires_at_idx ON user_tokens (expires_at_ns);

-- Fixed-window counters (brute-force protection), shared by every instance.
CREATE TABLE counters (
    key TEXT NOT NULL,
    count INTEGER NOT NULL,
    window_ends_at TEXT NOT NULL,
    window_ends_at_ns INTEGER NOT NULL,
    CONSTRAINT counters_pkey PRIMARY KEY (key),
    CONSTRAINT counters_count_check CHECK (count > 0)
) STRICT, WITHOUT ROWID;

CREATE INDEX counters_window_ends_at_idx ON counters (window_ends_at_ns);

-- Authorization requests waiting for the person to sign in or consent. `request` is the OAuth
-- engine's serialisation, opaque here.
CREATE TABLE interactions (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    CONSTRAINT interactions_pkey PRIMARY KEY (id),
    CONSTRAINT interactions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX interactions_expires_at_idx ON interactions (expires_at_ns);

-- What each person allowed each application. UserInfo maps an application's `sub` (pairwise for
-- third parties) back to the person, hence the index on the subject.
CREATE TABLE consents (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    CONSTRAINT consents_pkey PRIMARY KEY (tenant_id, user_id, client_id),
    CONSTRAINT consents_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT consents_scope_check CHECK (json_valid(scope) AND json_type(scope) = 'array')
) STRICT, WITHOUT ROWID;

CREATE INDEX consents_tenant_id_client_id_subject_idx ON consents (tenant_id, client_id, subject);

-- Authorization codes, found by hash. A redeemed code is kept (with what its redemption issued)
-- until a day past its expiry, so a replay is recognised and can revoke what was issued.
CREATE TABLE authorization_codes (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    code_challenge TEXT,
    nonce TEXT,
    auth_time TEXT NOT NULL,
    acr TEXT,
    amr TEXT NOT NULL,
    claims TEXT,
    subject TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    redeemed_at TEXT,
    issued_family_id TEXT,
    issued_access_jti TEXT,
    issued_access_expires_at TEXT,
    CONSTRAINT authorization_codes_pkey PRIMARY KEY (hash),
    CONSTRAINT authorization_codes_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT authorization_codes_hash_check CHECK (length(hash) = 32),
    CONSTRAINT authorization_codes_scope_check
        CHECK (json_valid(scope) AND json_type(scope) = 'array'),
    CONSTRAINT authorization_codes_amr_check CHECK (json_valid(amr) AND json_type(amr) = 'array')
) STRICT, WITHOUT ROWID;

CREATE INDEX authorization_codes_expires_at_idx ON authorization_codes (expires_at_ns);

-- Refresh-token families. The key is (tenant_id, id) so that a token's family reference carries
-- its tenant too: a token can never join another tenant's family.
CREATE TABLE refresh_families (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_id TEXT,
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    auth_time TEXT NOT NULL,
    acr TEXT,
    amr TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    revoked_at TEXT,
    revoked_at_ns INTEGER,
    revoke_reason TEXT,
    CONSTRAINT refresh_families_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT refresh_families_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT refresh_families_scope_check
        CHECK (json_valid(scope) AND json_type(scope) = 'array'),
    CONSTRAINT refresh_families_amr_check CHECK (json_valid(amr) AND json_type(amr) = 'array')
) STRICT, WITHOUT ROWID;

-- A user's families (revocation on suspension, removal, password reset).
CREATE INDEX refresh_families_tenant_id_user_id_idx ON refresh_families (tenant_id, user_id);
CREATE INDEX refresh_families_expires_at_idx ON refresh_families (expires_at_ns);
CREATE INDEX refresh_families_revoked_at_idx ON refresh_families (revoked_at_ns);

-- Refresh tokens, found by hash. A rotated token is kept as long as its family, so presenting it
-- again is recognised as reuse.
CREATE TABLE refresh_tokens (
    hash BLOB NOT NULL,
    family_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    rotated_at TEXT,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT refresh_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT refresh_tokens_family_id_fkey FOREIGN KEY (tenant_id, family_id)
        REFERENCES refresh_families (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT refresh_tokens_hash_check CHECK (length(hash) = 32),
    CONSTRAINT refresh_tokens_scope_check CHECK (json_valid(scope) AND json_type(scope) = 'array')
) STRICT, WITHOUT ROWID;

-- The family's tokens (purge, and the foreign key's cascade).
CREATE INDEX refresh_tokens_tenant_id_family_id_idx ON refresh_tokens (tenant_id, family_id);

-- Access-token `jti`s revoked before their expiry, remembered until then.
CREATE TABLE revoked_access_tokens (
    tenant_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    CONSTRAINT revoked_access_tokens_pkey PRIMARY KEY (tenant_id, jti),
    CONSTRAINT revoked_access_tokens_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX revoked_access_tokens_expires_at_idx ON revoked_access_tokens (expires_at_ns);

-- Second factors: the factors a person enrols (TOTP authenticators), their single-use backup
-- codes, the pending second-factor challenges of sign-ins that passed the password step, the
-- deployment's wrapped data key that seals TOTP secrets, and the browsers a person signed in
-- from (known devices, some trusted to skip the second factor for a while).
-- Constraint and index names match the PostgreSQL migration so both backends report the same
-- name on a conflict.
--
-- A factor's TOTP secret is stored only sealed (with the deployment's data key, itself stored
-- only wrapped by the key-management daemon, in `factor_data_keys`);
-- backup codes only as their 32-byte keyed hash; a challenge only as the 32-byte hash of its
-- cookie. `last_used_step` is the last TOTP time step accepted: it only ever grows, by one
-- conditional UPDATE, so a code works once. Timestamps are RFC 3339 text in UTC; those compared
-- in SQL (a factor's creation, for abandoned enrolments; a challenge's expiry) have an `_ns`
-- twin (integer nanoseconds since the Unix epoch) like `user_tokens.expires_at_ns`. `amr` is a
-- JSON array of strings, like `sessions.amr`. Rows go with their tenant, except the data key,
-- which belongs to the deployment.

CREATE TABLE second_factors (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    label TEXT NOT NULL,
    sealed_secret BLOB NOT NULL,
    confirmed_at TEXT,
    last_used_step INTEGER,
    created_at TEXT NOT NULL,
    created_at_ns INTEGER NOT NULL,
    CONSTRAINT second_factors_pkey PRIMARY KEY (id),
    CONSTRAINT second_factors_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT second_factors_kind_check CHECK (kind IN ('totp')),
    CONSTRAINT second_factors_label_check CHECK (length(label) <= 64)
) STRICT, WITHOUT ROWID;

-- A user's factors (the account page, sign-in, an administrator's reset).
CREATE INDEX second_factors_tenant_id_user_id_idx ON second_factors (tenant_id, user_id);

-- Backup codes, one set per user at a time; the key also finds a user's set.
CREATE TABLE backup_codes (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    used_at TEXT,
    CONSTRAINT backup_codes_pkey PRIMARY KEY (tenant_id, user_id, hash),
    CONSTRAINT backup_codes_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT backup_codes_hash_check CHECK (length(hash) = 32)
) STRICT, WITHOUT ROWID;

-- Sign-ins waiting for their second factor, found by the hash of their cookie.
CREATE TABLE factor_challenges (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    amr TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    used_at TEXT,
    CONSTRAINT factor_challenges_pkey PRIMARY KEY (hash),
    CONSTRAINT factor_challenges_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT factor_challenges_hash_check CHECK (length(hash) = 32),
    CONSTRAINT factor_challenges_amr_check CHECK (json_valid(amr) AND json_type(amr) = 'array')
) STRICT, WITHOUT ROWID;

CREATE INDEX factor_challenges_expires_at_idx ON factor_challenges (expires_at_ns);

-- The deployment's data keys for second factors, one per purpose (`totp_seal`: the 32-byte key
-- that seals TOTP secrets), stored only wrapped by the key-management daemon so every instance
-- unwraps the same key. Written once (the first instance to insert wins, later inserts do
-- nothing) and never updated. No tenant: the key belongs to the deployment.
CREATE TABLE factor_data_keys (
    purpose TEXT NOT NULL,
    wrapped BLOB NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT factor_data_keys_pkey PRIMARY KEY (purpose),
    CONSTRAINT factor_data_keys_purpose_check CHECK (purpose IN ('totp_seal')),
    CONSTRAINT factor_data_keys_wrapped_check CHECK (length(wrapped) BETWEEN 16 AND 4096)
) STRICT, WITHOUT ROWID;

-- The browsers a person signed in from, each found by the 32-byte SHA-256 of its device cookie,
-- per person (one browser shared by two people is two rows). `trusted_until` is when a trusted
-- browser asks for the second factor again (NULL: not trusted); it is compared in Rust after
-- reading the row, never in SQL, so like the other times here it has no `_ns` twin. The key
-- also finds a user's browsers (withdrawing trust from all of them).
CREATE TABLE known_devices (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    secret_hash BLOB NOT NULL,
    user_agent TEXT,
    first_seen_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    trusted_until TEXT,
    CONSTRAINT known_devices_pkey PRIMARY KEY (tenant_id, user_id, secret_hash),
    CONSTRAINT known_devices_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT known_devices_secret_hash_check CHECK (length(secret_hash) = 32),
    CONSTRAINT known_devices_user_agent_check CHECK (length(user_agent) <= 256)
) STRICT, WITHOUT ROWID;

-- Whether a person has signed in successfully from an address before: one probe of the user's
-- rows for that address instead of a scan of their whole history.
CREATE INDEX login_history_tenant_id_user_id_client_ip_idx
    ON login_history (tenant_id, user_id, client_ip);

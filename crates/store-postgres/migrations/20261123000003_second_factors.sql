-- Second factors: the factors a person enrols (TOTP authenticators), their single-use backup
-- codes, the pending second-factor challenges of sign-ins that passed the password step, the
-- deployment's wrapped data key that seals TOTP secrets, and the browsers a person signed in
-- from (known devices, some trusted to skip the second factor for a while).
-- Constraint and index names match the SQLite migration so both backends report the same name on
-- a conflict.
--
-- A factor's TOTP secret is stored only sealed (with the deployment's data key, itself stored
-- only wrapped by the key-management daemon, in `factor_data_keys`);
-- backup codes only as their 32-byte keyed hash; a challenge only as the 32-byte hash of its
-- cookie. `last_used_step` is the last TOTP time step accepted: it only ever grows, by one
-- conditional UPDATE, so a code works once. Ids and keys use the "C" collation like
-- `tenants.id`. `amr` is a jsonb array of strings, like `sessions.amr`. Rows go with their
-- tenant, except the data key, which belongs to the deployment.

CREATE TABLE second_factors (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    label text NOT NULL,
    sealed_secret bytea NOT NULL,
    confirmed_at timestamptz,
    last_used_step bigint,
    created_at timestamptz NOT NULL,
    CONSTRAINT second_factors_pkey PRIMARY KEY (id),
    CONSTRAINT second_factors_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT second_factors_kind_check CHECK (kind IN ('totp')),
    CONSTRAINT second_factors_label_check CHECK (char_length(label) <= 64)
);

-- A user's factors (the account page, sign-in, an administrator's reset).
CREATE INDEX second_factors_tenant_id_user_id_idx ON second_factors (tenant_id, user_id);

-- Backup codes, one set per user at a time; the key also finds a user's set.
CREATE TABLE backup_codes (
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    hash bytea NOT NULL,
    created_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT backup_codes_pkey PRIMARY KEY (tenant_id, user_id, hash),
    CONSTRAINT backup_codes_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT backup_codes_hash_check CHECK (octet_length(hash) = 32)
);

-- Sign-ins waiting for their second factor, found by the hash of their cookie.
CREATE TABLE factor_challenges (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    amr jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT factor_challenges_pkey PRIMARY KEY (hash),
    CONSTRAINT factor_challenges_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT factor_challenges_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT factor_challenges_amr_check CHECK (jsonb_typeof(amr) = 'array')
);

CREATE INDEX factor_challenges_expires_at_idx ON factor_challenges (expires_at);

-- The deployment's data keys for second factors, one per purpose (`totp_seal`: the 32-byte key
-- that seals TOTP secrets), stored only wrapped by the key-management daemon so every instance
-- unwraps the same key. Written once (the first instance to insert wins, later inserts do
-- nothing) and never updated. No tenant: the key belongs to the deployment.
CREATE TABLE factor_data_keys (
    purpose text COLLATE "C" NOT NULL,
    wrapped bytea NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT factor_data_keys_pkey PRIMARY KEY (purpose),
    CONSTRAINT factor_data_keys_purpose_check CHECK (purpose IN ('totp_seal')),
    CONSTRAINT factor_data_keys_wrapped_check CHECK (octet_length(wrapped) BETWEEN 16 AND 4096)
);

-- The browsers a person signed in from, each found by the 32-byte SHA-256 of its device cookie,
-- per person (one browser shared by two people is two rows). `trusted_until` is when a trusted
-- browser asks for the second factor again (NULL: not trusted); it is compared in Rust after
-- reading the row, never in SQL. The key also finds a user's browsers (withdrawing trust from
-- all of them).
CREATE TABLE known_devices (
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    secret_hash bytea NOT NULL,
    user_agent text,
    first_seen_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    trusted_until timestamptz,
    CONSTRAINT known_devices_pkey PRIMARY KEY (tenant_id, user_id, secret_hash),
    CONSTRAINT known_devices_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT known_devices_secret_hash_check CHECK (octet_length(secret_hash) = 32),
    CONSTRAINT known_devices_user_agent_check CHECK (char_length(user_agent) <= 256)
);

-- Whether a person has signed in successfully from an address before: one probe of the user's
-- rows for that address instead of a scan of their whole history.
CREATE INDEX login_history_tenant_id_user_id_client_ip_idx
    ON login_history (tenant_id, user_id, client_ip);

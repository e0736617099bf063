-- Passkeys and WebAuthn: the passkeys a person signs in with instead of a password, the
-- server-side state of WebAuthn ceremonies in progress, security keys as a second factor
-- (`second_factors.kind` 'security_key'), and the login-history methods they add
-- (`password_security_key`, `passkey`). Constraint and index names match the PostgreSQL
-- migration so both backends report the same name on a conflict.
--
-- A passkey's `credential` is the WebAuthn library's serialised credential (public key,
-- signature counter, flags): a JSON object, opaque to the store and kept byte for byte. Its
-- `credential_id` (raw bytes, at most 1023 by WebAuthn Level 3 §5.1) is unique within a tenant,
-- whoever owns it, so an assertion names one passkey. A ceremony is stored only under the
-- 32-byte hash of its cookie; its `state` is the library's serialised ceremony state (a JSON
-- object) and never leaves the server. A ceremony is spent once, by one conditional UPDATE on
-- `used_at IS NULL` (right or wrong answer alike), and only for the purpose it was started for.
-- Timestamps are RFC 3339 text in UTC; the one compared in SQL (a ceremony's expiry) has an
-- `_ns` twin (integer nanoseconds since the Unix epoch) like `factor_challenges.expires_at_ns`.
-- Booleans are 0/1 integers. Rows go with their tenant.

CREATE TABLE passkeys (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    credential_id BLOB NOT NULL,
    credential TEXT NOT NULL,
    backup_eligible INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    CONSTRAINT passkeys_pkey PRIMARY KEY (id),
    CONSTRAINT passkeys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT passkeys_tenant_id_credential_id_key UNIQUE (tenant_id, credential_id),
    CONSTRAINT passkeys_name_check CHECK (length(name) BETWEEN 1 AND 64),
    CONSTRAINT passkeys_credential_id_check CHECK (length(credential_id) BETWEEN 1 AND 1023),
    CONSTRAINT passkeys_credential_check
        CHECK (json_valid(credential) AND json_type(credential) = 'object'),
    CONSTRAINT passkeys_backup_eligible_check CHECK (backup_eligible IN (0, 1))
) STRICT, WITHOUT ROWID;

-- A user's passkeys (the account page, deleting a user's credentials).
CREATE INDEX passkeys_tenant_id_user_id_idx ON passkeys (tenant_id, user_id);

-- WebAuthn ceremonies in progress, found by the hash of their cookie. `user_id` is NULL for a
-- passkey sign-in, where the assertion names the person.
CREATE TABLE webauthn_ceremonies (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT,
    purpose TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    used_at TEXT,
    CONSTRAINT webauthn_ceremonies_pkey PRIMARY KEY (hash),
    CONSTRAINT webauthn_ceremonies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT webauthn_ceremonies_hash_check CHECK (length(hash) = 32),
    CONSTRAINT webauthn_ceremonies_purpose_check CHECK (purpose IN
        ('passkey_registration', 'passkey_sign_in', 'security_key_registration',
         'security_key_verification')),
    CONSTRAINT webauthn_ceremonies_state_check
        CHECK (json_valid(state) AND json_type(state) = 'object')
) STRICT, WITHOUT ROWID;

-- The purge of expired ceremonies.
CREATE INDEX webauthn_ceremonies_expires_at_idx ON webauthn_ceremonies (expires_at_ns);

-- SQLite cannot change a CHECK constraint, so `second_factors` is rebuilt with the wider kind
-- check: the same columns, key, foreign key and other checks as before (20261123000003), its
-- rows copied, then its index created again. The migration runs in one transaction; nothing
-- references `second_factors`, so dropping it cascades nowhere.
CREATE TABLE second_factors_new (
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
    CONSTRAINT second_factors_kind_check CHECK (kind IN ('totp', 'security_key')),
    CONSTRAINT second_factors_label_check CHECK (length(label) <= 64)
) STRICT, WITHOUT ROWID;

INSERT INTO second_factors_new (id, tenant_id, user_id, kind, label, sealed_secret,
    confirmed_at, last_used_step, created_at, created_at_ns)
SELECT id, tenant_id, user_id, kind, label, sealed_secret, confirmed_at, last_used_step,
    created_at, created_at_ns
FROM second_factors;

DROP TABLE second_factors;

ALTER TABLE second_factors_new RENAME TO second_factors;

-- A user's factors (the account page, sign-in, an administrator's reset).
CREATE INDEX second_factors_tenant_id_user_id_idx ON second_factors (tenant_id, user_id);

-- `login_history` is rebuilt the same way for the wider method check, exactly as 20261123000004
-- rebuilt it (every other check as that version left it), then the indexes of 20261123000002
-- and 20261123000003 created again.
CREATE TABLE login_history_new (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    method TEXT NOT NULL,
    result TEXT NOT NULL,
    client_ip TEXT,
    user_agent TEXT,
    CONSTRAINT login_history_pkey PRIMARY KEY (id),
    CONSTRAINT login_history_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey')),
    CONSTRAINT login_history_result_check CHECK (result IN
        ('success', 'invalid_credentials', 'locked', 'invalid_second_factor',
         'second_factor_locked')),
    CONSTRAINT login_history_user_agent_check CHECK (length(user_agent) <= 256)
) STRICT, WITHOUT ROWID;

INSERT INTO login_history_new
    (id, tenant_id, user_id, occurred_at, method, result, client_ip, user_agent)
SELECT id, tenant_id, user_id, occurred_at, method, result, client_ip, user_agent
FROM login_history;

DROP TABLE login_history;

ALTER TABLE login_history_new RENAME TO login_history;

CREATE INDEX login_history_tenant_id_user_id_id_idx ON login_history (tenant_id, user_id, id);

-- Whether a person has signed in successfully from an address before: one probe of the user's
-- rows for that address instead of a scan of their whole history.
CREATE INDEX login_history_tenant_id_user_id_client_ip_idx
    ON login_history (tenant_id, user_id, client_ip);

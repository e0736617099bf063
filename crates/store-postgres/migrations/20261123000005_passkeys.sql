-- Passkeys and WebAuthn: the passkeys a person signs in with instead of a password, the
-- server-side state of WebAuthn ceremonies in progress, security keys as a second factor
-- (`second_factors.kind` 'security_key'), and the login-history methods they add
-- (`password_security_key`, `passkey`). Constraint and index names match the SQLite migration
-- so both backends report the same name on a conflict.
--
-- A passkey's `credential` is the WebAuthn library's serialised credential (public key,
-- signature counter, flags): a JSON object, opaque to the store. It is text, not jsonb, like
-- `events.body`: kept byte for byte as written, so it reads back identically on both backends
-- (jsonb would respell it); the check still refuses any JSON but an object. (Text that is not
-- JSON at all fails the check's cast instead: an error, not a check violation. The WebAuthn
-- library never writes such text.) Its `credential_id` (raw bytes, at most 1023 by WebAuthn
-- Level 3 §5.1) is unique within a tenant, whoever owns it, so an assertion names one passkey.
-- A ceremony is stored only under the 32-byte hash of its cookie; its `state` is the library's
-- serialised ceremony state (a JSON object, text for the same reason) and never leaves the
-- server. A ceremony is spent once, by one conditional UPDATE on `used_at IS NULL` (right or
-- wrong answer alike), and only for the purpose it was started for. Ids use the "C" collation
-- like `tenants.id`. Rows go with their tenant.

CREATE TABLE passkeys (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    credential_id bytea NOT NULL,
    credential text NOT NULL,
    backup_eligible boolean NOT NULL,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    CONSTRAINT passkeys_pkey PRIMARY KEY (id),
    CONSTRAINT passkeys_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT passkeys_tenant_id_credential_id_key UNIQUE (tenant_id, credential_id),
    CONSTRAINT passkeys_name_check CHECK (char_length(name) BETWEEN 1 AND 64),
    CONSTRAINT passkeys_credential_id_check
        CHECK (octet_length(credential_id) BETWEEN 1 AND 1023),
    CONSTRAINT passkeys_credential_check CHECK (json_typeof(credential::json) = 'object')
);

-- A user's passkeys (the account page, deleting a user's credentials).
CREATE INDEX passkeys_tenant_id_user_id_idx ON passkeys (tenant_id, user_id);

-- WebAuthn ceremonies in progress, found by the hash of their cookie. `user_id` is NULL for a
-- passkey sign-in, where the assertion names the person.
CREATE TABLE webauthn_ceremonies (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    user_id text COLLATE "C",
    purpose text NOT NULL,
    state text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT webauthn_ceremonies_pkey PRIMARY KEY (hash),
    CONSTRAINT webauthn_ceremonies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT webauthn_ceremonies_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT webauthn_ceremonies_purpose_check CHECK (purpose IN
        ('passkey_registration', 'passkey_sign_in', 'security_key_registration',
         'security_key_verification')),
    CONSTRAINT webauthn_ceremonies_state_check CHECK (json_typeof(state::json) = 'object')
);

-- The purge of expired ceremonies.
CREATE INDEX webauthn_ceremonies_expires_at_idx ON webauthn_ceremonies (expires_at);

-- The checks of 20261123000003 and 20261123000004, widened under the same names. Every stored
-- row meets the wider checks, so validating them changes nothing.
ALTER TABLE second_factors
    DROP CONSTRAINT second_factors_kind_check,
    ADD CONSTRAINT second_factors_kind_check CHECK (kind IN ('totp', 'security_key'));

ALTER TABLE login_history
    DROP CONSTRAINT login_history_method_check,
    ADD CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey'));

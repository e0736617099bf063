-- A social sign-in followed by a second factor is recorded as what it was — `social_totp`,
-- `social_backup_code` or `social_security_key` — instead of the password's names for the same
-- second step (a person who never typed a password was shown "password and app code").
-- SQLite cannot change a CHECK constraint, so `login_history` is rebuilt exactly as
-- 20261127000047 left it with the wider method check, then its indexes created again.
-- Constraint and index names match the PostgreSQL migration.

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
         'password_security_key', 'passkey', 'sso', 'social', 'social_totp',
         'social_backup_code', 'social_security_key')),
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

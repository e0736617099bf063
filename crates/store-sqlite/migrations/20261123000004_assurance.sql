-- Assurance: an application may demand a minimum `acr` for every authorization
-- (`applications.minimum_acr`, NULL: no minimum), and the login history records how the second
-- factor went (methods `password_totp`, `password_backup_code`, `password_trusted_device`;
-- results `invalid_second_factor`, `second_factor_locked`). Constraint and index names match the
-- PostgreSQL migration so both backends report the same name.

ALTER TABLE applications ADD COLUMN minimum_acr TEXT
    CONSTRAINT applications_minimum_acr_check
    CHECK (minimum_acr IN ('urn:svc:aal1', 'urn:svc:aal2'));

-- SQLite cannot change a CHECK constraint, so `login_history` is rebuilt with the wider ones:
-- the same columns, key, foreign key and other checks as before (20261123000002), its rows
-- copied, then the indexes of 20261123000002 and 20261123000003 created again. The migration
-- runs in one transaction; nothing references `login_history`, so dropping it cascades nowhere.
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
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device')),
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

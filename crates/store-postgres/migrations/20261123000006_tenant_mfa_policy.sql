-- A tenant's own second-factor policy ('default' follows the deployment's `[two_factor].policy`),
-- set through the control plane. The constraint name matches the SQLite migration.
ALTER TABLE tenants ADD COLUMN mfa_policy TEXT NOT NULL DEFAULT 'default'
    CONSTRAINT tenants_mfa_policy_check
    CHECK (mfa_policy IN ('default', 'off', 'optional', 'required'));

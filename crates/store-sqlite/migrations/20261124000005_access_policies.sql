-- Access-control policies (issue 17 item 6): a tenant's named rules on sign-in and token
-- issuance. Constraint names match the PostgreSQL migration so both backends report the same
-- name on a conflict.
--
-- Targets and rules are typed columns, never an expression: the lists (`applications`,
-- `organizations`, `roles`, `allowed_ip_ranges`, `sign_in_methods`) are JSON arrays of strings,
-- checked by the use cases before they are written and parsed again when read. A target that
-- names a deleted application, organization or role simply never matches, so nothing here
-- references them.
--
-- Timestamps are RFC 3339 text in UTC, compared in SQL only for equality (the revision an
-- update is conditional on).

CREATE TABLE access_policies (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    applications TEXT NOT NULL,
    organizations TEXT NOT NULL,
    roles TEXT NOT NULL,
    require_acr TEXT,
    allowed_ip_ranges TEXT NOT NULL,
    sign_in_methods TEXT NOT NULL,
    max_session_age_secs INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves reading a tenant's policies in id order.
    CONSTRAINT access_policies_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT access_policies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT access_policies_tenant_name_key UNIQUE (tenant_id, name),
    CONSTRAINT access_policies_enabled_check CHECK (enabled IN (0, 1))
) STRICT, WITHOUT ROWID;

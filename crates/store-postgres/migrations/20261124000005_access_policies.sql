-- Access-control policies (issue 17 item 6): a tenant's named rules on sign-in and token
-- issuance. Constraint names match the SQLite migration so both backends report the same name
-- on a conflict.
--
-- Targets and rules are typed columns, never an expression: the lists (`applications`,
-- `organizations`, `roles`, `allowed_ip_ranges`, `sign_in_methods`) are JSON arrays of strings,
-- checked by the use cases before they are written and parsed again when read. A target that
-- names a deleted application, organization or role simply never matches, so nothing here
-- references them. Ids use the "C" collation like `tenants.id`.

CREATE TABLE access_policies (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    enabled boolean NOT NULL,
    applications jsonb NOT NULL,
    organizations jsonb NOT NULL,
    roles jsonb NOT NULL,
    require_acr text,
    allowed_ip_ranges jsonb NOT NULL,
    sign_in_methods jsonb NOT NULL,
    max_session_age_secs bigint,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves reading a tenant's policies in id order.
    CONSTRAINT access_policies_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT access_policies_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT access_policies_tenant_name_key UNIQUE (tenant_id, name)
);

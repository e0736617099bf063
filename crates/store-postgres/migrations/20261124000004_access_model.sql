-- The access model (issue 17 items 1 and 2): the APIs a tenant protects (API resources) with
-- the permissions they define, custom tenant and organization roles, the permissions each role
-- holds (built-in roles included), the tenant roles held by applications (machine access), and
-- the API resource a code or refresh family was issued for (RFC 8707 `resource`). Plus the
-- management scopes that now serve roles. Constraint names match the SQLite migration so both
-- backends report the same name on a conflict.
--
-- An API resource's `identifier` is the audience of its tokens: unique in its tenant and never
-- changed once created (tokens already issued name it). Its permissions are rows of their own
-- so that a role's grant of one can reference it: removing a permission from its resource (or
-- deleting the resource) removes it from every role through the cascade, and no role can hold
-- a permission its resource does not define.
--
-- Built-in roles (`tenant_admin`, `owner`, `admin`, `member`) have no `roles` row; custom roles
-- do. `role_permissions` therefore does not reference `roles`: the use case that deletes a
-- custom role deletes its grants in the same transaction. Role keys are unique in a tenant
-- across both kinds, so a key names one role wherever it is assigned.
--
-- Applications have a globally unique id, so `application_roles` references it directly and
-- goes with the application; the use cases check that the application is the tenant's. Ids use
-- the "C" collation like `tenants.id`.

CREATE TABLE api_resources (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    identifier text COLLATE "C" NOT NULL,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- Also serves listing a tenant's resources in id order.
    CONSTRAINT api_resources_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT api_resources_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT api_resources_tenant_identifier_key UNIQUE (tenant_id, identifier)
);

CREATE TABLE api_resource_permissions (
    tenant_id text COLLATE "C" NOT NULL,
    resource_id text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    description text NOT NULL,
    CONSTRAINT api_resource_permissions_pkey PRIMARY KEY (tenant_id, resource_id, name),
    CONSTRAINT api_resource_permissions_resource_fkey FOREIGN KEY (tenant_id, resource_id)
        REFERENCES api_resources (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE roles (
    tenant_id text COLLATE "C" NOT NULL,
    role_key text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    description text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT roles_pkey PRIMARY KEY (tenant_id, role_key),
    CONSTRAINT roles_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT roles_kind_check CHECK (kind IN ('tenant', 'organization'))
);

CREATE TABLE role_permissions (
    tenant_id text COLLATE "C" NOT NULL,
    role_key text COLLATE "C" NOT NULL,
    resource_id text COLLATE "C" NOT NULL,
    permission text COLLATE "C" NOT NULL,
    -- Also serves reading the grants of a set of roles.
    CONSTRAINT role_permissions_pkey PRIMARY KEY (tenant_id, role_key, resource_id, permission),
    CONSTRAINT role_permissions_permission_fkey FOREIGN KEY (tenant_id, resource_id, permission)
        REFERENCES api_resource_permissions (tenant_id, resource_id, name) ON DELETE CASCADE
);

-- The foreign key's cascade from a permission.
CREATE INDEX role_permissions_permission_idx
    ON role_permissions (tenant_id, resource_id, permission);

CREATE TABLE application_roles (
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    role_key text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT application_roles_pkey PRIMARY KEY (client_id, role_key),
    CONSTRAINT application_roles_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
);

-- Counting a role's holders before it is deleted.
CREATE INDEX application_roles_tenant_role_idx ON application_roles (tenant_id, role_key);
CREATE INDEX user_roles_tenant_role_idx ON user_roles (tenant_id, role_key);

-- The API resource (its id) a code and then its refresh family were issued for; NULL when the
-- request named none. No foreign key, as for `organization_id`: the token endpoint re-reads the
-- resource at every redemption and refresh and refuses the grant when it is gone.
ALTER TABLE authorization_codes ADD COLUMN resource_id text COLLATE "C";
ALTER TABLE refresh_families ADD COLUMN resource_id text COLLATE "C";

-- The management API serves roles under the policies scopes now
-- (svc_domain::MANAGEMENT_API_SCOPES): every management application gets them, rebuilt in byte
-- order like every scope column.
UPDATE applications
SET allowed_scopes = (
    SELECT jsonb_agg(scope ORDER BY scope COLLATE "C")
    FROM (
        SELECT jsonb_array_elements_text(applications.allowed_scopes) AS scope
        UNION
        SELECT unnest(ARRAY['policies:read', 'policies:write'])
    ) AS granted
)
WHERE is_management;

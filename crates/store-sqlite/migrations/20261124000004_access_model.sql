-- The access model (issue 17 items 1 and 2): the APIs a tenant protects (API resources) with
-- the permissions they define, custom tenant and organization roles, the permissions each role
-- holds (built-in roles included), the tenant roles held by applications (machine access), and
-- the API resource a code or refresh family was issued for (RFC 8707 `resource`). Plus the
-- management scopes that now serve roles. Constraint names match the PostgreSQL migration so
-- both backends report the same name on a conflict.
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
-- goes with the application; the use cases check that the application is the tenant's.
--
-- Timestamps are RFC 3339 text in UTC. None is compared in SQL but for equality (the revision
-- `updated_at` an update is conditional on), which the text decides exactly, so none has an
-- `_ns` twin.

CREATE TABLE api_resources (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    identifier TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves listing a tenant's resources in id order.
    CONSTRAINT api_resources_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT api_resources_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT api_resources_tenant_identifier_key UNIQUE (tenant_id, identifier)
) STRICT, WITHOUT ROWID;

CREATE TABLE api_resource_permissions (
    tenant_id TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    CONSTRAINT api_resource_permissions_pkey PRIMARY KEY (tenant_id, resource_id, name),
    CONSTRAINT api_resource_permissions_resource_fkey FOREIGN KEY (tenant_id, resource_id)
        REFERENCES api_resources (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE TABLE roles (
    tenant_id TEXT NOT NULL,
    role_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT roles_pkey PRIMARY KEY (tenant_id, role_key),
    CONSTRAINT roles_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT roles_kind_check CHECK (kind IN ('tenant', 'organization'))
) STRICT, WITHOUT ROWID;

CREATE TABLE role_permissions (
    tenant_id TEXT NOT NULL,
    role_key TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    permission TEXT NOT NULL,
    -- Also serves reading the grants of a set of roles.
    CONSTRAINT role_permissions_pkey PRIMARY KEY (tenant_id, role_key, resource_id, permission),
    CONSTRAINT role_permissions_permission_fkey FOREIGN KEY (tenant_id, resource_id, permission)
        REFERENCES api_resource_permissions (tenant_id, resource_id, name) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- The foreign key's cascade from a permission.
CREATE INDEX role_permissions_permission_idx
    ON role_permissions (tenant_id, resource_id, permission);

CREATE TABLE application_roles (
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    role_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT application_roles_pkey PRIMARY KEY (client_id, role_key),
    CONSTRAINT application_roles_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- Counting a role's holders before it is deleted.
CREATE INDEX application_roles_tenant_role_idx ON application_roles (tenant_id, role_key);
CREATE INDEX user_roles_tenant_role_idx ON user_roles (tenant_id, role_key);

-- The API resource (its id) a code and then its refresh family were issued for; NULL when the
-- request named none. No foreign key, as for `organization_id`: the token endpoint re-reads the
-- resource at every redemption and refresh and refuses the grant when it is gone.
ALTER TABLE authorization_codes ADD COLUMN resource_id TEXT;
ALTER TABLE refresh_families ADD COLUMN resource_id TEXT;

-- The management API serves roles under the policies scopes now
-- (svc_domain::MANAGEMENT_API_SCOPES): every management application gets them.
UPDATE applications
SET allowed_scopes = (
    SELECT json_group_array(scope ORDER BY scope)
    FROM (
        SELECT value AS scope FROM json_each(applications.allowed_scopes)
        UNION
        SELECT value FROM json_each('["policies:read","policies:write"]')
    )
)
WHERE is_management = 1;

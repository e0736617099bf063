-- Every tenant's management application holds only the scopes a served route requires
-- (svc_domain::MANAGEMENT_API_SCOPES). Tenants created before this version were also given the
-- contract's organizations, policies, agents and billing scopes, which no route serves yet: a
-- token carrying them promised APIs that answer 404. Ordinary applications keep whatever API
-- scopes their owners registered. json_each walks the stored (sorted) array in order, so the
-- result stays sorted like every scope column.
UPDATE applications
SET allowed_scopes = (
    SELECT json_group_array(value)
    FROM json_each(applications.allowed_scopes)
    WHERE value NOT IN (
        'organizations:read', 'organizations:write', 'policies:read', 'policies:write',
        'agents:read', 'agents:write', 'billing:read', 'billing:write'
    )
)
WHERE is_management = 1;

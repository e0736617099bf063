-- Every tenant's management application holds only the scopes a served route requires
-- (svc_domain::MANAGEMENT_API_SCOPES). Tenants created before this version were also given the
-- contract's organizations, policies, agents and billing scopes, which no route serves yet: a
-- token carrying them promised APIs that answer 404. Ordinary applications keep whatever API
-- scopes their owners registered. The array keeps its (sorted) order, like every scope column.
UPDATE applications
SET allowed_scopes = COALESCE((
    SELECT jsonb_agg(scope ORDER BY position)
    FROM jsonb_array_elements_text(applications.allowed_scopes) WITH ORDINALITY AS e(scope, position)
    WHERE scope NOT IN (
        'organizations:read', 'organizations:write', 'policies:read', 'policies:write',
        'agents:read', 'agents:write', 'billing:read', 'billing:write'
    )
), '[]'::jsonb)
WHERE is_management;

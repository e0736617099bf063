-- Whether an application's sign-ins act in an organization (issue 17 item 3): `allow` (a
-- request may name one with the `organization` parameter; the default, what every application
-- did before) or `require` (every sign-in acts in one, picked on the hosted page when the
-- request names none). Constraint names match across backends.

ALTER TABLE applications ADD COLUMN organization_usage text NOT NULL DEFAULT 'allow'
    CONSTRAINT applications_organization_usage_check
    CHECK (organization_usage IN ('allow', 'require'));

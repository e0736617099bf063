-- The organization a person acts in, carried from the authorization request (`organization`
-- parameter) by the authorization code into the refresh-token family, so refreshed tokens keep
-- `org_id` / `org_slug`. NULL means no organization context. No foreign key: an organization
-- deleted or suspended, or a membership ended, is found by the token endpoint, which re-checks
-- the organization and the membership at every redemption and refresh and revokes the family
-- when either is gone (a cascade would have deleted the family silently, leaving a client with
-- a refresh token that is merely "invalid" and no audit trail of why).
ALTER TABLE authorization_codes ADD COLUMN organization_id TEXT;
ALTER TABLE refresh_families ADD COLUMN organization_id TEXT;

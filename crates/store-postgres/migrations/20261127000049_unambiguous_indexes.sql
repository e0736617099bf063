-- Every lookup by a whole key has exactly one index that answers it without a filter.
--
-- A prepared statement switches to a generic plan after five runs and keeps it until the table's
-- statistics change. On a table that has never been analysed (a new database, or autovacuum off
-- or behind), every index whose leading column the lookup names costs the same one-row estimate,
-- and the tie can go to the wrong one: the session lookup by cookie hash
-- (`tenant_id`, `secret_hash`) was planned on `(tenant_id, user_id)` with a filter on the hash,
-- so it read every session of the tenant. After 4,000 sign-ins it took 4.5 ms instead of 30 µs
-- and halved the code flow's throughput (bench/README.md, 2026-11-27).
--
-- Each secondary index below now leads with the column that makes it secondary (the user, the
-- owner, the client IP, ...) and `tenant_id` follows, so it is not a candidate for the lookups
-- by the table's other keys; where a lookup still names all its columns, it covers that lookup
-- whole. Every statement that used an index still finds its equality columns first in it.
-- `plans.rs` in this crate's tests checks the rule for every index of the schema.

ALTER TABLE access_policies DROP CONSTRAINT access_policies_tenant_name_key,
    ADD CONSTRAINT access_policies_tenant_name_key UNIQUE (name, tenant_id);
ALTER TABLE backchannel_requests DROP CONSTRAINT backchannel_requests_hash_key,
    ADD CONSTRAINT backchannel_requests_hash_key UNIQUE (hash, tenant_id);
ALTER TABLE device_authorizations DROP CONSTRAINT device_authorizations_user_code_key,
    ADD CONSTRAINT device_authorizations_user_code_key UNIQUE (user_code, tenant_id);
ALTER TABLE verified_domains DROP CONSTRAINT verified_domains_org_name_key,
    ADD CONSTRAINT verified_domains_org_name_key UNIQUE (name, tenant_id, organization_id);

DROP INDEX agents_owner_idx;
CREATE INDEX agents_owner_idx ON agents (owner_id, tenant_id, id);
DROP INDEX backchannel_requests_user_idx;
CREATE INDEX backchannel_requests_user_idx ON backchannel_requests (user_id, tenant_id, status);
DROP INDEX consents_tenant_id_client_id_subject_idx;
CREATE INDEX consents_subject_idx ON consents (subject, tenant_id, client_id);
-- A person's delegations to one agent are few: the person's index and a filter answer them.
DROP INDEX delegations_user_idx;
CREATE INDEX delegations_user_idx ON delegations (user_id, tenant_id, id);
DROP INDEX delegations_agent_idx;
CREATE INDEX delegations_agent_idx ON delegations (agent_id, tenant_id, id);
DROP INDEX invitations_tenant_id_organization_id_idx;
CREATE INDEX invitations_organization_idx ON invitations (organization_id, tenant_id, id);
DROP INDEX login_history_tenant_id_user_id_client_ip_idx;
CREATE INDEX login_history_client_ip_idx ON login_history (client_ip, tenant_id, user_id);
DROP INDEX logout_notices_client_id_idx;
CREATE INDEX logout_notices_client_id_idx ON logout_notices (client_id, session_id);
DROP INDEX organization_members_tenant_id_user_id_idx;
CREATE INDEX organization_members_user_idx
    ON organization_members (user_id, tenant_id, organization_id);
DROP INDEX refresh_families_tenant_id_user_id_idx;
CREATE INDEX refresh_families_user_idx ON refresh_families (user_id, tenant_id);
DROP INDEX role_permissions_permission_idx;
CREATE INDEX role_permissions_permission_idx
    ON role_permissions (resource_id, tenant_id, permission, role_key);
DROP INDEX sessions_tenant_id_user_id_idx;
CREATE INDEX sessions_user_idx ON sessions (user_id, tenant_id);
DROP INDEX user_roles_tenant_role_idx;
CREATE INDEX user_roles_role_idx ON user_roles (role_key, tenant_id, user_id);

-- Every lookup by a whole key has exactly one index that answers it without a filter.
--
-- The PostgreSQL migration of the same name explains why: a generic plan chosen while a table
-- had no statistics could answer a lookup by one key with another key's index and a filter
-- (the session lookup by cookie hash read every session of the tenant). SQLite plans each
-- statement when it is prepared and prefers a unique index that the lookup names in full, so
-- its unique constraints, written into the tables, stay as they are. The secondary indexes get
-- the same columns in the same order as on PostgreSQL, so both backends keep one list of index
-- names; `plans.rs` in this crate's tests checks the rule here too.

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

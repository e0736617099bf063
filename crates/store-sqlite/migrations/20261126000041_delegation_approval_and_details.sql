-- Per-use approval of delegations (issue 19 item 2): a person may ask to approve each use an
-- agent makes of a delegation. The agent then starts a backchannel request naming the
-- delegation and the API (`delegation_id`, `resource`; its `client_id` column holds the agent's
-- id), which the person approves on the CIBA page or API and the agent polls. Both columns are
-- NULL for an application's request. Constraint names match the PostgreSQL migration.

ALTER TABLE delegations ADD COLUMN per_use_approval INTEGER NOT NULL DEFAULT 0
    CONSTRAINT delegations_per_use_approval_check CHECK (per_use_approval IN (0, 1));
ALTER TABLE backchannel_requests ADD COLUMN delegation_id TEXT;
ALTER TABLE backchannel_requests ADD COLUMN resource TEXT
    CONSTRAINT backchannel_requests_delegated_check
    CHECK ((resource IS NULL) = (delegation_id IS NULL));

-- RAR details in delegations (RFC 9396): an agent registers the detail types it may ask for,
-- as an application does (a JSON array of {type, description, schema}, empty for every existing
-- agent), and a delegation keeps the details the person approved (JSON text validated when
-- written; absent for a delegation made without them).
ALTER TABLE agents ADD COLUMN authorization_details_types TEXT NOT NULL DEFAULT '[]'
    CONSTRAINT agents_authorization_details_types_check
    CHECK (json_valid(authorization_details_types)
           AND json_type(authorization_details_types) = 'array');
ALTER TABLE delegations ADD COLUMN authorization_details TEXT;

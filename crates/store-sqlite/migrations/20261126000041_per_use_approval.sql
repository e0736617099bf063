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

-- Per-use approval of delegations (issue 19 item 2): a person may ask to approve each use an
-- agent makes of a delegation. The agent then starts a backchannel request naming the
-- delegation and the API (`delegation_id`, `resource`; its `client_id` column holds the agent's
-- id), which the person approves on the CIBA page or API and the agent polls. Both columns are
-- NULL for an application's request.

ALTER TABLE delegations ADD COLUMN per_use_approval boolean NOT NULL DEFAULT false;
ALTER TABLE backchannel_requests ADD COLUMN delegation_id text COLLATE "C";
ALTER TABLE backchannel_requests ADD COLUMN resource text;
ALTER TABLE backchannel_requests ADD CONSTRAINT backchannel_requests_delegated_check
    CHECK ((resource IS NULL) = (delegation_id IS NULL));

-- RAR details in delegations (RFC 9396): an agent registers the detail types it may ask for,
-- as an application does (a JSON array of {type, description, schema}, empty for every existing
-- agent), and a delegation keeps the details the person approved (JSON text validated when
-- written; absent for a delegation made without them).
ALTER TABLE agents ADD COLUMN authorization_details_types jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE agents ADD CONSTRAINT agents_authorization_details_types_check
    CHECK (jsonb_typeof(authorization_details_types) = 'array');
ALTER TABLE delegations ADD COLUMN authorization_details text;

-- Logout propagation (OpenID Connect Back-Channel Logout 1.0, Front-Channel Logout 1.0).
--
-- `applications` gains the four registration fields (absent for every existing application).
-- `session_clients` records each application a session signed into (an authorization code was
-- issued), with the subject and issuer it saw; it goes with its session or its application.
-- `logout_notices` is the back-channel outbox: written in the transaction that ends a session,
-- for each of its applications with a `backchannel_logout_uri`, then claimed by the delivery
-- worker (`FOR UPDATE SKIP LOCKED`, so instances take disjoint notices), which pushes `due_at`
-- past the attempt as its lease and clears it when finished. It does not cascade from
-- `sessions`, so the purge of ended sessions cannot lose a notice; notices are purged a day
-- after they were written.

ALTER TABLE applications ADD COLUMN backchannel_logout_uri text;
ALTER TABLE applications ADD COLUMN backchannel_logout_session_required boolean NOT NULL
    DEFAULT false;
ALTER TABLE applications ADD COLUMN frontchannel_logout_uri text;
ALTER TABLE applications ADD COLUMN frontchannel_logout_session_required boolean NOT NULL
    DEFAULT false;

CREATE TABLE session_clients (
    tenant_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    subject text NOT NULL,
    issuer text NOT NULL,
    joined_at timestamptz NOT NULL,
    CONSTRAINT session_clients_pkey PRIMARY KEY (session_id, client_id),
    CONSTRAINT session_clients_session_id_fkey FOREIGN KEY (session_id)
        REFERENCES sessions (id) ON DELETE CASCADE,
    CONSTRAINT session_clients_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
);

CREATE INDEX session_clients_client_id_idx ON session_clients (client_id);

CREATE TABLE logout_notices (
    tenant_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    subject text NOT NULL,
    issuer text NOT NULL,
    created_at timestamptz NOT NULL,
    due_at timestamptz,
    attempts bigint NOT NULL DEFAULT 0,
    outcome text NOT NULL DEFAULT 'pending',
    last_status_code bigint,
    last_error text,
    CONSTRAINT logout_notices_pkey PRIMARY KEY (session_id, client_id),
    CONSTRAINT logout_notices_outcome_check
        CHECK (outcome IN ('pending', 'delivered', 'failed')),
    CONSTRAINT logout_notices_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT logout_notices_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
);

CREATE INDEX logout_notices_due_idx ON logout_notices (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX logout_notices_created_at_idx ON logout_notices (created_at);
CREATE INDEX logout_notices_client_id_idx ON logout_notices (client_id);

-- Logout propagation (OpenID Connect Back-Channel Logout 1.0, Front-Channel Logout 1.0).
--
-- `applications` gains the four registration fields (absent for every existing application).
-- `session_clients` records each application a session signed into (an authorization code was
-- issued), with the subject and issuer it saw; it goes with its session or its application.
-- `logout_notices` is the back-channel outbox: written in the transaction that ends a session,
-- for each of its applications with a `backchannel_logout_uri`, then claimed by the delivery
-- worker, which pushes `due_at` past the attempt as its lease and clears it when finished. It
-- does not cascade from `sessions`, so the purge of ended sessions cannot lose a notice; notices
-- are purged a day after they were written. Constraint and index names match PostgreSQL.

ALTER TABLE applications ADD COLUMN backchannel_logout_uri TEXT;
ALTER TABLE applications ADD COLUMN backchannel_logout_session_required INTEGER NOT NULL DEFAULT 0
    CONSTRAINT applications_backchannel_logout_session_required_check
    CHECK (backchannel_logout_session_required IN (0, 1));
ALTER TABLE applications ADD COLUMN frontchannel_logout_uri TEXT;
ALTER TABLE applications ADD COLUMN frontchannel_logout_session_required INTEGER NOT NULL
    DEFAULT 0
    CONSTRAINT applications_frontchannel_logout_session_required_check
    CHECK (frontchannel_logout_session_required IN (0, 1));

CREATE TABLE session_clients (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    issuer TEXT NOT NULL,
    joined_at TEXT NOT NULL,
    CONSTRAINT session_clients_pkey PRIMARY KEY (session_id, client_id),
    CONSTRAINT session_clients_session_id_fkey FOREIGN KEY (session_id)
        REFERENCES sessions (id) ON DELETE CASCADE,
    CONSTRAINT session_clients_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX session_clients_client_id_idx ON session_clients (client_id);

CREATE TABLE logout_notices (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    issuer TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_at_ns INTEGER NOT NULL,
    due_at TEXT,
    due_at_ns INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    outcome TEXT NOT NULL DEFAULT 'pending',
    last_status_code INTEGER,
    last_error TEXT,
    CONSTRAINT logout_notices_pkey PRIMARY KEY (session_id, client_id),
    CONSTRAINT logout_notices_outcome_check
        CHECK (outcome IN ('pending', 'delivered', 'failed')),
    CONSTRAINT logout_notices_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT logout_notices_client_id_fkey FOREIGN KEY (client_id)
        REFERENCES applications (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX logout_notices_due_idx ON logout_notices (due_at_ns) WHERE due_at_ns IS NOT NULL;
CREATE INDEX logout_notices_created_at_idx ON logout_notices (created_at_ns);
CREATE INDEX logout_notices_client_id_idx ON logout_notices (client_id);

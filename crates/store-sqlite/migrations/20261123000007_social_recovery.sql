-- Social recovery: the guardians a person names by email, the requests that recover an account
-- whose second factors are lost (M of N guardian approvals, then a waiting period, then
-- completion), and each guardian's approval of a request. Constraint and index names match the
-- PostgreSQL migration so both backends report the same name on a conflict.
--
-- No secret is stored: a request keeps only the 32-byte SHA-256 of the initiator's secret and of
-- the owner's cancel token, an approval only that of its mailed token. At most one request per
-- person is open (status 'pending' or 'waiting'), which a partial unique index enforces, so two
-- racing starts cannot both succeed. A request's `closed_at` is set exactly when it is closed,
-- `ready_at` when it waits (and kept when it completes), and only a completed request can owe a
-- new factor (`factor_due`). Approvals reference their request (tenant and id) and go with it;
-- they keep the guardian's id and address as mailed and do not reference `recovery_guardians`,
-- so removing a guardian never breaks a request in progress. One approval per guardian and
-- request, so approved rows count distinct guardians.
--
-- Timestamps are RFC 3339 text in UTC; the ones compared in SQL (a request's and an approval's
-- expiry, a request's closing for the purge) have `_ns` twins (integer nanoseconds since the
-- Unix epoch), like `webauthn_ceremonies.expires_at_ns`. Booleans are 0/1 integers. Users are
-- never deleted (removal leaves a tombstone), so nothing references `users`, as for `passkeys`;
-- every row goes with its tenant.

CREATE TABLE recovery_guardians (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT recovery_guardians_pkey PRIMARY KEY (id),
    CONSTRAINT recovery_guardians_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    -- Also serves listing a user's guardians. SQLite reports a violation by column
    -- (`recovery_guardians.tenant_id, recovery_guardians.user_id, recovery_guardians.email`);
    -- the repository renames it to this name, which PostgreSQL reports.
    CONSTRAINT recovery_guardians_user_email_key UNIQUE (tenant_id, user_id, email)
) STRICT, WITHOUT ROWID;

-- The key is (tenant_id, id) so that an approval's request reference carries its tenant too, as
-- for `refresh_families`.
CREATE TABLE recovery_requests (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    status TEXT NOT NULL,
    approvals_needed INTEGER NOT NULL,
    secret_hash BLOB NOT NULL,
    cancel_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    ready_at TEXT,
    closed_at TEXT,
    closed_at_ns INTEGER,
    factor_due INTEGER NOT NULL,
    CONSTRAINT recovery_requests_pkey PRIMARY KEY (tenant_id, id),
    CONSTRAINT recovery_requests_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT recovery_requests_secret_hash_key UNIQUE (secret_hash),
    CONSTRAINT recovery_requests_cancel_hash_key UNIQUE (cancel_hash),
    CONSTRAINT recovery_requests_status_check
        CHECK (status IN ('pending', 'waiting', 'cancelled', 'completed', 'expired')),
    CONSTRAINT recovery_requests_approvals_needed_check CHECK (approvals_needed >= 1),
    CONSTRAINT recovery_requests_secret_hash_check CHECK (length(secret_hash) = 32),
    CONSTRAINT recovery_requests_cancel_hash_check CHECK (length(cancel_hash) = 32),
    CONSTRAINT recovery_requests_closed_at_check
        CHECK ((status IN ('pending', 'waiting')) = (closed_at IS NULL)),
    CONSTRAINT recovery_requests_ready_at_check CHECK (
        (status = 'pending' AND ready_at IS NULL)
        OR (status IN ('waiting', 'completed') AND ready_at IS NOT NULL)
        OR status IN ('cancelled', 'expired')),
    CONSTRAINT recovery_requests_factor_due_check
        CHECK (factor_due IN (0, 1) AND (factor_due = 0 OR status = 'completed'))
) STRICT, WITHOUT ROWID;

-- At most one open request per person. SQLite reports a violation by column
-- (`recovery_requests.tenant_id, recovery_requests.user_id`); the repository renames it to this
-- index's name, which PostgreSQL reports.
CREATE UNIQUE INDEX recovery_requests_one_open_key ON recovery_requests (tenant_id, user_id)
    WHERE status IN ('pending', 'waiting');
-- A user's requests (expiring them, whether a factor is due).
CREATE INDEX recovery_requests_tenant_id_user_id_idx ON recovery_requests (tenant_id, user_id);
-- The purge of closed requests.
CREATE INDEX recovery_requests_closed_at_idx ON recovery_requests (closed_at_ns);

-- Guardians' approvals, found by the hash of their mailed token. Their one foreign key is their
-- request's, through which they go with the request and so with its tenant: a second one to
-- `tenants` would add nothing, and would make which rule an insert for an unknown tenant breaks
-- differ between the backends.
CREATE TABLE recovery_approvals (
    token_hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    guardian_id TEXT NOT NULL,
    email TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    approved_at TEXT,
    CONSTRAINT recovery_approvals_pkey PRIMARY KEY (token_hash),
    CONSTRAINT recovery_approvals_request_id_fkey FOREIGN KEY (tenant_id, request_id)
        REFERENCES recovery_requests (tenant_id, id) ON DELETE CASCADE,
    -- Also serves listing a request's approvals and the foreign key's cascade.
    CONSTRAINT recovery_approvals_tenant_id_request_id_guardian_id_key
        UNIQUE (tenant_id, request_id, guardian_id),
    CONSTRAINT recovery_approvals_token_hash_check CHECK (length(token_hash) = 32)
) STRICT, WITHOUT ROWID;

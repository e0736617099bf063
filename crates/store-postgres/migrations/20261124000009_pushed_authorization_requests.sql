-- Pushed authorization requests (RFC 9126): an application may be registered to require them
-- (`require_pushed_authorization_requests`, RFC 9126 §6; off for every existing application),
-- and the requests pushed to `/oauth/par` wait here until their single use at the authorization
-- endpoint, or until they expire (60 s) and the sweeper deletes them.
--
-- Only the SHA-256 of the `request_uri`'s random part is stored, like every other bearer value.
-- `request` is the validated parameters, serialised by the OAuth engine. Constraint and index
-- names match the SQLite migration.

ALTER TABLE applications ADD COLUMN require_pushed_authorization_requests boolean NOT NULL
    DEFAULT false;

CREATE TABLE pushed_authorization_requests (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    client_id text COLLATE "C" NOT NULL,
    request text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT pushed_authorization_requests_pkey PRIMARY KEY (tenant_id, hash),
    CONSTRAINT pushed_authorization_requests_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT pushed_authorization_requests_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX pushed_authorization_requests_expires_at_idx
    ON pushed_authorization_requests (expires_at);

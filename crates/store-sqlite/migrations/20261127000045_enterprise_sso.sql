-- Enterprise single sign-on (issue 20 item 2): an organization's connection to its upstream
-- OpenID provider, the sign-ins sent to that provider and not yet back (attempts), and the links
-- from an upstream subject to a person of the tenant. Constraint and index names match the
-- PostgreSQL migration so both backends report the same name on a conflict.
--
-- An organization has at most one connection, keyed by (tenant_id, organization_id), which
-- references the organization so it can never point into another tenant and goes with it (the
-- foreign key's cascade), and so with its tenant. Storing a connection again replaces every
-- column but `created_at`. The provider's endpoints are what its discovery document said when
-- the connection was configured (`userinfo_endpoint` only when it names one); `iss_parameter`
-- is whether the provider puts `iss` in its authorization responses (RFC 9207). We
-- authenticate at its token endpoint by `token_endpoint_auth_method`: `client_secret_basic`
-- with a secret kept only sealed (`sealed_secret`, never empty), or `private_key_jwt` with an
-- assertion signed by the tenant's own key (no secret at all, `sealed_secret` NULL). `scopes`
-- is a JSON array of the scopes asked for, in the order configured, never empty, like every
-- list-valued column.
--
-- An attempt is stored only under the 32-byte hash of its cookie (the state, nonce and PKCE
-- verifier derive from the cookie value, which only the browser holds, so nothing secret is
-- stored). It is spent once, by one conditional UPDATE on `used_at IS NULL` and its expiry, like
-- `webauthn_ceremonies`, and goes with its tenant; the janitor deletes spent and expired ones.
-- `interaction_id` is the authorization request to continue afterwards, if any (not a
-- reference: interactions are purged on their own schedule).
--
-- A link references its person by (tenant_id, user_id) and its organization by
-- (tenant_id, organization_id), so neither can be another tenant's, and goes with either. An
-- organization's provider asserts a subject once (the primary key). Deleting a connection
-- deletes its organization's links (the repository does, in the same transaction). For the
-- reference to carry the tenant, `users` gets a unique index on (tenant_id, id): the index
-- `users_tenant_id_id_idx` (listing a tenant's users in id order) is created again, unique
-- (`id` alone is the key, so no stored row can break it), under the same name.
--
-- Timestamps are RFC 3339 text in UTC; the one compared in SQL (an attempt's expiry) has an
-- `_ns` twin (integer nanoseconds since the Unix epoch) like `webauthn_ceremonies.expires_at_ns`.
-- Booleans are 0/1 integers.

CREATE TABLE sso_connections (
    tenant_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    issuer TEXT NOT NULL,
    authorization_endpoint TEXT NOT NULL,
    token_endpoint TEXT NOT NULL,
    jwks_uri TEXT NOT NULL,
    userinfo_endpoint TEXT,
    iss_parameter INTEGER NOT NULL,
    client_id TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    sealed_secret BLOB,
    scopes TEXT NOT NULL,
    enforced INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves the foreign key's cascade.
    CONSTRAINT sso_connections_pkey PRIMARY KEY (tenant_id, organization_id),
    CONSTRAINT sso_connections_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT sso_connections_iss_parameter_check CHECK (iss_parameter IN (0, 1)),
    CONSTRAINT sso_connections_enforced_check CHECK (enforced IN (0, 1)),
    -- A secret exactly when the method uses one.
    CONSTRAINT sso_connections_sealed_secret_check CHECK (
        (token_endpoint_auth_method = 'client_secret_basic' AND sealed_secret IS NOT NULL
            AND length(sealed_secret) >= 1)
        OR (token_endpoint_auth_method = 'private_key_jwt' AND sealed_secret IS NULL)),
    CONSTRAINT sso_connections_scopes_check CHECK (json_valid(scopes)
        AND json_type(scopes) = 'array' AND json_array_length(scopes) >= 1)
) STRICT, WITHOUT ROWID;

-- Sign-ins sent to an upstream provider, found by the hash of their cookie.
CREATE TABLE sso_attempts (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    interaction_id TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    used_at TEXT,
    CONSTRAINT sso_attempts_pkey PRIMARY KEY (hash),
    CONSTRAINT sso_attempts_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT sso_attempts_hash_check CHECK (length(hash) = 32)
) STRICT, WITHOUT ROWID;

-- The purge of expired attempts.
CREATE INDEX sso_attempts_expires_at_idx ON sso_attempts (expires_at_ns);

-- The parent key of `sso_links_user_fkey` (see above).
DROP INDEX users_tenant_id_id_idx;
CREATE UNIQUE INDEX users_tenant_id_id_idx ON users (tenant_id, id);

-- Upstream subjects known as people of the tenant.
CREATE TABLE sso_links (
    tenant_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- Also serves reading a link, deleting an organization's links and that foreign key's
    -- cascade.
    CONSTRAINT sso_links_pkey PRIMARY KEY (tenant_id, organization_id, subject),
    CONSTRAINT sso_links_organization_fkey FOREIGN KEY (tenant_id, organization_id)
        REFERENCES organizations (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT sso_links_user_fkey FOREIGN KEY (tenant_id, user_id)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT sso_links_subject_check CHECK (length(subject) BETWEEN 1 AND 255)
) STRICT, WITHOUT ROWID;

-- A person's links (the user foreign key's cascade).
CREATE INDEX sso_links_user_idx ON sso_links (tenant_id, user_id);

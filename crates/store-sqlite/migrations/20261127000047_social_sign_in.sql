-- Social sign-in (issue 20 item 3): a tenant's upstream OAuth 2.0 / OpenID Connect providers
-- ("Continue with Google"), the sign-ins sent to one of them and not yet back (attempts), the
-- links from an upstream account to a person of the tenant, and the links waiting for that
-- person's confirmation. Constraint and index names match the PostgreSQL migration so both
-- backends report the same name on a conflict.
--
-- A provider is keyed by (tenant_id, slug) and goes with its tenant. Storing a provider again
-- replaces every column but `created_at`. `preset` is what it was configured from; `protocol`
-- says how we learn who signed in, and which endpoint columns it has: `oidc` (an ID token
-- checked against `jwks_uri`, under `issuer`; `userinfo_endpoint` only when the provider names
-- one; `iss_parameter` whether it puts `iss` in its authorization responses, RFC 9207) or
-- `oauth2` (a profile read from `userinfo_endpoint`, and GitHub's list of addresses from
-- `emails_endpoint` when it has one; no issuer, no keys). We authenticate at its token endpoint
-- by `token_endpoint_auth_method`: `client_secret_basic` or `client_secret_post` with a secret
-- kept only sealed, or `apple_client_secret_jwt`, a JWT signed for each redemption with Apple's
-- key kept only sealed, issued by `apple_team_id` under `apple_key_id`; `sealed_secret` holds
-- whichever is sealed and is never empty. `scopes` is a JSON array of the scopes asked for, in
-- the order configured; unlike other list-valued columns it may be empty (an OAuth 2.0 provider
-- may need none).
--
-- An attempt is stored only under the 32-byte hash of its cookie (the state, nonce and PKCE
-- verifier derive from the cookie value, which only the browser holds, so nothing secret is
-- stored). It is spent once, by one conditional UPDATE on `used_at IS NULL` and its expiry, like
-- `sso_attempts`; the janitor deletes spent and expired ones. `interaction_id` is the
-- authorization request to continue afterwards, if any (not a reference: interactions are
-- purged on their own schedule); `link_for` is the signed-in person connecting the provider to
-- their own account, if any.
--
-- A link says which person an upstream account (the provider's subject) is. A subject is linked
-- once per provider (the primary key), and a person has at most one account of each provider
-- (`social_links_user_provider_key`). A pending link is an upstream account that vouched for an
-- existing person's address, waiting for that person to sign in and confirm; it is found by the
-- hash of its cookie, taken once (DELETE … RETURNING) before it expires, and the janitor deletes
-- expired ones.
--
-- Attempts, links and pending links reference their provider by (tenant_id, provider) and their
-- person by (tenant_id, user_id) (the unique index `users_tenant_id_id_idx` of 20261127000045),
-- so none can point into another tenant, and each goes with its provider, its person and so
-- with its tenant (the foreign keys' cascades). They need no foreign key of their own to
-- `tenants`: the provider's carries the tenant.
--
-- Timestamps are RFC 3339 text in UTC; those compared in SQL (the expiries) have an `_ns` twin
-- (integer nanoseconds since the Unix epoch) like `sso_attempts.expires_at_ns`. Booleans are
-- 0/1 integers.
--
-- The login history records a social sign-in as its own method, `social`: SQLite cannot change
-- a CHECK constraint, so `login_history` is rebuilt exactly as 20261127000046 left it with the
-- wider method check, then its indexes created again.

CREATE TABLE social_providers (
    tenant_id TEXT NOT NULL,
    slug TEXT NOT NULL,
    preset TEXT NOT NULL,
    display_name TEXT NOT NULL,
    protocol TEXT NOT NULL,
    issuer TEXT,
    authorization_endpoint TEXT NOT NULL,
    token_endpoint TEXT NOT NULL,
    jwks_uri TEXT,
    userinfo_endpoint TEXT,
    emails_endpoint TEXT,
    iss_parameter INTEGER NOT NULL,
    client_id TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    sealed_secret BLOB NOT NULL,
    apple_team_id TEXT,
    apple_key_id TEXT,
    scopes TEXT NOT NULL,
    form_post INTEGER NOT NULL,
    enabled INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- Also serves listing a tenant's providers by slug and the tenant foreign key's cascade.
    CONSTRAINT social_providers_pkey PRIMARY KEY (tenant_id, slug),
    CONSTRAINT social_providers_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT social_providers_slug_check CHECK (length(slug) BETWEEN 1 AND 32),
    CONSTRAINT social_providers_preset_check CHECK (preset IN
        ('google', 'microsoft', 'apple', 'github', 'gitlab', 'oidc', 'oauth2')),
    -- The endpoints each protocol has, and only those.
    CONSTRAINT social_providers_protocol_check CHECK (
        (protocol = 'oidc' AND issuer IS NOT NULL AND jwks_uri IS NOT NULL
            AND emails_endpoint IS NULL)
        OR (protocol = 'oauth2' AND issuer IS NULL AND jwks_uri IS NULL
            AND userinfo_endpoint IS NOT NULL AND iss_parameter = 0)),
    CONSTRAINT social_providers_iss_parameter_check CHECK (iss_parameter IN (0, 1)),
    -- Apple's team and key exactly when the client secret is a JWT signed with Apple's key.
    CONSTRAINT social_providers_client_auth_check CHECK (
        (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')
            AND apple_team_id IS NULL AND apple_key_id IS NULL)
        OR (token_endpoint_auth_method = 'apple_client_secret_jwt'
            AND apple_team_id IS NOT NULL AND apple_key_id IS NOT NULL)),
    CONSTRAINT social_providers_sealed_secret_check CHECK (length(sealed_secret) >= 1),
    CONSTRAINT social_providers_scopes_check CHECK (json_valid(scopes)
        AND json_type(scopes) = 'array'),
    CONSTRAINT social_providers_form_post_check CHECK (form_post IN (0, 1)),
    CONSTRAINT social_providers_enabled_check CHECK (enabled IN (0, 1))
) STRICT, WITHOUT ROWID;

-- Sign-ins sent to a provider, found by the hash of their cookie.
CREATE TABLE social_attempts (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    interaction_id TEXT,
    link_for TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    used_at TEXT,
    CONSTRAINT social_attempts_pkey PRIMARY KEY (hash),
    CONSTRAINT social_attempts_provider_fkey FOREIGN KEY (tenant_id, provider)
        REFERENCES social_providers (tenant_id, slug) ON DELETE CASCADE,
    CONSTRAINT social_attempts_link_for_fkey FOREIGN KEY (tenant_id, link_for)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT social_attempts_hash_check CHECK (length(hash) = 32)
) STRICT, WITHOUT ROWID;

-- The purge of expired attempts.
CREATE INDEX social_attempts_expires_at_idx ON social_attempts (expires_at_ns);
-- The provider foreign key's cascade.
CREATE INDEX social_attempts_provider_idx ON social_attempts (tenant_id, provider);
-- The person foreign key's cascade.
CREATE INDEX social_attempts_link_for_idx ON social_attempts (tenant_id, link_for);

-- Upstream accounts known as people of the tenant.
CREATE TABLE social_links (
    tenant_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    email TEXT,
    created_at TEXT NOT NULL,
    -- Also serves reading a link and the provider foreign key's cascade.
    CONSTRAINT social_links_pkey PRIMARY KEY (tenant_id, provider, subject),
    -- One account of each provider per person. Also serves listing a person's links by
    -- provider and the person foreign key's cascade.
    CONSTRAINT social_links_user_provider_key UNIQUE (tenant_id, user_id, provider),
    CONSTRAINT social_links_provider_fkey FOREIGN KEY (tenant_id, provider)
        REFERENCES social_providers (tenant_id, slug) ON DELETE CASCADE,
    CONSTRAINT social_links_user_fkey FOREIGN KEY (tenant_id, user_id)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT social_links_subject_check CHECK (length(subject) BETWEEN 1 AND 255)
) STRICT, WITHOUT ROWID;

-- Upstream accounts waiting for their person's confirmation, found by the hash of their cookie.
CREATE TABLE pending_social_links (
    hash BLOB NOT NULL,
    tenant_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    email TEXT NOT NULL,
    interaction_id TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    expires_at_ns INTEGER NOT NULL,
    CONSTRAINT pending_social_links_pkey PRIMARY KEY (hash),
    CONSTRAINT pending_social_links_provider_fkey FOREIGN KEY (tenant_id, provider)
        REFERENCES social_providers (tenant_id, slug) ON DELETE CASCADE,
    CONSTRAINT pending_social_links_user_fkey FOREIGN KEY (tenant_id, user_id)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT pending_social_links_hash_check CHECK (length(hash) = 32),
    CONSTRAINT pending_social_links_subject_check CHECK (length(subject) BETWEEN 1 AND 255)
) STRICT, WITHOUT ROWID;

-- The purge of expired pending links.
CREATE INDEX pending_social_links_expires_at_idx ON pending_social_links (expires_at_ns);
-- The provider foreign key's cascade.
CREATE INDEX pending_social_links_provider_idx ON pending_social_links (tenant_id, provider);
-- The person foreign key's cascade.
CREATE INDEX pending_social_links_user_idx ON pending_social_links (tenant_id, user_id);

-- The login history's wider method check (see above).
CREATE TABLE login_history_new (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    method TEXT NOT NULL,
    result TEXT NOT NULL,
    client_ip TEXT,
    user_agent TEXT,
    CONSTRAINT login_history_pkey PRIMARY KEY (id),
    CONSTRAINT login_history_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey', 'sso', 'social')),
    CONSTRAINT login_history_result_check CHECK (result IN
        ('success', 'invalid_credentials', 'locked', 'invalid_second_factor',
         'second_factor_locked')),
    CONSTRAINT login_history_user_agent_check CHECK (length(user_agent) <= 256)
) STRICT, WITHOUT ROWID;

INSERT INTO login_history_new
    (id, tenant_id, user_id, occurred_at, method, result, client_ip, user_agent)
SELECT id, tenant_id, user_id, occurred_at, method, result, client_ip, user_agent
FROM login_history;

DROP TABLE login_history;

ALTER TABLE login_history_new RENAME TO login_history;

CREATE INDEX login_history_tenant_id_user_id_id_idx ON login_history (tenant_id, user_id, id);

-- Whether a person has signed in successfully from an address before: one probe of the user's
-- rows for that address instead of a scan of their whole history.
CREATE INDEX login_history_tenant_id_user_id_client_ip_idx
    ON login_history (tenant_id, user_id, client_ip);

-- Social sign-in (issue 20 item 3): a tenant's upstream OAuth 2.0 / OpenID Connect providers
-- ("Continue with Google"), the sign-ins sent to one of them and not yet back (attempts), the
-- links from an upstream account to a person of the tenant, and the links waiting for that
-- person's confirmation. Constraint and index names match the SQLite migration so both
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
-- whichever is sealed and is never empty. `scopes` is a jsonb array of the scopes asked for, in
-- the order configured (jsonb keeps an array's order); unlike other list-valued columns it may
-- be empty (an OAuth 2.0 provider may need none).
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
-- Ids, slugs and subjects use the "C" collation like `tenants.id`.
--
-- The login history records a social sign-in as its own method, `social`.

CREATE TABLE social_providers (
    tenant_id text COLLATE "C" NOT NULL,
    slug text COLLATE "C" NOT NULL,
    preset text NOT NULL,
    display_name text NOT NULL,
    protocol text NOT NULL,
    issuer text,
    authorization_endpoint text NOT NULL,
    token_endpoint text NOT NULL,
    jwks_uri text,
    userinfo_endpoint text,
    emails_endpoint text,
    iss_parameter boolean NOT NULL,
    client_id text NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    sealed_secret bytea NOT NULL,
    apple_team_id text,
    apple_key_id text,
    scopes jsonb NOT NULL,
    form_post boolean NOT NULL,
    enabled boolean NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
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
            AND userinfo_endpoint IS NOT NULL AND NOT iss_parameter)),
    -- Apple's team and key exactly when the client secret is a JWT signed with Apple's key.
    CONSTRAINT social_providers_client_auth_check CHECK (
        (token_endpoint_auth_method IN ('client_secret_basic', 'client_secret_post')
            AND apple_team_id IS NULL AND apple_key_id IS NULL)
        OR (token_endpoint_auth_method = 'apple_client_secret_jwt'
            AND apple_team_id IS NOT NULL AND apple_key_id IS NOT NULL)),
    CONSTRAINT social_providers_sealed_secret_check CHECK (octet_length(sealed_secret) >= 1),
    CONSTRAINT social_providers_scopes_check CHECK (jsonb_typeof(scopes) = 'array')
);

-- Sign-ins sent to a provider, found by the hash of their cookie.
CREATE TABLE social_attempts (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    provider text COLLATE "C" NOT NULL,
    interaction_id text COLLATE "C",
    link_for text COLLATE "C",
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    CONSTRAINT social_attempts_pkey PRIMARY KEY (hash),
    CONSTRAINT social_attempts_provider_fkey FOREIGN KEY (tenant_id, provider)
        REFERENCES social_providers (tenant_id, slug) ON DELETE CASCADE,
    CONSTRAINT social_attempts_link_for_fkey FOREIGN KEY (tenant_id, link_for)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT social_attempts_hash_check CHECK (octet_length(hash) = 32)
);

-- The purge of expired attempts.
CREATE INDEX social_attempts_expires_at_idx ON social_attempts (expires_at);
-- The provider foreign key's cascade.
CREATE INDEX social_attempts_provider_idx ON social_attempts (tenant_id, provider);
-- The person foreign key's cascade.
CREATE INDEX social_attempts_link_for_idx ON social_attempts (tenant_id, link_for);

-- Upstream accounts known as people of the tenant.
CREATE TABLE social_links (
    tenant_id text COLLATE "C" NOT NULL,
    provider text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    email text,
    created_at timestamptz NOT NULL,
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
);

-- Upstream accounts waiting for their person's confirmation, found by the hash of their cookie.
CREATE TABLE pending_social_links (
    hash bytea NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    provider text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    email text NOT NULL,
    interaction_id text COLLATE "C",
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT pending_social_links_pkey PRIMARY KEY (hash),
    CONSTRAINT pending_social_links_provider_fkey FOREIGN KEY (tenant_id, provider)
        REFERENCES social_providers (tenant_id, slug) ON DELETE CASCADE,
    CONSTRAINT pending_social_links_user_fkey FOREIGN KEY (tenant_id, user_id)
        REFERENCES users (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT pending_social_links_hash_check CHECK (octet_length(hash) = 32),
    CONSTRAINT pending_social_links_subject_check CHECK (length(subject) BETWEEN 1 AND 255)
);

-- The purge of expired pending links.
CREATE INDEX pending_social_links_expires_at_idx ON pending_social_links (expires_at);
-- The provider foreign key's cascade.
CREATE INDEX pending_social_links_provider_idx ON pending_social_links (tenant_id, provider);
-- The person foreign key's cascade.
CREATE INDEX pending_social_links_user_idx ON pending_social_links (tenant_id, user_id);

-- The login history's wider method check (see above).
ALTER TABLE login_history
    DROP CONSTRAINT login_history_method_check,
    ADD CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey', 'sso', 'social'));

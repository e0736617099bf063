-- DPoP (RFC 9449): the key an authorization code is bound to (the `dpop_jkt` authorization
-- parameter or the proof at PAR, §10), the key a public client's refresh-token family is bound
-- to (§5), and the per-application `dpop_bound_access_tokens` setting (§5.2; off for every
-- existing application). Proof `jti`s share `assertion_ids` (20261122000003) under a prefixed
-- minter, so no table of their own.

ALTER TABLE authorization_codes ADD COLUMN dpop_jkt TEXT;
ALTER TABLE refresh_families ADD COLUMN dpop_jkt TEXT;
ALTER TABLE applications ADD COLUMN dpop_bound_access_tokens INTEGER NOT NULL DEFAULT 0
    CONSTRAINT applications_dpop_bound_access_tokens_check
    CHECK (dpop_bound_access_tokens IN (0, 1));

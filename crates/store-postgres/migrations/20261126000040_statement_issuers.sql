-- Software statement issuers per tenant (RFC 7591 §2.3): besides the authorities the deployment
-- trusts (configuration), a tenant may trust its own, each with the JWK Set (public keys, JSON
-- text) its statements verify with. Set as a whole through the registration-policy API; the rows
-- go with their tenant.

CREATE TABLE software_statement_issuers (
    tenant_id text COLLATE "C" NOT NULL,
    issuer text COLLATE "C" NOT NULL,
    jwks text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT software_statement_issuers_pkey PRIMARY KEY (tenant_id, issuer),
    CONSTRAINT software_statement_issuers_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

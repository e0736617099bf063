-- The event outbox and webhook delivery: events recorded in the same transaction as the change
-- they describe, tenants' webhook subscriptions, one delivery per (event, subscription) with its
-- lease, and the history of HTTP attempts. Constraint and index names match the SQLite migration.
--
-- Counters are bigint, read as i64 like SQLite's INTEGER. Ids use the "C" collation (bytewise order, as in SQLite and Rust). Every table belongs to a
-- tenant and goes with it (ON DELETE CASCADE); deliveries and their attempts go with their
-- subscription. Workers claim deliveries with `FOR UPDATE SKIP LOCKED` and a lease, never a lock
-- held across the HTTP call.

-- `body` is text, not jsonb: it is the envelope byte for byte as signed and sent.
CREATE TABLE events (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    event_type text NOT NULL,
    body text NOT NULL,
    occurred_at timestamptz NOT NULL,
    relayed_at timestamptz,
    CONSTRAINT events_pkey PRIMARY KEY (id),
    CONSTRAINT events_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX events_unrelayed_idx ON events (id) WHERE relayed_at IS NULL;
CREATE INDEX events_relayed_at_idx ON events (relayed_at) WHERE relayed_at IS NOT NULL;

CREATE TABLE webhook_subscriptions (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    url text NOT NULL,
    event_types jsonb NOT NULL,
    description text,
    active boolean NOT NULL,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_until timestamptz,
    disabled_reason text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (id),
    CONSTRAINT webhook_subscriptions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT webhook_subscriptions_event_types_check CHECK (jsonb_typeof(event_types) = 'array')
);

CREATE INDEX webhook_subscriptions_tenant_id_id_idx ON webhook_subscriptions (tenant_id, id);

CREATE TABLE webhook_deliveries (
    id text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    webhook_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    event_type text NOT NULL,
    status text NOT NULL,
    attempts bigint NOT NULL,
    next_attempt_at timestamptz,
    lease_owner text,
    lease_until timestamptz,
    leased_at timestamptz,
    last_status_code bigint,
    last_error text,
    redelivery_of text COLLATE "C",
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id),
    CONSTRAINT webhook_deliveries_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id)
        REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id)
        REFERENCES events (id) ON DELETE CASCADE,
    CONSTRAINT webhook_deliveries_status_check
        CHECK (status IN ('pending', 'succeeded', 'failed', 'exhausted')),
    CONSTRAINT webhook_deliveries_attempts_check CHECK (attempts >= 0)
);

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (lease_until)
    WHERE lease_owner IS NOT NULL;
CREATE INDEX webhook_deliveries_webhook_id_id_idx ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_final_idx ON webhook_deliveries (updated_at)
    WHERE status IN ('succeeded', 'exhausted');

CREATE TABLE webhook_attempts (
    delivery_id text COLLATE "C" NOT NULL,
    number bigint NOT NULL,
    started_at timestamptz NOT NULL,
    duration_ms bigint NOT NULL,
    status_code bigint,
    error text,
    CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, number),
    CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id)
        REFERENCES webhook_deliveries (id) ON DELETE CASCADE
);

-- The event outbox and webhook delivery: events recorded in the same transaction as the change
-- they describe, tenants' webhook subscriptions, one delivery per (event, subscription) with its
-- lease, and the history of HTTP attempts. Constraint and index names match the PostgreSQL
-- migration.
--
-- Timestamps are RFC 3339 text in UTC with `_ns` integer twins wherever SQL compares instants
-- (see 20261122000004_identity.sql and src/timestamps.rs). Every table belongs to a tenant and
-- goes with it (ON DELETE CASCADE); deliveries and their attempts go with their subscription.

-- One row per recorded event. `body` is the webhook envelope serialised once, so every attempt
-- signs and sends the same bytes. `relayed_at` is set once the event was fanned out.
CREATE TABLE events (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    occurred_at_ns INTEGER NOT NULL,
    relayed_at TEXT,
    relayed_at_ns INTEGER,
    CONSTRAINT events_pkey PRIMARY KEY (id),
    CONSTRAINT events_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- The relay's work list, oldest first; only unrelayed rows are indexed.
CREATE INDEX events_unrelayed_idx ON events (id) WHERE relayed_at_ns IS NULL;
CREATE INDEX events_relayed_at_idx ON events (relayed_at_ns) WHERE relayed_at_ns IS NOT NULL;

CREATE TABLE webhook_subscriptions (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    description TEXT,
    active INTEGER NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_secret_until TEXT,
    disabled_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (id),
    CONSTRAINT webhook_subscriptions_tenant_id_fkey FOREIGN KEY (tenant_id)
        REFERENCES tenants (id) ON DELETE CASCADE,
    CONSTRAINT webhook_subscriptions_active_check CHECK (active IN (0, 1)),
    CONSTRAINT webhook_subscriptions_event_types_check
        CHECK (json_valid(event_types) AND json_type(event_types) = 'array')
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_subscriptions_tenant_id_id_idx ON webhook_subscriptions (tenant_id, id);

-- One delivery per (event, subscription), plus manual redeliveries (`redelivery_of`). A lease
-- (`lease_owner` until `lease_until`) marks the delivery a worker is sending right now.
CREATE TABLE webhook_deliveries (
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TEXT,
    next_attempt_at_ns INTEGER,
    lease_owner TEXT,
    lease_until_ns INTEGER,
    leased_at TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    redelivery_of TEXT,
    created_at TEXT NOT NULL,
    created_at_ns INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    updated_at_ns INTEGER NOT NULL,
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
) STRICT, WITHOUT ROWID;

-- The workers' work list: due deliveries in time order.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at_ns)
    WHERE status IN ('pending', 'failed');
-- Leases to reap.
CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (lease_until_ns)
    WHERE lease_owner IS NOT NULL;
-- History pages, newest first, per subscription.
CREATE INDEX webhook_deliveries_webhook_id_id_idx ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_final_idx ON webhook_deliveries (updated_at_ns)
    WHERE status IN ('succeeded', 'exhausted');

CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, number),
    CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id)
        REFERENCES webhook_deliveries (id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

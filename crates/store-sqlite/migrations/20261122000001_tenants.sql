-- Tenants: the isolation boundary. Constraint names match the PostgreSQL migration so both
-- backends report the same name on a conflict.
-- Timestamps are RFC 3339 text in UTC with full precision (what sqlx's `time` support encodes and
-- decodes back to an identical OffsetDateTime).
CREATE TABLE tenants (
    id TEXT NOT NULL,
    slug TEXT NOT NULL,
    display_name TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT tenants_pkey PRIMARY KEY (id),
    CONSTRAINT tenants_slug_key UNIQUE (slug),
    CONSTRAINT tenants_status_check CHECK (status IN ('active', 'suspended'))
) STRICT, WITHOUT ROWID;

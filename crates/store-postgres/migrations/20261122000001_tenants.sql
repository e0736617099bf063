-- Tenants: the isolation boundary. Constraint names match the SQLite migration so both backends
-- report the same name on a conflict.
-- Ids and slugs use the "C" collation so ORDER BY / cursor comparisons are bytewise, the same
-- order as SQLite and as Rust's `Ord` on the id strings, whatever the database's locale.
CREATE TABLE tenants (
    id text COLLATE "C" NOT NULL,
    slug text COLLATE "C" NOT NULL,
    display_name text NOT NULL,
    status text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT tenants_pkey PRIMARY KEY (id),
    CONSTRAINT tenants_slug_key UNIQUE (slug),
    CONSTRAINT tenants_status_check CHECK (status IN ('active', 'suspended'))
);

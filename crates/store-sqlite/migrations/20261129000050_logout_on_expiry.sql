-- Back-channel logout for sessions that expire (OpenID Connect Back-Channel Logout 1.0), as it
-- already is for sessions that are revoked (whose notices their own transaction writes).
--
-- A session that runs out is not written to when it ends, so the delivery worker looks for
-- such sessions itself: each pass writes the notices of the sessions whose `expires_at` fell
-- between this mark and now (at most a day back), then moves the mark to now, under the single
-- writer. The one row starts empty: the first pass only sets the mark, so an upgrade does not
-- announce expiries that happened before it. `through_ns` is the nanosecond twin compared in
-- SQL, as everywhere on SQLite. Constraint names match PostgreSQL.

CREATE TABLE logout_expiry_mark (
    id INTEGER NOT NULL,
    through TEXT,
    through_ns INTEGER,
    CONSTRAINT logout_expiry_mark_pkey PRIMARY KEY (id),
    CONSTRAINT logout_expiry_mark_id_check CHECK (id = 1)
) STRICT, WITHOUT ROWID;

INSERT INTO logout_expiry_mark (id) VALUES (1);

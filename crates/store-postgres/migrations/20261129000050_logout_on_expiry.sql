-- Back-channel logout for sessions that expire (OpenID Connect Back-Channel Logout 1.0), as it
-- already is for sessions that are revoked (whose notices their own transaction writes).
--
-- A session that runs out is not written to when it ends, so the delivery worker looks for
-- such sessions itself: each pass locks this one row (`FOR UPDATE`, so instances take turns and
-- none announces an expiry twice), writes the notices of the sessions whose `expires_at` fell
-- between the mark and now (at most a day back), then moves the mark to now. The row starts
-- empty: the first pass only sets the mark, so an upgrade does not announce expiries that
-- happened before it. Constraint names match SQLite.

CREATE TABLE logout_expiry_mark (
    id integer NOT NULL,
    through timestamptz,
    CONSTRAINT logout_expiry_mark_pkey PRIMARY KEY (id),
    CONSTRAINT logout_expiry_mark_id_check CHECK (id = 1)
);

INSERT INTO logout_expiry_mark (id) VALUES (1);

-- Rich Authorization Requests (RFC 9396).
--
-- `applications` gains the detail types it may request: a JSON array of {type, description,
-- schema}, empty for every existing application. An authorization code keeps the details the
-- person approved, and a refresh family the details granted, as JSON text validated when
-- written; absent for every grant made without them.

ALTER TABLE applications ADD COLUMN authorization_details_types jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE applications ADD CONSTRAINT applications_authorization_details_types_check
    CHECK (jsonb_typeof(authorization_details_types) = 'array');
ALTER TABLE authorization_codes ADD COLUMN authorization_details text;
ALTER TABLE refresh_families ADD COLUMN authorization_details text;

-- Rich Authorization Requests (RFC 9396) on the polled grants: a device authorization and a
-- backchannel (CIBA) request keep the details the client asked for, as JSON text validated when
-- written, so the person sees them before approving and the code the approval stores carries
-- them. Absent for every request made without them.

ALTER TABLE device_authorizations ADD COLUMN authorization_details TEXT;
ALTER TABLE backchannel_requests ADD COLUMN authorization_details TEXT;

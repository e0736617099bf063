-- Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a tenant may
-- accept an https URL as `client_id`; the document at that URL is read into an application like
-- any other, which remembers the URL (its `client_id` on the wire, unique within the tenant) and
-- until when the reading stands. The tenant's switch sits beside its registration policy, off
-- until set.

ALTER TABLE applications ADD COLUMN metadata_url text;
ALTER TABLE applications ADD COLUMN metadata_fresh_until timestamptz;
ALTER TABLE applications ADD CONSTRAINT applications_metadata_document_check
    CHECK ((metadata_url IS NULL) = (metadata_fresh_until IS NULL));
CREATE UNIQUE INDEX applications_metadata_url_key ON applications (tenant_id, metadata_url)
    WHERE metadata_url IS NOT NULL;

ALTER TABLE registration_policies ADD COLUMN client_id_metadata_documents boolean NOT NULL
    DEFAULT false;

-- The enterprise User extension of SCIM (RFC 7643 §4.3) on a person's SCIM attributes:
-- `enterprise` is a JSON object of the attributes the directory gave (`employeeNumber`,
-- `costCenter`, `organization`, `division`, `department`, `manager` as the manager's value),
-- NULL when none. Shown back as given; not filtered on.

ALTER TABLE scim_users ADD COLUMN enterprise TEXT;

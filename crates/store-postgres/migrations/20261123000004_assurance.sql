-- Assurance: an application may demand a minimum `acr` for every authorization
-- (`applications.minimum_acr`, NULL: no minimum), and the login history records how the second
-- factor went (methods `password_totp`, `password_backup_code`, `password_trusted_device`;
-- results `invalid_second_factor`, `second_factor_locked`). Constraint names match the SQLite
-- migration so both backends report the same name.

ALTER TABLE applications ADD COLUMN minimum_acr text
    CONSTRAINT applications_minimum_acr_check
    CHECK (minimum_acr IN ('urn:svc:aal1', 'urn:svc:aal2'));

-- The checks of 20261123000002, widened under the same names. Every stored row meets the wider
-- checks, so validating them changes nothing.
ALTER TABLE login_history
    DROP CONSTRAINT login_history_method_check,
    ADD CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device')),
    DROP CONSTRAINT login_history_result_check,
    ADD CONSTRAINT login_history_result_check CHECK (result IN
        ('success', 'invalid_credentials', 'locked', 'invalid_second_factor',
         'second_factor_locked'));

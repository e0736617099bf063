-- A social sign-in followed by a second factor is recorded as what it was — `social_totp`,
-- `social_backup_code` or `social_security_key` — instead of the password's names for the same
-- second step (a person who never typed a password was shown "password and app code").
ALTER TABLE login_history
    DROP CONSTRAINT login_history_method_check,
    ADD CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey', 'sso', 'social', 'social_totp',
         'social_backup_code', 'social_security_key'));

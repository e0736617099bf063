-- Enterprise single sign-on (issue 20 item 2) signs people in by their organization's OpenID
-- provider, and the login history records it as its own method, `sso`.
ALTER TABLE login_history
    DROP CONSTRAINT login_history_method_check,
    ADD CONSTRAINT login_history_method_check CHECK (method IN
        ('password', 'password_totp', 'password_backup_code', 'password_trusted_device',
         'password_security_key', 'passkey', 'sso'));

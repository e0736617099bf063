//! Every user-visible string of the hosted pages, in one catalogue per language.
//!
//! Templates and handlers never spell text themselves: they read a [`Strings`]. A new language is
//! one more `static` catalogue plus a line in [`Strings::for_accept_language`]. Texts that embed a
//! value (a client name, a scope) are split around it, so the value is inserted by the template
//! and escaped there, never formatted into trusted text.

mod api_keys;
mod ciba;
mod delegate;
mod device;
mod join;
mod recovery;
mod social;
mod sso;

pub use api_keys::ApiKeyStrings;
pub use ciba::CibaStrings;
pub use delegate::DelegateStrings;
pub use device::DeviceStrings;
pub use join::JoinStrings;
pub use recovery::RecoveryStrings;
pub use social::SocialStrings;
pub use sso::SsoStrings;

/// One language's texts.
#[derive(Debug)]
pub struct Strings {
    /// BCP 47 tag for `<html lang>`.
    pub lang: &'static str,
    /// Separator between page title and tenant name in `<title>`.
    pub title_separator: &'static str,

    /// Label of the email field.
    pub email_label: &'static str,
    /// Label of the current-password field.
    pub password_label: &'static str,
    /// Label of a new-password field.
    pub new_password_label: &'static str,
    /// Advice under a new-password field.
    pub new_password_hint: &'static str,
    /// Label of the full-name field.
    pub name_label: &'static str,

    /// Sign-in page title.
    pub sign_in_title: &'static str,
    /// Before the client name on the sign-in page.
    pub sign_in_to_continue: &'static str,
    /// Sign-in button.
    pub sign_in_submit: &'static str,
    /// The one message for any failed sign-in (unknown account or wrong password alike).
    pub bad_credentials: &'static str,
    /// Lockout and rate limit.
    pub too_many_attempts: &'static str,
    /// Link to the forgot-password page.
    pub forgot_password_link: &'static str,
    /// Before the sign-up link.
    pub no_account_yet: &'static str,
    /// Link to the sign-up page.
    pub sign_up_link: &'static str,
    /// Before the sign-in link on sign-up pages.
    pub have_account: &'static str,
    /// Link to the sign-in page.
    pub sign_in_link: &'static str,

    /// Sign-up page title.
    pub sign_up_title: &'static str,
    /// Sign-up button.
    pub sign_up_submit: &'static str,
    /// Sign-up is not offered by this tenant.
    pub sign_up_closed: &'static str,
    /// The email is malformed.
    pub invalid_email: &'static str,
    /// Too short or too easy a password.
    pub weak_password: &'static str,
    /// A password from a known breach.
    pub breached_password: &'static str,
    /// A field that must be filled in.
    pub required_field: &'static str,
    /// Label of the CAPTCHA widget's group.
    pub captcha_label: &'static str,
    /// Under an invisible CAPTCHA (reCAPTCHA v3), which shows no challenge.
    pub captcha_invisible_hint: &'static str,
    /// The CAPTCHA needs JavaScript (shown only without it).
    pub captcha_needs_javascript: &'static str,
    /// A form sent without solving the CAPTCHA.
    pub captcha_required: &'static str,
    /// A CAPTCHA the provider refused (forged, expired, used before, scored too low).
    pub captcha_failed: &'static str,
    /// The CAPTCHA could not be checked (provider unreachable, failing closed).
    pub captcha_unavailable: &'static str,
    /// Title of the page shown after sign-up (and after a reset request).
    pub check_inbox_title: &'static str,
    /// Body of the page shown after sign-up: the same whether the address was new or already
    /// had an account (it received a notice then), so it must not promise a verification link.
    pub verification_sent: &'static str,
    /// Link to continue after sign-up.
    pub continue_link: &'static str,

    /// Email verification page title.
    pub verify_email_title: &'static str,
    /// Email verification explanation.
    pub verify_email_intro: &'static str,
    /// Email verification button.
    pub verify_email_submit: &'static str,
    /// After verification.
    pub email_verified: &'static str,
    /// A link that is unknown, used or expired.
    pub invalid_link: &'static str,
    /// Title of the invalid-link page.
    pub invalid_link_title: &'static str,

    /// Forgot-password page title.
    pub forgot_password_title: &'static str,
    /// Forgot-password explanation.
    pub forgot_password_intro: &'static str,
    /// Forgot-password button.
    pub forgot_password_submit: &'static str,
    /// The same answer whether or not the account exists.
    pub reset_link_sent: &'static str,

    /// Reset-password page title.
    pub reset_password_title: &'static str,
    /// Reset-password button.
    pub reset_password_submit: &'static str,
    /// After a reset.
    pub password_changed: &'static str,

    /// Invitation page title.
    pub invitation_title: &'static str,
    /// Invitation explanation.
    pub invitation_intro: &'static str,
    /// Invitation button.
    pub invitation_submit: &'static str,

    /// Organization picker title.
    pub organization_title: &'static str,
    /// Before the client name on the organization picker.
    pub organization_for: &'static str,
    /// After the client name on the organization picker.
    pub organization_choose: &'static str,

    /// Consent page title.
    pub consent_title: &'static str,
    /// After the client name on the consent page.
    pub consent_wants: &'static str,
    /// Before the host of a client known only by its metadata document's URL (its name is
    /// its own claim; the host is what vouches for it).
    pub consent_published_by: &'static str,
    /// Allow button.
    pub consent_allow: &'static str,
    /// Deny button.
    pub consent_deny: &'static str,
    /// Before an unknown scope's name.
    pub scope_unknown: &'static str,
    /// `openid`.
    pub scope_openid: &'static str,
    /// `profile`.
    pub scope_profile: &'static str,
    /// `email`.
    pub scope_email: &'static str,
    /// `phone`.
    pub scope_phone: &'static str,
    /// `address`.
    pub scope_address: &'static str,
    /// `offline_access`.
    pub scope_offline_access: &'static str,
    /// `ciba:approve` (svc_domain::CIBA_APPROVE_SCOPE).
    pub scope_ciba_approve: &'static str,

    /// Account page title.
    pub account_title: &'static str,
    /// Before the person's email.
    pub signed_in_as: &'static str,
    /// The email is not verified yet.
    pub email_not_verified: &'static str,
    /// Link to the sessions page.
    pub sessions_link: &'static str,
    /// Sign-out link and button.
    pub sign_out_submit: &'static str,

    /// Sessions page title.
    pub sessions_title: &'static str,
    /// Column: browser.
    pub session_device: &'static str,
    /// Column: address.
    pub session_address: &'static str,
    /// Column: sign-in time.
    pub session_created: &'static str,
    /// Column: last activity.
    pub session_last_seen: &'static str,
    /// Column: actions.
    pub session_actions: &'static str,
    /// Marks the session of the browser looking at the page.
    pub this_device: &'static str,
    /// Unknown browser or address.
    pub unknown: &'static str,
    /// Suffix of times shown in UTC.
    pub utc: &'static str,
    /// Revoke button of one session.
    pub session_revoke: &'static str,
    /// Link back to the account page.
    pub back_to_account: &'static str,

    /// Sign-out page title.
    pub sign_out_title: &'static str,
    /// Sign-out confirmation question.
    pub sign_out_confirm: &'static str,
    /// An application asks to sign out, before its name.
    pub end_session_client: &'static str,
    /// An unnamed application asks to sign out.
    pub end_session_unknown_client: &'static str,
    /// Stay signed in.
    pub stay_signed_in: &'static str,
    /// Signed-out page title.
    pub signed_out_title: &'static str,
    /// Signed-out page body.
    pub signed_out: &'static str,
    /// Title of the page that signs out of applications (front-channel logout).
    pub signing_out_title: &'static str,
    /// Body of that page.
    pub signing_out: &'static str,
    /// Its link onwards.
    pub signing_out_continue: &'static str,
    /// Accessible title of each application's hidden frame.
    pub signing_out_frame: &'static str,

    /// Title of the page for refused forms (CSRF).
    pub form_expired_title: &'static str,
    /// Body of the page for refused forms (CSRF).
    pub form_expired: &'static str,
    /// Title of generic request errors.
    pub bad_request_title: &'static str,
    /// An unreadable form (duplicate fields, wrong type).
    pub bad_form: &'static str,
    /// An oversized form.
    pub form_too_large: &'static str,
    /// Title of the not-found page.
    pub not_found_title: &'static str,
    /// Body of the not-found page.
    pub not_found: &'static str,
    /// Title of a server error.
    pub server_error_title: &'static str,
    /// Body of a server error.
    pub server_error: &'static str,
    /// Title of an authorization error page.
    pub authorize_error_title: &'static str,
    /// Authorization error page, `invalid_client`: the application is not registered here.
    pub authorize_unknown_client: &'static str,
    /// Authorization error page, `invalid_request` (missing, repeated or unregistered
    /// `redirect_uri` or logout parameters, an expired sign-in request).
    pub authorize_invalid_request: &'static str,
    /// Authorization error page, `temporarily_unavailable`.
    pub authorize_unavailable: &'static str,
    /// Authorization error page, any other error code.
    pub authorize_other: &'static str,
    /// Label before the error code on the authorization error page.
    pub error_code_label: &'static str,
    /// A sign-in request that expired or is unknown.
    pub interaction_expired: &'static str,
    /// A page that needs a signed-in person.
    pub sign_in_required: &'static str,

    /// Two-step verification page title.
    pub second_factor_title: &'static str,
    /// What the second step asks for.
    pub second_factor_intro: &'static str,
    /// Why a signed-in person is asked for a second factor.
    pub step_up_intro: &'static str,
    /// Label of the one-time code field.
    pub code_label: &'static str,
    /// Advice under the one-time code field.
    pub code_hint: &'static str,
    /// Button that sends a one-time code.
    pub verify_submit: &'static str,
    /// A wrong, used or expired code (one message for all).
    pub bad_code: &'static str,
    /// The second step took too long or was used already.
    pub challenge_expired: &'static str,
    /// Link from the account page to the two-step settings.
    pub two_factor_link: &'static str,
    /// The account has no second factor.
    pub two_factor_is_off: &'static str,
    /// The account has an authenticator app.
    pub two_factor_is_on: &'static str,
    /// Button that starts adding an authenticator app.
    pub totp_setup_submit: &'static str,
    /// Title of the authenticator setup page.
    pub totp_setup_title: &'static str,
    /// How to set the app up.
    pub totp_setup_scan: &'static str,
    /// Label before the key to type by hand.
    pub totp_key_label: &'static str,
    /// Button that confirms the app with its first code.
    pub totp_confirm_submit: &'static str,
    /// Button that removes the authenticator app.
    pub totp_remove_submit: &'static str,
    /// After the app was removed.
    pub totp_removed: &'static str,
    /// Label before the number of unused backup codes.
    pub backup_codes_left: &'static str,
    /// Warning when few backup codes remain.
    pub backup_codes_low: &'static str,
    /// Button that makes a new set of backup codes.
    pub backup_codes_generate: &'static str,
    /// Title of the page that shows new backup codes.
    pub backup_codes_title: &'static str,
    /// What backup codes are; they are shown once.
    pub backup_codes_intro: &'static str,
    /// Text before one backup code in the list.
    pub backup_code_item: &'static str,
    /// Changing factors needs a recent second factor.
    pub step_up_required: &'static str,
    /// A second app while one is set up.
    pub already_enrolled: &'static str,
    /// An enrolment that expired or is unknown.
    pub setup_expired: &'static str,
    /// Why a person is sent to set up a second factor by an application's request.
    pub two_factor_required: &'static str,
    /// Label of the checkbox that trusts the browser.
    pub trust_device_label: &'static str,
    /// Under that checkbox: when to use it, and how to undo it.
    pub trust_device_hint: &'static str,
    /// Before the number of days a trusted device skips the code.
    pub trust_device_days: &'static str,
    /// Button that withdraws trust from every browser.
    pub forget_devices_submit: &'static str,
    /// After trust was withdrawn from every browser.
    pub devices_forgotten: &'static str,
    /// Link from the account page to the sign-in history.
    pub history_link: &'static str,
    /// Title of the sign-in history page.
    pub history_title: &'static str,
    /// Column: when.
    pub history_when: &'static str,
    /// Column: what came of it.
    pub history_result: &'static str,
    /// Column: how.
    pub history_method: &'static str,
    /// A sign-in that succeeded.
    pub result_success: &'static str,
    /// A wrong password (or an account that could not sign in).
    pub result_invalid_credentials: &'static str,
    /// Refused while the account was locked.
    pub result_locked: &'static str,
    /// A wrong second-factor code.
    pub result_invalid_second_factor: &'static str,
    /// Refused while the second step was locked.
    pub result_second_factor_locked: &'static str,
    /// A password alone.
    pub method_password: &'static str,
    /// A password and an authenticator code.
    pub method_password_totp: &'static str,
    /// A password and a backup code.
    pub method_password_backup_code: &'static str,
    /// A password on a trusted device.
    pub method_password_trusted_device: &'static str,
    /// Link from the account page to the passkeys page.
    pub passkeys_link: &'static str,
    /// Title of the passkeys page.
    pub passkeys_title: &'static str,
    /// What a passkey is.
    pub passkeys_intro: &'static str,
    /// The person has no passkey.
    pub passkeys_none: &'static str,
    /// The account page's offer to a person without a passkey (after sign-up, say).
    pub passkey_offer: &'static str,
    /// Button that registers a passkey.
    pub passkey_add_submit: &'static str,
    /// Label of a passkey's name.
    pub passkey_name_label: &'static str,
    /// Advice under the passkey name.
    pub passkey_name_hint: &'static str,
    /// Button that renames a passkey.
    pub passkey_rename_submit: &'static str,
    /// Button that removes a passkey.
    pub passkey_remove_submit: &'static str,
    /// After a passkey was registered.
    pub passkey_added: &'static str,
    /// After a passkey was renamed.
    pub passkey_renamed: &'static str,
    /// After a passkey was removed.
    pub passkey_removed: &'static str,
    /// Passkeys need script.
    pub passkey_needs_javascript: &'static str,
    /// Button that signs in with a passkey.
    pub passkey_sign_in_submit: &'static str,
    /// The browser refused, was cancelled or timed out.
    pub passkey_failed: &'static str,
    /// A passkey answer did not verify (one message for all).
    pub passkey_refused: &'static str,
    /// A passkey request that expired or was used.
    pub passkey_expired: &'static str,
    /// The authenticator's passkey is registered already.
    pub passkey_exists: &'static str,
    /// No such passkey of this person.
    pub passkey_unknown: &'static str,
    /// A bad passkey name.
    pub passkey_name_invalid: &'static str,
    /// Adding a passkey needs a strong session.
    pub passkey_step_up: &'static str,
    /// A synced (backup eligible) passkey.
    pub passkey_synced: &'static str,
    /// A passkey bound to one device.
    pub passkey_device_bound: &'static str,
    /// Column: synced or device-bound.
    pub passkey_column_kind: &'static str,
    /// Column: when it was added.
    pub passkey_column_added: &'static str,
    /// Column: when it was last used.
    pub passkey_column_used: &'static str,
    /// A passkey never used yet.
    pub passkey_never_used: &'static str,
    /// A passkey alone.
    pub method_passkey: &'static str,
    /// A password and a security key.
    pub method_password_security_key: &'static str,
    /// Label before the person's security keys.
    pub security_keys_label: &'static str,
    /// Button that registers a security key.
    pub security_key_add_submit: &'static str,
    /// Button that proves a security key at the second step.
    pub security_key_use_submit: &'static str,
    /// Label of a security key's name.
    pub security_key_name_label: &'static str,
    /// Advice under the security key name.
    pub security_key_name_hint: &'static str,
    /// Title of the page that confirms removing a security key.
    pub security_key_remove_title: &'static str,
    /// What removing a key means.
    pub security_key_remove_intro: &'static str,
    /// Button that removes a security key.
    pub security_key_remove_submit: &'static str,
    /// Link that asks to remove a security key.
    pub security_key_remove_link: &'static str,
    /// After a key was removed.
    pub security_key_removed: &'static str,
    /// The social recovery pages' texts, in the same language.
    pub recovery: &'static RecoveryStrings,
    /// The invitation page's texts, in the same language.
    pub join: &'static JoinStrings,
    /// The device verification page's texts.
    pub device: &'static DeviceStrings,
    /// The backchannel approval page's texts.
    pub ciba: &'static CibaStrings,
    /// The delegation pages.
    pub delegate: &'static DelegateStrings,
    /// The API keys page.
    pub api_keys: &'static ApiKeyStrings,
    /// Enterprise single sign-on.
    pub sso: &'static SsoStrings,
    /// Social sign-in.
    pub social: &'static SocialStrings,
}

/// English.
pub static EN: Strings = Strings {
    lang: "en",
    title_separator: " – ",

    email_label: "Email address",
    password_label: "Password",
    new_password_label: "New password",
    new_password_hint: "Use a long passphrase that you do not use anywhere else.",
    name_label: "Full name",

    sign_in_title: "Sign in",
    sign_in_to_continue: "Sign in to continue to",
    sign_in_submit: "Sign in",
    bad_credentials: "The email or password is incorrect",
    too_many_attempts: "Too many attempts. Wait a few minutes, then try again.",
    forgot_password_link: "Forgot your password?",
    no_account_yet: "No account yet?",
    sign_up_link: "Create an account",
    have_account: "Already have an account?",
    sign_in_link: "Sign in",

    sign_up_title: "Create an account",
    sign_up_submit: "Create account",
    sign_up_closed: "This organisation does not offer sign-up. Ask an administrator for an invitation.",
    invalid_email: "Enter a valid email address, like name@example.com.",
    weak_password: "This password is too short or too easy to guess.",
    breached_password: "This password has appeared in a data breach. Choose a different one.",
    required_field: "This field is required.",
    captcha_label: "Security check",
    captcha_invisible_hint: "This form is protected by reCAPTCHA: the Google Privacy Policy and Terms of Service apply.",
    captcha_needs_javascript: "This security check needs JavaScript. Turn it on for this page, then try again.",
    captcha_required: "Complete the security check, then send the form again.",
    captcha_failed: "The security check could not be confirmed. Complete it again, then send the form.",
    captcha_unavailable: "The security check cannot be confirmed right now. Try again in a moment.",
    check_inbox_title: "Check your inbox",
    verification_sent: "We sent a message to the address you entered. Follow it to confirm your address, then sign in.",
    continue_link: "Continue",

    verify_email_title: "Confirm your email address",
    verify_email_intro: "Select the button to confirm your email address.",
    verify_email_submit: "Confirm email address",
    email_verified: "Your email address is confirmed.",
    invalid_link: "This link is invalid, has been used already, or has expired.",
    invalid_link_title: "This link cannot be used",

    forgot_password_title: "Reset your password",
    forgot_password_intro: "Enter your email address and we will send you a link to choose a new password.",
    forgot_password_submit: "Send link",
    reset_link_sent: "If an account exists for that address, we sent it a link to reset the password. The link expires soon.",

    reset_password_title: "Choose a new password",
    reset_password_submit: "Save password",
    password_changed: "Your password has been changed and every other session has been signed out. Sign in with your new password.",

    invitation_title: "Accept your invitation",
    invitation_intro: "Enter your name and choose a password to finish setting up your account.",
    invitation_submit: "Accept invitation",

    organization_title: "Choose an organization",
    organization_for: "Continue to",
    organization_choose: "as a member of:",
    consent_title: "Allow access?",
    consent_wants: "would like to:",
    consent_published_by: "This application describes itself at",
    consent_allow: "Allow",
    consent_deny: "Deny",
    scope_unknown: "Use the permission",
    scope_openid: "Confirm who you are",
    scope_profile: "See your name and basic profile",
    scope_email: "See your email address",
    scope_phone: "See your phone number",
    scope_address: "See your postal address",
    scope_offline_access: "Keep access while you are not using it",
    scope_ciba_approve: "See and answer sign-in requests that other devices make for you",

    account_title: "Your account",
    signed_in_as: "Signed in as",
    email_not_verified: "Your email address is not confirmed yet.",
    sessions_link: "Your active sessions",
    sign_out_submit: "Sign out",

    sessions_title: "Active sessions",
    session_device: "Browser",
    session_address: "Address",
    session_created: "Signed in",
    session_last_seen: "Last active",
    session_actions: "Actions",
    this_device: "This device",
    unknown: "Unknown",
    utc: "UTC",
    session_revoke: "Sign out this session",
    back_to_account: "Back to your account",

    sign_out_title: "Sign out",
    sign_out_confirm: "Do you want to sign out?",
    end_session_client: "This application asks you to sign out:",
    end_session_unknown_client: "An application asks you to sign out.",
    stay_signed_in: "Stay signed in",
    signed_out_title: "You are signed out",
    signed_out: "You have been signed out. You can close this window.",
    signing_out_title: "Signing you out",
    signing_out: "You are signed out here. We are telling the applications you used; you will move on in a moment.",
    signing_out_continue: "Continue",
    signing_out_frame: "Signing out of an application",

    form_expired_title: "This form has expired",
    form_expired: "The form was open too long or was sent from another site. Go back, reload the page and try again.",
    bad_request_title: "The request cannot be processed",
    bad_form: "The form could not be read. Reload the page and try again.",
    form_too_large: "The form is too large.",
    not_found_title: "Page not found",
    not_found: "There is nothing at this address.",
    server_error_title: "Something went wrong",
    server_error: "The service could not complete your request. Try again in a moment.",
    authorize_error_title: "The sign-in request cannot be completed",
    authorize_unknown_client: "The application that sent you here is not registered with this service. Go back to the application and let its developer know.",
    authorize_invalid_request: "The application sent a request that is incomplete, not allowed, or expired. Go back to the application and start again.",
    authorize_unavailable: "The service is temporarily unavailable. Try again in a moment.",
    authorize_other: "The request cannot be completed. Go back to the application and start again.",
    error_code_label: "Error",
    interaction_expired: "This sign-in request has expired or is unknown. Go back to the application and start again.",
    sign_in_required: "Sign in to see this page.",

    second_factor_title: "Two-step verification",
    second_factor_intro: "Enter the 6-digit code from your authenticator app, or one of your backup codes.",
    step_up_intro: "To continue, confirm it is you with your authenticator app or a backup code.",
    code_label: "Code",
    code_hint: "6 digits from your app, or a backup code such as ABCDE-FGHJK.",
    verify_submit: "Verify",
    bad_code: "The code is incorrect or has been used already.",
    challenge_expired: "This sign-in has expired. Sign in again.",
    two_factor_link: "Two-step verification",
    two_factor_is_off: "Two-step verification is off. Add an authenticator app so that a password alone is not enough to sign in.",
    two_factor_is_on: "Two-step verification is on: signing in needs your password and a code from your authenticator app.",
    totp_setup_submit: "Set up an authenticator app",
    totp_setup_title: "Set up your authenticator app",
    totp_setup_scan: "Scan the QR code with your authenticator app, or type the key below into it. Then enter the 6-digit code the app shows.",
    totp_key_label: "Key",
    totp_confirm_submit: "Turn on two-step verification",
    totp_remove_submit: "Remove the authenticator app",
    totp_removed: "The authenticator app was removed. Two-step verification is off.",
    backup_codes_left: "Unused backup codes",
    backup_codes_low: "Only a few backup codes are left. Generate a new set and keep it safe.",
    backup_codes_generate: "Generate new backup codes",
    backup_codes_title: "Save your backup codes",
    backup_codes_intro: "Each code signs you in once when you cannot use your authenticator app. Keep them somewhere safe: they will not be shown again, and generating a new set makes these stop working.",
    backup_code_item: "Code",
    step_up_required: "Confirm it is you with your second factor first.",
    already_enrolled: "An authenticator app is already set up. Remove it first to set up another.",
    setup_expired: "This setup has expired. Start again.",
    two_factor_required: "Two-step verification is required to continue. Set up an authenticator app now.",
    trust_device_label: "Don't ask for a code again on this device",
    trust_device_hint: "Only on a device you alone use. You can withdraw it on your account page.",
    trust_device_days: "A trusted device skips the code for this many days:",
    forget_devices_submit: "Forget trusted devices",
    devices_forgotten: "No device is trusted any more: every sign-in asks for a code again.",
    history_link: "Your sign-in history",
    history_title: "Sign-in history",
    history_when: "When",
    history_result: "Result",
    history_method: "How",
    result_success: "Signed in",
    result_invalid_credentials: "Wrong password",
    result_locked: "Refused: locked after failures",
    result_invalid_second_factor: "Wrong code",
    result_second_factor_locked: "Refused: too many wrong codes",
    method_password: "Password",
    method_password_totp: "Password and app code",
    method_password_backup_code: "Password and backup code",
    method_password_trusted_device: "Password on a trusted device",
    passkeys_link: "Passkeys",
    passkeys_title: "Passkeys",
    passkeys_intro: "A passkey signs you in with your fingerprint, face, screen lock or security key instead of your password. It only works on this site, so it cannot be phished.",
    passkeys_none: "You have no passkey yet.",
    passkey_offer: "Sign in faster next time, without your password: add a passkey to this account.",
    passkey_add_submit: "Add a passkey",
    passkey_name_label: "Passkey name",
    passkey_name_hint: "So you can tell your passkeys apart, for example “Work laptop”.",
    passkey_rename_submit: "Rename",
    passkey_remove_submit: "Remove",
    passkey_added: "Your passkey was added. You can sign in with it from now on.",
    passkey_renamed: "The passkey was renamed.",
    passkey_removed: "The passkey was removed.",
    passkey_needs_javascript: "Passkeys need JavaScript and a browser that supports them.",
    passkey_sign_in_submit: "Sign in with a passkey",
    passkey_failed: "The passkey request was cancelled or did not complete. Try again.",
    passkey_refused: "This passkey could not be verified. Try again, or sign in with your password.",
    passkey_expired: "This passkey request has expired. Try again.",
    passkey_exists: "This passkey is registered already.",
    passkey_unknown: "This passkey is not known.",
    passkey_name_invalid: "Give the passkey a name of 1 to 64 characters.",
    passkey_step_up: "To add a passkey, first confirm it is you with your second factor, or sign in with one of your passkeys.",
    passkey_synced: "Synced",
    passkey_device_bound: "This device only",
    passkey_column_kind: "Kind",
    passkey_column_added: "Added",
    passkey_column_used: "Last used",
    passkey_never_used: "Never",
    method_passkey: "Passkey",
    method_password_security_key: "Password and security key",
    security_keys_label: "Security keys",
    security_key_add_submit: "Add a security key",
    security_key_use_submit: "Use your security key",
    security_key_name_label: "Security key name",
    security_key_name_hint: "So you can tell your keys apart, for example “Blue key”.",
    security_key_remove_title: "Remove this security key?",
    security_key_remove_intro: "Signing in will no longer accept this key as your second step.",
    security_key_remove_submit: "Remove the security key",
    security_key_remove_link: "Remove",
    security_key_removed: "The security key was removed.",
    recovery: &recovery::EN,
    join: &join::EN,
    device: &device::EN,
    ciba: &ciba::EN,
    delegate: &delegate::EN,
    api_keys: &api_keys::EN,
    sso: &sso::EN,
    social: &social::EN,
};

impl Strings {
    /// The catalogue that best matches an `Accept-Language` header (RFC 9110 §12.5.4); English
    /// when nothing matches. Only the primary language subtag is compared.
    pub fn for_accept_language(_accept_language: Option<&str>) -> &'static Strings {
        // One catalogue so far; a second language adds a branch on the parsed preference list.
        &EN
    }

    /// What the authorization error page tells the person for the error `code` (the code
    /// itself is shown beside it for the application's developer).
    pub fn authorize_error(&self, code: &str) -> &'static str {
        match code {
            "invalid_client" => self.authorize_unknown_client,
            "invalid_request" => self.authorize_invalid_request,
            "temporarily_unavailable" => self.authorize_unavailable,
            _ => self.authorize_other,
        }
    }

    /// What the history page says for a stored login result (`success`, …); the raw value for
    /// one this catalogue does not know.
    pub fn login_result(&self, result: &str) -> &'static str {
        match result {
            "success" => self.result_success,
            "invalid_credentials" => self.result_invalid_credentials,
            "locked" => self.result_locked,
            "invalid_second_factor" => self.result_invalid_second_factor,
            "second_factor_locked" => self.result_second_factor_locked,
            _ => self.unknown,
        }
    }

    /// What the history page says for a stored login method (`password`, …).
    pub fn login_method(&self, method: &str) -> &'static str {
        match method {
            "password" => self.method_password,
            "password_totp" => self.method_password_totp,
            "password_backup_code" => self.method_password_backup_code,
            "password_trusted_device" => self.method_password_trusted_device,
            "password_security_key" => self.method_password_security_key,
            "passkey" => self.method_passkey,
            "sso" => self.sso.method,
            "social" => self.social.method,
            "social_totp" => self.social.method_totp,
            "social_backup_code" => self.social.method_backup_code,
            "social_security_key" => self.social.method_security_key,
            _ => self.unknown,
        }
    }

    /// The human description of a scope; `None` for scopes without one (the page then shows
    /// [`Strings::scope_unknown`] followed by the scope's name).
    pub fn scope(&self, scope: &str) -> Option<&'static str> {
        // Copy out of `&self` to `'static`: the catalogues are statics.
        let text = match scope {
            "openid" => self.scope_openid,
            "profile" => self.scope_profile,
            "email" => self.scope_email,
            "phone" => self.scope_phone,
            "address" => self.scope_address,
            "offline_access" => self.scope_offline_access,
            svc_domain::CIBA_APPROVE_SCOPE => self.scope_ciba_approve,
            _ => return None,
        };
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generic_sign_in_failure_names_neither_field_as_the_culprit() {
        assert_eq!(EN.bad_credentials, "The email or password is incorrect");
        assert!(
            !EN.reset_link_sent.to_lowercase().contains("no account"),
            "forgot-password must not reveal whether an account exists"
        );
    }

    #[test]
    fn standard_scopes_have_descriptions_and_others_do_not() {
        for scope in [
            "openid",
            "profile",
            "email",
            "phone",
            "address",
            "offline_access",
            "ciba:approve",
        ] {
            assert!(EN.scope(scope).is_some_and(|d| !d.is_empty()), "{scope}");
        }
        assert_eq!(EN.scope("orders:read"), None);
    }

    #[test]
    fn every_authorization_error_code_has_a_text_and_unknown_codes_a_generic_one() {
        let codes = [
            "invalid_client",
            "invalid_request",
            "temporarily_unavailable",
        ];
        let texts: Vec<&str> = codes.iter().map(|c| EN.authorize_error(c)).collect();
        for (code, text) in codes.iter().zip(&texts) {
            assert!(!text.is_empty() && *text != EN.authorize_other, "{code}");
        }
        assert_eq!(EN.authorize_error("server_error"), EN.authorize_other);
    }

    #[test]
    fn english_is_the_fallback_for_any_preference() {
        for header in [None, Some("fr-CH, fr;q=0.9"), Some("*"), Some("")] {
            assert_eq!(Strings::for_accept_language(header).lang, "en");
        }
    }
}

//! The texts of enterprise single sign-on on the hosted pages (the "Sign in with SSO" form on
//! the sign-in page, its refusals, and the page a failed return from the provider shows), one
//! catalogue per language like [`super::Strings`], which reaches them as `sso`.

/// One language's single sign-on texts.
#[derive(Debug)]
pub struct SsoStrings {
    /// Heading of the single sign-on form on the sign-in page.
    pub heading: &'static str,
    /// What the form is for.
    pub intro: &'static str,
    /// The button that sends the person to their organization's provider.
    pub submit: &'static str,
    /// No organization with single sign-on verified the address's domain.
    pub no_connection: &'static str,
    /// A password sign-in for an address whose organization requires single sign-on.
    pub required: &'static str,
    /// The return from the provider matches no attempt of this browser (expired, used, or
    /// started in another browser).
    pub expired: &'static str,
    /// The provider refused, or what it returned did not check out (one answer for all; the
    /// reason is logged and recorded as `sso.login.failed`).
    pub refused: &'static str,
    /// The provider could not be reached.
    pub unreachable: &'static str,
    /// Title of the page a failed return shows.
    pub failed_title: &'static str,
    /// The login history's name for the method.
    pub method: &'static str,
}

/// English.
pub(super) static EN: SsoStrings = SsoStrings {
    heading: "Single sign-on",
    intro: "Work address? Sign in with your organization's identity provider.",
    submit: "Sign in with SSO",
    no_connection: "Single sign-on is not set up for this address. Sign in with your password, \
                    or ask your administrator.",
    required: "Your organization signs you in with single sign-on. Use \"Sign in with SSO\" \
               below.",
    expired: "This sign-in has expired or was started in another browser. Start again.",
    refused: "Your identity provider's answer could not be accepted. Try again, or ask your \
              administrator.",
    unreachable: "Your organization's identity provider cannot be reached right now. Try again \
                  later.",
    failed_title: "Single sign-on did not complete",
    method: "Single sign-on",
};

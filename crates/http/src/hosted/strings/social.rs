//! The texts of social sign-in on the hosted pages (the "Continue with …" buttons, the pages
//! a return from a provider shows, the confirmation of a link to an existing account, and the
//! account page's connected accounts), one catalogue per language like [`super::Strings`],
//! which reaches them as `social`.

/// One language's social sign-in texts.
#[derive(Debug)]
pub struct SocialStrings {
    /// Heading of the providers' buttons on the sign-in page.
    pub heading: &'static str,
    /// A provider's button: "Continue with" followed by its name.
    pub continue_with: &'static str,
    /// Title of the page that moves on to the provider.
    pub leaving_title: &'static str,
    /// What that page says.
    pub leaving: &'static str,
    /// The link to the provider on it.
    pub leaving_link: &'static str,
    /// The page a provider's `form_post` answer is relayed through (its cookie could not
    /// travel with the provider's cross-site POST).
    pub relay_title: &'static str,
    /// What the relay page says.
    pub relay: &'static str,
    /// The provider is not offered.
    pub unknown_provider: &'static str,
    /// The return matches no attempt of this browser.
    pub expired: &'static str,
    /// The provider refused, or its answer did not check out.
    pub refused: &'static str,
    /// The provider cannot be reached.
    pub unreachable: &'static str,
    /// An account already uses the address, which the provider does not vouch for.
    pub account_exists: &'static str,
    /// The provider account is already connected (to someone else, or the person has one).
    pub already_linked: &'static str,
    /// Title of the page a failed return shows.
    pub failed_title: &'static str,
    /// Title of the page asking to confirm a link.
    pub confirm_title: &'static str,
    /// The account the link is for (followed by its address).
    pub confirm_account: &'static str,
    /// What confirming does (before signing in).
    pub confirm_sign_in_first: &'static str,
    /// The link to sign in to that account.
    pub confirm_sign_in_link: &'static str,
    /// What confirming does (signed in as the account).
    pub confirm_intro: &'static str,
    /// The confirm button.
    pub confirm_submit: &'static str,
    /// The cancel button.
    pub cancel_submit: &'static str,
    /// Signed in as another account than the link is for.
    pub wrong_account: &'static str,
    /// The link was cancelled.
    pub cancelled: &'static str,
    /// Title of the page after connecting (followed by the provider's name).
    pub connected: &'static str,
    /// The account page's link to the connected accounts.
    pub account_link: &'static str,
    /// Title of the connected accounts page.
    pub connections_title: &'static str,
    /// No connected account.
    pub none_connected: &'static str,
    /// "Disconnect" followed by the provider's name.
    pub disconnect: &'static str,
    /// "Connect" followed by the provider's name.
    pub connect: &'static str,
    /// After disconnecting.
    pub disconnected: &'static str,
    /// Disconnecting the last way to sign in.
    pub last_method: &'static str,
    /// The login history's name for the method.
    pub method: &'static str,
    /// The login history's name for a social sign-in completed with an app code.
    pub method_totp: &'static str,
    /// … with a backup code.
    pub method_backup_code: &'static str,
    /// … with a security key.
    pub method_security_key: &'static str,
}

/// English.
pub(super) static EN: SocialStrings = SocialStrings {
    heading: "Or continue with",
    continue_with: "Continue with",
    leaving_title: "Continuing to your provider",
    leaving: "You are being sent to your sign-in provider.",
    leaving_link: "Continue",
    relay_title: "Finishing sign-in",
    relay: "One more step to finish signing in.",
    unknown_provider: "This sign-in provider is not offered here.",
    expired: "This sign-in has expired or was started in another browser. Start again.",
    refused: "The sign-in provider's answer could not be accepted. Try again.",
    unreachable: "The sign-in provider cannot be reached right now. Try again later.",
    account_exists: "An account already uses this address. Sign in to it, then connect the \
                     provider from your account page.",
    already_linked: "This account of the provider is already connected to an account here.",
    failed_title: "Sign-in did not complete",
    confirm_title: "Connect your account",
    confirm_account: "An account here already uses",
    confirm_sign_in_first: "To connect your provider account to it, sign in to that account \
                            first. Nothing is connected until you confirm.",
    confirm_sign_in_link: "Sign in to connect",
    confirm_intro: "Connect your provider account? You will then be able to sign in with it.",
    confirm_submit: "Connect",
    cancel_submit: "Do not connect",
    wrong_account: "You are signed in to another account. Sign out, then sign in to the \
                    account this connection is for.",
    cancelled: "Nothing was connected.",
    connected: "Connected:",
    account_link: "Connected accounts",
    connections_title: "Connected accounts",
    none_connected: "No account of another provider is connected.",
    disconnect: "Disconnect",
    connect: "Connect",
    disconnected: "The account was disconnected.",
    last_method: "Set a password or add a passkey before disconnecting your last way to sign in.",
    method: "Social sign-in",
    method_totp: "Social sign-in and app code",
    method_backup_code: "Social sign-in and backup code",
    method_security_key: "Social sign-in and security key",
};

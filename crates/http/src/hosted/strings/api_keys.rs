//! The texts of the API keys page (`/auth/account/api-keys`), where a person creates keys that
//! act as them at the tenant's APIs and revokes them; one catalogue per language like
//! [`super::Strings`], which reaches them as `api_keys`. No value is formatted into these
//! texts: the page inserts names, APIs, permissions, dates and the key (escaped) beside them.

/// One language's API key texts.
#[derive(Debug)]
pub struct ApiKeyStrings {
    /// Title of the page.
    pub title: &'static str,
    /// Under the title: what a key is.
    pub intro: &'static str,
    /// The person holds no key.
    pub none: &'static str,
    /// Column: the key's name.
    pub column_name: &'static str,
    /// Column: the API and permissions.
    pub column_reach: &'static str,
    /// Column: when it expires.
    pub column_expires: &'static str,
    /// Column: last use.
    pub column_used: &'static str,
    /// Column: actions.
    pub column_actions: &'static str,
    /// A key never used.
    pub never_used: &'static str,
    /// A revoked or expired key.
    pub ended: &'static str,
    /// Revoke button.
    pub revoke: &'static str,
    /// After a revocation.
    pub revoked: &'static str,
    /// Heading of a creation form, followed by the API's name (or the agent's name, [`Self::at`]
    /// and the API's name).
    pub create_for: &'static str,
    /// Between an agent's name and the API's in a heading.
    pub at: &'static str,
    /// In the list, before the name of the agent a key acts as.
    pub agent_label: &'static str,
    /// Label of the name field.
    pub name_label: &'static str,
    /// Hint under the name field.
    pub name_hint: &'static str,
    /// Legend of the permissions.
    pub permissions_legend: &'static str,
    /// The person holds no permission at this API.
    pub no_permissions: &'static str,
    /// Label of the lifetime field.
    pub days_label: &'static str,
    /// Hint under the lifetime field, followed by the maximum.
    pub days_hint: &'static str,
    /// Create button.
    pub create: &'static str,
    /// The person holds the most keys allowed.
    pub at_limit: &'static str,
    /// Title of the page that shows a new key.
    pub created_title: &'static str,
    /// Above the new key.
    pub created_intro: &'static str,
    /// Label of the new key.
    pub key_label: &'static str,
    /// How to present it.
    pub created_usage: &'static str,
    /// Link back to the list.
    pub back: &'static str,
    /// Link from the account page.
    pub account_link: &'static str,
}

/// English.
pub(super) static EN: ApiKeyStrings = ApiKeyStrings {
    title: "API keys",
    intro: "A key lets a script or tool call one of this service's APIs as you, with the \
            permissions you choose, as far as you still hold them. Keep it secret; revoke it \
            when you no longer need it.",
    none: "You have no API keys.",
    column_name: "Name",
    column_reach: "API and permissions",
    column_expires: "Expires",
    column_used: "Last used",
    column_actions: "Actions",
    never_used: "Never",
    ended: "Revoked or expired",
    revoke: "Revoke",
    revoked: "The key was revoked. It no longer works.",
    create_for: "New key for",
    at: "at",
    agent_label: "Agent",
    name_label: "Name",
    name_hint: "What the key is for, so you recognise it later.",
    permissions_legend: "Permissions",
    no_permissions: "You hold no permission at this API.",
    days_label: "Days until it expires",
    days_hint: "At most",
    create: "Create the key",
    at_limit: "You hold as many keys as this service allows. Revoke one to create another.",
    created_title: "Your new API key",
    created_intro: "Copy the key now: it is shown this once and cannot be shown again.",
    key_label: "Key",
    created_usage: "Send it as the header Authorization: Bearer followed by the key.",
    back: "Back to your API keys",
    account_link: "API keys",
};

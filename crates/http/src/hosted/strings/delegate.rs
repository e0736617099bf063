//! The texts of the delegation pages (`/auth/delegate`, where a person lets an agent act for
//! them, and `/auth/account/delegations`, where they see and revoke what they granted), one
//! catalogue per language like [`super::Strings`], which reaches them as `delegate`. No value is
//! formatted into these texts: the pages insert the agent's name, the APIs, permissions and
//! dates (escaped) beside them.

/// One language's delegation texts.
#[derive(Debug)]
pub struct DelegateStrings {
    /// Title of the consent page.
    pub title: &'static str,
    /// Before the agent's name.
    pub asks: &'static str,
    /// After the agent's name.
    pub asks_tail: &'static str,
    /// Label before an API's name, followed by the permissions at it.
    pub at_label: &'static str,
    /// Label before the end date.
    pub until_label: &'static str,
    /// Under the list: what approving means.
    pub explain: &'static str,
    /// Approve button.
    pub approve: &'static str,
    /// Deny button.
    pub deny: &'static str,
    /// The person must sign in first.
    pub sign_in_first: &'static str,
    /// Link to the sign-in page.
    pub sign_in_link: &'static str,
    /// Title after approval.
    pub granted_title: &'static str,
    /// After approval, before the delegation's id.
    pub granted: &'static str,
    /// After a denial.
    pub denied: &'static str,
    /// Title of the refusal page.
    pub refused_title: &'static str,
    /// Title of the account page's list.
    pub list_title: &'static str,
    /// The list is empty.
    pub list_empty: &'static str,
    /// Before an agent's name in the list.
    pub list_agent: &'static str,
    /// Label of a live delegation's end.
    pub list_until: &'static str,
    /// Shown for a revoked or expired delegation.
    pub list_ended: &'static str,
    /// Revoke button (followed by the agent's name).
    pub revoke: &'static str,
    /// After a revocation.
    pub revoked: &'static str,
    /// Link from the account page.
    pub account_link: &'static str,
    /// The checkbox that makes the person approve each use.
    pub each_use_label: &'static str,
    /// Shown when the agent itself asks that each use be approved.
    pub each_use_asked: &'static str,
    /// In the list, beside a delegation whose uses the person approves each time.
    pub list_each_use: &'static str,
}

/// English.
pub(super) static EN: DelegateStrings = DelegateStrings {
    title: "Let an agent act for you",
    asks: "",
    asks_tail: " asks to act for you.",
    at_label: "At",
    until_label: "Until",
    explain: "It will be able to use these permissions in your name, as far as you hold them, \
              until the date above or until you revoke it on your account page.",
    approve: "Allow",
    deny: "Deny",
    sign_in_first: "Sign in to decide whether this agent may act for you.",
    sign_in_link: "Sign in",
    granted_title: "Agent allowed",
    granted: "The agent may now act for you. Delegation: ",
    denied: "Nothing was granted.",
    refused_title: "This request cannot be granted",
    list_title: "Agents acting for you",
    list_empty: "You have not let any agent act for you.",
    list_agent: "Agent: ",
    list_until: "Until",
    list_ended: "Ended",
    revoke: "Revoke",
    revoked: "The delegation was revoked: the agent can no longer act for you with it.",
    account_link: "Agents acting for you",
    each_use_label: "Ask me to approve each time it acts for me",
    each_use_asked: "You will be asked to approve each time it acts for you.",
    list_each_use: "approved each time",
};

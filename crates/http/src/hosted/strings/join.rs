//! The texts of the invitation page (`/auth/join`), one catalogue per language like
//! [`super::Strings`], which reaches them as `join`. No value is ever formatted into these texts:
//! the page inserts the organization's name, the roles and the address (escaped) beside them.

/// One language's invitation texts.
#[derive(Debug)]
pub struct JoinStrings {
    /// Title of the invitation page.
    pub title: &'static str,
    /// What the invitation offers, for an organization (its name follows).
    pub intro_organization: &'static str,
    /// What the invitation offers, for the tenant itself (the roles follow, if any).
    pub intro_tenant: &'static str,
    /// Label before the organization's name.
    pub organization_label: &'static str,
    /// Label before the roles given.
    pub roles_label: &'static str,
    /// Label before the address invited.
    pub invited_label: &'static str,
    /// Button that accepts, signed in.
    pub accept_submit: &'static str,
    /// Above the new-account form.
    pub create_intro: &'static str,
    /// Button that creates the account and accepts.
    pub create_submit: &'static str,
    /// Title of the pages that refuse a link.
    pub refused_title: &'static str,
    /// An unknown link (never says to whom an invitation went).
    pub unknown: &'static str,
    /// An expired invitation.
    pub expired: &'static str,
    /// An invitation accepted already.
    pub accepted: &'static str,
    /// A revoked invitation.
    pub revoked: &'static str,
    /// Signed in as someone with another address.
    pub other_address: &'static str,
    /// The invited address has an account and nobody is signed in.
    pub sign_in_first: &'static str,
    /// The person already belongs to it.
    pub already_member: &'static str,
    /// The organization is suspended or the person may not join.
    pub refused: &'static str,
    /// Title of the page after joining.
    pub joined_title: &'static str,
    /// After joining.
    pub joined: &'static str,
    /// Link to the account page.
    pub account_link: &'static str,
}

/// English.
pub(super) static EN: JoinStrings = JoinStrings {
    title: "Accept your invitation",
    intro_organization: "You are invited to join an organization.",
    intro_tenant: "You are invited to join.",
    organization_label: "Organization",
    roles_label: "Roles",
    invited_label: "Invitation for",
    accept_submit: "Accept invitation",
    create_intro: "You have no account yet: enter your name and choose a password to create it \
                   and accept.",
    create_submit: "Create account and accept",
    refused_title: "Invitation not available",
    unknown: "This invitation link is not valid. It may have been replaced by a newer one: use \
              the link of the latest invitation mail, or ask for a new invitation.",
    expired: "This invitation has expired. Ask the person who invited you to send it again.",
    accepted: "This invitation was accepted already.",
    revoked: "This invitation was withdrawn.",
    other_address: "This invitation was sent to another address. Sign out, then open the link \
                    again and sign in with the invited address.",
    sign_in_first: "An account with the invited address exists. Sign in to it, then open the \
                    invitation link again.",
    already_member: "You already belong to it: there is nothing to accept.",
    refused: "This invitation cannot be accepted now. Ask the person who invited you.",
    joined_title: "Invitation accepted",
    joined: "You have joined. You are signed in.",
    account_link: "Go to your account",
};

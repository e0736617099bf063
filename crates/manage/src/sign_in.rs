//! What the tenant-user use cases need from the sign-in side, as ports: the password rules and
//! hasher ([`Passwords`], the same one the sign-in engine uses), invitation mail
//! ([`Invitations`]) and notices of administrators' changes ([`AccountNotices`]).
//!
//! Engines do not depend on each other (ARCHITECTURE.md rule 1), yet an administrator setting a
//! password must meet exactly the rules of sign-up, and an invitation must be the link and mail
//! the hosted pages accept. So this crate names what it needs and the runtime wires it: the
//! hasher it builds for both engines, and an adapter that lets the sign-in engine issue the
//! invitation.

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
use svc_domain::{Email, Passwords, User};
use svc_store::{StoreError, WriteTx};

/// The sign-in side's services, handed to [`crate::ManageContext::with_sign_in`].
#[derive(Clone)]
pub struct SignInServices {
    /// The password policy, breach check and hasher of the process.
    pub passwords: Passwords,
    /// Issues and mails invitation links.
    pub invitations: Arc<dyn Invitations>,
    /// Tells people about changes an administrator made to their account.
    pub notices: Arc<dyn AccountNotices>,
}

/// Mails people about changes an administrator made to their account, once they committed.
pub trait AccountNotices: Send + Sync {
    /// "Your second factors were reset" to `user` of `tenant_name` (issuer `issuer`).
    fn factors_reset(&self, user: &User, tenant_name: &str, issuer: &str);

    /// The invitation to join (`crate::invitations`): its link, mailed in the background.
    fn invitation(&self, mail: &InvitationMail<'_>);
}

/// What an invitation mail says: to whom, to join what, through which link, for how long.
pub struct InvitationMail<'a> {
    /// The address invited.
    pub to: &'a Email,
    /// The tenant's display name.
    pub tenant_name: &'a str,
    /// The organization's name, for an invitation to one.
    pub organization_name: Option<&'a str>,
    /// `{issuer}/auth/join?token=…`: a secret, never logged.
    pub link: String,
    /// How long the link works from now.
    pub valid_for: std::time::Duration,
}

impl fmt::Debug for InvitationMail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvitationMail")
            .field("to", &self.to)
            .field("organization_name", &self.organization_name)
            .field("link", &"<redacted>")
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SignInServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInServices")
            .field("passwords", &self.passwords)
            .finish_non_exhaustive()
    }
}

/// Issues invitation links: `{issuer}/auth/accept-invitation?token=…`, valid for the sign-in
/// engine's invitation lifetime.
#[async_trait]
pub trait Invitations: Send + Sync {
    /// Issues an invitation for `user` within `tx`: older unused invitations of the user stop
    /// working and the new token is stored hashed, all committing (or rolling back) with `tx`.
    /// Returns the mail carrying the link, to send only once `tx` has committed, so no mail
    /// announces a link that rolled back.
    async fn prepare(
        &self,
        tx: &mut dyn WriteTx,
        issuer: &str,
        user: &User,
        tenant_name: &str,
    ) -> Result<PendingMail, StoreError>;
}

/// A mail prepared inside a transaction, not yet sent.
pub struct PendingMail(Box<dyn FnOnce() + Send>);

impl PendingMail {
    /// A mail that `send` hands to the mailer.
    pub fn new(send: impl FnOnce() + Send + 'static) -> Self {
        Self(Box::new(send))
    }

    /// Sends the mail in the background and returns at once: no answer waits for the relay, so
    /// its timing never tells whether a mail went out, and a delivery failure is logged by the
    /// mailer, not returned.
    pub fn send(self) {
        (self.0)();
    }
}

impl fmt::Debug for PendingMail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The mail carries a one-time link: nothing of it is shown.
        f.write_str("PendingMail(<redacted>)")
    }
}

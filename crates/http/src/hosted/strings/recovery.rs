//! The texts of the social recovery pages (`/auth/recovery*`, `/auth/account/recovery`), one
//! catalogue per language like [`super::Strings`], which reaches them as `recovery`.
//!
//! Their own catalogue so the main one stays readable; the same rules apply: no value is ever
//! formatted into these texts, a page inserts it (escaped) beside them.

/// One language's recovery texts.
#[derive(Debug)]
pub struct RecoveryStrings {
    /// Link from the account page to the guardians page.
    pub account_link: &'static str,
    /// Title of the guardians page.
    pub account_title: &'static str,
    /// What guardians are and what they can do.
    pub account_intro: &'static str,
    /// After the number of approvals a recovery needs.
    pub approvals_needed: &'static str,
    /// Heading of the list of guardians.
    pub guardians_label: &'static str,
    /// The person has no guardian yet.
    pub guardians_none: &'static str,
    /// Label of the new guardian's address.
    pub guardian_email_label: &'static str,
    /// Advice under the new guardian's address.
    pub guardian_email_hint: &'static str,
    /// Button that names a guardian.
    pub add_submit: &'static str,
    /// Button that removes a guardian.
    pub remove_submit: &'static str,
    /// Instead of the add form when the most guardians are named.
    pub max_reached: &'static str,
    /// A recovery of the account is in progress.
    pub in_progress: &'static str,
    /// Button that cancels the recovery in progress.
    pub cancel_submit: &'static str,
    /// After a recovery: the person owes a new second factor.
    pub factor_due: &'static str,
    /// Link to set up that second factor.
    pub factor_due_link: &'static str,
    /// After a guardian was named.
    pub added: &'static str,
    /// After a guardian was removed.
    pub removed: &'static str,
    /// After the person cancelled the recovery in progress.
    pub cancelled: &'static str,
    /// Cancel pressed while no recovery is in progress.
    pub nothing_to_cancel: &'static str,
    /// No such guardian of this person.
    pub guardian_unknown: &'static str,

    /// Link from the sign-in page to the recovery request.
    pub lost_factor_link: &'static str,
    /// Title of the recovery request and status pages.
    pub title: &'static str,
    /// What asking for a recovery does (never whether the account exists).
    pub start_intro: &'static str,
    /// Button that asks for a recovery.
    pub start_submit: &'static str,
    /// Before the approvals so far (`1 of 2`).
    pub collecting: &'static str,
    /// Between the approvals so far and the approvals needed.
    pub count_of: &'static str,
    /// While approvals are collected: keep this browser, reload later.
    pub collecting_hint: &'static str,
    /// Before the time from which the new password can be set.
    pub waiting: &'static str,
    /// While waiting: the owner can still stop it.
    pub waiting_hint: &'static str,
    /// The new password can be set now, and what that removes.
    pub ready: &'static str,
    /// Button that sets the new password.
    pub ready_submit: &'static str,
    /// The recovery was cancelled, expired or completed.
    pub closed: &'static str,
    /// Link to ask for a recovery again.
    pub start_again_link: &'static str,
    /// The recovery is not ready for a new password yet.
    pub not_ready: &'static str,
    /// On the sign-in page after a recovery.
    pub recovered: &'static str,

    /// Title of a guardian's approval page.
    pub approve_title: &'static str,
    /// Before the owner of the account to recover.
    pub approve_owner: &'static str,
    /// Why the guardian is asked.
    pub approve_intro: &'static str,
    /// Approve only what the owner asked in person.
    pub approve_warning: &'static str,
    /// Button that approves.
    pub approve_submit: &'static str,
    /// After an approval.
    pub approved: &'static str,
    /// The owner tried to approve their own recovery.
    pub own_recovery: &'static str,

    /// Title of the owner's page that stops a recovery.
    pub stop_title: &'static str,
    /// What stopping means.
    pub stop_intro: &'static str,
    /// Button that stops the recovery.
    pub stop_submit: &'static str,
    /// After the recovery was stopped with the mailed link.
    pub stopped: &'static str,
}

/// English.
pub(super) static EN: RecoveryStrings = RecoveryStrings {
    account_link: "Account recovery",
    account_title: "Account recovery",
    account_intro: "Guardians are people you trust. If you lose your second factor, they can help you back into your account: each receives a link by email, and once enough of them approve and a waiting period has passed, you can choose a new password.",
    approvals_needed: "of your guardians must approve a recovery.",
    guardians_label: "Your guardians",
    guardians_none: "You have not named any guardian yet.",
    guardian_email_label: "Guardian's email address",
    guardian_email_hint: "Someone you trust, with an address other than yours. We tell them by email that you named them.",
    add_submit: "Add guardian",
    remove_submit: "Remove",
    max_reached: "You have named as many guardians as you may. Remove one to name someone else.",
    in_progress: "A recovery of your account is in progress. If you did not ask for it, cancel it now and change your password.",
    cancel_submit: "Cancel the recovery",
    factor_due: "Your account was recovered. Set up a new second factor now.",
    factor_due_link: "Set up two-step verification",
    added: "The guardian was added and told by email.",
    removed: "The guardian was removed.",
    cancelled: "The recovery was cancelled. Your account stays as it is.",
    nothing_to_cancel: "No recovery of your account is in progress.",
    guardian_unknown: "This guardian is not known.",

    lost_factor_link: "Lost your second factor?",
    title: "Recover your account",
    start_intro: "Lost your authenticator app, security keys and backup codes? Enter your email address. If your account has guardians, we ask them by email to approve, and you follow the progress in this browser.",
    start_submit: "Ask my guardians",
    collecting: "Approvals from guardians so far:",
    count_of: "of",
    collecting_hint: "Keep this browser: the new password can only be set here. This page does not update by itself; come back later.",
    waiting: "Your guardians approved. For your safety, you can choose a new password in this browser from",
    waiting_hint: "Until then, the owner of the account can still stop the recovery.",
    ready: "Your guardians approved and the waiting period is over. Choose a new password: your old second factors and passkeys are removed, every session is signed out, and you will set up a new second factor after signing in.",
    ready_submit: "Save password",
    closed: "This recovery is over: it was stopped, it expired, or it was completed.",
    start_again_link: "Start a new recovery",
    not_ready: "This recovery is not ready for a new password yet.",
    recovered: "Your password was changed. Sign in with it; you will then set up a new second factor.",

    approve_title: "Approve an account recovery",
    approve_owner: "Someone asks to recover the account of",
    approve_intro: "You were named a guardian of this account. Your approval helps its owner set a new password without their second factor.",
    approve_warning: "Approve only if the owner asked you themselves, in person or on a call you are sure of. If you are not sure, do nothing: without enough approvals the request expires.",
    approve_submit: "Approve the recovery",
    approved: "Thank you: your approval was recorded.",
    own_recovery: "A recovery is approved by the guardians of the account, not by its owner.",

    stop_title: "Stop the account recovery",
    stop_intro: "Someone asked to recover your account. If it was not you, stop it now.",
    stop_submit: "Stop the recovery",
    stopped: "The recovery was stopped; your account stays as it is. Consider changing your password.",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asking_and_following_a_recovery_never_tell_whether_the_account_exists() {
        for text in [EN.start_intro, EN.collecting, EN.collecting_hint] {
            let text = text.to_lowercase();
            for telling in ["no account", "not found", "unknown", "does not exist"] {
                assert!(!text.contains(telling), "{text}");
            }
        }
    }
}

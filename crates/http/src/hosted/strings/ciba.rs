//! The texts of the backchannel approval page (`/auth/ciba`, OpenID CIBA) and its mail, one
//! catalogue per language like [`super::Strings`], which reaches them as `ciba`. No value is
//! formatted into these texts: the page inserts the application's name and the binding message
//! (escaped) beside them.

/// One language's approval texts.
#[derive(Debug)]
pub struct CibaStrings {
    /// Title of the approval page.
    pub title: &'static str,
    /// Before the application's name.
    pub asks: &'static str,
    /// After the application's name.
    pub asks_tail: &'static str,
    /// Label before the binding message.
    pub binding_label: &'static str,
    /// Under the binding message.
    pub binding_hint: &'static str,
    /// Approve button.
    pub approve: &'static str,
    /// Deny button.
    pub deny: &'static str,
    /// Nothing is waiting.
    pub none: &'static str,
    /// The person must sign in first.
    pub sign_in_first: &'static str,
    /// Link to the sign-in page.
    pub sign_in_link: &'static str,
    /// After an approval.
    pub approved: &'static str,
    /// After a denial.
    pub denied: &'static str,
    /// The request is no longer waiting (expired, answered, or not theirs).
    pub gone: &'static str,
    /// Link back to the page.
    pub back_link: &'static str,
    /// Subject of the notification mail.
    pub mail_subject: &'static str,
    /// The mail's text before the application's name.
    pub mail_intro: &'static str,
    /// The mail's text before the binding message.
    pub mail_binding: &'static str,
    /// The mail's text before the link.
    pub mail_link: &'static str,
    /// The mail's closing line.
    pub mail_ignore: &'static str,
    /// After an agent's name, when it asks to use a delegation the person approves each time.
    pub agent_asks_tail: &'static str,
    /// Label before the API an agent would act at.
    pub agent_at_label: &'static str,
    /// Subject of the mail when an agent asks to act for the person.
    pub mail_agent_subject: &'static str,
    /// That mail's text before the agent's name.
    pub mail_agent_intro: &'static str,
}

/// English.
pub(super) static EN: CibaStrings = CibaStrings {
    title: "Approve a sign-in",
    asks: "",
    asks_tail: " asks to sign you in.",
    binding_label: "Code shown by the application",
    binding_hint: "Only approve if the application shows exactly this code.",
    approve: "Approve",
    deny: "Deny",
    none: "No request is waiting for you.",
    sign_in_first: "Sign in to see the requests waiting for your approval.",
    sign_in_link: "Sign in",
    approved: "Approved. The application is signed in.",
    denied: "Denied. The application was not signed in.",
    gone: "This request is no longer waiting: it expired or was already answered.",
    back_link: "Back to the requests",
    mail_subject: "Approve a sign-in request",
    mail_intro: "An application asks to sign you in:",
    mail_binding: "It shows this code:",
    mail_link: "Approve or deny it here:",
    mail_ignore: "If you did not expect this, deny it.",
    agent_asks_tail: ", an agent you let act for you, asks to act for you now with these permissions.",
    agent_at_label: "At",
    mail_agent_subject: "Approve an agent acting for you",
    mail_agent_intro: "An agent you let act for you asks to do so now:",
};

//! Hosted sign-in engine of svc: everything a tenant's hosted pages (`/auth/*`) and the tenant
//! user management need to know about people proving who they are, with no HTTP framework and
//! no SQL.
//!
//! - [`CaptchaVerifier`]: the port to a CAPTCHA provider (the runtime implements it over
//!   HTTP); with [`Authn::with_captcha`] sign-up and password-reset requests need a solved
//!   CAPTCHA, and sign-in does after repeated failures; accepted tokens are refused if replayed;
//! - [`HibpClient`]: the breached-password check (k-anonymity range API, fail open or closed),
//!   an implementation of the domain's `BreachedPasswords` port;
//! - [`Mailer`] / [`LogMailer`] / [`SmtpMailer`]: outgoing mail, sent in the background by an
//!   [`Outbox`], worded by a [`MailTexts`] catalogue;
//! - [`Authn`]: the use cases — sign-in with brute-force limits, sessions, sign-up, email
//!   verification, password reset, invitations, and second factors (TOTP, backup codes,
//!   the second step of a sign-in and step-up to `urn:svc:aal2`).
//!
//! Time, randomness, storage, passwords and mail are all handed in ([`Authn::new`]); the runtime
//! builds them from `[auth]`, `[email]`, `[hibp]` and `[captcha]` (this crate never reads
//! configuration).
//! The password policy, the breach-check port and the hasher port are the domain's
//! (`svc_domain::Passwords`), the Argon2id computation is `svc-crypto`'s, and the hasher that
//! runs it off the async runtime with bounded concurrency is the runtime's: the management API
//! applies the same rules with the same hasher without depending on this crate.
//!
//! # The log-mail format (a contract)
//!
//! [`LogMailer`] writes one JSON object per line to stdout, stderr, or appended to a file
//! (`[email.log].sink = "file:<path>"`):
//!
//! ```json
//! {"to":"ada@example.com","subject":"…","text":"…","link":"https://…/auth/verify-email?token=…","sent_at":"2026-11-22T10:00:00Z"}
//! ```
//!
//! `to` (the normalised address), `subject` and `text` are strings; `link` is the message's
//! one-time link or `null`; `sent_at` is RFC 3339 UTC. Tests and the interop suite read links
//! from this file, so members may be added but never renamed or removed. Links are
//! `{issuer}/auth/verify-email?token=…`, `{issuer}/auth/reset-password?token=…`,
//! `{issuer}/auth/accept-invitation?token=…` and `{issuer}/auth/join?token=…` (an invitation to
//! join, [`Authn::join_offer`]).
//!
//! Passwords, cookie values, link tokens and CAPTCHA tokens never appear in logs or in `Debug` output.

mod auto_join;
mod breached;
mod captcha;
mod devices;
mod engine;
mod error;
mod join;
mod links;
mod mail;
mod passkeys;
mod recovery;
mod sessions;
mod settings;
mod sign_in;
mod sign_up;
mod smtp;
mod social;
mod sso;
mod texts;
mod two_factor;
mod upstream;

pub use breached::{FailMode, HibpClient, HibpClientError, HibpSettings};
pub use captcha::{
    CaptchaAction, CaptchaAnswer, CaptchaCheck, CaptchaError, CaptchaProvider, CaptchaSettings,
    CaptchaVerdict, CaptchaVerifier, MAX_CAPTCHA_TOKEN_BYTES,
};
pub use devices::{AdaptiveSettings, DEVICE_COOKIE_PREFIX};
pub use engine::{AMR_PASSWORD, Authn, MAX_USER_AGENT_CHARS, SESSION_COOKIE_PREFIX, SignedIn};
pub use error::AuthnError;
pub use join::{JoinError, JoinOffer, Joiner};
pub use mail::{LogMailer, LogSink, Mail, MailError, Mailer, Outbox};
pub use passkeys::{CEREMONY_COOKIE_PREFIX, CeremonyStart, PasskeySettings, RpSettings};
pub use recovery::{ApprovalRequest, RecoveryOverview, RecoveryProgress, RecoverySettings};
pub use settings::{AuthnSettings, ClientInfo};
pub use sign_up::{MAX_NAME_CHARS, SignUpFields, clean_name};
pub use smtp::{SmtpMailer, SmtpSettings};
pub use social::{
    ConnectedAccount, LinkConfirmed, PendingLinkView, SOCIAL_COOKIE_PREFIX,
    SOCIAL_LINK_COOKIE_PREFIX, SocialButton, SocialOutcome, SocialReturn, SocialSettings,
    SocialStart,
};
pub use sso::{AMR_FED, SSO_COOKIE_PREFIX, SsoSettings, SsoSignedIn, SsoStart};
pub use texts::MailTexts;
pub use two_factor::{
    CHALLENGE_COOKIE_PREFIX, Confirmed, ENROLMENT_LIFETIME, FactorStatus, KeyStep, PendingFactor,
    SecondProof, SignInStep, TotpEnrolment, TwoFactorSettings,
};
pub use upstream::UpstreamResponse;

//! Hosted sign-in end to end, as a browser drives it: the authorization code flow through the
//! sign-in and consent pages, the account pages (sign-up, email verification, password reset,
//! invitations, sessions, sign-out, RP-initiated logout), and the pages' defences (CSRF,
//! escaping, security headers, form limits, CAPTCHA), on SQLite and PostgreSQL.

mod accounts;
mod administrators;
mod auto_join;
mod captcha;
mod flow;
mod history;
mod invitations;
mod logout;
mod organization_administrators;
mod organization_group_roles;
mod passkeys;
mod permissions;
mod picker;
mod policies;
mod recovery;
mod security;
mod security_keys;
pub(crate) mod support;
pub(crate) mod tokens;
pub(crate) mod two_factor;

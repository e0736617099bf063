//! The hosted pages of social recovery (the engine's `svc_authn` recovery flow): a signed-in
//! person's guardians (`/auth/account/recovery`), asking for a recovery and following it from
//! the asking browser (`/auth/recovery`, `/auth/recovery/status`), and the mailed links of
//! guardians (`/auth/recovery/approve`) and of the owner (`/auth/recovery/cancel`).
//!
//! Every page exists only when the deployment turned recovery on (`Authn::recovery`), a 404
//! otherwise, like the two-step pages. The asking browser keeps the engine's secret in the
//! recovery cookie ([`super::cookies`]): it is the only way to follow the recovery and to set
//! the new password, and the answer to asking is the same whether anything started (the engine
//! hands out a decoy secret), so these pages never tell whether an account exists. A mailed
//! link's GET only shows a confirmation form, its POST spends the token (mail scanners prefetch
//! links). Every POST checks the CSRF token first.

mod account;
mod asking;
mod links;

pub(crate) use account::{page as account_page, submit as account_submit};
pub(crate) use asking::{start_page, start_submit, status_page, status_submit};
pub(crate) use links::{approve_page, approve_submit, cancel_page, cancel_submit};

use super::{Ctx, HostedState};
use crate::error::page as error;
use axum::response::Response;
use svc_authn::RecoverySettings;

/// The deployment's recovery settings, or the 404 page when recovery is off.
fn settings<'a>(state: &'a HostedState, ctx: &Ctx) -> Result<&'a RecoverySettings, Response> {
    state.authn.recovery().ok_or_else(|| error::not_found(ctx))
}

//! A tenant user's login history, a page at a time: every sign-in attempt on the account with
//! its time, address, user agent, method and result (written by the sign-in itself).

use crate::page::split_page;
use crate::{ManageContext, ManageError, clamp_limit};
use serde::Serialize;
use svc_domain::{LoginRecord, LoginRecordId, TenantId, UserId};
use svc_store::Order;
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Up to `limit` (default 50, clamped to 1..=200) records of the login history of the user
/// `id` of `tenant`, in time `order` (default newest first), past the cursor `after`, and the
/// cursor of the next page (`None` on the last). A removed user's history stays readable.
///
/// Errors: [`ManageError::NotFound`] when the user is absent.
pub async fn login_history(
    ctx: &ManageContext,
    tenant: &TenantId,
    id: &UserId,
    after: Option<&LoginRecordId>,
    order: Option<Order>,
    limit: Option<u32>,
) -> Result<(Vec<LoginRecord>, Option<LoginRecordId>), ManageError> {
    let limit = clamp_limit(limit);
    let mut tx = ctx.store.read().await?;
    if tx.user(tenant, id).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let order = order.unwrap_or(Order::Descending);
    let rows = tx
        .login_history(tenant, id, after, order, limit + 1)
        .await?;
    tx.finish().await?;
    Ok(split_page(rows, limit, |r| r.id.clone()))
}

/// One sign-in attempt, as the management API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "lgn_01jd2mb7c4e6g8j0k2m4p6r8t0",
    "occurred_at": "2026-11-23T08:00:00Z",
    "method": "password_totp",
    "result": "success",
    "ip": "203.0.113.7",
    "user_agent": "Mozilla/5.0 (X11; Linux x86_64)"
}))]
pub struct LoginRecordView {
    /// Record id (`lgn_…`, time-ordered); also the pagination cursor.
    #[schema(example = "lgn_01jd2mb7c4e6g8j0k2m4p6r8t0")]
    pub id: String,
    /// When the attempt was made (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub occurred_at: OffsetDateTime,
    /// How: `password` (a password alone), `password_totp` (the password, then an
    /// authenticator app's code), `password_backup_code` (the password, then a backup code),
    /// `password_trusted_device` (the password on a browser trusted to skip the second step),
    /// `password_security_key` (the password, then a security key), `passkey`, `sso` (the
    /// organization's provider), `social` (a social provider alone), or `social_totp`,
    /// `social_backup_code`, `social_security_key` (a social provider, then that second step).
    #[schema(example = "password_totp")]
    pub method: &'static str,
    /// What came of it: `success`, `invalid_credentials` (wrong password, or an account that
    /// may not sign in), `locked` (refused while the account was locked),
    /// `invalid_second_factor` (right password, wrong second-factor code) or
    /// `second_factor_locked` (refused while the second step was locked after wrong codes).
    #[schema(example = "success")]
    pub result: &'static str,
    /// Client address, `null` if unknown.
    #[schema(required = true)]
    pub ip: Option<String>,
    /// Browser, `null` if unknown (at most 256 characters).
    #[schema(required = true)]
    pub user_agent: Option<String>,
}

impl From<&LoginRecord> for LoginRecordView {
    fn from(r: &LoginRecord) -> Self {
        Self {
            id: r.id.to_string(),
            occurred_at: r.occurred_at,
            method: r.method.as_str(),
            result: r.result.as_str(),
            ip: r.client_ip.clone(),
            user_agent: r.user_agent.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{LoginMethod, LoginResult, ManualClock, SeededRandom};

    #[test]
    fn the_view_shows_every_method_and_result_by_its_spelling() {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        let rng = SeededRandom::new(1);
        for method in LoginMethod::ALL {
            for result in LoginResult::ALL {
                let record = LoginRecord {
                    id: LoginRecordId::generate(&clock, &rng),
                    tenant_id: TenantId::generate(&clock, &rng),
                    user_id: UserId::generate(&clock, &rng),
                    occurred_at: OffsetDateTime::UNIX_EPOCH,
                    method,
                    result,
                    client_ip: None,
                    user_agent: None,
                };
                let json = serde_json::to_value(LoginRecordView::from(&record)).unwrap();
                assert_eq!(json["method"], method.as_str());
                assert_eq!(json["result"], result.as_str());
            }
        }
    }
}

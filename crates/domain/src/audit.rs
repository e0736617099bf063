//! Audit-log entries: who did what to which record, from where, with what outcome. Written in
//! the same transaction as the change they describe, so the log never claims a change that was
//! rolled back, nor misses one that committed.

use crate::{AuditEntryId, TenantId};
use time::OffsetDateTime;

/// Whether the audited action took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditOutcome {
    /// It took effect.
    Success,
    /// It was refused (recorded for security-relevant refusals).
    Failure,
}

impl AuditOutcome {
    /// Stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "success" => Some(Self::Success),
            "failure" => Some(Self::Failure),
            _ => None,
        }
    }
}

/// One audit-log entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuditEntry {
    /// Sortable id (time-ordered).
    pub id: AuditEntryId,
    /// The tenant concerned; `None` for deployment-wide control-plane actions. Kept after the
    /// tenant is deleted (no foreign key), because the deletion itself is audited.
    pub tenant_id: Option<TenantId>,
    /// Who acted: `operator:opt_…`, `client:app_…`, `user:usr_…`, `system`.
    pub actor: String,
    /// What was done, dotted: `application.created`, `tenant.suspended`, ...
    pub action: String,
    /// The record acted on (`app_…`, `ten_…`), when any.
    pub target: Option<String>,
    /// The request's `x-request-id`.
    pub request_id: Option<String>,
    /// The client address (through trusted proxies only).
    pub client_ip: Option<String>,
    /// Whether it took effect.
    pub outcome: AuditOutcome,
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub occurred_at: OffsetDateTime,
}

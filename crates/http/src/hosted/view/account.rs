//! The account pages' own views: sessions, passkeys and sign-in history, each a template of
//! its own rather than the page vocabulary, since they are tables with per-row forms.

use super::{Chrome, PasskeyForm, html};
use crate::hosted::strings::Strings;
use askama::Template;
use axum::response::Response;
use http::StatusCode;

/// One row of the sessions page.
#[derive(Debug, Clone)]
pub(crate) struct SessionRow {
    pub(crate) id: String,
    pub(crate) user_agent: String,
    pub(crate) ip: String,
    pub(crate) created: String,
    pub(crate) created_iso: String,
    pub(crate) last_seen: String,
    pub(crate) last_seen_iso: String,
    pub(crate) current: bool,
}

/// The sessions page.
#[derive(Template)]
#[template(path = "hosted/sessions.html")]
pub(crate) struct SessionsView<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) title: &'a str,
    pub(crate) notice: Option<&'static str>,
    pub(crate) csrf: &'a str,
    pub(crate) rows: Vec<SessionRow>,
}

impl SessionsView<'_> {
    /// Renders as a 200 response.
    pub(crate) fn respond(&self) -> Response {
        html(StatusCode::OK, self.render())
    }
}

/// One row of the passkeys page.
#[derive(Debug, Clone)]
pub(crate) struct PasskeyRow {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) kind: &'static str,
    pub(crate) added: String,
    pub(crate) added_iso: String,
    pub(crate) used: String,
    pub(crate) used_iso: Option<String>,
}

impl PasskeyRow {
    /// The row of `passkey`.
    pub(crate) fn new(s: &Strings, passkey: &svc_domain::Passkey) -> Self {
        let shown = |t: time::OffsetDateTime| {
            (
                t.format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or_default(),
                crate::hosted::account::human_time(t, s.utc),
            )
        };
        let (added_iso, added) = shown(passkey.created_at);
        let (used_iso, used) = match passkey.last_used_at.map(shown) {
            Some((iso, text)) => (Some(iso), text),
            None => (None, s.passkey_never_used.to_owned()),
        };
        Self {
            id: passkey.id.to_string(),
            name: passkey.name.clone(),
            kind: if passkey.backup_eligible {
                s.passkey_synced
            } else {
                s.passkey_device_bound
            },
            added,
            added_iso,
            used,
            used_iso,
        }
    }
}

/// The passkeys page: the person's passkeys (rename, remove), and the form that adds one when
/// this session may.
#[derive(Template)]
#[template(path = "hosted/passkeys.html")]
pub(crate) struct PasskeysView<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) title: &'a str,
    pub(crate) notice: Option<&'static str>,
    pub(crate) alert: Option<&'static str>,
    pub(crate) csrf: &'a str,
    pub(crate) rows: Vec<PasskeyRow>,
    pub(crate) webauthn: Option<PasskeyForm>,
}

impl PasskeysView<'_> {
    /// Renders as a 200 response.
    pub(crate) fn respond(&self) -> Response {
        html(StatusCode::OK, self.render())
    }
}

/// One row of the sign-in history page.
#[derive(Debug, Clone)]
pub(crate) struct HistoryRow {
    pub(crate) when: String,
    pub(crate) when_iso: String,
    pub(crate) result: &'static str,
    pub(crate) method: &'static str,
    pub(crate) ip: String,
    pub(crate) user_agent: String,
}

/// The sign-in history page.
#[derive(Template)]
#[template(path = "hosted/history.html")]
pub(crate) struct HistoryView<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) title: &'a str,
    pub(crate) rows: Vec<HistoryRow>,
}

impl HistoryView<'_> {
    /// Renders as a 200 response.
    pub(crate) fn respond(&self) -> Response {
        html(StatusCode::OK, self.render())
    }
}

//! The API keys page's views: the person's keys with a revoke form per row and a creation form
//! per API the tenant offers (a template of its own: per-row forms, a checkbox per permission),
//! and the page that shows a new key once.

use super::{Chrome, html};
use crate::hosted::strings::ApiKeyStrings;
use askama::Template;
use axum::response::Response;
use http::StatusCode;

/// One of the person's keys.
#[derive(Debug, Clone)]
pub(crate) struct ApiKeyRow {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) api: String,
    /// The name of the agent the key acts as; `None`: the person.
    pub(crate) agent: Option<String>,
    pub(crate) permissions: String,
    pub(crate) live: bool,
    pub(crate) expires: String,
    pub(crate) expires_iso: String,
    pub(crate) used: String,
}

/// An API the person may create a key for, as themselves or as one of their agents: its id,
/// name and the permissions that subject holds there (name, description).
#[derive(Debug, Clone)]
pub(crate) struct OfferedApiView {
    /// Unique on the page (element ids): the API's id, prefixed by the agent's.
    pub(crate) form_id: String,
    pub(crate) id: String,
    pub(crate) name: String,
    /// The agent (`agt_…`, name) the key would act as; `None`: the person.
    pub(crate) agent: Option<(String, String)>,
    pub(crate) permissions: Vec<(String, String)>,
    /// The subject holds the most live keys allowed: no form.
    pub(crate) at_limit: bool,
}

/// The list and the creation forms.
#[derive(Template)]
#[template(path = "hosted/api_keys.html")]
pub(crate) struct ApiKeysView<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) t: &'static ApiKeyStrings,
    pub(crate) title: &'a str,
    pub(crate) path: &'static str,
    pub(crate) notice: Option<&'static str>,
    pub(crate) alert: Option<String>,
    pub(crate) csrf: &'a str,
    pub(crate) rows: Vec<ApiKeyRow>,
    pub(crate) apis: Vec<OfferedApiView>,
    pub(crate) max_days: u32,
}

impl ApiKeysView<'_> {
    /// Renders with `status` (200, or 400/409 when a creation was refused).
    pub(crate) fn respond(&self, status: StatusCode) -> Response {
        html(status, self.render())
    }
}

/// A new key, shown this once (the response is `no-store` like every hosted page).
#[derive(Template)]
#[template(path = "hosted/api_key_created.html")]
pub(crate) struct ApiKeyCreatedView<'a> {
    pub(crate) chrome: &'a Chrome,
    pub(crate) t: &'static ApiKeyStrings,
    pub(crate) title: &'a str,
    pub(crate) path: &'static str,
    pub(crate) key: &'a str,
    pub(crate) name: &'a str,
    pub(crate) api: &'a str,
    pub(crate) permissions: String,
}

impl ApiKeyCreatedView<'_> {
    /// Renders as a 200 response.
    pub(crate) fn respond(&self) -> Response {
        html(StatusCode::OK, self.render())
    }
}

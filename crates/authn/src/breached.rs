//! The breached-password check: is a new password in a known breach corpus?
//!
//! [`HibpClient`] implements the domain's [`BreachedPasswords`] port (the runtime hands it to
//! every engine that checks new passwords). It asks the Have-I-Been-Pwned range API with
//! k-anonymity: only the first five hex characters of the password's SHA-1 leave the process
//! (`GET {base}/range/{prefix}`), the answer lists every known suffix with that prefix
//! (`SUFFIX:COUNT` per line), and the match is done here. `Add-Padding: true` makes the API pad
//! the answer with zero-count suffixes so its size does not reveal the prefix either. What an
//! unreachable API means is the deployment's choice (`[hibp].fail_mode`): fail open accepts the
//! password, fail closed refuses it.

use async_trait::async_trait;
use sha1::{Digest, Sha1};
use std::time::Duration;
use svc_domain::{BreachCheckUnavailable, BreachedPasswords, Password};

/// What an unreachable breach API means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// Accept the password (development only).
    Open,
    /// Refuse the password until the check works again.
    Closed,
}

/// How to reach the range API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HibpSettings {
    /// Base URL without the `/range/` path (`https://api.pwnedpasswords.com`).
    pub base_url: String,
    /// What an unreachable API means.
    pub fail_mode: FailMode,
    /// Longest wait for an answer.
    pub timeout: Duration,
}

impl HibpSettings {
    /// Settings for `base_url` and `fail_mode` with the default 3-second timeout.
    pub fn new(base_url: impl Into<String>, fail_mode: FailMode) -> Self {
        Self {
            base_url: base_url.into(),
            fail_mode,
            timeout: Duration::from_secs(3),
        }
    }
}

/// The Have-I-Been-Pwned range API client.
#[derive(Debug, Clone)]
pub struct HibpClient {
    http: reqwest::Client,
    base_url: String,
    fail_mode: FailMode,
}

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("could not build the breached-password client: {0}")]
pub struct HibpClientError(#[source] reqwest::Error);

impl HibpClient {
    /// A client for `settings`. Redirects are not followed: the API does not redirect, and a
    /// redirect would be an unexpected place to send even a hash prefix.
    pub fn new(settings: &HibpSettings) -> Result<Self, HibpClientError> {
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("svc-authn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(HibpClientError)?;
        Ok(Self {
            http,
            base_url: settings.base_url.trim_end_matches('/').to_owned(),
            fail_mode: settings.fail_mode,
        })
    }

    /// The answer to give when the API could not be asked.
    fn unavailable(&self, why: &str) -> Result<bool, BreachCheckUnavailable> {
        tracing::warn!(
            reason = why,
            fail_mode = ?self.fail_mode,
            "breached-password check unavailable"
        );
        match self.fail_mode {
            FailMode::Open => Ok(false),
            FailMode::Closed => Err(BreachCheckUnavailable),
        }
    }
}

#[async_trait]
impl BreachedPasswords for HibpClient {
    async fn is_breached(&self, password: &Password) -> Result<bool, BreachCheckUnavailable> {
        let (prefix, suffix) = sha1_split(password.expose());
        let response = self
            .http
            .get(format!("{}/range/{prefix}", self.base_url))
            .header("Add-Padding", "true")
            .send()
            .await;
        let response = match response {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => return self.unavailable(&format!("status {}", r.status().as_u16())),
            Err(e) => return self.unavailable(&without_url(&e)),
        };
        match response.text().await {
            Ok(body) => Ok(listed(&body, &suffix)),
            Err(e) => self.unavailable(&without_url(&e)),
        }
    }
}

/// The error's description without its URL (which names the hash prefix).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    kind.to_owned()
}

/// Uppercase hex SHA-1 of `password`, split into the 5-character prefix sent to the API and the
/// 35-character suffix matched locally.
pub(crate) fn sha1_split(password: &str) -> (String, String) {
    let digest = Sha1::digest(password.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02X}")).collect();
    let (prefix, suffix) = hex.split_at(5);
    (prefix.to_owned(), suffix.to_owned())
}

/// Whether the range answer lists `suffix` with a non-zero count (padding lines carry 0).
fn listed(body: &str, suffix: &str) -> bool {
    body.lines().any(|line| {
        line.trim().split_once(':').is_some_and(|(s, count)| {
            s.eq_ignore_ascii_case(suffix) && count.trim().parse::<u64>().is_ok_and(|n| n > 0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_is_split_into_a_five_character_prefix_and_the_rest() {
        // SHA-1("password") = 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8
        let (prefix, suffix) = sha1_split("password");
        assert_eq!(prefix, "5BAA6");
        assert_eq!(suffix, "1E4C9B93F3F0682250B6CF8331B7EE68FD8");
    }

    #[test]
    fn only_a_listed_suffix_with_a_count_is_breached() {
        let body = "0018A45C4D1DEF81644B54AB7F969B88D65:1\r\n\
                    1E4C9B93F3F0682250B6CF8331B7EE68FD8:3861493\r\n\
                    FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:0\r\n";
        assert!(listed(body, "1E4C9B93F3F0682250B6CF8331B7EE68FD8"));
        assert!(listed(body, "1e4c9b93f3f0682250b6cf8331b7ee68fd8"));
        assert!(
            !listed(body, "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"),
            "padding"
        );
        assert!(!listed(body, "0000000000000000000000000000000000A"));
        assert!(!listed("", "1E4C9B93F3F0682250B6CF8331B7EE68FD8"));
    }
}

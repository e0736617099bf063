//! `[captcha]`: the sign-in engine's CAPTCHA port ([`svc_authn::CaptchaVerifier`]) over HTTP,
//! for Cloudflare Turnstile, hCaptcha and Google reCAPTCHA v3.
//!
//! All three share one protocol: a form POST of `secret`, `response` (the token) and
//! `remoteip` to the provider's `siteverify` endpoint (`captcha.verify_url`, overridable so
//! tests run a local verifier), answered with JSON `{"success": bool, …}`. On top of
//! `success`, what the provider reports is checked: reCAPTCHA's `score` against
//! `captcha.min_score` (and its `action`, which it always reports), Turnstile's `action` when
//! the widget declared one, and every provider's `hostname` against the page's. hCaptcha is
//! also sent the `sitekey`, so a token solved for another site is refused by hCaptcha itself.
//!
//! No answer (unreachable, timeout after `captcha.timeout_ms`, a non-2xx status, unreadable
//! JSON, or the provider saying our own secret is wrong) is the deployment's choice,
//! `captcha.fail_mode`: fail closed refuses the form, fail open lets it through and logs a
//! warning. The secret and the tokens never reach a log: errors are reduced to their kind.

use crate::RuntimeError;
use async_trait::async_trait;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use svc_authn::{
    CaptchaCheck, CaptchaError, CaptchaProvider, CaptchaSettings, CaptchaVerdict, CaptchaVerifier,
};
use svc_config::{CaptchaConfig, FailMode};

/// Largest verification answer read, in bytes (they are a few hundred).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The provider's error codes that mean our configuration is wrong, not the person's token:
/// every token would be refused, so they count as "no answer" (the fail mode decides).
const OUR_FAULT: &[&str] = &[
    "missing-input-secret",
    "invalid-input-secret",
    "sitekey-secret-mismatch",
    "invalid-sitekey",
    "internal-error",
];

/// What the sign-in engine's [`svc_authn::Authn::with_captcha`] takes.
pub(crate) type EngineCaptcha = (CaptchaSettings, Arc<dyn CaptchaVerifier>);

/// The engine's CAPTCHA settings and verifier for `[captcha]`, or `None` when disabled.
pub(crate) fn build(config: &CaptchaConfig) -> Result<Option<EngineCaptcha>, RuntimeError> {
    if !config.enabled {
        return Ok(None);
    }
    // Validation refused an enabled CAPTCHA without these; this is the same rule, phrased for
    // a configuration built in code.
    let missing =
        |key: &str| RuntimeError::Authn(format!("{key} is required when captcha.enabled = true"));
    let provider = config.provider.ok_or_else(|| missing("captcha.provider"))?;
    let site_key = config
        .site_key
        .clone()
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| missing("captcha.site_key"))?;
    let secret = config
        .secret_key
        .as_ref()
        .map(|s| SecretString::from(s.expose_secret().to_owned()))
        .filter(|s| !s.expose_secret().trim().is_empty())
        .ok_or_else(|| missing("captcha.secret_key"))?;
    let verify_url = config
        .effective_verify_url()
        .ok_or_else(|| missing("captcha.verify_url"))?;
    let timeout = Duration::from_millis(u64::from(config.timeout_ms));
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("svc/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| RuntimeError::Authn(format!("captcha client: {e}")))?;
    let provider = match provider {
        svc_config::CaptchaProvider::Turnstile => CaptchaProvider::Turnstile,
        svc_config::CaptchaProvider::Hcaptcha => CaptchaProvider::Hcaptcha,
        svc_config::CaptchaProvider::Recaptcha => CaptchaProvider::RecaptchaV3,
    };
    let verifier = HttpCaptchaVerifier {
        http,
        provider,
        verify_url,
        secret,
        site_key: site_key.clone(),
        min_score: config.score_threshold(),
        fail_open: config.fail_mode == FailMode::FailOpen,
    };
    let settings = CaptchaSettings {
        provider,
        site_key,
        after_failed_sign_ins: config.after_failed_sign_ins,
    };
    Ok(Some((settings, Arc::new(verifier))))
}

/// A provider's `siteverify` endpoint.
struct HttpCaptchaVerifier {
    http: reqwest::Client,
    provider: CaptchaProvider,
    verify_url: String,
    secret: SecretString,
    site_key: String,
    min_score: f64,
    fail_open: bool,
}

/// The members of a `siteverify` answer that are checked (the rest is ignored).
#[derive(Debug, Deserialize)]
struct Answer {
    success: bool,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    hostname: Option<String>,
    #[serde(default, rename = "error-codes")]
    error_codes: Vec<String>,
}

impl HttpCaptchaVerifier {
    /// No answer: let the form through (fail open, with a warning) or refuse it (fail closed).
    fn unavailable(&self, why: String) -> Result<CaptchaVerdict, CaptchaError> {
        if self.fail_open {
            tracing::warn!(
                provider = ?self.provider,
                reason = %why,
                "captcha verification unavailable; the form is let through unverified \
                 (captcha.fail_mode = fail-open)"
            );
            Ok(CaptchaVerdict::Unverified)
        } else {
            tracing::warn!(
                provider = ?self.provider,
                reason = %why,
                "captcha verification unavailable; the form is refused \
                 (captcha.fail_mode = fail-closed)"
            );
            Err(CaptchaError::Unavailable(why))
        }
    }

    /// Asks the endpoint; `Err` is why there is no usable answer (no URL, no token, no secret).
    async fn ask(&self, check: &CaptchaCheck<'_>) -> Result<Answer, String> {
        let remote_ip = check.remote_ip.map(|ip| ip.to_string());
        // Borrowed, not copied: the secret exists once in memory, plus the request body.
        let mut form: Vec<(&str, &str)> = vec![
            ("secret", self.secret.expose_secret()),
            ("response", check.token),
        ];
        if let Some(ip) = &remote_ip {
            form.push(("remoteip", ip));
        }
        if self.provider == CaptchaProvider::Hcaptcha {
            form.push(("sitekey", &self.site_key));
        }
        let mut response = self
            .http
            .post(&self.verify_url)
            .form(&form)
            .send()
            .await
            .map_err(|e| kind(&e))?;
        if !response.status().is_success() {
            return Err(format!("status {}", response.status().as_u16()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| kind(&e))? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err("answer too large".to_owned());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|_| "unreadable answer".to_owned())
    }

    /// The verdict on a readable answer.
    fn judge(&self, check: &CaptchaCheck<'_>, answer: &Answer) -> Verdict {
        if !answer.success {
            let codes = answer.error_codes.join(",");
            if answer
                .error_codes
                .iter()
                .any(|code| OUR_FAULT.contains(&code.as_str()))
            {
                return Verdict::NoAnswer(format!("provider error ({codes})"));
            }
            return Verdict::Refused(format!("provider refused the token ({codes})"));
        }
        let expected_action = check.action.as_str();
        if self.provider == CaptchaProvider::RecaptchaV3 {
            match answer.score {
                Some(score) if score >= self.min_score => {}
                Some(score) => {
                    return Verdict::Refused(format!(
                        "score {score} below captcha.min_score {}",
                        self.min_score
                    ));
                }
                None => return Verdict::Refused("no score in the answer".to_owned()),
            }
            if answer.action.as_deref() != Some(expected_action) {
                return Verdict::Refused(format!(
                    "action {:?} is not {expected_action}",
                    answer.action
                ));
            }
        } else if let Some(action) = answer.action.as_deref().filter(|a| !a.is_empty())
            && action != expected_action
        {
            return Verdict::Refused(format!("action {action:?} is not {expected_action}"));
        }
        if let (Some(seen), Some(expected)) = (answer.hostname.as_deref(), check.hostname)
            && !seen.eq_ignore_ascii_case(expected)
        {
            return Verdict::Refused(format!("solved on host {seen:?}, not {expected}"));
        }
        Verdict::Passed
    }
}

/// What [`HttpCaptchaVerifier::judge`] concluded.
enum Verdict {
    Passed,
    Refused(String),
    NoAnswer(String),
}

#[async_trait]
impl CaptchaVerifier for HttpCaptchaVerifier {
    async fn verify(&self, check: &CaptchaCheck<'_>) -> Result<CaptchaVerdict, CaptchaError> {
        let answer = match self.ask(check).await {
            Ok(answer) => answer,
            Err(why) => return self.unavailable(why),
        };
        match self.judge(check, &answer) {
            Verdict::Passed => Ok(CaptchaVerdict::Passed),
            Verdict::Refused(reason) => Ok(CaptchaVerdict::Refused { reason }),
            Verdict::NoAnswer(why) => self.unavailable(why),
        }
    }
}

/// The error's kind, without its URL or anything it carried.
fn kind(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_redirect() {
        "redirected"
    } else if e.is_body() || e.is_decode() {
        "answer unreadable"
    } else {
        "request failed"
    };
    kind.to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use svc_authn::CaptchaAction;

    fn verifier(provider: CaptchaProvider) -> HttpCaptchaVerifier {
        HttpCaptchaVerifier {
            http: reqwest::Client::new(),
            provider,
            verify_url: "http://127.0.0.1:9/siteverify".to_owned(),
            secret: SecretString::from("s3cret".to_owned()),
            site_key: "site".to_owned(),
            min_score: 0.5,
            fail_open: false,
        }
    }

    fn check(hostname: Option<&str>) -> CaptchaCheck<'_> {
        CaptchaCheck {
            token: "tok",
            remote_ip: None,
            action: CaptchaAction::SignUp,
            hostname,
        }
    }

    fn answer(json: &str) -> Answer {
        serde_json::from_str(json).unwrap()
    }

    fn outcome(v: &HttpCaptchaVerifier, c: &CaptchaCheck<'_>, json: &str) -> &'static str {
        match v.judge(c, &answer(json)) {
            Verdict::Passed => "passed",
            Verdict::Refused(_) => "refused",
            Verdict::NoAnswer(_) => "no answer",
        }
    }

    #[test]
    fn turnstile_and_hcaptcha_answers() {
        for provider in [CaptchaProvider::Turnstile, CaptchaProvider::Hcaptcha] {
            let v = verifier(provider);
            let c = check(Some("acme.example.com"));
            assert_eq!(outcome(&v, &c, r#"{"success":true}"#), "passed");
            assert_eq!(
                outcome(
                    &v,
                    &c,
                    r#"{"success":true,"hostname":"ACME.example.com","action":"sign_up"}"#
                ),
                "passed"
            );
            assert_eq!(
                outcome(&v, &c, r#"{"success":true,"hostname":"evil.example"}"#),
                "refused"
            );
            assert_eq!(
                outcome(&v, &c, r#"{"success":true,"action":"sign_in"}"#),
                "refused"
            );
            assert_eq!(
                outcome(
                    &v,
                    &c,
                    r#"{"success":false,"error-codes":["invalid-input-response"]}"#
                ),
                "refused"
            );
            assert_eq!(
                outcome(
                    &v,
                    &c,
                    r#"{"success":false,"error-codes":["invalid-input-secret"]}"#
                ),
                "no answer"
            );
        }
    }

    #[test]
    fn recaptcha_needs_its_score_and_action() {
        let v = verifier(CaptchaProvider::RecaptchaV3);
        let c = check(None);
        assert_eq!(
            outcome(&v, &c, r#"{"success":true,"score":0.9,"action":"sign_up"}"#),
            "passed"
        );
        assert_eq!(
            outcome(&v, &c, r#"{"success":true,"score":0.5,"action":"sign_up"}"#),
            "passed"
        );
        assert_eq!(
            outcome(&v, &c, r#"{"success":true,"score":0.3,"action":"sign_up"}"#),
            "refused"
        );
        assert_eq!(
            outcome(&v, &c, r#"{"success":true,"action":"sign_up"}"#),
            "refused"
        );
        assert_eq!(
            outcome(&v, &c, r#"{"success":true,"score":0.9}"#),
            "refused"
        );
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_follows_the_fail_mode_without_naming_secrets() {
        let mut v = verifier(CaptchaProvider::Turnstile);
        let c = check(None);
        match v.verify(&c).await {
            Err(CaptchaError::Unavailable(why)) => {
                assert!(!why.contains("s3cret") && !why.contains("tok"), "{why}");
                assert!(!why.contains("127.0.0.1"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        v.fail_open = true;
        assert_eq!(v.verify(&c).await.unwrap(), CaptchaVerdict::Unverified);
    }

    #[test]
    fn disabled_builds_nothing_and_enabled_needs_its_keys() {
        assert!(build(&CaptchaConfig::default()).unwrap().is_none());
        let mut config = CaptchaConfig {
            enabled: true,
            ..CaptchaConfig::default()
        };
        let err = build(&config).err().unwrap();
        assert!(err.to_string().contains("captcha.provider"), "{err}");
        config.provider = Some(svc_config::CaptchaProvider::Recaptcha);
        config.site_key = Some("site".into());
        config.secret_key = Some(svc_config::Secret::new("s3cret"));
        let (settings, _) = build(&config).unwrap().unwrap();
        assert_eq!(settings.provider, CaptchaProvider::RecaptchaV3);
        assert_eq!(settings.after_failed_sign_ins, 3);
    }
}

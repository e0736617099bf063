//! Rendering of the hosted pages: the compile-time templates (askama, `templates/hosted/`), the
//! view models they read, the one inline stylesheet and the security headers every hosted
//! response carries.
//!
//! Pages are built from a small vocabulary (lines of text, a list, a form of labelled fields,
//! links) rather than one template per page, so accessibility rules live in one template:
//! every input has a `<label for>`, the first (or first invalid) field has `autofocus`, errors
//! sit in `role="alert"` elements that invalid inputs point to with `aria-describedby`.
//! askama escapes every value for HTML; nothing reflected is ever marked safe (only the
//! stylesheet and the reCAPTCHA glue script, constants, are).
//!
//! A form may carry a CAPTCHA widget ([`CaptchaWidget`]); only a page that renders one loads
//! the provider's script, and only its Content-Security-Policy opens `script-src`,
//! `frame-src` and `connect-src` to that provider's origin.

//!
//! The pieces: `security` (the stylesheet, the glue scripts and the headers), `form` (fields,
//! buttons, CAPTCHA and passkey forms), `account` (the account pages' tables); this module
//! holds the page vocabulary and renders it.

use super::strings::Strings;
use askama::Template;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};

mod account;
mod api_keys;
mod form;
mod security;

pub(crate) use account::{
    HistoryRow, HistoryView, PasskeyRow, PasskeysView, SessionRow, SessionsView,
};
pub(crate) use api_keys::{ApiKeyCreatedView, ApiKeyRow, ApiKeysView, OfferedApiView};
pub(crate) use form::{Button, CaptchaWidget, Field, Form, PasskeyForm, SocialForm, SsoForm};
use security::CSS;
pub(crate) use security::{FormTargets, secure_headers};

/// What every page shows around its content.
#[derive(Debug, Clone)]
pub(crate) struct Chrome {
    /// The catalogue of the page's language.
    pub(crate) s: &'static Strings,
    /// The tenant's display name (title and header).
    pub(crate) tenant: String,
    /// The stylesheet.
    pub(crate) css: &'static str,
}

impl Chrome {
    /// Chrome for a tenant in a language.
    pub(crate) fn new(s: &'static Strings, tenant: impl Into<String>) -> Self {
        Self {
            s,
            tenant: tenant.into(),
            css: CSS,
        }
    }
}

/// A paragraph: fixed text, optionally a reflected value (shown strong) and more fixed text.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) lead: &'static str,
    pub(crate) value: Option<String>,
    pub(crate) tail: &'static str,
}

/// A list entry: a description, optionally followed by a code-formatted value.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// Our own words, or text the tenant wrote (an API permission's description: escaped like
    /// everything the template prints).
    pub(crate) text: std::borrow::Cow<'static, str>,
    pub(crate) code: Option<String>,
}

/// A link, optionally introduced by text.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) lead: Option<&'static str>,
    pub(crate) label: &'static str,
    pub(crate) href: String,
}

/// A hosted page's content.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) title: &'static str,
    pub(crate) alert: Option<String>,
    pub(crate) lines: Vec<Line>,
    pub(crate) items: Vec<Item>,
    pub(crate) details: Vec<(&'static str, String)>,
    pub(crate) form: Option<Form>,
    pub(crate) links: Vec<Link>,
    /// An inline SVG image rendered by us (a QR code); never built from markup we did not
    /// write.
    pub(crate) svg: Option<String>,
    /// A passkey form after the main form, when the page offers one.
    pub(crate) passkey: Option<PasskeyForm>,
    /// Where the form may lead besides us (see [`FormTargets`]).
    pub(crate) targets: FormTargets,
    /// URLs loaded in hidden frames (front-channel logout).
    pub(crate) frames: Vec<String>,
    /// Where the page moves on to by itself after a moment (a `meta` refresh, no script).
    pub(crate) refresh: Option<String>,
    /// Seconds before [`Page::refresh`] moves on.
    pub(crate) refresh_secs: u8,
    /// The single sign-on form after the main form, when the page offers one.
    pub(crate) sso: Option<SsoForm>,
    /// The social providers' buttons after the main form, when the tenant offers any.
    pub(crate) social: Option<SocialForm>,
}

impl Page {
    /// An empty 200 page.
    pub(crate) fn new(title: &'static str) -> Self {
        Self {
            status: StatusCode::OK,
            title,
            alert: None,
            lines: Vec::new(),
            items: Vec::new(),
            details: Vec::new(),
            form: None,
            links: Vec::new(),
            svg: None,
            passkey: None,
            targets: FormTargets::default(),
            frames: Vec::new(),
            refresh: None,
            refresh_secs: 3,
            sso: None,
            social: None,
        }
    }

    /// Moves on to `next` at once (a `meta` refresh, so no form submission leads there and
    /// the page's `form-action` need not name it), with a link for browsers that do not.
    pub(crate) fn continue_to(mut self, next: String, label: &'static str) -> Self {
        self.refresh = Some(next.clone());
        self.refresh_secs = 0;
        self.link(None, label, next)
    }

    /// Adds the social providers' buttons.
    pub(crate) fn social(mut self, form: SocialForm) -> Self {
        self.social = Some(form);
        self
    }

    /// Adds the single sign-on form.
    pub(crate) fn sso(mut self, form: SsoForm) -> Self {
        self.sso = Some(form);
        self
    }

    /// Front-channel logout (OpenID Connect Front-Channel Logout 1.0 §3): loads each of `uris`
    /// in a hidden frame (the policy's `frame-src` opens to their origins, nothing else), then
    /// moves on to `next` after a few seconds, or at once by the link. No script: a `meta`
    /// refresh works with JavaScript off and under the pages' policy.
    pub(crate) fn frontchannel(
        mut self,
        uris: Vec<String>,
        next: String,
        label: &'static str,
    ) -> Self {
        for uri in &uris {
            if let Some(source) = FormTargets::source_of(uri)
                && !self.targets.frames.contains(&source)
            {
                self.targets.frames.push(source);
            }
        }
        self.frames = uris;
        self.refresh = Some(next.clone());
        self.link(None, label, next)
    }

    /// Adds a passkey form (and opens the policy to its glue).
    pub(crate) fn passkey(mut self, form: PasskeyForm) -> Self {
        self.passkey = Some(form);
        self.targets.webauthn = true;
        self
    }

    /// Adds an SVG image generated by the service itself (see [`Page::svg`]).
    pub(crate) fn svg(mut self, svg: String) -> Self {
        self.svg = Some(svg);
        self
    }

    /// Sets the status.
    pub(crate) fn status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// Sets the form-level alert.
    pub(crate) fn alert(mut self, text: impl Into<String>) -> Self {
        self.alert = Some(text.into());
        self
    }

    /// Adds a paragraph of fixed text.
    pub(crate) fn text(self, text: &'static str) -> Self {
        self.line(text, None, "")
    }

    /// Adds a paragraph around a reflected value.
    pub(crate) fn line(
        mut self,
        lead: &'static str,
        value: Option<String>,
        tail: &'static str,
    ) -> Self {
        self.lines.push(Line { lead, value, tail });
        self
    }

    /// Adds a list entry.
    pub(crate) fn item(
        mut self,
        text: impl Into<std::borrow::Cow<'static, str>>,
        code: Option<String>,
    ) -> Self {
        self.items.push(Item {
            text: text.into(),
            code,
        });
        self
    }

    /// Adds a labelled value.
    pub(crate) fn detail(mut self, label: &'static str, value: impl Into<String>) -> Self {
        self.details.push((label, value.into()));
        self
    }

    /// Sets the form.
    pub(crate) fn form(mut self, form: Form) -> Self {
        self.form = Some(form);
        self
    }

    /// Adds a link.
    pub(crate) fn link(
        mut self,
        lead: Option<&'static str>,
        label: &'static str,
        href: String,
    ) -> Self {
        self.links.push(Link { lead, label, href });
        self
    }

    /// Lets the form lead to where `uri` points (its origin), when it is usable.
    pub(crate) fn form_target(mut self, uri: &str) -> Self {
        if let Some(source) = FormTargets::source_of(uri) {
            self.targets.sources.push(source);
        }
        self
    }

    /// Renders the page in `chrome` as an HTML response.
    pub(crate) fn render(mut self, chrome: &Chrome) -> Response {
        let has_alert = self.alert.is_some();
        if let Some(form) = &mut self.form {
            form.finish(has_alert);
            self.targets.captcha = form.captcha.as_ref().map(|c| c.provider);
        }
        let view = PageView {
            chrome,
            title: self.title,
            page: &self,
        };
        let mut response = html(self.status, view.render());
        if !self.targets.is_empty() {
            response.extensions_mut().insert(self.targets.clone());
        }
        response
    }
}

#[derive(Template)]
#[template(path = "hosted/page.html")]
struct PageView<'a> {
    chrome: &'a Chrome,
    title: &'a str,
    page: &'a Page,
}

/// An HTML response, or a bare 500 when a template failed to render (only a formatting
/// error can make it fail, and the page must still never be partial).
pub(crate) fn html(status: StatusCode, rendered: askama::Result<String>) -> Response {
    match rendered {
        Ok(body) => {
            let mut response = (status, body).into_response();
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            response
        }
        Err(error) => {
            tracing::error!(error = %error, "a hosted page failed to render");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::security::{RECAPTCHA_JS, WEBAUTHN_JS};
    use super::*;
    use crate::hosted::strings::EN;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use http::HeaderMap;
    use http::header::{
        CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
        X_FRAME_OPTIONS,
    };
    use http_body_util::BodyExt;
    use sha2::{Digest, Sha256};
    use svc_authn::CaptchaProvider;

    async fn body(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    const XSS: &str = "\"><img src=x onerror=alert(1)><script>alert(2)</script>";

    #[tokio::test]
    async fn every_reflected_value_is_escaped() {
        let chrome = Chrome::new(&EN, XSS);
        let page = Page::new(EN.sign_in_title)
            .alert(XSS)
            .line(EN.sign_in_to_continue, Some(XSS.into()), "")
            .item(EN.scope_unknown, Some(XSS.into()))
            .detail(EN.error_code_label, XSS)
            .link(
                None,
                EN.sign_up_link,
                format!("/auth/sign-up?interaction={XSS}"),
            )
            .form(
                Form::new("/auth/sign-in", XSS)
                    .hidden("interaction", Some(XSS))
                    .field(Field::email(&EN, XSS)),
            );
        let html = body(page.render(&chrome)).await;
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("\"><"), "{html}");
        assert!(html.contains("&#60;script&#62;"), "{html}");
    }

    #[tokio::test]
    async fn forms_are_accessible() {
        let chrome = Chrome::new(&EN, "Acme");
        let page = Page::new(EN.sign_in_title)
            .status(StatusCode::UNAUTHORIZED)
            .alert(EN.bad_credentials)
            .form(
                Form::new("/auth/sign-in", "tok")
                    .field(Field::email(&EN, "ada@example.com").invalid())
                    .field(Field::current_password(&EN).invalid())
                    .button(Button::primary(EN.sign_in_submit)),
            );
        let response = page.render(&chrome);
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()[CONTENT_TYPE], "text/html; charset=utf-8");
        let html = body(response).await;
        assert!(html.contains("<html lang=\"en\">"));
        assert!(html.contains("<title>Sign in – Acme</title>"));
        assert!(html.contains("<label for=\"email\">"));
        assert!(html.contains("<label for=\"password\">"));
        assert!(html.contains("autocomplete=\"username\""));
        assert!(html.contains("autocomplete=\"current-password\""));
        assert!(html.contains("role=\"alert\">The email or password is incorrect<"));
        assert!(html.contains("aria-invalid=\"true\" aria-describedby=\"form-error\""));
        assert_eq!(html.matches("autofocus").count(), 1);
        let email_at = html.find("id=\"email\"").unwrap();
        assert!(html[email_at..].find("autofocus") < html[email_at..].find("id=\"password\""));
        assert!(html.contains("name=\"csrf\" value=\"tok\""));
    }

    #[tokio::test]
    async fn field_errors_and_hints_are_described() {
        let chrome = Chrome::new(&EN, "Acme");
        let page = Page::new(EN.sign_up_title).form(
            Form::new("/auth/sign-up", "tok")
                .field(Field::email(&EN, ""))
                .field(Field::new_password(&EN).error(EN.weak_password)),
        );
        let html = body(page.render(&chrome)).await;
        assert!(html.contains("autocomplete=\"new-password\""));
        assert!(html.contains("aria-describedby=\"password-error password-hint\""));
        assert!(html.contains("<p id=\"password-error\" class=\"error\" role=\"alert\">"));
        let password_at = html.find("id=\"password\"").unwrap();
        assert!(
            html[password_at..].contains("autofocus"),
            "the invalid field gets focus"
        );
    }

    #[test]
    fn the_policy_allows_exactly_the_inline_stylesheet() {
        let mut headers = HeaderMap::new();
        secure_headers(&mut headers, None);
        let csp = headers[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        for directive in [
            "default-src 'none'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ] {
            assert!(csp.contains(directive), "{csp}");
        }
        let hash = STANDARD.encode(Sha256::digest(CSS.as_bytes()));
        assert!(csp.contains(&format!("style-src 'sha256-{hash}'")), "{csp}");
        assert!(!csp.contains("unsafe-inline"));
        assert_eq!(headers[X_FRAME_OPTIONS], "DENY");
        assert_eq!(headers[REFERRER_POLICY], "no-referrer");
        assert_eq!(headers[CACHE_CONTROL], "no-store");
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
    }

    #[test]
    fn form_targets_widen_form_action_by_origin_or_private_scheme_only() {
        assert_eq!(
            FormTargets::source_of("https://app.example.com:8443/cb?x=1#f").as_deref(),
            Some("https://app.example.com:8443")
        );
        assert_eq!(
            FormTargets::source_of("com.example.app:/oauth").as_deref(),
            Some("com.example.app:")
        );
        for bad in [
            "javascript:alert(1)",
            "data:text/html,x",
            "not a url",
            "/relative",
        ] {
            assert_eq!(FormTargets::source_of(bad), None, "{bad}");
        }
        let mut targets = FormTargets::default();
        targets.sources.push("https://app.example.com".into());
        let mut headers = HeaderMap::new();
        secure_headers(&mut headers, Some(&targets));
        let csp = headers[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            csp.contains("form-action 'self' https://app.example.com https:;"),
            "{csp}"
        );
    }

    fn captcha_page(provider: CaptchaProvider, error: Option<&'static str>) -> Page {
        let widget = CaptchaWidget::new(&EN, provider, XSS, "sign_up").error(error);
        Page::new(EN.sign_up_title).form(
            Form::new("/auth/sign-up", "tok")
                .field(Field::email(&EN, ""))
                .captcha(Some(widget))
                .button(Button::primary(EN.sign_up_submit)),
        )
    }

    fn policy_of(response: &mut Response) -> String {
        let targets = response.extensions_mut().remove::<FormTargets>();
        let mut headers = HeaderMap::new();
        secure_headers(&mut headers, targets.as_ref());
        headers[CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[tokio::test]
    async fn only_pages_with_a_captcha_open_the_policy_and_only_to_their_provider() {
        let mut plain = Page::new(EN.sign_in_title).render(&Chrome::new(&EN, "Acme"));
        let policy = policy_of(&mut plain);
        for directive in ["script-src", "frame-src", "connect-src"] {
            assert!(!policy.contains(directive), "{policy}");
        }
        for (provider, script, frame) in [
            (
                CaptchaProvider::Turnstile,
                "script-src https://challenges.cloudflare.com;",
                "frame-src https://challenges.cloudflare.com;",
            ),
            (
                CaptchaProvider::Hcaptcha,
                "script-src https://hcaptcha.com https://*.hcaptcha.com;",
                "frame-src https://hcaptcha.com https://*.hcaptcha.com;",
            ),
            (
                CaptchaProvider::RecaptchaV3,
                "https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/;",
                "frame-src https://www.google.com/recaptcha/ https://recaptcha.google.com/recaptcha/;",
            ),
        ] {
            let mut response = captcha_page(provider, None).render(&Chrome::new(&EN, "Acme"));
            let policy = policy_of(&mut response);
            assert!(policy.contains(script), "{provider:?}: {policy}");
            assert!(policy.contains(frame), "{provider:?}: {policy}");
            assert!(policy.contains("connect-src https://"), "{policy}");
            assert!(policy.contains("default-src 'none'"), "{policy}");
            assert!(!policy.contains("unsafe-inline"), "{policy}");
        }
    }

    #[tokio::test]
    async fn a_passkey_form_allows_its_glue_by_hash_alone_and_hides_itself_without_script() {
        let page = Page::new(EN.sign_in_title).passkey(PasskeyForm::sign_in(&EN, "tok", Some(XSS)));
        let mut response = page.render(&Chrome::new(&EN, "Acme"));
        let policy = policy_of(&mut response);
        let html = body(response).await;
        let hash = STANDARD.encode(Sha256::digest(WEBAUTHN_JS.as_bytes()));
        assert!(
            policy.contains(&format!("script-src 'sha256-{hash}'")),
            "{policy}"
        );
        assert!(policy.contains("connect-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert!(html.contains(&format!("<script>{WEBAUTHN_JS}</script>")));
        assert!(
            html.contains("data-webauthn=\"get\" data-options=\"/auth/passkey/options\" hidden>"),
            "{html}"
        );
        assert!(html.contains("<noscript>"), "{html}");
        assert!(!html.contains("<img"), "the interaction is escaped: {html}");
        // With a CAPTCHA too, both scripts are allowed and both origins reachable.
        let mut both = captcha_page(CaptchaProvider::Turnstile, None)
            .passkey(PasskeyForm::sign_in(&EN, "tok", None))
            .render(&Chrome::new(&EN, "Acme"));
        let policy = policy_of(&mut both);
        assert!(
            policy.contains(&format!(
                "script-src 'sha256-{hash}' https://challenges.cloudflare.com;"
            )),
            "{policy}"
        );
        assert!(
            policy.contains("connect-src 'self' https://challenges.cloudflare.com"),
            "{policy}"
        );
    }

    #[tokio::test]
    async fn the_recaptcha_glue_is_allowed_by_its_hash_and_nothing_else_inline() {
        let mut response =
            captcha_page(CaptchaProvider::RecaptchaV3, None).render(&Chrome::new(&EN, "Acme"));
        let policy = policy_of(&mut response);
        let html = body(response).await;
        assert!(html.contains(&format!("<script>{RECAPTCHA_JS}</script>")));
        let hash = STANDARD.encode(Sha256::digest(RECAPTCHA_JS.as_bytes()));
        assert!(
            policy.contains(&format!("script-src 'sha256-{hash}'")),
            "{policy}"
        );
        let turnstile =
            body(captcha_page(CaptchaProvider::Turnstile, None).render(&Chrome::new(&EN, "Acme")))
                .await;
        assert!(
            !turnstile.contains("<script>"),
            "no inline script: {turnstile}"
        );
    }

    #[tokio::test]
    async fn captcha_widgets_escape_the_site_key_and_describe_their_error() {
        let html = body(
            captcha_page(CaptchaProvider::Turnstile, Some(EN.captcha_required))
                .render(&Chrome::new(&EN, "Acme")),
        )
        .await;
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("class=\"cf-turnstile\" data-sitekey=\"&#34;&#62;&#60;img"));
        assert!(html.contains(
            "role=\"group\" aria-labelledby=\"captcha-label\" aria-describedby=\"captcha-error\""
        ));
        assert!(html.contains(&format!(
            "<p id=\"captcha-error\" class=\"error\" role=\"alert\">{}</p>",
            EN.captcha_required
        )));
        assert!(html.contains("<noscript>"));
        let recaptcha = body(
            captcha_page(CaptchaProvider::RecaptchaV3, None).render(&Chrome::new(&EN, "Acme")),
        )
        .await;
        assert!(
            recaptcha.contains("api.js?render=%22%3E%3Cimg+src%3Dx"),
            "the site key is URL-encoded in the script URL: {recaptcha}"
        );
        assert!(recaptcha.contains("name=\"g-recaptcha-response\" value=\"\""));
    }

    #[tokio::test]
    async fn the_rendered_stylesheet_is_byte_identical_to_the_hashed_one() {
        let html = body(Page::new(EN.sign_in_title).render(&Chrome::new(&EN, "Acme"))).await;
        assert!(html.contains(&format!("<style>{CSS}</style>")));
    }
}

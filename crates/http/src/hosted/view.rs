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

use super::strings::Strings;
use askama::Template;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, PRAGMA, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use sha2::{Digest, Sha256};
use std::sync::LazyLock;
use svc_authn::CaptchaProvider;

/// The stylesheet, inlined in every page and allowed by its hash in the CSP (no external
/// assets, no extra request, no `'unsafe-inline'`).
const CSS: &str = "\
*,*::before,*::after{box-sizing:border-box}\
body{margin:0;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1b1b1f;background:#f4f4f6}\
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}\
main:has(table){max-width:56rem}\
@media (max-width:32rem){main{margin:0;border-radius:0;box-shadow:none;min-height:100vh}}\
h1{font-size:1.5rem;margin:.25rem 0 1rem}\
.tenant{margin:0;color:#4a4a55;font-weight:600}\
.field{margin:0 0 1rem}\
label{display:block;font-weight:600;margin-bottom:.25rem}\
.label{font-weight:600;margin:0 0 .25rem}\
input{width:100%;padding:.6rem;font:inherit;border:1px solid #767680;border-radius:.25rem}\
input[type=checkbox]{width:auto;margin-right:.5rem}\
input[aria-invalid=true]{border-color:#b3261e;border-width:2px}\
.hint{margin:.25rem 0 0;color:#4a4a55;font-size:.9rem}\
.error{margin:.25rem 0 0;color:#b3261e;font-weight:600}\
.alert{padding:.75rem;margin:0 0 1rem;border-left:4px solid #b3261e;background:#fdecea;color:#5f1410}\
.notice{padding:.75rem;margin:0 0 1rem;border-left:4px solid #1a7f37;background:#e9f7ee}\
.actions{display:flex;gap:.5rem;flex-wrap:wrap}\
button{padding:.6rem 1.2rem;font:inherit;font-weight:600;border-radius:.25rem;border:2px solid #1a5fb4;cursor:pointer}\
button.primary{background:#1a5fb4;color:#fff}\
button.secondary{background:#fff;color:#1a5fb4}\
a{color:#1a5fb4}\
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}\
.table{overflow-x:auto}\
table{border-collapse:collapse;width:100%}\
th,td{text-align:left;padding:.5rem;border-bottom:1px solid #d0d0d7;vertical-align:top}\
td form{margin:0}\
.badge{display:inline-block;padding:0 .4rem;border-radius:.25rem;background:#e9f7ee;color:#1a7f37;font-size:.85rem}\
dt{font-weight:600}dd{margin:0 0 .5rem}\
code{overflow-wrap:anywhere}\
figure{margin:0 0 1rem}.qr svg{display:block;width:12rem;height:12rem;margin:0 auto}\
";

/// SHA-256 of the stylesheet, as a CSP hash source.
static STYLE_HASH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "'sha256-{}'",
        STANDARD.encode(Sha256::digest(CSS.as_bytes()))
    )
});

/// The reCAPTCHA v3 glue: on submit, asks `grecaptcha` for a token for the widget's site key
/// and action, puts it in `g-recaptcha-response` and submits. A constant, allowed by its hash.
const RECAPTCHA_JS: &str = "(function(){var w=document.getElementById(\"captcha\");if(!w)return;\
var f=w.closest(\"form\"),k=w.getAttribute(\"data-sitekey\"),a=w.getAttribute(\"data-action\"),d=false;\
f.addEventListener(\"submit\",function(e){if(d)return;e.preventDefault();grecaptcha.ready(function(){\
grecaptcha.execute(k,{action:a}).then(function(t){f.elements[\"g-recaptcha-response\"].value=t;d=true;\
f.submit();});});});})();";

/// SHA-256 of the reCAPTCHA glue, as a CSP hash source.
static RECAPTCHA_JS_HASH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "'sha256-{}'",
        STANDARD.encode(Sha256::digest(RECAPTCHA_JS.as_bytes()))
    )
});

/// The WebAuthn glue of a passkey form (`data-webauthn="create"|"get"`): shows the form
/// (hidden without JavaScript or WebAuthn), fetches the ceremony's options from
/// `data-options` (a same-origin POST carrying the CSRF token), calls `navigator.credentials`,
/// puts the answer (base64url fields, as WebAuthn L3 `toJSON` writes them) in the `credential`
/// field and submits. A sign-in form also offers passkeys in the address field's autofill
/// (conditional mediation) where the browser can; a click then reuses that request's options
/// (one ceremony per page, so a late answer to a second options request can never replace the
/// cookie the click's answer is checked against). A constant, allowed by its hash.
pub(crate) const WEBAUTHN_JS: &str = "(function(){\"use strict\";\
function e(b){var s=\"\",a=new Uint8Array(b);for(var i=0;i<a.length;i++)s+=String.fromCharCode(a[i]);\
return btoa(s).replace(/\\+/g,\"-\").replace(/\\//g,\"_\").replace(/=+$/,\"\");}\
function d(s){s=s.replace(/-/g,\"+\").replace(/_/g,\"/\");while(s.length%4)s+=\"=\";var r=atob(s),a=new Uint8Array(r.length);\
for(var i=0;i<r.length;i++)a[i]=r.charCodeAt(i);return a.buffer;}\
function ids(l){(l||[]).forEach(function(c){c.id=d(c.id);});}\
function answer(c){var r=c.response,o={id:c.id,rawId:e(c.rawId),type:c.type,\
extensions:c.getClientExtensionResults?c.getClientExtensionResults():{},response:{clientDataJSON:e(r.clientDataJSON)}};\
if(r.attestationObject){o.response.attestationObject=e(r.attestationObject);\
if(r.getTransports)o.response.transports=r.getTransports();}else{o.response.authenticatorData=e(r.authenticatorData);\
o.response.signature=e(r.signature);o.response.userHandle=r.userHandle?e(r.userHandle):null;}return JSON.stringify(o);}\
function fail(){var a=document.getElementById(\"webauthn-error\");if(a){a.textContent=a.getAttribute(\"data-text\");a.hidden=false;}}\
if(!window.PublicKeyCredential||!navigator.credentials)return;\
document.querySelectorAll(\"form[data-webauthn]\").forEach(function(f){\
var mode=f.getAttribute(\"data-webauthn\"),quiet=null,shared=null,clicked=false;f.hidden=false;\
function options(){var b=new URLSearchParams();b.set(\"csrf\",f.elements.csrf.value);\
return fetch(f.getAttribute(\"data-options\"),{method:\"POST\",body:b,credentials:\"same-origin\"})\
.then(function(r){if(!r.ok)throw new Error(\"options\");return r.text();});}\
function ask(t,m,signal){var p=JSON.parse(t).publicKey;p.challenge=d(p.challenge);\
if(mode===\"create\"){p.user.id=d(p.user.id);ids(p.excludeCredentials);return navigator.credentials.create({publicKey:p});}\
ids(p.allowCredentials);var q={publicKey:p};if(m){q.mediation=m;q.signal=signal;}return navigator.credentials.get(q);}\
function send(c){if(!c)throw new Error(\"none\");f.elements.credential.value=answer(c);f.submit();}\
if(mode===\"get\"&&PublicKeyCredential.isConditionalMediationAvailable){\
PublicKeyCredential.isConditionalMediationAvailable().then(function(ok){if(!ok||clicked)return;quiet=new AbortController();\
var s=quiet.signal;shared=options();return shared.then(function(t){return ask(t,\"conditional\",s);}).then(send);}).catch(function(){});}\
f.addEventListener(\"submit\",function(ev){ev.preventDefault();clicked=true;if(quiet){quiet.abort();quiet=null;}\
var o=shared||options();shared=null;o.then(function(t){return ask(t,null,null);}).then(send).catch(fail);});});})();";

/// SHA-256 of the WebAuthn glue, as a CSP hash source.
static WEBAUTHN_JS_HASH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "'sha256-{}'",
        STANDARD.encode(Sha256::digest(WEBAUTHN_JS.as_bytes()))
    )
});

/// The origins a provider's widget loads from, per CSP directive: `(script-src, frame-src,
/// connect-src, extra style-src)`, as each provider documents them.
fn captcha_sources(
    provider: CaptchaProvider,
) -> (String, &'static str, &'static str, &'static str) {
    match provider {
        CaptchaProvider::Turnstile => (
            "https://challenges.cloudflare.com".to_owned(),
            "https://challenges.cloudflare.com",
            "https://challenges.cloudflare.com",
            "",
        ),
        // hCaptcha styles its checkbox from its own origin too.
        CaptchaProvider::Hcaptcha => (
            "https://hcaptcha.com https://*.hcaptcha.com".to_owned(),
            "https://hcaptcha.com https://*.hcaptcha.com",
            "https://hcaptcha.com https://*.hcaptcha.com",
            " https://hcaptcha.com https://*.hcaptcha.com",
        ),
        CaptchaProvider::RecaptchaV3 => (
            format!(
                "{} https://www.google.com/recaptcha/ https://www.gstatic.com/recaptcha/",
                *RECAPTCHA_JS_HASH
            ),
            "https://www.google.com/recaptcha/ https://recaptcha.google.com/recaptcha/",
            "https://www.google.com/recaptcha/",
            "",
        ),
    }
}

/// What a page's policy allows beyond our own origin: where its form may lead (the origin of
/// an application's redirect target: browsers that apply `form-action` to the redirects
/// following a submission, Chromium and Safari, would otherwise refuse the final 303 to the
/// application), and the CAPTCHA provider whose widget it renders, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct FormTargets {
    sources: Vec<String>,
    captcha: Option<CaptchaProvider>,
    /// The page runs the WebAuthn glue (its hash in `script-src`, `connect-src 'self'` for
    /// the options it fetches).
    webauthn: bool,
    /// Origins the page frames (front-channel logout), for `frame-src`.
    frames: Vec<String>,
}

impl FormTargets {
    fn is_empty(&self) -> bool {
        self.sources.is_empty()
            && self.captcha.is_none()
            && !self.webauthn
            && self.frames.is_empty()
    }

    /// Targets of a page that runs the WebAuthn glue and nothing else.
    pub(crate) fn webauthn() -> Self {
        Self {
            webauthn: true,
            ..Self::default()
        }
    }

    /// The CSP source for `uri`: its origin for http(s), its scheme for a native app's private
    /// scheme (RFC 8252 §7.1); `None` for anything unusable.
    pub(crate) fn source_of(uri: &str) -> Option<String> {
        let url = url::Url::parse(uri).ok()?;
        let source = match url.scheme() {
            "http" | "https" => url.origin().ascii_serialization(),
            "javascript" | "data" | "vbscript" | "file" | "blob" => return None,
            scheme => format!("{scheme}:"),
        };
        // A source is one token: nothing that could end it or start another directive.
        source
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b';' | b',' | b'\'' | b'"'))
            .then_some(source)
    }
}

/// `Content-Security-Policy` of a hosted response: nothing may load but the inline
/// stylesheet, forms post only to us (and where `targets` say they lead), no site may frame
/// the pages (RFC 9700 §4.16), and no `<base>` may redirect relative links. A page with a
/// CAPTCHA widget also lets its provider's origin serve scripts, frames and requests.
fn csp(targets: Option<&FormTargets>) -> HeaderValue {
    let mut form_action = "'self'".to_owned();
    for source in targets.map(|t| t.sources.as_slice()).unwrap_or_default() {
        form_action.push(' ');
        form_action.push_str(source);
    }
    let captcha = targets.and_then(|t| t.captcha).map(captcha_sources);
    let style_extra = captcha.as_ref().map(|c| c.3).unwrap_or_default();
    let mut policy = format!(
        "default-src 'none'; style-src {}{style_extra}; frame-ancestors 'none'; \
         form-action {form_action}; base-uri 'none'",
        *STYLE_HASH
    );
    let webauthn = targets.is_some_and(|t| t.webauthn);
    let mut scripts = Vec::new();
    let mut connects = Vec::new();
    if webauthn {
        scripts.push(WEBAUTHN_JS_HASH.clone());
        connects.push("'self'".to_owned());
    }
    if let Some((script, _, connect, _)) = &captcha {
        scripts.push(script.clone());
        connects.push((*connect).to_owned());
    }
    if !scripts.is_empty() {
        policy.push_str(&format!("; script-src {}", scripts.join(" ")));
    }
    let mut frames: Vec<&str> = targets
        .map(|t| t.frames.iter().map(String::as_str).collect())
        .unwrap_or_default();
    if let Some((_, frame, _, _)) = &captcha {
        frames.push(frame);
    }
    if !frames.is_empty() {
        policy.push_str(&format!("; frame-src {}", frames.join(" ")));
    }
    if !connects.is_empty() {
        policy.push_str(&format!("; connect-src {}", connects.join(" ")));
    }
    HeaderValue::from_str(&policy).unwrap_or_else(|_| {
        HeaderValue::from_static(
            "default-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        )
    })
}

/// Adds the hosted pages' security headers (RFC 9700 §4.2.4, §4.16): no framing, no referrer,
/// no sniffing, never cached. `targets` widens `form-action` for the page that carries them.
pub(crate) fn secure_headers(headers: &mut HeaderMap, targets: Option<&FormTargets>) {
    headers.insert(CONTENT_SECURITY_POLICY, csp(targets));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
}

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

/// A labelled input.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) label: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) autocomplete: &'static str,
    pub(crate) value: String,
    pub(crate) required: bool,
    pub(crate) max_length: usize,
    pub(crate) hint: Option<&'static str>,
    pub(crate) error: Option<&'static str>,
    pub(crate) invalid: bool,
    /// Ids of the hint, own error and form-level alert, space-separated (set by [`Form`]).
    pub(crate) described_by: String,
    pub(crate) autofocus: bool,
    /// Points at the form-level alert (a failure that concerns this field without saying
    /// which, like a failed sign-in).
    alert_related: bool,
}

impl Field {
    fn new(name: &'static str, label: &'static str, kind: &'static str, ac: &'static str) -> Self {
        Self {
            name,
            label,
            kind,
            autocomplete: ac,
            value: String::new(),
            required: true,
            max_length: 0,
            hint: None,
            error: None,
            invalid: false,
            described_by: String::new(),
            autofocus: false,
            alert_related: false,
        }
    }

    /// The sign-in address (`autocomplete="username"`, so password managers pair it).
    pub(crate) fn email(s: &Strings, value: &str) -> Self {
        let mut field = Self::new("email", s.email_label, "email", "username");
        field.value = value.to_owned();
        field.max_length = 254;
        field
    }

    /// The current password; never pre-filled.
    pub(crate) fn current_password(s: &Strings) -> Self {
        Self::new("password", s.password_label, "password", "current-password")
    }

    /// A password being chosen; never pre-filled.
    pub(crate) fn new_password(s: &Strings) -> Self {
        let mut field = Self::new("password", s.new_password_label, "password", "new-password");
        field.hint = Some(s.new_password_hint);
        field
    }

    /// A one-time code: six digits from an authenticator app, or a backup code (never
    /// pre-filled; `autocomplete="one-time-code"` lets devices offer it).
    pub(crate) fn one_time_code(s: &Strings) -> Self {
        let mut field = Self::new("code", s.code_label, "text", "one-time-code");
        field.hint = Some(s.code_hint);
        field.max_length = 16;
        field
    }

    /// A device's user code (RFC 8628 §3.3), pre-filled from `verification_uri_complete`.
    pub(crate) fn user_code(s: &Strings, value: &str) -> Self {
        let mut field = Self::new("user_code", s.device.code_label, "text", "off");
        field.hint = Some(s.device.code_hint);
        field.value = value.to_owned();
        field.max_length = 32;
        field
    }

    /// An optional checkbox sending `name=yes` when ticked.
    pub(crate) fn checkbox(name: &'static str, label: &'static str) -> Self {
        let mut field = Self::new(name, label, "checkbox", "off");
        field.value = "yes".to_owned();
        field.required = false;
        field
    }

    /// The person's full name.
    pub(crate) fn name(s: &Strings, value: &str) -> Self {
        let mut field = Self::new("name", s.name_label, "text", "name");
        field.value = value.to_owned();
        field.max_length = 200;
        field
    }

    /// Marks the field invalid with its own message.
    pub(crate) fn error(mut self, message: &'static str) -> Self {
        self.error = Some(message);
        self.invalid = true;
        self
    }

    /// Marks the field invalid, explained by the form-level alert.
    pub(crate) fn invalid(mut self) -> Self {
        self.invalid = true;
        self.alert_related = true;
        self
    }
}

/// A submit button; `name`/`value` tell several buttons apart.
#[derive(Debug, Clone)]
pub(crate) struct Button {
    pub(crate) name: Option<&'static str>,
    pub(crate) value: std::borrow::Cow<'static, str>,
    pub(crate) label: std::borrow::Cow<'static, str>,
    pub(crate) primary: bool,
}

impl Button {
    /// The main action.
    pub(crate) fn primary(label: &'static str) -> Self {
        Self {
            name: None,
            value: "".into(),
            label: label.into(),
            primary: true,
        }
    }

    /// A named choice (`decision=allow`).
    pub(crate) fn choice(
        name: &'static str,
        value: &'static str,
        label: &'static str,
        primary: bool,
    ) -> Self {
        Self {
            name: Some(name),
            value: value.into(),
            label: label.into(),
            primary,
        }
    }

    /// A named choice whose value and label are data (an organization's id and name): the
    /// template escapes both like every reflected value.
    pub(crate) fn data_choice(name: &'static str, value: String, label: String) -> Self {
        Self {
            name: Some(name),
            value: value.into(),
            label: label.into(),
            primary: false,
        }
    }
}

/// A CAPTCHA widget in a form: the provider's own element (Turnstile's `cf-turnstile`,
/// hCaptcha's `h-captcha`, or reCAPTCHA v3's invisible token field) inside a labelled group,
/// its error (`role="alert"`, referenced by `aria-describedby`), a note for browsers without
/// JavaScript, and the provider's script after the form.
#[derive(Debug, Clone)]
pub(crate) struct CaptchaWidget {
    pub(crate) provider: CaptchaProvider,
    pub(crate) site_key: String,
    /// The action name the provider reports back (`sign_up`, …).
    pub(crate) action: &'static str,
    pub(crate) label: &'static str,
    /// What an invisible check (reCAPTCHA v3) shows instead of a challenge.
    pub(crate) invisible_hint: &'static str,
    pub(crate) noscript: &'static str,
    pub(crate) error: Option<&'static str>,
}

impl CaptchaWidget {
    /// The widget of `provider` for `action`.
    pub(crate) fn new(
        s: &Strings,
        provider: CaptchaProvider,
        site_key: &str,
        action: &'static str,
    ) -> Self {
        Self {
            provider,
            site_key: site_key.to_owned(),
            action,
            label: s.captcha_label,
            invisible_hint: s.captcha_invisible_hint,
            noscript: s.captcha_needs_javascript,
            error: None,
        }
    }

    /// Shows `message` under the widget.
    pub(crate) fn error(mut self, message: Option<&'static str>) -> Self {
        self.error = message;
        self
    }

    /// Whether the person sees a challenge (reCAPTCHA v3 is invisible).
    pub(crate) fn visible(&self) -> bool {
        self.provider != CaptchaProvider::RecaptchaV3
    }

    /// The class the provider's script looks for.
    pub(crate) fn class(&self) -> &'static str {
        match self.provider {
            CaptchaProvider::Turnstile => "cf-turnstile",
            CaptchaProvider::Hcaptcha => "h-captcha",
            CaptchaProvider::RecaptchaV3 => "g-recaptcha-v3",
        }
    }

    /// The provider's script.
    pub(crate) fn script_src(&self) -> String {
        match self.provider {
            CaptchaProvider::Turnstile => {
                "https://challenges.cloudflare.com/turnstile/v0/api.js".to_owned()
            }
            CaptchaProvider::Hcaptcha => "https://js.hcaptcha.com/1/api.js".to_owned(),
            CaptchaProvider::RecaptchaV3 => format!(
                "https://www.google.com/recaptcha/api.js?render={}",
                url::form_urlencoded::byte_serialize(self.site_key.as_bytes()).collect::<String>()
            ),
        }
    }

    /// The inline glue reCAPTCHA v3 needs (allowed by its hash), empty for the others.
    pub(crate) fn glue(&self) -> &'static str {
        if self.visible() { "" } else { RECAPTCHA_JS }
    }
}

/// A passkey form, driven by the WebAuthn glue ([`WEBAUTHN_JS`]): hidden until the script
/// shows it (it needs JavaScript and WebAuthn; a `<noscript>` note says so), it fetches the
/// ceremony's options from `options`, then posts the browser's answer in `credential` to
/// `action`. `create` forms carry a name field for the new passkey.
#[derive(Debug, Clone)]
pub(crate) struct PasskeyForm {
    pub(crate) action: &'static str,
    pub(crate) options: &'static str,
    /// `create` (register a passkey) or `get` (sign in with one).
    pub(crate) mode: &'static str,
    pub(crate) hidden: Vec<(String, String)>,
    /// The new passkey's name field (`create` only).
    pub(crate) name: Option<Field>,
    pub(crate) button: &'static str,
    /// Shown when the browser refused, was cancelled or timed out.
    pub(crate) failed: &'static str,
    pub(crate) noscript: &'static str,
}

impl PasskeyForm {
    /// The sign-in form: the pending `interaction` travels with it.
    pub(crate) fn sign_in(s: &Strings, csrf: &str, interaction: Option<&str>) -> Self {
        let mut hidden = vec![("csrf".to_owned(), csrf.to_owned())];
        if let Some(interaction) = interaction {
            hidden.push(("interaction".to_owned(), interaction.to_owned()));
        }
        Self {
            action: "/auth/passkey",
            options: "/auth/passkey/options",
            mode: "get",
            hidden,
            name: None,
            button: s.passkey_sign_in_submit,
            failed: s.passkey_failed,
            noscript: s.passkey_needs_javascript,
        }
    }

    /// The two-step page's form that registers a security key (a second factor).
    pub(crate) fn security_key_register(
        s: &Strings,
        csrf: &str,
        interaction: Option<&str>,
    ) -> Self {
        let mut form = Self::register(s, csrf);
        form.action = "/auth/account/two-factor";
        form.options = "/auth/account/two-factor/key-options";
        form.hidden = vec![
            ("csrf".to_owned(), csrf.to_owned()),
            ("action".to_owned(), "add_key".to_owned()),
        ];
        if let Some(interaction) = interaction {
            form.hidden
                .push(("interaction".to_owned(), interaction.to_owned()));
        }
        if let Some(name) = form.name.as_mut() {
            name.label = s.security_key_name_label;
            name.hint = Some(s.security_key_name_hint);
        }
        form.button = s.security_key_add_submit;
        form
    }

    /// The second step's form that proves a security key.
    pub(crate) fn security_key_check(s: &Strings, csrf: &str, interaction: Option<&str>) -> Self {
        let mut form = Self::sign_in(s, csrf, interaction);
        form.action = "/auth/second-factor";
        form.options = "/auth/second-factor/key-options";
        form.button = s.security_key_use_submit;
        form
    }

    /// The account page's form that registers a passkey.
    pub(crate) fn register(s: &Strings, csrf: &str) -> Self {
        let mut name = Field::new("name", s.passkey_name_label, "text", "off");
        name.max_length = svc_domain::MAX_PASSKEY_NAME_CHARS;
        name.hint = Some(s.passkey_name_hint);
        Self {
            action: "/auth/account/passkeys",
            options: "/auth/account/passkeys/options",
            mode: "create",
            hidden: vec![
                ("csrf".to_owned(), csrf.to_owned()),
                ("action".to_owned(), "register".to_owned()),
            ],
            name: Some(name),
            button: s.passkey_add_submit,
            failed: s.passkey_failed,
            noscript: s.passkey_needs_javascript,
        }
    }

    /// The glue script (allowed by its hash).
    pub(crate) fn glue(&self) -> &'static str {
        WEBAUTHN_JS
    }
}

/// A POST form; the CSRF token is always its first hidden field.
#[derive(Debug, Clone)]
pub(crate) struct Form {
    pub(crate) action: String,
    pub(crate) hidden: Vec<(String, String)>,
    pub(crate) fields: Vec<Field>,
    pub(crate) captcha: Option<CaptchaWidget>,
    pub(crate) buttons: Vec<Button>,
}

impl Form {
    /// A form posting to `action` (a path of ours) carrying the CSRF token.
    pub(crate) fn new(action: impl Into<String>, csrf: &str) -> Self {
        Self {
            action: action.into(),
            hidden: vec![("csrf".to_owned(), csrf.to_owned())],
            fields: Vec::new(),
            captcha: None,
            buttons: Vec::new(),
        }
    }

    /// Adds a hidden value (present values only).
    pub(crate) fn hidden(mut self, name: &str, value: Option<&str>) -> Self {
        if let Some(value) = value {
            self.hidden.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Adds a field.
    pub(crate) fn field(mut self, field: Field) -> Self {
        self.fields.push(field);
        self
    }

    /// Adds a CAPTCHA widget (after the fields, before the buttons), when there is one.
    pub(crate) fn captcha(mut self, widget: Option<CaptchaWidget>) -> Self {
        self.captcha = widget;
        self
    }

    /// Adds a button.
    pub(crate) fn button(mut self, button: Button) -> Self {
        self.buttons.push(button);
        self
    }

    /// Wires `aria-describedby` and puts `autofocus` on the first invalid field, else the
    /// first field.
    fn finish(&mut self, has_alert: bool) {
        for field in &mut self.fields {
            let mut ids = Vec::new();
            if field.alert_related && has_alert {
                ids.push("form-error".to_owned());
            }
            if field.error.is_some() {
                ids.push(format!("{}-error", field.name));
            }
            if field.hint.is_some() {
                ids.push(format!("{}-hint", field.name));
            }
            field.described_by = ids.join(" ");
        }
        let focus = self
            .fields
            .iter()
            .position(|f| f.invalid)
            .or(if self.fields.is_empty() {
                None
            } else {
                Some(0)
            });
        if let Some(index) = focus
            && let Some(field) = self.fields.get_mut(index)
        {
            field.autofocus = true;
        }
    }
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
        }
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

#[derive(Template)]
#[template(path = "hosted/page.html")]
struct PageView<'a> {
    chrome: &'a Chrome,
    title: &'a str,
    page: &'a Page,
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
                super::account::human_time(t, s.utc),
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
    use super::*;
    use crate::hosted::strings::EN;
    use http_body_util::BodyExt;

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
            csp.contains("form-action 'self' https://app.example.com;"),
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

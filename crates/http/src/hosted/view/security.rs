//! The hosted pages' security headers and the only inline code they allow: the stylesheet and
//! the two glue scripts (reCAPTCHA, WebAuthn), each allowed by its hash in the
//! Content-Security-Policy, and the policy itself, widened per page only for where its form
//! leads and for the CAPTCHA provider it renders.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, PRAGMA, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use http::{HeaderMap, HeaderValue};
use sha2::{Digest, Sha256};
use std::sync::LazyLock;
use svc_authn::CaptchaProvider;

/// The stylesheet, inlined in every page and allowed by its hash in the CSP (no external
/// assets, no extra request, no `'unsafe-inline'`).
pub(crate) const CSS: &str = "\
*,*::before,*::after{box-sizing:border-box}\
body{margin:0;font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#1b1b1f;background:#f4f4f6}\
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}\
main:has(table){max-width:56rem}\
@media (max-width:32rem){main{margin:0;border-radius:0;box-shadow:none;min-height:100vh}}\
h1{font-size:1.5rem;margin:.25rem 0 1rem}\
h2{font-size:1.15rem;margin:1.5rem 0 .5rem;overflow-wrap:anywhere}\
fieldset{min-width:0;margin:0 0 1rem;border:1px solid #d0d0d7;border-radius:.25rem}\
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
pub(crate) const RECAPTCHA_JS: &str = "(function(){var w=document.getElementById(\"captcha\");if(!w)return;\
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
pub(crate) fn captcha_sources(
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
    /// Origins (or private-use schemes) the page's form may lead to, for `form-action`.
    pub(super) sources: Vec<String>,
    /// The CAPTCHA provider whose widget the page renders.
    pub(super) captcha: Option<CaptchaProvider>,
    /// The page runs the WebAuthn glue (its hash in `script-src`, `connect-src 'self'` for
    /// the options it fetches).
    pub(super) webauthn: bool,
    /// Origins the page frames (front-channel logout), for `frame-src`.
    pub(super) frames: Vec<String>,
}

impl FormTargets {
    pub(super) fn is_empty(&self) -> bool {
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
pub(crate) fn csp(targets: Option<&FormTargets>) -> HeaderValue {
    let mut form_action = "'self'".to_owned();
    let sources = targets.map(|t| t.sources.as_slice()).unwrap_or_default();
    for source in sources {
        form_action.push(' ');
        form_action.push_str(source);
    }
    // A form that leads to an application leads wherever the application redirects next:
    // Chromium checks each redirect after a submission against this directive, and an
    // application's callback commonly sends the browser on to another origin of its own (a
    // relying party's callback, then its app), which no list of ours can name. Secure targets
    // stay open for those pages alone; plain http beyond the application's origin does not.
    if !sources.is_empty() {
        form_action.push_str(" https:");
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

//! The form vocabulary of the hosted pages: labelled fields, buttons, a CAPTCHA widget, the
//! passkey form driven by the WebAuthn glue, and the form that holds them (CSRF token, first
//! or first invalid field focused, errors described).

use super::security::{RECAPTCHA_JS, WEBAUTHN_JS};
use crate::hosted::strings::Strings;
use svc_authn::CaptchaProvider;

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

/// The "sign in with single sign-on" form: an address whose domain finds the organization's
/// provider (its field has its own id, beside the password form's).
#[derive(Debug, Clone)]
pub(crate) struct SsoForm {
    pub(crate) heading: &'static str,
    pub(crate) intro: &'static str,
    pub(crate) hidden: Vec<(String, String)>,
    pub(crate) email_label: &'static str,
    pub(crate) email: String,
    pub(crate) error: Option<&'static str>,
    pub(crate) button: &'static str,
}

impl SsoForm {
    /// The form for the pending `interaction`, with `email` typed and a refusal's `error`.
    pub(crate) fn new(
        s: &Strings,
        csrf: &str,
        interaction: Option<&str>,
        (email, error): (&str, Option<&'static str>),
    ) -> Self {
        let mut hidden = vec![("csrf".to_owned(), csrf.to_owned())];
        if let Some(interaction) = interaction {
            hidden.push(("interaction".to_owned(), interaction.to_owned()));
        }
        Self {
            heading: s.sso.heading,
            intro: s.sso.intro,
            hidden,
            email_label: s.email_label,
            email: email.to_owned(),
            error,
            button: s.sso.submit,
        }
    }
}

/// The social providers' buttons on the sign-in page: one form posting the chosen provider's
/// slug (the button's value) to `/auth/social/start`, with the pending authorization request.
#[derive(Debug, Clone)]
pub(crate) struct SocialForm {
    pub(crate) heading: &'static str,
    pub(crate) hidden: Vec<(String, String)>,
    /// Each provider's slug and button label.
    pub(crate) buttons: Vec<(String, String)>,
}

impl SocialForm {
    /// The buttons of `providers` (slug, display name) for the pending `interaction`.
    pub(crate) fn new(
        s: &Strings,
        csrf: &str,
        interaction: Option<&str>,
        providers: &[(String, String)],
    ) -> Self {
        let mut hidden = vec![("csrf".to_owned(), csrf.to_owned())];
        if let Some(interaction) = interaction {
            hidden.push(("interaction".to_owned(), interaction.to_owned()));
        }
        Self {
            heading: s.social.heading,
            hidden,
            buttons: providers
                .iter()
                .map(|(slug, name)| (slug.clone(), format!("{} {name}", s.social.continue_with)))
                .collect(),
        }
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
    pub(super) fn finish(&mut self, has_alert: bool) {
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

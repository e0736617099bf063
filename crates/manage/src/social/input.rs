//! The body of `PUT /api/v1/social-providers/{slug}` and every rule it must meet before anything
//! is fetched or written: which members each preset takes, the fixed endpoints of the presets
//! that fix them, URLs, secrets, Apple's key and the scopes. The outcome ([`Checked`]) says what
//! remains to be learnt from the provider (its discovery document) and what to seal.

use crate::ManageError;
use serde::{Deserialize, Serialize};
use svc_crypto::{SigningAlg, SigningKey};
use svc_domain::{
    MAX_SOCIAL_DISPLAY_NAME_CHARS, MAX_SOCIAL_PRIVATE_KEY_BYTES, MAX_SSO_SCOPES,
    MAX_SSO_SECRET_BYTES, MAX_SSO_URL_BYTES, ProfileEndpoints, ProviderSlug, Scope, SocialPreset,
};
use utoipa::ToSchema;

/// Longest client id accepted, in bytes.
const MAX_CLIENT_ID_BYTES: usize = 255;
/// Google's issuer.
const GOOGLE_ISSUER: &str = "https://accounts.google.com";
/// Apple's issuer.
const APPLE_ISSUER: &str = "https://appleid.apple.com";
/// GitLab.com's issuer.
const GITLAB_ISSUER: &str = "https://gitlab.com";
/// GitHub.com's web origin.
const GITHUB_WEB: &str = "https://github.com";
/// GitHub.com's API origin (Enterprise Server serves it at `{base}/api/v3`).
const GITHUB_API: &str = "https://api.github.com";
/// Microsoft's identity platform.
const MICROSOFT_LOGIN: &str = "https://login.microsoftonline.com";
/// The directory of personal Microsoft accounts, which its `consumers` documents name.
const MICROSOFT_CONSUMERS_TENANT: &str = "9188040d-6c67-4c5b-b112-36a304b66dad";

/// Body of `PUT /api/v1/social-providers/{slug}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "preset": "google",
    "client_id": "1234567890-abc.apps.googleusercontent.com",
    "client_secret": "upstream-client-secret"
}))]
pub struct SocialProviderInput {
    /// What the provider is configured from: `google`, `microsoft`, `apple`, `github`,
    /// `gitlab`, or, with `[generic_oauth]` on, `oidc` (any OpenID provider) or `oauth2` (any
    /// OAuth 2.0 server with a profile endpoint).
    pub preset: PresetName,
    /// Our client id at the provider (Apple: the Services ID).
    #[schema(min_length = 1, max_length = 255)]
    pub client_id: String,
    /// Our client secret at the provider: required for every preset but `apple` (refused
    /// there), and again on every replacement. Sealed at once, never shown back.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 512, nullable = false)]
    pub client_secret: Option<String>,
    /// The button's label ("Continue with …"): 1 to 64 characters without control
    /// characters. Default: the preset's name (`Google`, `GitHub`, …); required for `oidc`
    /// and `oauth2`.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 64, nullable = false, example = "Google")]
    pub display_name: Option<String>,
    /// Scopes asked for, at most 16; OpenID providers (every preset but `github` and
    /// `oauth2`) must include `openid`. Default: `["openid", "email", "profile"]`; `apple`
    /// `["openid", "email", "name"]`; `github` `["read:user", "user:email"]`; `oauth2` none.
    #[serde(default)]
    #[schema(nullable = false, max_items = 16)]
    pub scopes: Option<Vec<String>>,
    /// Offered on the sign-in page. Default: `true`. A disabled provider keeps its links.
    #[serde(default)]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// `microsoft` only: `common` (default: work, school and personal accounts),
    /// `organizations`, `consumers`, or one directory by its id (GUID) or domain name.
    #[serde(default)]
    #[schema(nullable = false, example = "common")]
    pub directory: Option<String>,
    /// `github`: a GitHub Enterprise Server (`https://github.corp.example`); `gitlab`: a
    /// self-managed GitLab, its issuer. Default: github.com, gitlab.com.
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub base_url: Option<String>,
    /// `oidc` only, required: the provider's issuer; its discovery document is read now and
    /// must name exactly it.
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub issuer: Option<String>,
    /// `oauth2` only, required: where browsers are sent.
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub authorization_endpoint: Option<String>,
    /// `oauth2` only, required: where codes are redeemed.
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub token_endpoint: Option<String>,
    /// `oauth2` only, required: the person's profile (`sub` or `id`, `email`,
    /// `email_verified`, `name`), read with the access token.
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub userinfo_endpoint: Option<String>,
    /// `oauth2` only, optional: a list of the person's addresses with `primary` and
    /// `verified` flags (GitHub's `/user/emails` shape).
    #[serde(default)]
    #[schema(nullable = false, max_length = 2048)]
    pub emails_endpoint: Option<String>,
    /// How we authenticate at the token endpoint: `client_secret_basic` (default) or
    /// `client_secret_post`. `github` always uses `client_secret_post`; `apple` its own signed
    /// secret (leave it out).
    #[serde(default)]
    #[schema(nullable = false)]
    pub token_endpoint_auth_method: Option<AuthMethodName>,
    /// How the provider answers: `query` (default) or, for `oidc` only, `form_post`. `apple`
    /// always uses `form_post` (leave it out).
    #[serde(default)]
    #[schema(nullable = false)]
    pub response_mode: Option<ResponseMode>,
    /// `apple` only, required: the key Apple's client secret is signed with.
    #[serde(default)]
    #[schema(nullable = false)]
    pub apple: Option<AppleKeyInput>,
}

/// Sign in with Apple's signing key, from the Apple developer account.
#[derive(Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppleKeyInput {
    /// The developer team's id: 10 uppercase letters or digits.
    #[schema(example = "ABCDE12345")]
    pub team_id: String,
    /// The key's id: 10 uppercase letters or digits.
    #[schema(example = "XYZ9876543")]
    pub key_id: String,
    /// The `.p8` file Apple hands out: a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) of a P-256
    /// key, at most 4096 bytes. Sealed at once, never shown back.
    pub private_key: String,
}

impl std::fmt::Debug for AppleKeyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppleKeyInput")
            .field("team_id", &self.team_id)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// A preset's name on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PresetName {
    /// Google.
    Google,
    /// Microsoft identity platform.
    Microsoft,
    /// Sign in with Apple.
    Apple,
    /// GitHub or GitHub Enterprise Server.
    Github,
    /// GitLab.com or a self-managed GitLab.
    Gitlab,
    /// Any OpenID provider (`[generic_oauth]`).
    Oidc,
    /// Any OAuth 2.0 server with a profile endpoint (`[generic_oauth]`).
    Oauth2,
}

impl From<PresetName> for SocialPreset {
    fn from(name: PresetName) -> Self {
        match name {
            PresetName::Google => Self::Google,
            PresetName::Microsoft => Self::Microsoft,
            PresetName::Apple => Self::Apple,
            PresetName::Github => Self::Github,
            PresetName::Gitlab => Self::Gitlab,
            PresetName::Oidc => Self::Oidc,
            PresetName::Oauth2 => Self::Oauth2,
        }
    }
}

/// `token_endpoint_auth_method` of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethodName {
    /// The secret in HTTP Basic.
    ClientSecretBasic,
    /// The secret in the form.
    ClientSecretPost,
}

/// `response_mode` of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    /// The code comes back in the query of a GET.
    Query,
    /// The code comes back in a POSTed form.
    FormPost,
}

/// What is left to learn from the provider before storing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Upstream {
    /// Read `issuer`'s discovery document; a failure names `field`.
    Discover {
        /// The issuer.
        issuer: String,
        /// The member a failure names.
        field: &'static str,
    },
    /// Read Microsoft's document at `url`; it must name `issuer`, or with `None` (a directory
    /// by domain name) any one directory's issuer.
    Microsoft {
        /// The discovery document's URL.
        url: String,
        /// The issuer it must name.
        issuer: Option<String>,
    },
    /// Nothing: a plain OAuth 2.0 provider's endpoints.
    Profile(ProfileEndpoints),
}

/// What is sealed and how it is sent.
pub(super) enum Credential {
    /// A client secret, in HTTP Basic or (`post`) in the form.
    Secret {
        /// The secret.
        secret: String,
        /// `client_secret_post`.
        post: bool,
    },
    /// Apple's signing key.
    Apple {
        /// The team.
        team_id: String,
        /// The key's id.
        key_id: String,
        /// The PEM.
        pem: String,
    },
}

/// A request that met every rule.
pub(super) struct Checked {
    pub(super) slug: ProviderSlug,
    pub(super) preset: SocialPreset,
    pub(super) display_name: String,
    pub(super) client_id: String,
    pub(super) credential: Credential,
    pub(super) scopes: Vec<String>,
    pub(super) enabled: bool,
    pub(super) form_post: bool,
    pub(super) upstream: Upstream,
}

/// Where plain `http` may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Http {
    /// Never (production).
    Refused,
    /// Towards loopback hosts only (development: a provider on this machine).
    Loopback,
}

/// The provider `slug` from `input`, as far as it can be checked without asking it.
pub(super) fn check(
    slug: &str,
    input: SocialProviderInput,
    generic: bool,
    http: Http,
) -> Result<Checked, ManageError> {
    let slug =
        ProviderSlug::parse(slug).map_err(|e| ManageError::invalid("slug", e.to_string()))?;
    let preset = SocialPreset::from(input.preset);
    if preset.generic() && !generic {
        return Err(ManageError::invalid(
            "preset",
            format!(
                "{} needs [generic_oauth] enabled in this deployment; the available presets are \
                 google, microsoft, apple, github and gitlab",
                preset.as_str()
            ),
        ));
    }
    check_token("client_id", &input.client_id, MAX_CLIENT_ID_BYTES)?;
    let display_name = display_name(preset, input.display_name.as_deref())?;
    let scopes = scopes(preset, input.scopes.as_deref())?;
    only_for(
        preset,
        "directory",
        input.directory.is_some(),
        &[SocialPreset::Microsoft],
    )?;
    only_for(
        preset,
        "base_url",
        input.base_url.is_some(),
        &[SocialPreset::Github, SocialPreset::Gitlab],
    )?;
    only_for(
        preset,
        "issuer",
        input.issuer.is_some(),
        &[SocialPreset::Oidc],
    )?;
    for (field, given) in [
        (
            "authorization_endpoint",
            input.authorization_endpoint.is_some(),
        ),
        ("token_endpoint", input.token_endpoint.is_some()),
        ("userinfo_endpoint", input.userinfo_endpoint.is_some()),
        ("emails_endpoint", input.emails_endpoint.is_some()),
    ] {
        only_for(preset, field, given, &[SocialPreset::Oauth2])?;
    }
    only_for(
        preset,
        "apple",
        input.apple.is_some(),
        &[SocialPreset::Apple],
    )?;
    let form_post = response_mode(preset, input.response_mode)?;
    let credential = credential(preset, &input)?;
    let upstream = upstream(preset, &input, http)?;
    Ok(Checked {
        slug,
        preset,
        display_name,
        client_id: input.client_id,
        credential,
        scopes,
        enabled: input.enabled.unwrap_or(true),
        form_post,
        upstream,
    })
}

/// A member some presets do not take is refused with the others, not silently dropped.
fn only_for(
    preset: SocialPreset,
    field: &str,
    given: bool,
    presets: &[SocialPreset],
) -> Result<(), ManageError> {
    if given && !presets.contains(&preset) {
        let names: Vec<&str> = presets.iter().map(|p| p.as_str()).collect();
        return Err(ManageError::invalid(
            field,
            format!(
                "not used with preset {}; only with {}",
                preset.as_str(),
                names.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Printable ASCII without spaces, of `1..=max` bytes.
pub(super) fn check_token(field: &str, raw: &str, max: usize) -> Result<(), ManageError> {
    if raw.is_empty() || raw.len() > max || !raw.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ManageError::invalid(
            field,
            format!("1 to {max} printable ASCII characters without spaces"),
        ));
    }
    Ok(())
}

fn display_name(preset: SocialPreset, raw: Option<&str>) -> Result<String, ManageError> {
    let name = raw.unwrap_or_else(|| preset.default_display_name());
    if name.trim().is_empty() {
        return Err(ManageError::invalid(
            "display_name",
            format!("required with preset {}", preset.as_str()),
        ));
    }
    if name.chars().count() > MAX_SOCIAL_DISPLAY_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(ManageError::invalid(
            "display_name",
            format!("1 to {MAX_SOCIAL_DISPLAY_NAME_CHARS} characters without control characters"),
        ));
    }
    Ok(name.to_owned())
}

/// Whether the preset learns who signed in from an ID token.
fn openid(preset: SocialPreset) -> bool {
    !matches!(preset, SocialPreset::Github | SocialPreset::Oauth2)
}

fn scopes(preset: SocialPreset, raw: Option<&[String]>) -> Result<Vec<String>, ManageError> {
    let Some(raw) = raw else {
        let defaults: &[&str] = match preset {
            SocialPreset::Apple => &["openid", "email", "name"],
            SocialPreset::Github => &["read:user", "user:email"],
            SocialPreset::Oauth2 => &[],
            _ => &["openid", "email", "profile"],
        };
        return Ok(defaults.iter().map(|s| (*s).to_owned()).collect());
    };
    if raw.len() > MAX_SSO_SCOPES {
        return Err(ManageError::invalid(
            "scopes",
            format!("at most {MAX_SSO_SCOPES} scopes"),
        ));
    }
    let mut scopes: Vec<String> = Vec::with_capacity(raw.len());
    for scope in raw {
        Scope::parse(scope)
            .map_err(|_| ManageError::invalid("scopes", format!("{scope:?} is not a scope")))?;
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    if openid(preset) && !scopes.iter().any(|s| s == "openid") {
        return Err(ManageError::invalid(
            "scopes",
            format!("must include openid with preset {}", preset.as_str()),
        ));
    }
    Ok(scopes)
}

/// Whether the provider answers by `form_post`.
fn response_mode(preset: SocialPreset, raw: Option<ResponseMode>) -> Result<bool, ManageError> {
    match (preset, raw) {
        (SocialPreset::Apple, None) => Ok(true),
        (SocialPreset::Apple, Some(_)) => Err(ManageError::invalid(
            "response_mode",
            "not used with preset apple: Apple always answers by form_post",
        )),
        (_, None | Some(ResponseMode::Query)) => Ok(false),
        (SocialPreset::Oidc, Some(ResponseMode::FormPost)) => Ok(true),
        (_, Some(ResponseMode::FormPost)) => Err(ManageError::invalid(
            "response_mode",
            format!("form_post is not used with preset {}", preset.as_str()),
        )),
    }
}

fn credential(
    preset: SocialPreset,
    input: &SocialProviderInput,
) -> Result<Credential, ManageError> {
    if preset == SocialPreset::Apple {
        if input.client_secret.is_some() {
            return Err(ManageError::invalid(
                "client_secret",
                "not used with preset apple: the client secret is signed with the key in apple",
            ));
        }
        if input.token_endpoint_auth_method.is_some() {
            return Err(ManageError::invalid(
                "token_endpoint_auth_method",
                "not used with preset apple: Apple's signed client secret is used",
            ));
        }
        let apple = input
            .apple
            .as_ref()
            .ok_or_else(|| ManageError::invalid("apple", "required with preset apple"))?;
        return apple_key(apple);
    }
    let secret = input.client_secret.as_deref().ok_or_else(|| {
        ManageError::invalid(
            "client_secret",
            "required (also when replacing a provider: it is never read back)",
        )
    })?;
    check_token("client_secret", secret, MAX_SSO_SECRET_BYTES)?;
    let post = match (preset, input.token_endpoint_auth_method) {
        (SocialPreset::Github, None | Some(AuthMethodName::ClientSecretPost)) => true,
        (SocialPreset::Github, Some(AuthMethodName::ClientSecretBasic)) => {
            return Err(ManageError::invalid(
                "token_endpoint_auth_method",
                "GitHub takes only client_secret_post",
            ));
        }
        (_, None | Some(AuthMethodName::ClientSecretBasic)) => false,
        (_, Some(AuthMethodName::ClientSecretPost)) => true,
    };
    Ok(Credential::Secret {
        secret: secret.to_owned(),
        post,
    })
}

/// Ten uppercase letters or digits, as Apple issues team and key ids.
fn apple_id(field: &str, raw: &str) -> Result<(), ManageError> {
    if raw.len() == 10
        && raw
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        Ok(())
    } else {
        Err(ManageError::invalid(
            field,
            "10 uppercase letters or digits, as Apple shows it",
        ))
    }
}

fn apple_key(apple: &AppleKeyInput) -> Result<Credential, ManageError> {
    apple_id("apple.team_id", &apple.team_id)?;
    apple_id("apple.key_id", &apple.key_id)?;
    let bad = || {
        ManageError::invalid(
            "apple.private_key",
            format!(
                "a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----) of a P-256 key, at most \
                 {MAX_SOCIAL_PRIVATE_KEY_BYTES} bytes: the .p8 file Apple hands out"
            ),
        )
    };
    if apple.private_key.len() > MAX_SOCIAL_PRIVATE_KEY_BYTES {
        return Err(bad());
    }
    // Loaded once now so a wrong file is refused here, not at the first sign-in.
    SigningKey::from_pkcs8_pem(SigningAlg::Es256, &apple.private_key).map_err(|_| bad())?;
    Ok(Credential::Apple {
        team_id: apple.team_id.clone(),
        key_id: apple.key_id.clone(),
        pem: apple.private_key.trim().to_owned(),
    })
}

/// A URL of the provider: absolute, `https` (plain `http` only as `http` allows), with a
/// host, no credentials, no fragment, and no query where `query` is false; without its
/// trailing `/`.
pub(super) fn check_url(
    field: &str,
    raw: &str,
    http: Http,
    query: bool,
) -> Result<String, ManageError> {
    let bad = |why: &str| {
        ManageError::invalid(
            field,
            format!(
                "an absolute https URL{} without fragment or credentials, at most \
                 {MAX_SSO_URL_BYTES} bytes{why}",
                if query { "" } else { " without query" }
            ),
        )
    };
    if raw.len() > MAX_SSO_URL_BYTES {
        return Err(bad(""));
    }
    let url = url::Url::parse(raw).map_err(|_| bad(""))?;
    if url.host_str().is_none()
        || (!query && url.query().is_some())
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(bad(""));
    }
    match (url.scheme(), http) {
        ("https", _) => {}
        ("http", Http::Loopback) if loopback(&url) => {}
        ("http", _) => {
            return Err(bad(
                " (plain http only towards this machine, and never in production)",
            ));
        }
        _ => return Err(bad("")),
    }
    Ok(raw.trim_end_matches('/').to_owned())
}

fn loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
        None => false,
    }
}

fn required<'a>(field: &str, value: Option<&'a String>) -> Result<&'a str, ManageError> {
    value
        .map(String::as_str)
        .ok_or_else(|| ManageError::invalid(field, "required with this preset"))
}

fn upstream(
    preset: SocialPreset,
    input: &SocialProviderInput,
    http: Http,
) -> Result<Upstream, ManageError> {
    let discover = |issuer: String, field| Upstream::Discover { issuer, field };
    Ok(match preset {
        SocialPreset::Google => discover(GOOGLE_ISSUER.to_owned(), "issuer"),
        SocialPreset::Apple => discover(APPLE_ISSUER.to_owned(), "issuer"),
        SocialPreset::Gitlab => match &input.base_url {
            Some(raw) => discover(check_url("base_url", raw, http, false)?, "base_url"),
            None => discover(GITLAB_ISSUER.to_owned(), "base_url"),
        },
        SocialPreset::Oidc => {
            let raw = required("issuer", input.issuer.as_ref())?;
            check_url("issuer", raw, http, false)?;
            // The issuer is compared exactly with the document's (Discovery §4.3): as given.
            discover(raw.to_owned(), "issuer")
        }
        SocialPreset::Microsoft => microsoft(input.directory.as_deref().unwrap_or("common"))?,
        SocialPreset::Github => {
            let (web, api) = match &input.base_url {
                Some(raw) => {
                    let base = check_url("base_url", raw, http, false)?;
                    let api = format!("{base}/api/v3");
                    (base, api)
                }
                None => (GITHUB_WEB.to_owned(), GITHUB_API.to_owned()),
            };
            Upstream::Profile(ProfileEndpoints {
                authorization_endpoint: format!("{web}/login/oauth/authorize"),
                token_endpoint: format!("{web}/login/oauth/access_token"),
                userinfo_endpoint: format!("{api}/user"),
                emails_endpoint: Some(format!("{api}/user/emails")),
            })
        }
        SocialPreset::Oauth2 => {
            let endpoint = |field: &str, value: Option<&String>| {
                check_url(field, required(field, value)?, http, true)
            };
            Upstream::Profile(ProfileEndpoints {
                authorization_endpoint: endpoint(
                    "authorization_endpoint",
                    input.authorization_endpoint.as_ref(),
                )?,
                token_endpoint: endpoint("token_endpoint", input.token_endpoint.as_ref())?,
                userinfo_endpoint: endpoint("userinfo_endpoint", input.userinfo_endpoint.as_ref())?,
                emails_endpoint: input
                    .emails_endpoint
                    .as_deref()
                    .map(|raw| check_url("emails_endpoint", raw, http, true))
                    .transpose()?,
            })
        }
    })
}

/// A directory id: a GUID in its 8-4-4-4-12 form.
pub(super) fn is_guid(raw: &str) -> bool {
    let groups: Vec<&str> = raw.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A domain name: dot-separated labels of letters, digits and `-`.
fn is_domain(raw: &str) -> bool {
    raw.len() <= 253
        && raw.contains('.')
        && raw.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn microsoft(directory: &str) -> Result<Upstream, ManageError> {
    let issuer = match directory {
        // Microsoft's multi-tenant documents state this template; the engine puts the token's
        // `tid` in its place.
        "common" | "organizations" => Some(format!("{MICROSOFT_LOGIN}/{{tenantid}}/v2.0")),
        "consumers" => Some(format!(
            "{MICROSOFT_LOGIN}/{MICROSOFT_CONSUMERS_TENANT}/v2.0"
        )),
        guid if is_guid(guid) => Some(format!(
            "{MICROSOFT_LOGIN}/{}/v2.0",
            guid.to_ascii_lowercase()
        )),
        // A directory by domain name: its document names the directory's id, unknown here.
        domain if is_domain(domain) => None,
        _ => {
            return Err(ManageError::invalid(
                "directory",
                "common, organizations, consumers, a directory id (GUID) or a domain name",
            ));
        }
    };
    Ok(Upstream::Microsoft {
        url: format!(
            "{MICROSOFT_LOGIN}/{}/v2.0/.well-known/openid-configuration",
            directory.to_ascii_lowercase()
        ),
        issuer,
    })
}

/// The issuer a Microsoft document of a directory named by domain may state: that of one
/// directory (a GUID).
pub(super) fn microsoft_directory_issuer(stated: &str) -> bool {
    stated
        .strip_prefix(&format!("{MICROSOFT_LOGIN}/"))
        .and_then(|rest| rest.strip_suffix("/v2.0"))
        .is_some_and(is_guid)
}

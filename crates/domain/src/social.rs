//! Social sign-in (issue 20 item 3): a tenant's upstream OAuth 2.0 / OpenID Connect providers
//! ("Continue with Google"), a sign-in in flight to one of them (an attempt), the link between
//! an upstream account and a person, and a link waiting for the person's confirmation.
//!
//! A provider is configured from a preset (Google, Microsoft, Apple, GitHub, GitLab) that fixes
//! its endpoints and habits, or, with `[generic_oauth]`, as any OpenID provider (`oidc`) or any
//! OAuth 2.0 server with a profile endpoint (`oauth2`). Client secrets and Apple's signing key
//! are kept only sealed (bound to the tenant and the provider's slug).
//!
//! Linking an upstream account to an existing person is never silent: the provider must vouch
//! for the address, and the person must sign in to the existing account and confirm
//! ([`PendingSocialLink`]).

use crate::{InteractionId, SecretHash, TenantId, UpstreamMetadata, UserId};
use time::OffsetDateTime;

/// Where providers send people back, after the tenant's issuer.
pub const SOCIAL_CALLBACK_PATH: &str = "/auth/social/callback";

/// The redirect URI registered at every provider of a tenant whose issuer is `issuer`.
#[must_use]
pub fn social_redirect_uri(issuer: &str) -> String {
    format!("{}{SOCIAL_CALLBACK_PATH}", issuer.trim_end_matches('/'))
}

/// Most providers a tenant configures.
pub const MAX_SOCIAL_PROVIDERS: usize = 16;
/// Longest display name, in characters.
pub const MAX_SOCIAL_DISPLAY_NAME_CHARS: usize = 64;
/// Longest Apple private key accepted (PEM), in bytes.
pub const MAX_SOCIAL_PRIVATE_KEY_BYTES: usize = 4096;

/// A provider's name within its tenant: 1–32 of `a-z`, `0-9`, `-`, starting with a letter
/// (`google`, `github`, `corp-gitlab`). It appears in URLs and on the sign-in page's forms.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProviderSlug(String);

/// A string that is not a provider slug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a provider slug is 1 to 32 of a-z, 0-9 and '-', starting with a letter")]
pub struct ProviderSlugError;

impl ProviderSlug {
    /// Parses a slug.
    ///
    /// # Errors
    /// [`ProviderSlugError`] for anything else.
    pub fn parse(value: &str) -> Result<Self, ProviderSlugError> {
        let ok = (1..=32).contains(&value.len())
            && value.starts_with(|c: char| c.is_ascii_lowercase())
            && value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(ProviderSlugError)
        }
    }

    /// The slug.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ProviderSlug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a provider was configured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocialPreset {
    /// Google (OpenID Connect, `https://accounts.google.com`).
    Google,
    /// Microsoft identity platform (OpenID Connect, one directory or the multi-tenant ones).
    Microsoft,
    /// Sign in with Apple (OpenID Connect; the client secret is a JWT we sign; `form_post`).
    Apple,
    /// GitHub or GitHub Enterprise Server (OAuth 2.0, profile and e-mail API).
    Github,
    /// GitLab.com or a self-managed GitLab (OpenID Connect).
    Gitlab,
    /// Any OpenID provider, by its issuer (`[generic_oauth]`).
    Oidc,
    /// Any OAuth 2.0 server with a profile endpoint (`[generic_oauth]`).
    Oauth2,
}

impl SocialPreset {
    /// Every preset, in the order the API documents them.
    pub const ALL: [Self; 7] = [
        Self::Google,
        Self::Microsoft,
        Self::Apple,
        Self::Github,
        Self::Gitlab,
        Self::Oidc,
        Self::Oauth2,
    ];

    /// Its name in the API and the store.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Google => "google",
            Self::Microsoft => "microsoft",
            Self::Apple => "apple",
            Self::Github => "github",
            Self::Gitlab => "gitlab",
            Self::Oidc => "oidc",
            Self::Oauth2 => "oauth2",
        }
    }

    /// Reads a name written by [`SocialPreset::as_str`].
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }

    /// Whether it is a generic provider, allowed only with `[generic_oauth]`.
    #[must_use]
    pub fn generic(self) -> bool {
        matches!(self, Self::Oidc | Self::Oauth2)
    }

    /// The name shown on the button when none is configured.
    #[must_use]
    pub fn default_display_name(self) -> &'static str {
        match self {
            Self::Google => "Google",
            Self::Microsoft => "Microsoft",
            Self::Apple => "Apple",
            Self::Github => "GitHub",
            Self::Gitlab => "GitLab",
            Self::Oidc | Self::Oauth2 => "",
        }
    }
}

/// How we learn who signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocialProtocol {
    /// OpenID Connect: the ID token, verified against the provider's keys.
    Oidc(UpstreamMetadata),
    /// Plain OAuth 2.0: the profile endpoint, read with the access token.
    OAuth2(ProfileEndpoints),
}

impl SocialProtocol {
    /// Where browsers are sent.
    #[must_use]
    pub fn authorization_endpoint(&self) -> &str {
        match self {
            Self::Oidc(m) => &m.authorization_endpoint,
            Self::OAuth2(p) => &p.authorization_endpoint,
        }
    }

    /// Where codes are redeemed.
    #[must_use]
    pub fn token_endpoint(&self) -> &str {
        match self {
            Self::Oidc(m) => &m.token_endpoint,
            Self::OAuth2(p) => &p.token_endpoint,
        }
    }
}

/// The endpoints of a plain OAuth 2.0 provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEndpoints {
    /// Where browsers are sent.
    pub authorization_endpoint: String,
    /// Where codes are redeemed.
    pub token_endpoint: String,
    /// The person's profile (`sub` or `id`, `email`, `email_verified`, `name`).
    pub userinfo_endpoint: String,
    /// A list of the person's addresses with `primary` and `verified` flags (GitHub's
    /// `/user/emails`), read when the profile does not vouch for an address.
    pub emails_endpoint: Option<String>,
}

/// How we authenticate at a provider's token endpoint.
#[derive(Clone, PartialEq, Eq)]
pub enum SocialClientAuth {
    /// `client_secret_basic` (RFC 6749 §2.3.1), the secret kept sealed.
    SecretBasic {
        /// The sealed secret.
        sealed_secret: Vec<u8>,
    },
    /// `client_secret_post` (RFC 6749 §2.3.1; GitHub's habit), the secret kept sealed.
    SecretPost {
        /// The sealed secret.
        sealed_secret: Vec<u8>,
    },
    /// Sign in with Apple: the client secret is a short ES256 JWT signed for each redemption
    /// with the developer's key (its PKCS#8 PEM kept sealed), sent as `client_secret_post`.
    AppleJwt {
        /// The Apple developer team (the JWT's `iss`).
        team_id: String,
        /// The key's id at Apple (the JWT header's `kid`).
        key_id: String,
        /// The sealed PKCS#8 PEM.
        sealed_key: Vec<u8>,
    },
}

impl SocialClientAuth {
    /// `client_secret_basic`.
    pub const SECRET_BASIC: &'static str = "client_secret_basic";
    /// `client_secret_post`.
    pub const SECRET_POST: &'static str = "client_secret_post";
    /// Apple's signed client secret.
    pub const APPLE_JWT: &'static str = "apple_client_secret_jwt";

    /// The method's name in the API and the store.
    #[must_use]
    pub fn method(&self) -> &'static str {
        match self {
            Self::SecretBasic { .. } => Self::SECRET_BASIC,
            Self::SecretPost { .. } => Self::SECRET_POST,
            Self::AppleJwt { .. } => Self::APPLE_JWT,
        }
    }

    /// The sealed bytes (a secret or Apple's key).
    #[must_use]
    pub fn sealed(&self) -> &[u8] {
        match self {
            Self::SecretBasic { sealed_secret } | Self::SecretPost { sealed_secret } => {
                sealed_secret
            }
            Self::AppleJwt { sealed_key, .. } => sealed_key,
        }
    }
}

impl std::fmt::Debug for SocialClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.method())
    }
}

/// A tenant's social provider.
#[derive(Clone, PartialEq, Eq)]
pub struct SocialProvider {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// Its name within the tenant.
    pub slug: ProviderSlug,
    /// What it was configured from.
    pub preset: SocialPreset,
    /// The button's label ("Continue with …").
    pub display_name: String,
    /// How we learn who signed in, and the endpoints.
    pub protocol: SocialProtocol,
    /// Our client id at the provider.
    pub client_id: String,
    /// How we authenticate at its token endpoint.
    pub client_auth: SocialClientAuth,
    /// Scopes asked for (OpenID providers: always with `openid`).
    pub scopes: Vec<String>,
    /// The provider answers by `response_mode=form_post` (a POST to the callback; Apple's
    /// requirement when names or addresses are asked for).
    pub form_post: bool,
    /// Shown on the sign-in page and usable; a disabled provider keeps its links.
    pub enabled: bool,
    /// When configured first.
    pub created_at: OffsetDateTime,
    /// When last changed.
    pub updated_at: OffsetDateTime,
}

impl std::fmt::Debug for SocialProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocialProvider")
            .field("tenant_id", &self.tenant_id)
            .field("slug", &self.slug)
            .field("preset", &self.preset)
            .field("client_id", &self.client_id)
            .field("client_auth", &self.client_auth)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

/// A sign-in (or a link) sent to a provider and not yet back: found again by the hash of the
/// browser's cookie, single use, short-lived; its state, nonce and PKCE verifier derive from
/// the cookie value, so nothing secret is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocialAttempt {
    /// Hash of the cookie value.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The provider asked.
    pub provider: ProviderSlug,
    /// The authorization request to continue afterwards, if any.
    pub interaction_id: Option<InteractionId>,
    /// Set when a signed-in person started it from the account page to connect the provider
    /// to their own account: the return links, it does not sign in.
    pub link_for: Option<UserId>,
    /// When it started.
    pub created_at: OffsetDateTime,
    /// After this the browser must start again.
    pub expires_at: OffsetDateTime,
    /// Set when the callback spent it (right or wrong).
    pub used_at: Option<OffsetDateTime>,
}

/// An upstream account known as a person of the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocialLink {
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The provider.
    pub provider: ProviderSlug,
    /// The provider's subject (`sub`, or GitHub's numeric `id` as text).
    pub subject: String,
    /// The person.
    pub user_id: UserId,
    /// The address the provider gave when linked, shown on the account page.
    pub email: Option<String>,
    /// When linked.
    pub created_at: OffsetDateTime,
}

/// An upstream account that vouched for the address of an existing person, waiting for that
/// person to sign in to the account in the same browser and confirm. Found by the hash of the
/// browser's cookie; single use; short-lived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSocialLink {
    /// Hash of the cookie value.
    pub hash: SecretHash,
    /// Owner tenant.
    pub tenant_id: TenantId,
    /// The provider.
    pub provider: ProviderSlug,
    /// The provider's subject.
    pub subject: String,
    /// The existing person with the address.
    pub user_id: UserId,
    /// The address the provider vouched for.
    pub email: String,
    /// The authorization request to continue afterwards, if any.
    pub interaction_id: Option<InteractionId>,
    /// When the provider vouched.
    pub created_at: OffsetDateTime,
    /// After this the person must start again.
    pub expires_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_lowercase_names() {
        for good in ["google", "corp-gitlab", "a", "gh2"] {
            assert!(ProviderSlug::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Google",
            "2fa",
            "-x",
            "a b",
            "ä",
            &"a".repeat(33),
            "x/../y",
        ] {
            assert!(ProviderSlug::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn presets_round_trip_and_only_two_are_generic() {
        for preset in SocialPreset::ALL {
            assert_eq!(SocialPreset::parse(preset.as_str()), Some(preset));
        }
        assert_eq!(SocialPreset::parse("facebook"), None);
        let generic: Vec<_> = SocialPreset::ALL
            .into_iter()
            .filter(|p| p.generic())
            .collect();
        assert_eq!(generic, [SocialPreset::Oidc, SocialPreset::Oauth2]);
        assert_eq!(
            social_redirect_uri("https://id.example.com/"),
            "https://id.example.com/auth/social/callback"
        );
    }
}

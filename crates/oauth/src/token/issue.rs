//! Issuing access tokens (RFC 9068 JWT profile) and the token response (RFC 6749 §5.1).
//!
//! Rules enforced here:
//! - Header `typ: at+jwt` (RFC 9068 §2.1), signed by the tenant's access-token key
//!   (`jwt.default_algorithm`: ES256 or EdDSA), `kid` naming a key of the tenant's JWKS.
//! - Claims: `iss` (the tenant issuer), `sub`, `aud` (one string), `exp`, `nbf`, `iat`, `jti`
//!   (128 random bits from the injected `Rng`, base64url), `tenant_id`, `client_id`, `scope`
//!   (space-delimited, sorted), `subject_type` (spec "Access token (JWT) claims", CONTRACTS.md
//!   "Tokens").
//! - Lifetime by subject type: `human` and `anonymous` tokens live
//!   `access_token_lifetime_human`; `agent` and `system` tokens (machines, including every
//!   client-credentials token) live `access_token_lifetime_agent`, the shorter default, since
//!   a machine can always ask again.
//! - A token bound to a DPoP key carries `cnf.jkt` (RFC 9449 §6.1) and is answered with
//!   `token_type: DPoP` (§5); otherwise `Bearer`.
//! - The response has `expires_in` equal to the token's lifetime;
//!   `refresh_token` and `id_token` appear only when issued.

use crate::error::OAuthError;
use crate::keys::KeyService;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;
use std::fmt;
use std::time::Duration;
use svc_domain::{Clock, GrantType, Rng, ScopeSet, TenantId};
use time::OffsetDateTime;

/// The JOSE `typ` of access tokens (RFC 9068 §2.1).
pub const ACCESS_TOKEN_TYP: &str = "at+jwt";

/// The `token_type` of every token we issue (RFC 6750).
pub const TOKEN_TYPE_BEARER: &str = "Bearer";

/// Random bytes in a `jti`: 128 bits.
const JTI_BYTES: usize = 16;

/// The caller category of a token (spec "Access token (JWT) claims", `subject_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubjectType {
    /// A person signed in.
    Human,
    /// An AI or software agent acting for someone.
    Agent,
    /// A machine acting for itself (client credentials).
    System,
    /// An anonymous session.
    Anonymous,
}

impl SubjectType {
    /// The claim value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Agent => "agent",
            Self::System => "system",
            Self::Anonymous => "anonymous",
        }
    }
}

/// Token lifetimes, from `[jwt]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSettings {
    /// `access_token_lifetime_human_secs`: tokens of `human` and `anonymous` subjects.
    pub access_token_lifetime_human: Duration,
    /// `access_token_lifetime_agent_secs`: tokens of `agent` and `system` subjects.
    pub access_token_lifetime_agent: Duration,
    /// `refresh_token_lifetime_human_secs`: absolute lifetime of a refresh family.
    pub refresh_token_lifetime_human: Duration,
    /// `refresh_token_idle_secs`: a refresh token unused this long is dead even while its
    /// family lives.
    pub refresh_token_idle: Duration,
    /// `id_token_lifetime_secs`.
    pub id_token_lifetime: Duration,
    /// `[device_authorization].enabled`: the device grant is served (RFC 8628); otherwise its
    /// grant type is `unsupported_grant_type`.
    pub device_grant: bool,
    /// `[ciba].enabled`: the CIBA grant is served (poll mode); otherwise its grant type is
    /// `unsupported_grant_type`.
    pub ciba_grant: bool,
    /// `[delegation].enabled`: the token exchange grant is served (RFC 8693); otherwise its
    /// grant type is `unsupported_grant_type`.
    pub token_exchange: bool,
    /// `[delegation].max_chain_depth`: most actors an exchanged token's `act` chain names.
    pub max_chain_depth: usize,
    /// `[challenge].enabled`: agents' signed answers to challenges are accepted (the JWT bearer
    /// grant, `super::agent`); otherwise that grant type is `unsupported_grant_type`.
    pub agent_assertions: bool,
}

impl Default for TokenSettings {
    /// The spec defaults: 900 s for people, 300 s for agents and systems.
    fn default() -> Self {
        Self {
            access_token_lifetime_human: Duration::from_secs(900),
            access_token_lifetime_agent: Duration::from_secs(300),
            refresh_token_lifetime_human: Duration::from_secs(604_800),
            refresh_token_idle: Duration::from_secs(604_800),
            id_token_lifetime: Duration::from_secs(300),
            device_grant: true,
            ciba_grant: false,
            token_exchange: true,
            max_chain_depth: 3,
            agent_assertions: false,
        }
    }
}

impl TokenSettings {
    /// Whether this deployment serves `grant` at all (the optional ones are switched in
    /// configuration; a grant it does not serve is `unsupported_grant_type`).
    pub fn serves(&self, grant: GrantType) -> bool {
        match grant {
            GrantType::DeviceCode => self.device_grant,
            GrantType::Ciba => self.ciba_grant,
            GrantType::TokenExchange => self.token_exchange,
            GrantType::AuthorizationCode
            | GrantType::RefreshToken
            | GrantType::ClientCredentials => true,
        }
    }

    /// The access-token lifetime for `subject_type` (see the module doc).
    pub fn access_token_lifetime(&self, subject_type: SubjectType) -> Duration {
        match subject_type {
            SubjectType::Human | SubjectType::Anonymous => self.access_token_lifetime_human,
            SubjectType::Agent | SubjectType::System => self.access_token_lifetime_agent,
        }
    }
}

/// What a grant decided an access token says.
#[derive(Debug, Clone, Copy)]
pub struct NewAccessToken<'a> {
    /// `sub`: the client_id for `system` subjects.
    pub subject: &'a str,
    /// `subject_type`.
    pub subject_type: SubjectType,
    /// `client_id`: the application that receives the token (an agent's own id for the token
    /// it obtains by challenge-response: it is its own client).
    pub client_id: &'a str,
    /// `aud`: the single audience.
    pub audience: &'a str,
    /// `scope`.
    pub scope: &'a ScopeSet,
    /// How the person authenticated, for tokens issued on a person's sign-in: `auth_time`,
    /// `acr` and `amr` (RFC 9068 §2.2.1), so a resource server can demand a second factor.
    pub authentication: Option<Authentication<'a>>,
    /// The organization the person acts in, when the grant has one.
    pub organization: Option<OrgClaims<'a>>,
    /// The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6.1).
    pub confirmation: Option<&'a str>,
    /// `act`: who acts for the subject, newest actor outermost (RFC 8693 §4.1); token
    /// exchange only.
    pub actor: Option<&'a serde_json::Value>,
    /// A latest `exp` (Unix seconds): an exchanged token never outlives the token it came from.
    pub not_after: Option<i64>,
    /// `authorization_details` (RFC 9396 §9.1): the RAR details the token carries.
    pub details: Option<&'a svc_domain::AuthorizationDetails>,
}

/// The organization a token acts in (CONTRACTS.md "Organizations, roles, keys, SCIM"): the
/// `org_id` and `org_slug` claims of access and ID tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrgClaims<'a> {
    /// `org_id`: the durable id, the one to key on.
    pub id: &'a str,
    /// `org_slug`: its slug when the token was issued (slugs can change).
    pub slug: &'a str,
}

impl OrgClaims<'_> {
    /// Adds `org_id` and `org_slug` to `claims`.
    pub(crate) fn insert_into(&self, claims: &mut serde_json::Map<String, serde_json::Value>) {
        claims.insert("org_id".into(), json!(self.id));
        claims.insert("org_slug".into(), json!(self.slug));
    }
}

/// The authentication facts an access token repeats from its sign-in (RFC 9068 §2.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authentication<'a> {
    /// When the person last authenticated.
    pub auth_time: OffsetDateTime,
    /// The assurance level reached.
    pub acr: Option<&'a str>,
    /// The methods used.
    pub amr: &'a [String],
    /// The sign-in session the token was issued in (`sid`, as in the ID token): the identity
    /// API acts for the person only while it is live (ADR 0010). `None` for a grant that came
    /// from no session (token exchange).
    pub session: Option<&'a svc_domain::SessionId>,
}

/// A signed access token.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedAccessToken {
    /// The compact JWS.
    pub token: String,
    /// Its lifetime in seconds (`expires_in`).
    pub expires_in: u64,
    /// Its `jti`, for logs and later revocation.
    pub jti: String,
    /// Its `exp` (Unix seconds): how long a revocation must be remembered.
    pub exp: i64,
}

impl fmt::Debug for IssuedAccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedAccessToken")
            .field("token", &"<redacted>")
            .field("expires_in", &self.expires_in)
            .field("jti", &self.jti)
            .finish()
    }
}

/// An access token's `jti` and times, fixed before it is signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessTokenStamp {
    /// Its `jti`.
    pub jti: String,
    /// Its `iat` and `nbf` (Unix seconds).
    pub iat: i64,
    /// Its `exp` (Unix seconds).
    pub exp: i64,
    /// Its lifetime in seconds (`expires_in`).
    pub expires_in: u64,
}

/// Signs access tokens for tenants.
#[derive(Clone, Copy)]
pub struct AccessTokenIssuer<'a> {
    /// The tenants' signing keys.
    pub keys: &'a KeyService,
    /// The injected clock (`iat`, `nbf`, `exp`).
    pub clock: &'a dyn Clock,
    /// The injected randomness (`jti`).
    pub rng: &'a dyn Rng,
    /// Lifetimes.
    pub settings: &'a TokenSettings,
}

impl AccessTokenIssuer<'_> {
    /// Builds and signs the access token `token` of `tenant`, whose issuer is `issuer`.
    pub async fn issue(
        &self,
        tenant: &TenantId,
        issuer: &str,
        token: &NewAccessToken<'_>,
    ) -> Result<IssuedAccessToken, OAuthError> {
        let signer = self.keys.access_token_signer(tenant).await?;
        self.issue_with(&signer, tenant, issuer, token)
    }

    /// Like [`AccessTokenIssuer::issue`] with a signer fetched beforehand, so a caller holding a
    /// write transaction never waits on the key service (which may itself need the database).
    pub fn issue_with(
        &self,
        signer: &svc_crypto::SigningKey,
        tenant: &TenantId,
        issuer: &str,
        token: &NewAccessToken<'_>,
    ) -> Result<IssuedAccessToken, OAuthError> {
        let mut stamp = self.stamp(token.subject_type);
        if let Some(cap) = token.not_after.filter(|cap| *cap < stamp.exp) {
            stamp.exp = cap;
            stamp.expires_in = u64::try_from(cap.saturating_sub(stamp.iat)).unwrap_or(0);
        }
        self.sign_stamped(signer, tenant, issuer, token, stamp)
    }

    /// Fixes a token's `jti` and times before it is signed, so a grant can record them in its
    /// transaction and sign after the commit (signing an RS256 ID token alongside takes a
    /// quarter of a millisecond, too long to hold a write lock for).
    pub fn stamp(&self, subject_type: SubjectType) -> AccessTokenStamp {
        let expires_in = self.settings.access_token_lifetime(subject_type).as_secs();
        let iat = self.clock.now().unix_timestamp();
        AccessTokenStamp {
            jti: self.jti(),
            iat,
            exp: iat.saturating_add(i64::try_from(expires_in).unwrap_or(i64::MAX)),
            expires_in,
        }
    }

    /// Signs `token` with the `jti` and times of `stamp`.
    pub fn sign_stamped(
        &self,
        signer: &svc_crypto::SigningKey,
        tenant: &TenantId,
        issuer: &str,
        token: &NewAccessToken<'_>,
        stamp: AccessTokenStamp,
    ) -> Result<IssuedAccessToken, OAuthError> {
        let AccessTokenStamp {
            jti,
            iat,
            exp,
            expires_in,
        } = stamp;
        let mut claims = json!({
            "iss": issuer,
            "sub": token.subject,
            "aud": token.audience,
            "exp": exp,
            "nbf": iat,
            "iat": iat,
            "jti": jti,
            "tenant_id": tenant.as_str(),
            "client_id": token.client_id,
            "scope": token.scope.to_string(),
            "subject_type": token.subject_type.as_str(),
        });
        if let (Some(auth), Some(map)) = (token.authentication, claims.as_object_mut()) {
            map.insert("auth_time".into(), json!(auth.auth_time.unix_timestamp()));
            if let Some(acr) = auth.acr {
                map.insert("acr".into(), json!(acr));
            }
            if !auth.amr.is_empty() {
                map.insert("amr".into(), json!(auth.amr));
            }
            if let Some(sid) = auth.session {
                map.insert("sid".into(), json!(sid.as_str()));
            }
        }
        if let (Some(org), Some(map)) = (token.organization, claims.as_object_mut()) {
            org.insert_into(map);
            // The spec's claim table names the active organization `org`; CONTRACTS.md fixes
            // `org_id`. Both carry the id, so a resource server written to either reads it.
            map.insert("org".into(), json!(org.id));
        }
        if let (Some(jkt), Some(map)) = (token.confirmation, claims.as_object_mut()) {
            map.insert("cnf".into(), crate::dpop::confirmation(jkt));
        }
        if let (Some(actor), Some(map)) = (token.actor, claims.as_object_mut()) {
            map.insert("act".into(), actor.clone());
        }
        if let (Some(details), Some(map)) = (token.details, claims.as_object_mut()) {
            map.insert("authorization_details".into(), details.to_value());
        }
        let token = signer.sign_jwt(ACCESS_TOKEN_TYP, &claims)?;
        Ok(IssuedAccessToken {
            token,
            expires_in,
            jti,
            exp,
        })
    }

    fn jti(&self) -> String {
        random_jti(self.rng)
    }
}

/// A fresh `jti` of [`JTI_BYTES`] random bytes, base64url: every JWT svc signs uses one.
pub(crate) fn random_jti(rng: &dyn svc_domain::Rng) -> String {
    let mut bytes = [0u8; JTI_BYTES];
    rng.fill(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A successful token response (RFC 6749 §5.1; spec "Token response").
#[derive(Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenResponse {
    /// The access token (a JWT).
    pub access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to a DPoP key.
    pub token_type: &'static str,
    /// Lifetime of the access token in seconds.
    pub expires_in: u64,
    /// Granted scopes, space-delimited and sorted.
    pub scope: String,
    /// Only for user login flows that granted `offline_access`; never for
    /// `client_credentials`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Only when `openid` was granted in a user login flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    /// What `access_token` is, for token exchange only (RFC 8693 §2.2.1: required there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_token_type: Option<&'static str>,
    /// The RAR details the access token carries (RFC 9396 §7: returned whenever the request
    /// or the grant had them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_details: Option<serde_json::Value>,
}

/// The `token_type` of an access token bound to a DPoP key or not (RFC 9449 §5).
pub fn token_type(dpop_bound: bool) -> &'static str {
    if dpop_bound {
        crate::dpop::TOKEN_TYPE_DPOP
    } else {
        TOKEN_TYPE_BEARER
    }
}

impl TokenResponse {
    /// A response carrying only `access`, granted for `scope`, bound to a DPoP key or not.
    pub fn access_only(access: IssuedAccessToken, scope: &ScopeSet, dpop_bound: bool) -> Self {
        Self {
            access_token: access.token,
            token_type: token_type(dpop_bound),
            expires_in: access.expires_in,
            scope: scope.to_string(),
            refresh_token: None,
            id_token: None,
            issued_token_type: None,
            authorization_details: None,
        }
    }
}

impl fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |present: bool| if present { "<redacted>" } else { "-" };
        f.debug_struct("TokenResponse")
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .field("refresh_token", &redacted(self.refresh_token.is_some()))
            .field("id_token", &redacted(self.id_token.is_some()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_follow_the_subject_type() {
        let settings = TokenSettings {
            access_token_lifetime_human: Duration::from_secs(900),
            access_token_lifetime_agent: Duration::from_secs(120),
            ..TokenSettings::default()
        };
        assert_eq!(
            settings.access_token_lifetime(SubjectType::Human).as_secs(),
            900
        );
        assert_eq!(
            settings
                .access_token_lifetime(SubjectType::Anonymous)
                .as_secs(),
            900
        );
        assert_eq!(
            settings.access_token_lifetime(SubjectType::Agent).as_secs(),
            120
        );
        assert_eq!(
            settings
                .access_token_lifetime(SubjectType::System)
                .as_secs(),
            120
        );
        assert_eq!(
            TokenSettings::default().access_token_lifetime(SubjectType::System),
            Duration::from_secs(300)
        );
    }

    #[test]
    fn the_response_skips_absent_tokens_and_debug_redacts() {
        let response = TokenResponse::access_only(
            IssuedAccessToken {
                token: "header.payload.sig".into(),
                expires_in: 300,
                jti: "j".into(),
                exp: 0,
            },
            &ScopeSet::parse("b a").unwrap(),
            false,
        );
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "access_token": "header.payload.sig",
                "token_type": "Bearer",
                "expires_in": 300,
                "scope": "a b"
            })
        );
        let with_refresh = TokenResponse {
            refresh_token: Some("rt".into()),
            ..response.clone()
        };
        assert_eq!(
            serde_json::to_value(&with_refresh).unwrap()["refresh_token"],
            "rt"
        );
        assert!(!format!("{response:?}").contains("payload"));
    }

    #[test]
    fn subject_types_have_their_wire_spelling() {
        assert_eq!(SubjectType::Human.as_str(), "human");
        assert_eq!(SubjectType::Agent.as_str(), "agent");
        assert_eq!(SubjectType::System.as_str(), "system");
        assert_eq!(SubjectType::Anonymous.as_str(), "anonymous");
    }
}

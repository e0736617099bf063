//! A tenant's initial access tokens (RFC 7591 §3): created through the management API (shown
//! once, stored as SHA-256), listed and deleted there, and presented as `Authorization: Bearer`
//! at `/oauth/register` while the tenant's policy is `protected`, each registration spending one
//! use.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use serde::{Deserialize, Serialize};
use svc_domain::{
    GeneratedSecret, INITIAL_ACCESS_TOKEN_PREFIX, InitialAccessToken, InitialAccessTokenId,
    TenantId,
};
use time::OffsetDateTime;

/// Default lifetime of an initial access token: a day.
const DEFAULT_LIFETIME_SECS: u32 = 86_400;
/// Lifetimes allowed: a minute to a year.
const LIFETIME_SECS: std::ops::RangeInclusive<u32> = 60..=31_536_000;
/// Uses allowed when limited.
const MAX_USES: std::ops::RangeInclusive<u32> = 1..=10_000;
/// Most initial access tokens a tenant keeps (expired and spent ones count until deleted).
pub const MAX_INITIAL_ACCESS_TOKENS: usize = 100;

/// What a caller sends to create an initial access token. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"expires_in_secs": 86400, "max_uses": 1}))]
pub struct InitialAccessTokenInput {
    /// Seconds it works, 60 to 31536000; default 86400 (a day).
    #[serde(default)]
    #[schema(minimum = 60, maximum = 31_536_000)]
    pub expires_in_secs: Option<u32>,
    /// How many registrations it allows, 1 to 10000; absent: any number until it expires.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10_000)]
    pub max_uses: Option<u32>,
}

/// An initial access token as listed (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "id": "iat_01jd3k2m4n5p6q7r8s9t0v1w2x", "expires_at": "2026-11-25T10:00:00Z",
    "max_uses": 1, "uses": 0, "created_at": "2026-11-24T10:00:00Z"
}))]
pub struct InitialAccessTokenView {
    /// Its handle.
    pub id: String,
    /// When it stops working.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: OffsetDateTime,
    /// How many registrations it allows; absent: any number until it expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub max_uses: Option<u32>,
    /// How many registrations it allowed so far.
    pub uses: u32,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<&InitialAccessToken> for InitialAccessTokenView {
    fn from(token: &InitialAccessToken) -> Self {
        Self {
            id: token.id.as_str().to_owned(),
            expires_at: token.expires_at,
            max_uses: token.max_uses,
            uses: token.uses,
            created_at: token.created_at,
        }
    }
}

/// A created initial access token: its view and the token, shown this once.
#[derive(Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[schema(example = json!({
    "id": "iat_01jd3k2m4n5p6q7r8s9t0v1w2x", "expires_at": "2026-11-25T10:00:00Z",
    "max_uses": 1, "uses": 0, "created_at": "2026-11-24T10:00:00Z",
    "token": "iatok_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0cw"
}))]
pub struct CreatedInitialAccessTokenView {
    /// The token as listed.
    #[serde(flatten)]
    pub view: InitialAccessTokenView,
    /// The token to present as `Authorization: Bearer` at `/oauth/register`; only its hash is
    /// kept.
    pub token: String,
}

// By hand: the token never reaches a log through `{:?}`.
impl std::fmt::Debug for CreatedInitialAccessTokenView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedInitialAccessTokenView")
            .field("view", &self.view)
            .finish_non_exhaustive()
    }
}

/// Creates an initial access token of `tenant`, audited as `initial_access_token.created`.
///
/// Errors: [`ManageError::Invalid`] for a lifetime or use count out of range;
/// [`ManageError::Conflict`] when the tenant already keeps 100; [`ManageError::NotFound`] when the
/// tenant does not exist.
pub async fn create_initial_token(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    input: InitialAccessTokenInput,
) -> Result<CreatedInitialAccessTokenView, ManageError> {
    let lifetime = input.expires_in_secs.unwrap_or(DEFAULT_LIFETIME_SECS);
    if !LIFETIME_SECS.contains(&lifetime) {
        return Err(ManageError::invalid(
            "expires_in_secs",
            "expires_in_secs must be 60 to 31536000",
        ));
    }
    if input.max_uses.is_some_and(|m| !MAX_USES.contains(&m)) {
        return Err(ManageError::invalid(
            "max_uses",
            "max_uses must be 1 to 10000",
        ));
    }
    let now = ctx.now();
    let secret = GeneratedSecret::generate(INITIAL_ACCESS_TOKEN_PREFIX, ctx.rng.as_ref());
    let token = InitialAccessToken {
        id: InitialAccessTokenId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        tenant_id: tenant.clone(),
        hash: secret.hash,
        expires_at: now + time::Duration::seconds(i64::from(lifetime)),
        max_uses: input.max_uses,
        uses: 0,
        created_at: now,
    };
    let mut tx = ctx.store.write().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    if tx.initial_access_tokens(tenant).await?.len() >= MAX_INITIAL_ACCESS_TOKENS {
        return Err(ManageError::Conflict(format!(
            "the tenant already has {MAX_INITIAL_ACCESS_TOKENS} initial access tokens; delete some first"
        )));
    }
    tx.insert_initial_access_token(&token).await?;
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::INITIAL_ACCESS_TOKEN_CREATED,
        Some(token.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(CreatedInitialAccessTokenView {
        view: InitialAccessTokenView::from(&token),
        token: secret.plaintext,
    })
}

/// Every initial access token of `tenant` (at most 100), in creation order.
///
/// Errors: [`ManageError::NotFound`] when the tenant does not exist.
pub async fn list_initial_tokens(
    ctx: &ManageContext,
    tenant: &TenantId,
) -> Result<Vec<InitialAccessTokenView>, ManageError> {
    let mut tx = ctx.store.read().await?;
    if tx.tenant_by_id(tenant).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let tokens = tx.initial_access_tokens(tenant).await?;
    tx.finish().await?;
    Ok(tokens.iter().map(InitialAccessTokenView::from).collect())
}

/// Deletes the initial access token `id` of `tenant`, audited as `initial_access_token.deleted`.
/// Applications it allowed stay.
///
/// Errors: [`ManageError::NotFound`] when absent (or another tenant's, or malformed).
pub async fn delete_initial_token(
    ctx: &ManageContext,
    tenant: &TenantId,
    actor: &Actor,
    meta: &RequestMeta,
    id: &str,
) -> Result<(), ManageError> {
    let id = InitialAccessTokenId::parse(id).map_err(|_| ManageError::NotFound)?;
    let mut tx = ctx.store.write().await?;
    if !tx.delete_initial_access_token(tenant, &id).await? {
        return Err(ManageError::NotFound);
    }
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(tenant),
        action::INITIAL_ACCESS_TOKEN_DELETED,
        Some(id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok(())
}

/// Rule (RFC 7591 §3, RFC 6750 §3.1): the presented initial access token is one of the tenant's,
/// unexpired at `now`, with a use left. Compared in constant time against every one the tenant
/// keeps (at most 100), so the answer's timing does not tell which nearly matched. Returns its id.
pub(super) fn find_usable(
    tokens: &[InitialAccessToken],
    presented: Option<&str>,
    now: OffsetDateTime,
) -> Option<InitialAccessTokenId> {
    let presented = presented?;
    let mut found = None;
    for token in tokens {
        if token.hash.verify(presented) {
            found = Some(token);
        }
    }
    found
        .filter(|t| t.expires_at > now && t.max_uses.is_none_or(|max| t.uses < max))
        .map(|t| t.id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ManualClock, SecretHash, SeededRandom};

    #[test]
    fn only_an_unexpired_token_with_a_use_left_is_usable() {
        let at = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000);
        let clock = ManualClock::new(at);
        let tenant = TenantId::generate(&clock, &SeededRandom::new(1));
        let token = |seed: u64, max_uses, uses| InitialAccessToken {
            id: InitialAccessTokenId::generate(&clock, &SeededRandom::new(seed)),
            tenant_id: tenant.clone(),
            hash: SecretHash::of(&format!("iatok_{seed}")),
            expires_at: at + time::Duration::hours(1),
            max_uses,
            uses,
            created_at: at,
        };
        let tokens = [
            token(1, Some(1), 0),
            token(2, Some(1), 1),
            token(3, None, 7),
        ];
        assert_eq!(
            find_usable(&tokens, Some("iatok_1"), at),
            Some(tokens[0].id.clone())
        );
        assert_eq!(find_usable(&tokens, Some("iatok_2"), at), None, "spent");
        assert_eq!(
            find_usable(&tokens, Some("iatok_3"), at),
            Some(tokens[2].id.clone())
        );
        let later = at + time::Duration::hours(1);
        assert_eq!(
            find_usable(&tokens, Some("iatok_3"), later),
            None,
            "expired"
        );
        assert_eq!(find_usable(&tokens, Some("iatok_9"), at), None, "unknown");
        assert_eq!(find_usable(&tokens, None, at), None, "absent");
    }
}

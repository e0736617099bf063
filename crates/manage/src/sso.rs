//! An organization's enterprise single sign-on connection (issue 20 item 2): configure (or
//! replace), read and remove the upstream OpenID provider its people sign in through.
//!
//! Configuring reads the provider's discovery document through the deployment's guarded
//! egress (the [`svc_domain::SsoEgress`] port: SSRF guard, no redirects, bounded) before
//! anything is written, so a connection always names endpoints the provider published for
//! exactly that issuer (OpenID Connect Discovery §4.3). The client secret is sealed at once
//! ([`svc_crypto::SsoSecretKey`], bound to tenant and organization) and never shown again; a
//! replacement without a secret keeps the sealed one.
//!
//! Only a tenant-wide caller or an owner of the organization may configure or remove it: a
//! connection decides who signs in as the organization's people. Every change is audited
//! (`organization.sso_configured`, `organization.sso_removed`) and recorded as the event
//! `sso.configured` in the same transaction.

use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, Reach, RequestMeta};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use svc_crypto::SsoSecretKey;
use svc_domain::{
    EventData, EventType, MAX_SSO_SCOPES, MAX_SSO_SECRET_BYTES, MAX_SSO_URL_BYTES, OrganizationId,
    Scope, SsoClientAuth, SsoConnection, SsoEgress, TenantId,
};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// Longest client id accepted, in bytes.
const MAX_CLIENT_ID_BYTES: usize = 255;
/// Scopes asked for when the caller names none.
const DEFAULT_SCOPES: [&str; 3] = ["openid", "email", "profile"];

/// What configuring needs from the runtime.
#[derive(Clone)]
pub struct SsoServices {
    /// Reaches providers (discovery).
    pub egress: Arc<dyn SsoEgress>,
    /// Seals client secrets.
    pub secrets: Arc<SsoSecretKey>,
}

/// Body of `PUT /api/v1/organizations/{id}/sso`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "issuer": "https://login.acme.example",
    "client_id": "svc-acme",
    "client_secret": "upstream-client-secret",
    "enforced": false
}))]
pub struct SsoInput {
    /// The provider's issuer identifier: an absolute `https` URL (plain `http` is refused in
    /// production), without query or fragment. Its discovery document is read at
    /// `<issuer>/.well-known/openid-configuration` and must name exactly this issuer.
    #[schema(max_length = 2048, example = "https://login.acme.example")]
    pub issuer: String,
    /// Our client id at the provider.
    #[schema(min_length = 1, max_length = 255, example = "svc-acme")]
    pub client_id: String,
    /// How we authenticate at the provider's token endpoint: `client_secret_basic` (default)
    /// or `private_key_jwt` (RFC 7523: an assertion signed with the tenant's own signing key;
    /// register `client_jwks_uri` from the answer at the provider, no secret exists).
    #[serde(default)]
    #[schema(nullable = false, example = "client_secret_basic")]
    pub token_endpoint_auth_method: Option<SsoAuthMethod>,
    /// Our client secret at the provider (`client_secret_basic`). Required the first time, or
    /// when switching from `private_key_jwt`; omitted on a replacement, the stored one stays.
    /// Refused with `private_key_jwt`. Never shown back.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 512, nullable = false)]
    pub client_secret: Option<String>,
    /// Scopes asked for; must include `openid`. Default `["openid", "email", "profile"]`.
    #[serde(default)]
    #[schema(nullable = false, max_items = 16, example = json!(["openid", "email", "profile"]))]
    pub scopes: Option<Vec<String>>,
    /// Refuse password sign-in for addresses at the organization's verified domains (they
    /// must use single sign-on). Default `false`.
    #[serde(default)]
    pub enforced: bool,
}

/// `token_endpoint_auth_method` of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SsoAuthMethod {
    /// Our client secret, HTTP Basic.
    ClientSecretBasic,
    /// An assertion signed with the tenant's own key.
    PrivateKeyJwt,
}

/// A connection as the API shows it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SsoView {
    /// The organization.
    #[schema(value_type = String, example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: OrganizationId,
    /// The provider's issuer.
    pub issuer: String,
    /// From its discovery document.
    pub authorization_endpoint: String,
    /// From its discovery document.
    pub token_endpoint: String,
    /// From its discovery document.
    pub jwks_uri: String,
    /// The provider sends `iss` in authorization responses (RFC 9207), so one without it is
    /// refused.
    pub authorization_response_iss: bool,
    /// Our client id there.
    pub client_id: String,
    /// How we authenticate at its token endpoint.
    pub token_endpoint_auth_method: SsoAuthMethod,
    /// With `private_key_jwt`: the tenant's key set, to register at the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_jwks_uri: Option<String>,
    /// Scopes asked for.
    pub scopes: Vec<String>,
    /// Password sign-in refused at the organization's verified domains.
    pub enforced: bool,
    /// The redirect URI to register at the provider.
    #[schema(example = "https://acme.id.example/auth/sso/callback")]
    pub redirect_uri: String,
    /// When first configured.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// When last changed.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl SsoView {
    /// The view of `connection` for a tenant whose issuer is `issuer`.
    #[must_use]
    pub fn new(connection: &SsoConnection, issuer: &str) -> Self {
        let provider = &connection.provider;
        Self {
            organization_id: connection.organization_id.clone(),
            issuer: provider.issuer.clone(),
            authorization_endpoint: provider.authorization_endpoint.clone(),
            token_endpoint: provider.token_endpoint.clone(),
            jwks_uri: provider.jwks_uri.clone(),
            authorization_response_iss: provider.iss_parameter,
            client_id: connection.client_id.clone(),
            token_endpoint_auth_method: match connection.client_auth {
                SsoClientAuth::SecretBasic { .. } => SsoAuthMethod::ClientSecretBasic,
                SsoClientAuth::PrivateKeyJwt => SsoAuthMethod::PrivateKeyJwt,
            },
            client_jwks_uri: matches!(connection.client_auth, SsoClientAuth::PrivateKeyJwt)
                .then(|| format!("{}/.well-known/jwks.json", issuer.trim_end_matches('/'))),
            scopes: connection.scopes.clone(),
            enforced: connection.enforced,
            redirect_uri: svc_domain::sso_redirect_uri(issuer),
            created_at: connection.created_at,
            updated_at: connection.updated_at,
        }
    }
}

fn services(ctx: &ManageContext) -> Result<&SsoServices, ManageError> {
    // Routes exist only with `[enterprise_sso]` on, which wires these.
    ctx.sso.as_ref().ok_or(ManageError::NotFound)
}

/// Only the tenant or an owner of the organization decides who signs in as its people.
fn owner_only(reach: &Reach, org: &OrganizationId) -> Result<(), ManageError> {
    reach.within(Some(org))?;
    if reach.organization().is_some() && !reach.is_owner() {
        return Err(ManageError::Forbidden(
            "only an owner of the organization can configure its single sign-on".into(),
        ));
    }
    Ok(())
}

/// The issuer as given, if it is one: an absolute http(s) URL without query or fragment.
fn check_issuer(raw: &str) -> Result<String, ManageError> {
    let bad = || {
        ManageError::invalid(
            "issuer",
            "an absolute https URL without query or fragment, at most 2048 characters",
        )
    };
    if raw.len() > MAX_SSO_URL_BYTES {
        return Err(bad());
    }
    let url = url::Url::parse(raw).map_err(|_| bad())?;
    if !matches!(url.scheme(), "https" | "http")
        || url.host_str().is_none()
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(bad());
    }
    Ok(raw.to_owned())
}

/// Printable ASCII without spaces, of `1..=max` bytes.
fn check_token(field: &str, raw: &str, max: usize) -> Result<(), ManageError> {
    if raw.is_empty() || raw.len() > max || !raw.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ManageError::invalid(
            field,
            format!("1 to {max} printable ASCII characters without spaces"),
        ));
    }
    Ok(())
}

fn check_scopes(raw: Option<&[String]>) -> Result<Vec<String>, ManageError> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_SCOPES.map(str::to_owned).to_vec());
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
    if !scopes.iter().any(|s| s == "openid") {
        return Err(ManageError::invalid("scopes", "must include openid"));
    }
    Ok(scopes)
}

/// Configures (or replaces) the connection of the organization `org`; returns it and whether
/// it is new.
///
/// Errors: [`ManageError::NotFound`] when the organization is absent or beyond the caller's
/// reach; [`ManageError::Forbidden`] for an organization admin who is not an owner;
/// [`ManageError::Invalid`] naming `issuer` (also when its discovery document cannot be read
/// or names another issuer), `client_id`, `client_secret` or `scopes`.
pub async fn put(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
    input: SsoInput,
) -> Result<(SsoConnection, bool), ManageError> {
    let services = services(ctx)?;
    owner_only(reach, org)?;
    let issuer = check_issuer(&input.issuer)?;
    check_token("client_id", &input.client_id, MAX_CLIENT_ID_BYTES)?;
    if let Some(secret) = &input.client_secret {
        check_token("client_secret", secret, MAX_SSO_SECRET_BYTES)?;
    }
    let scopes = check_scopes(input.scopes.as_deref())?;
    {
        let mut read = ctx.store.read().await?;
        let exists = read.organization(tenant, org).await?.is_some();
        read.finish().await?;
        if !exists {
            return Err(ManageError::NotFound);
        }
    }
    // Outside any transaction: the provider may take seconds.
    let provider = services
        .egress
        .discover(&issuer)
        .await
        .map_err(|e| ManageError::invalid("issuer", e))?;
    let mut tx = ctx.store.write().await?;
    if tx.organization(tenant, org).await?.is_none() {
        return Err(ManageError::NotFound);
    }
    let existing = tx.sso_connection(tenant, org).await?;
    let method = input
        .token_endpoint_auth_method
        .unwrap_or(SsoAuthMethod::ClientSecretBasic);
    let client_auth = match (method, &input.client_secret, &existing) {
        (SsoAuthMethod::PrivateKeyJwt, None, _) => SsoClientAuth::PrivateKeyJwt,
        (SsoAuthMethod::PrivateKeyJwt, Some(_), _) => {
            return Err(ManageError::invalid(
                "client_secret",
                "not used with private_key_jwt: the tenant's own key signs the assertion",
            ));
        }
        (SsoAuthMethod::ClientSecretBasic, Some(secret), _) => SsoClientAuth::SecretBasic {
            sealed_secret: services
                .secrets
                .seal(secret, tenant, org)
                .map_err(|e| ManageError::Dependency(Box::new(e)))?,
        },
        (SsoAuthMethod::ClientSecretBasic, None, Some(current))
            if matches!(current.client_auth, SsoClientAuth::SecretBasic { .. }) =>
        {
            current.client_auth.clone()
        }
        (SsoAuthMethod::ClientSecretBasic, None, _) => {
            return Err(ManageError::invalid(
                "client_secret",
                "required with client_secret_basic when no secret is stored yet",
            ));
        }
    };
    let now = ctx.now();
    let connection = SsoConnection {
        tenant_id: tenant.clone(),
        organization_id: org.clone(),
        provider,
        client_id: input.client_id,
        client_auth,
        scopes,
        enforced: input.enforced,
        created_at: existing.as_ref().map_or(now, |c| c.created_at),
        updated_at: now,
    };
    tx.put_sso_connection(&connection).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &connection,
        action::ORGANIZATION_SSO_CONFIGURED,
        false,
    )
    .await?;
    tx.commit().await?;
    Ok((connection, existing.is_none()))
}

/// The connection of the organization `org`.
///
/// Errors: [`ManageError::NotFound`] when there is none (or the organization is absent or
/// beyond the caller's reach).
pub async fn get(
    ctx: &ManageContext,
    tenant: &TenantId,
    reach: &Reach,
    org: &OrganizationId,
) -> Result<SsoConnection, ManageError> {
    services(ctx)?;
    reach.within(Some(org))?;
    let mut read = ctx.store.read().await?;
    let connection = read.sso_connection(tenant, org).await?;
    read.finish().await?;
    connection.ok_or(ManageError::NotFound)
}

/// Removes the connection of the organization `org` and the links it made (its people keep
/// their accounts and membership, and may sign in however else they can).
///
/// Errors: as [`get`]; [`ManageError::Forbidden`] for an organization admin.
pub async fn remove(
    ctx: &ManageContext,
    tenant: &TenantId,
    (actor, meta): (&Actor, &RequestMeta),
    reach: &Reach,
    org: &OrganizationId,
) -> Result<(), ManageError> {
    services(ctx)?;
    owner_only(reach, org)?;
    let mut tx = ctx.store.write().await?;
    let connection = tx
        .sso_connection(tenant, org)
        .await?
        .ok_or(ManageError::NotFound)?;
    tx.delete_sso_connection(tenant, org).await?;
    record(
        tx.as_mut(),
        ctx,
        (actor, meta),
        &connection,
        action::ORGANIZATION_SSO_REMOVED,
        true,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn record(
    tx: &mut dyn svc_store::WriteTx,
    ctx: &ManageContext,
    (actor, meta): (&Actor, &RequestMeta),
    connection: &SsoConnection,
    action: &str,
    removed: bool,
) -> Result<(), ManageError> {
    let entry = audit::entry(
        ctx,
        actor,
        meta,
        Some(&connection.tenant_id),
        action,
        Some(connection.organization_id.as_str()),
    );
    audit::record(tx, &entry).await?;
    let data = EventData::SsoConfigured {
        organization_id: connection.organization_id.clone(),
        issuer: connection.provider.issuer.clone(),
        enforced: connection.enforced && !removed,
        removed,
        actor: actor.as_audit_string(),
    };
    crate::events::record(
        tx,
        ctx,
        &connection.tenant_id,
        EventType::SsoConfigured,
        data,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_checked_field_by_field() {
        assert!(check_issuer("https://login.acme.example").is_ok());
        assert!(check_issuer("http://127.0.0.1:8080/realms/acme").is_ok());
        for bad in [
            "login.acme.example",
            "ftp://login.acme.example",
            "https://login.acme.example?x=1",
            "https://login.acme.example#f",
            "https://user:pw@login.acme.example",
            "javascript:alert(1)",
        ] {
            assert!(check_issuer(bad).is_err(), "{bad}");
        }
        assert!(check_issuer(&format!("https://a.example/{}", "x".repeat(2048))).is_err());
        assert!(check_token("client_id", "svc", 255).is_ok());
        for bad in ["", "with space", "tab\t", "é"] {
            assert!(check_token("client_id", bad, 255).is_err(), "{bad:?}");
        }
        assert_eq!(check_scopes(None).unwrap(), ["openid", "email", "profile"]);
        let given = vec!["openid".to_owned(), "email".to_owned(), "openid".to_owned()];
        assert_eq!(check_scopes(Some(&given)).unwrap(), ["openid", "email"]);
        assert!(check_scopes(Some(&["email".to_owned()])).is_err());
        assert!(check_scopes(Some(&["open id".to_owned()])).is_err());
        assert!(check_scopes(Some(&vec!["openid".to_owned(); 17])).is_err());
    }
}

//! Tenant resolution (CONTRACTS.md "Tenancy and issuers"): which tenant a request addresses and
//! what its issuer is, from the validated host of [`ClientContext`].
//!
//! - Single-tenant (`tenant.default_tenant_slug`, or zero-config development): every host maps
//!   to that tenant; the issuer is `oidc.issuer_url`, or `{scheme}://{host}` when unset.
//! - Subdomain (`server.base_domain`): `{slug}.{base_domain}[:port]` is tenant `slug`, with the
//!   issuer `{scheme}://{slug}.{base_domain}[:port]`.
//!
//! An unknown tenant host is 404 `not_found`; a suspended tenant is 403 `forbidden` on every
//! surface. The lookup goes through [`TenantDirectory`] (the runtime caches it), so no handler
//! touches storage.

use crate::{ClientContext, Problem};
use async_trait::async_trait;
use axum::extract::{FromRef, FromRequestParts};
use http::request::Parts;
use std::sync::Arc;
use svc_domain::{Tenant, TenantSlug, TenantStatus};

/// How hosts map to tenants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenantRouting {
    /// Every host is this tenant.
    Single {
        /// The tenant.
        slug: TenantSlug,
        /// `oidc.issuer_url`; `None` derives the issuer from the request (development only,
        /// production validation requires a fixed issuer).
        issuer: Option<String>,
    },
    /// `{slug}.{base_domain}` is tenant `slug`.
    Subdomain {
        /// `server.base_domain`, lowercase, without port.
        base_domain: String,
    },
}

/// Looks tenants up by slug.
#[async_trait]
pub trait TenantDirectory: Send + Sync {
    /// The tenant with this slug, `Ok(None)` when there is none, `Err` when storage failed
    /// (the message is logged, never shown).
    async fn tenant_by_slug(&self, slug: &TenantSlug) -> Result<Option<Tenant>, String>;
}

/// Resolves the tenant of a request. Cheap to clone.
#[derive(Clone)]
pub struct TenantResolver {
    routing: Arc<TenantRouting>,
    directory: Arc<dyn TenantDirectory>,
}

impl std::fmt::Debug for TenantResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantResolver")
            .field("routing", &self.routing)
            .finish_non_exhaustive()
    }
}

/// The tenant a request addresses, with its issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentTenant {
    /// The tenant (active).
    pub tenant: Tenant,
    /// Its issuer: no trailing slash, no query or fragment.
    pub issuer: String,
}

impl TenantResolver {
    /// A resolver over `directory`.
    pub fn new(routing: TenantRouting, directory: Arc<dyn TenantDirectory>) -> Self {
        Self {
            routing: Arc::new(routing),
            directory,
        }
    }

    /// Which slug and issuer a request's host and scheme mean, before any lookup.
    pub fn locate(&self, client: &ClientContext) -> Result<(TenantSlug, String), Problem> {
        let host = client
            .host
            .as_deref()
            .ok_or_else(|| Problem::bad_request("the request has no valid Host header"))?;
        match self.routing.as_ref() {
            TenantRouting::Single { slug, issuer } => {
                let issuer = issuer
                    .clone()
                    .unwrap_or_else(|| format!("{}://{host}", client.scheme));
                Ok((slug.clone(), issuer.trim_end_matches('/').to_owned()))
            }
            TenantRouting::Subdomain { base_domain } => {
                let hostname = client.hostname().unwrap_or(host);
                let label = hostname
                    .strip_suffix(base_domain.as_str())
                    .and_then(|rest| rest.strip_suffix('.'))
                    .filter(|label| !label.contains('.'))
                    .ok_or_else(|| Problem::not_found("no tenant is served at this host"))?;
                let slug = TenantSlug::parse(label)
                    .map_err(|_| Problem::not_found("no tenant is served at this host"))?;
                Ok((slug, format!("{}://{host}", client.scheme)))
            }
        }
    }

    /// Resolves and loads the tenant: 404 when unknown, 403 when suspended.
    pub async fn resolve(&self, client: &ClientContext) -> Result<CurrentTenant, Problem> {
        let (slug, issuer) = self.locate(client)?;
        let tenant = self
            .directory
            .tenant_by_slug(&slug)
            .await
            .map_err(|cause| {
                Problem::service_unavailable().with_source(std::io::Error::other(cause))
            })?
            .ok_or_else(|| Problem::not_found("no tenant is served at this host"))?;
        if tenant.status == TenantStatus::Suspended {
            return Err(Problem::forbidden("this tenant is suspended"));
        }
        Ok(CurrentTenant { tenant, issuer })
    }
}

impl<S> FromRequestParts<S> for CurrentTenant
where
    S: Send + Sync,
    TenantResolver: FromRef<S>,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let client = ClientContext::from_request_parts(parts, state)
            .await
            .unwrap_or_else(|never| match never {});
        TenantResolver::from_ref(state).resolve(&client).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{Clock, ManualClock, SeededRandom, TenantId};
    use time::OffsetDateTime;

    struct Fixed(Vec<Tenant>);

    #[async_trait]
    impl TenantDirectory for Fixed {
        async fn tenant_by_slug(&self, slug: &TenantSlug) -> Result<Option<Tenant>, String> {
            Ok(self.0.iter().find(|t| &t.slug == slug).cloned())
        }
    }

    fn tenant(slug: &str, status: TenantStatus) -> Tenant {
        let clock = ManualClock::new(OffsetDateTime::UNIX_EPOCH);
        Tenant {
            id: TenantId::generate(&clock, &SeededRandom::new(slug.len() as u64)),
            slug: TenantSlug::parse(slug).unwrap(),
            display_name: slug.into(),
            status,
            signup_enabled: false,
            mfa_policy: svc_domain::MfaPolicy::Default,
            pairwise_secret: svc_domain::PairwiseSecret::from_bytes(&[7; 32])
                .unwrap_or_else(|| unreachable!()),
            created_at: clock.now(),
            updated_at: clock.now(),
        }
    }

    fn client(scheme: &'static str, host: &str) -> ClientContext {
        ClientContext {
            ip: None,
            scheme,
            host: Some(host.into()),
        }
    }

    fn subdomain() -> TenantResolver {
        TenantResolver::new(
            TenantRouting::Subdomain {
                base_domain: "id.localhost".into(),
            },
            Arc::new(Fixed(vec![
                tenant("acme", TenantStatus::Active),
                tenant("frozen", TenantStatus::Suspended),
            ])),
        )
    }

    #[tokio::test]
    async fn subdomain_hosts_resolve_to_their_tenant_and_issuer() {
        let found = subdomain()
            .resolve(&client("https", "acme.id.localhost:8443"))
            .await
            .unwrap();
        assert_eq!(found.tenant.slug.as_str(), "acme");
        assert_eq!(found.issuer, "https://acme.id.localhost:8443");
        let found = subdomain()
            .resolve(&client("http", "acme.id.localhost"))
            .await
            .unwrap();
        assert_eq!(found.issuer, "http://acme.id.localhost");
    }

    #[tokio::test]
    async fn unknown_foreign_nested_and_suspended_hosts_are_refused() {
        for host in [
            "nobody.id.localhost",
            "id.localhost",
            "a.acme.id.localhost",
            "acme.other.localhost",
            "xacme.id.localhost.evil",
        ] {
            let err = subdomain()
                .resolve(&client("http", host))
                .await
                .unwrap_err();
            assert_eq!(err.status(), http::StatusCode::NOT_FOUND, "{host}");
        }
        let err = subdomain()
            .resolve(&client("http", "frozen.id.localhost"))
            .await
            .unwrap_err();
        assert_eq!(err.status(), http::StatusCode::FORBIDDEN);
        assert_eq!(err.error(), "forbidden");
    }

    #[tokio::test]
    async fn single_tenant_mode_maps_every_host_and_prefers_the_configured_issuer() {
        let directory = Arc::new(Fixed(vec![tenant("default", TenantStatus::Active)]));
        let derived = TenantResolver::new(
            TenantRouting::Single {
                slug: TenantSlug::parse("default").unwrap(),
                issuer: None,
            },
            directory.clone(),
        );
        let found = derived
            .resolve(&client("http", "127.0.0.1:8080"))
            .await
            .unwrap();
        assert_eq!(
            (found.tenant.slug.as_str(), found.issuer.as_str()),
            ("default", "http://127.0.0.1:8080")
        );
        let fixed = TenantResolver::new(
            TenantRouting::Single {
                slug: TenantSlug::parse("default").unwrap(),
                issuer: Some("https://id.example.com/".into()),
            },
            directory,
        );
        let found = fixed.resolve(&client("http", "10.0.0.1")).await.unwrap();
        assert_eq!(
            found.issuer, "https://id.example.com",
            "trailing slash trimmed so iss compares exactly"
        );
    }
}

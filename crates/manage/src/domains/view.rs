//! The JSON shape of a domain claim on the management API, with its OpenAPI schema: the claim,
//! where it stands, and what to publish to prove it. Every member is always sent, so the schema
//! marks them all required.

use serde::Serialize;
use svc_domain::{DomainStatus, VerifiedDomain, WELL_KNOWN_PATH};
use time::OffsetDateTime;
use utoipa::ToSchema;

/// A domain an organization claimed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "dom_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "organization_id": "org_01jd2n4k6m8p0r2t4v6x8z0b2d",
    "name": "acme.example",
    "status": "pending",
    "verification": {
        "dns_txt": {
            "name": "_svc-verification.acme.example",
            "value": "svc-domain-verification=k3v9q2x7m4p8r1t6w0y5z2b8d4f7h1j3"
        },
        "https": {
            "url": "https://acme.example/.well-known/svc-domain-verification.txt",
            "body": "svc-domain-verification=k3v9q2x7m4p8r1t6w0y5z2b8d4f7h1j3"
        }
    },
    "verified_at": null,
    "last_checked_at": null,
    "auto_join": true,
    "auto_join_roles": ["member"],
    "created_at": "2026-11-24T10:15:30.123456Z",
    "updated_at": "2026-11-24T10:15:30.123456Z"
}))]
pub struct DomainView {
    /// Durable id (`dom_…`).
    #[schema(example = "dom_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub id: String,
    /// The organization claiming it.
    #[schema(example = "org_01jd2n4k6m8p0r2t4v6x8z0b2d")]
    pub organization_id: String,
    /// The domain, lowercase (an internationalized name in its `xn--` form).
    #[schema(example = "acme.example")]
    pub name: String,
    /// `pending` until proven, then `verified`.
    #[schema(value_type = DomainStatusSchema)]
    pub status: DomainStatus,
    /// What to publish to prove the claim (either one).
    pub verification: Verification,
    /// When it was proven (RFC 3339), `null` while pending.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub verified_at: Option<OffsetDateTime>,
    /// When its proof was last looked for (RFC 3339), `null` before the first attempt.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, required = true)]
    pub last_checked_at: Option<OffsetDateTime>,
    /// Whether people who sign up with a verified address at exactly this domain join the
    /// organization (only while the domain is verified).
    pub auto_join: bool,
    /// The organization roles they join with.
    #[schema(example = json!(["member"]))]
    pub auto_join_roles: Vec<String>,
    /// Creation time (RFC 3339).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    /// Last change (RFC 3339); the `ETag` of the claim is derived from it.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

/// The two ways to prove a claim; both carry this claim's own token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = DomainVerification)]
pub struct Verification {
    /// A TXT record.
    pub dns_txt: DnsTxtProof,
    /// A file served over HTTPS.
    pub https: HttpsProof,
}

/// The TXT record that proves a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DnsTxtProof {
    /// The record's name: `_svc-verification.<domain>`.
    #[schema(example = "_svc-verification.acme.example")]
    pub name: String,
    /// The record's value, exactly.
    #[schema(example = "svc-domain-verification=k3v9q2x7m4p8r1t6w0y5z2b8d4f7h1j3")]
    pub value: String,
}

/// The file that proves a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct HttpsProof {
    /// Where it is fetched (no redirect is followed; the host must resolve to public
    /// addresses).
    #[schema(example = "https://acme.example/.well-known/svc-domain-verification.txt")]
    pub url: String,
    /// What it holds (surrounding whitespace is ignored).
    #[schema(example = "svc-domain-verification=k3v9q2x7m4p8r1t6w0y5z2b8d4f7h1j3")]
    pub body: String,
}

impl From<&VerifiedDomain> for DomainView {
    fn from(d: &VerifiedDomain) -> Self {
        let proof = d.proof();
        Self {
            id: d.id.to_string(),
            organization_id: d.organization_id.to_string(),
            name: d.name.to_string(),
            status: d.status,
            verification: Verification {
                dns_txt: DnsTxtProof {
                    name: d.name.txt_record_name(),
                    value: proof.clone(),
                },
                https: HttpsProof {
                    url: format!("https://{}{WELL_KNOWN_PATH}", d.name),
                    body: proof,
                },
            },
            verified_at: d.verified_at,
            last_checked_at: d.last_checked_at,
            auto_join: d.auto_join,
            auto_join_roles: d
                .auto_join_roles
                .iter()
                .map(|r| r.as_str().to_owned())
                .collect(),
            created_at: d.created_at,
            updated_at: d.updated_at,
        }
    }
}

/// The schema of [`DomainStatus`] on the wire (named `DomainStatus` in the document).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = DomainStatus)]
pub enum DomainStatusSchema {
    /// Claimed; the proof has not been found yet.
    Pending,
    /// Proven.
    Verified,
}

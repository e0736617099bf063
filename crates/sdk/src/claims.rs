//! The validated claims of an access token (spec "Access token (JWT) claims", RFC 9068 §2.2).
//!
//! [`AccessTokenClaims`] is only built after rules 3–10 passed; authorization decisions use it and
//! nothing else (spec: decoded payloads never substitute for validation).

use crate::error::ValidationError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Nesting limit of an `act` chain (rule 9). RFC 8693 §4.1 sets none; a bound keeps a hostile
/// token from making validation recurse without end.
pub(crate) const MAX_ACTOR_DEPTH: usize = 8;

/// The caller category in `subject_type` (spec "Access token (JWT) claims").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SubjectType {
    /// A person.
    Human,
    /// An autonomous or AI agent.
    Agent,
    /// A service or system principal (e.g. client credentials).
    System,
    /// A caller with no identified principal.
    Anonymous,
}

impl SubjectType {
    /// Every subject type.
    pub const ALL: [SubjectType; 4] = [Self::Human, Self::Agent, Self::System, Self::Anonymous];

    /// The claim value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Agent => "agent",
            Self::System => "system",
            Self::Anonymous => "anonymous",
        }
    }

    /// Parses a claim value; exact, lowercase match only.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == value)
    }
}

impl fmt::Display for SubjectType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One link of a delegation chain (`act`, RFC 8693 §4.1): who acts on behalf of the token's
/// subject, and, nested, on whose behalf that actor acted in turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The acting party's subject identifier.
    pub sub: String,
    /// The prior actor, when the chain is longer (RFC 8693 §4.1: informational only; the current
    /// actor is the outermost one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Box<Actor>>,
    /// Other members identifying the actor (e.g. `client_id`, `iss`).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Actor {
    /// Reads an actor chain from a JSON value, refusing anything but an object with a string
    /// `sub` at every level, at most [`MAX_ACTOR_DEPTH`] deep.
    pub(crate) fn from_value(value: &Value, depth: usize) -> Option<Self> {
        if depth >= MAX_ACTOR_DEPTH {
            return None;
        }
        let object = value.as_object()?;
        let sub = object.get("sub")?.as_str().filter(|s| !s.is_empty())?;
        let act = match object.get("act") {
            None => None,
            Some(inner) => Some(Box::new(Self::from_value(inner, depth + 1)?)),
        };
        let other = object
            .iter()
            .filter(|(k, _)| *k != "sub" && *k != "act")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(Self {
            sub: sub.to_owned(),
            act,
            other,
        })
    }
}

/// The confirmation claim (`cnf`, RFC 7800 §3.1) of a DPoP-bound token (RFC 9449 §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// Base64url SHA-256 JWK thumbprint (RFC 7638) of the key the token is bound to.
    pub jkt: String,
}

/// The claims of an access token that passed the whole validation contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessTokenClaims {
    /// Issuer (rule 3 checked it).
    pub iss: String,
    /// Subject; with `tenant_id` the durable key of the principal (never the email).
    pub sub: String,
    /// Audiences (rule 4 checked this API's is among them); a single string becomes one item.
    pub aud: Vec<String>,
    /// Expiry, seconds since the epoch (rule 5).
    pub exp: i64,
    /// Not-before, seconds since the epoch, when present (rule 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    /// Issued-at, seconds since the epoch.
    pub iat: i64,
    /// Token identifier.
    pub jti: String,
    /// The tenant isolation boundary (rule 6).
    pub tenant_id: String,
    /// The OAuth application that received the token.
    pub client_id: String,
    /// Granted scopes, split from the space-delimited claim (rule 7).
    pub scope: Vec<String>,
    /// Caller category (rule 8).
    pub subject_type: SubjectType,
    /// Delegation chain, when the token was obtained by token exchange (rule 9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Actor>,
    /// The active organization's id (`org_…`), when the person acts in one: the token's `org_id`
    /// (CONTRACTS.md "Organizations"), else its `org` (the spec's claim table; the server sends
    /// both with the same value, and a token where they differ is refused). Key on this, never
    /// on the slug. Rule 6b checked it when the route names an organization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// The active organization's slug (`org_slug`) when the token was issued, when present. For
    /// display only: slugs can change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org_slug: Option<String>,
    /// DPoP binding, when sender-constrained (rule 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
    /// The sign-in session a person's token was issued in (`sid`, as in the person's ID token),
    /// when it came from one. Not part of the validation contract: a resource server that acts
    /// for the person only while they are signed in checks it against the issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
}

impl AccessTokenClaims {
    /// Whether the token grants `scope` exactly. Scopes do not imply one another:
    /// `users:write` does not grant `users:read` (CONTRACTS.md).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scope.iter().any(|s| s == scope)
    }

    /// Whether the token is delegated (carries `act`).
    pub fn is_delegated(&self) -> bool {
        self.act.is_some()
    }

    /// Builds the typed claims from a claims object that already passed rules 3–10.
    ///
    /// RFC 9068 §2.2: `iss`, `exp`, `aud`, `sub`, `client_id`, `iat` and `jti` are REQUIRED; the
    /// spec's table adds `tenant_id` and `subject_type`.
    pub(crate) fn from_checked(claims: &Map<String, Value>) -> Result<Self, ValidationError> {
        let string = |claim: &'static str| {
            claims
                .get(claim)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(ValidationError::InvalidClaim { claim })
        };
        let optional_string = |claim: &'static str| match claims.get(claim) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ValidationError::InvalidClaim { claim }),
        };
        let date = |claim: &'static str| {
            claims
                .get(claim)
                .and_then(numeric_date)
                .ok_or(ValidationError::InvalidClaim { claim })
        };

        let aud = match claims.get("aud") {
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or(ValidationError::InvalidClaim { claim: "aud" })?,
            _ => return Err(ValidationError::InvalidClaim { claim: "aud" }),
        };
        let scope = optional_string("scope")?
            .map(|s| split_scope(&s).map(str::to_owned).collect())
            .unwrap_or_default();
        let subject_type = claims
            .get("subject_type")
            .and_then(Value::as_str)
            .and_then(SubjectType::parse)
            .ok_or(ValidationError::InvalidClaim {
                claim: "subject_type",
            })?;
        let act = match claims.get("act") {
            None => None,
            Some(value) => Some(
                Actor::from_value(value, 0)
                    .ok_or(ValidationError::InvalidClaim { claim: "act" })?,
            ),
        };
        let cnf = match claims.get("cnf") {
            None => None,
            Some(value) => Some(
                value
                    .get("jkt")
                    .and_then(Value::as_str)
                    .map(|jkt| Confirmation {
                        jkt: jkt.to_owned(),
                    })
                    .ok_or(ValidationError::InvalidClaim { claim: "cnf" })?,
            ),
        };
        // `org_id` (CONTRACTS.md) and `org` (the spec's claim table) both carry the organization
        // id; a token where they disagree has no single organization and is refused.
        let org = match (optional_string("org_id")?, optional_string("org")?) {
            (Some(id), Some(org)) if id != org => {
                return Err(ValidationError::InvalidClaim { claim: "org_id" });
            }
            (Some(id), _) => Some(id),
            (None, org) => org,
        };
        let org_slug = optional_string("org_slug")?;
        let sid = optional_string("sid")?;
        let nbf = match claims.get("nbf") {
            None => None,
            Some(value) => {
                Some(numeric_date(value).ok_or(ValidationError::InvalidClaim { claim: "nbf" })?)
            }
        };

        Ok(Self {
            iss: string("iss")?,
            sub: string("sub")?,
            aud,
            exp: date("exp")?,
            nbf,
            iat: date("iat")?,
            jti: string("jti")?,
            tenant_id: string("tenant_id")?,
            client_id: string("client_id")?,
            scope,
            subject_type,
            act,
            org,
            org_slug,
            cnf,
            sid,
        })
    }
}

/// RFC 7519 §2 NumericDate: seconds since the epoch, possibly non-integer (truncated toward
/// negative infinity here). Anything else is `None`.
pub(crate) fn numeric_date(value: &Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(i) = number.as_i64() {
        return Some(i);
    }
    let f = number.as_f64()?;
    // Outside the i64 range (or NaN, which JSON cannot carry anyway) is not a usable date.
    if f.is_finite() && f >= i64::MIN as f64 && f < i64::MAX as f64 {
        Some(f.floor() as i64)
    } else {
        None
    }
}

/// RFC 6749 §3.3: scope is a list of space-delimited, case-sensitive strings.
pub(crate) fn split_scope(scope: &str) -> impl Iterator<Item = &str> {
    scope.split(' ').filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn full() -> Value {
        json!({
            "iss": "https://acme.id.example",
            "sub": "usr_1",
            "aud": ["https://acme.id.example/api/v1", "other"],
            "exp": 2000,
            "nbf": 1000,
            "iat": 1000,
            "jti": "j1",
            "tenant_id": "ten_1",
            "client_id": "app_1",
            "scope": "users:read  users:write",
            "subject_type": "agent",
            "act": {"sub": "agt_1", "client_id": "app_2", "act": {"sub": "usr_9"}},
            "org_id": "org_1",
            "org": "org_1",
            "org_slug": "acme-eu",
            "cnf": {"jkt": "abc"},
        })
    }

    fn build(v: &Value) -> Result<AccessTokenClaims, ValidationError> {
        AccessTokenClaims::from_checked(v.as_object().unwrap())
    }

    #[test]
    fn builds_every_claim() {
        let c = build(&full()).unwrap();
        assert_eq!(c.aud.len(), 2);
        assert_eq!(c.scope, vec!["users:read", "users:write"]);
        assert!(c.has_scope("users:write") && !c.has_scope("users"));
        assert_eq!(c.subject_type, SubjectType::Agent);
        let act = c.act.as_ref().unwrap();
        assert_eq!(act.sub, "agt_1");
        assert_eq!(act.other["client_id"], "app_2");
        assert_eq!(act.act.as_ref().unwrap().sub, "usr_9");
        assert_eq!(c.cnf.unwrap().jkt, "abc");
        assert_eq!(c.org.as_deref(), Some("org_1"));
        assert_eq!(c.org_slug.as_deref(), Some("acme-eu"));
        assert_eq!(c.nbf, Some(1000));
    }

    #[test]
    fn rfc_9068_required_claims_are_required() {
        for claim in ["sub", "client_id", "iat", "jti"] {
            let mut v = full();
            v.as_object_mut().unwrap().remove(claim);
            assert_eq!(
                build(&v).unwrap_err(),
                ValidationError::InvalidClaim { claim },
                "{claim}"
            );
        }
    }

    #[test]
    fn scope_and_optional_claims_may_be_absent() {
        let mut v = full();
        for claim in ["scope", "act", "org_id", "org", "org_slug", "cnf", "nbf"] {
            v.as_object_mut().unwrap().remove(claim);
        }
        let c = build(&v).unwrap();
        assert!(c.scope.is_empty() && c.act.is_none() && c.cnf.is_none());
        assert!(c.org.is_none() && c.org_slug.is_none() && c.nbf.is_none());
    }

    #[test]
    fn wrongly_typed_claims_are_refused() {
        for (claim, value) in [
            ("scope", json!(["users:read"])),
            ("org", json!(1)),
            ("org_id", json!(["org_1"])),
            ("org_id", json!({"id": "org_1"})),
            ("org_slug", json!(true)),
            ("iat", json!("1000")),
            ("aud", json!([1])),
        ] {
            let mut v = full();
            v[claim] = value;
            assert_eq!(
                build(&v).unwrap_err(),
                ValidationError::InvalidClaim { claim }
            );
        }
    }

    /// `full()` with its organization claims replaced by `org` (absent where `null`).
    fn with_org(org: Value) -> Value {
        let mut v = full();
        let map = v.as_object_mut().unwrap();
        for claim in ["org_id", "org", "org_slug"] {
            map.remove(claim);
        }
        for (claim, value) in org.as_object().unwrap() {
            if !value.is_null() {
                map.insert(claim.clone(), value.clone());
            }
        }
        v
    }

    #[test]
    fn the_organization_is_org_id_else_org() {
        for org in [
            json!({"org_id": "org_1"}),
            json!({"org": "org_1"}),
            json!({"org_id": "org_1", "org": "org_1"}),
            json!({"org_id": "org_1", "org": null}),
        ] {
            let c = build(&with_org(org.clone())).unwrap();
            assert_eq!(c.org.as_deref(), Some("org_1"), "{org}");
            assert_eq!(c.org_slug, None, "{org}");
        }
    }

    #[test]
    fn differing_org_id_and_org_are_refused() {
        for org in [
            json!({"org_id": "org_1", "org": "org_2"}),
            json!({"org_id": "org_1", "org": "ORG_1"}),
            json!({"org_id": "org_1", "org": ""}),
        ] {
            assert_eq!(
                build(&with_org(org.clone())).unwrap_err(),
                ValidationError::InvalidClaim { claim: "org_id" },
                "{org}"
            );
        }
        // A malformed claim is named as such, whichever it is.
        assert_eq!(
            build(&with_org(json!({"org_id": "org_1", "org": 1}))).unwrap_err(),
            ValidationError::InvalidClaim { claim: "org" }
        );
        assert_eq!(
            build(&with_org(json!({"org_id": 1, "org": "org_1"}))).unwrap_err(),
            ValidationError::InvalidClaim { claim: "org_id" }
        );
    }

    #[test]
    fn org_slug_is_read_apart_from_the_id() {
        let c = build(&with_org(json!({"org_id": "org_1", "org_slug": "acme-eu"}))).unwrap();
        assert_eq!(
            (c.org.as_deref(), c.org_slug.as_deref()),
            (Some("org_1"), Some("acme-eu"))
        );
        // The slug never stands in for the id.
        let c = build(&with_org(json!({"org_slug": "acme-eu"}))).unwrap();
        assert_eq!(
            (c.org.as_deref(), c.org_slug.as_deref()),
            (None, Some("acme-eu"))
        );
    }

    #[test]
    fn claims_round_trip_through_serde() {
        let with_org_claims = build(&full()).unwrap();
        let without = build(&with_org(json!({}))).unwrap();
        for c in [with_org_claims, without] {
            let value = serde_json::to_value(&c).unwrap();
            assert_eq!(
                serde_json::from_value::<AccessTokenClaims>(value.clone()).unwrap(),
                c
            );
            let object = value.as_object().unwrap();
            assert_eq!(object.get("org").and_then(Value::as_str), c.org.as_deref());
            assert_eq!(
                object.get("org_slug").and_then(Value::as_str),
                c.org_slug.as_deref()
            );
            // Absent options are omitted, not `null`.
            if c.org.is_none() {
                assert!(!object.contains_key("org") && !object.contains_key("org_slug"));
            }
        }
        // Claims serialized before `org_slug` existed still deserialize.
        let mut old = serde_json::to_value(build(&full()).unwrap()).unwrap();
        old.as_object_mut().unwrap().remove("org_slug");
        let c: AccessTokenClaims = serde_json::from_value(old).unwrap();
        assert_eq!((c.org.as_deref(), c.org_slug), (Some("org_1"), None));
    }

    #[test]
    fn numeric_dates_accept_fractions() {
        assert_eq!(numeric_date(&json!(10.7)), Some(10));
        assert_eq!(numeric_date(&json!(-0.5)), Some(-1));
        assert_eq!(numeric_date(&json!(1e300)), None);
        assert_eq!(numeric_date(&json!("10")), None);
    }

    #[test]
    fn subject_types_round_trip() {
        for t in SubjectType::ALL {
            assert_eq!(SubjectType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
        }
        assert_eq!(SubjectType::parse("Human"), None);
    }

    #[test]
    fn actor_chains_are_bounded() {
        let mut deep = json!({"sub": "a0"});
        for i in 1..=MAX_ACTOR_DEPTH {
            deep = json!({"sub": format!("a{i}"), "act": deep});
        }
        assert!(Actor::from_value(&deep, 0).is_none());
        assert!(Actor::from_value(&deep["act"], 0).is_some());
        assert!(Actor::from_value(&json!({"sub": 1}), 0).is_none());
        assert!(Actor::from_value(&json!("usr"), 0).is_none());
    }
}

//! What assurance an authorization request asks for, and whether a session's `acr` meets it
//! (OIDC Core §3.1.2.1 `acr_values`, §5.5.1.1 essential `acr`; CONTRACTS.md levels).
//!
//! An essential `acr` claim wins over `acr_values` (the claims request is the stronger form).
//! A request is met by a session at or above the weakest level it names that this service
//! knows: asking for `urn:svc:aal1 urn:svc:aal2` accepts either, and an aal2 session meets a
//! request for aal1 (a stronger authentication is never a reason to refuse). Values this
//! service does not issue are ignored when others are present, and never met alone.

use super::request::AuthorizationRequest;
use crate::claims::ClaimsRequest;
use svc_domain::acr_rank;

/// The assurance a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Asked {
    /// The rank of the weakest known level asked for; `None` when nothing is asked, or only
    /// unknown levels (see `unknown_only`).
    weakest: Option<usize>,
    /// Levels were asked for, but none that this service knows.
    unknown_only: bool,
    /// Whether the request is essential (an essential `acr` claim), so failing it is an error
    /// rather than a lower `acr` in the token.
    pub(super) essential: bool,
}

impl Asked {
    /// What `req` asks for.
    pub(super) fn of(req: &AuthorizationRequest) -> Self {
        let claims = ClaimsRequest::parse(req.claims.as_deref());
        let (values, essential): (Vec<&str>, bool) = match claims.essential_acr() {
            Some(values) => (values.iter().map(String::as_str).collect(), true),
            None => (
                req.acr_values
                    .as_deref()
                    .unwrap_or_default()
                    .split(' ')
                    .filter(|v| !v.is_empty())
                    .collect(),
                false,
            ),
        };
        let weakest = values.iter().filter_map(|v| acr_rank(v)).min();
        Self {
            weakest,
            unknown_only: weakest.is_none() && !values.is_empty(),
            essential,
        }
    }

    /// The request raised to at least `level` and made essential (a deployment policy): what
    /// was asked above it still counts, anything below no longer does.
    pub(super) fn at_least(self, level: &str) -> Self {
        let floor = acr_rank(level);
        Self {
            weakest: self.weakest.max(floor),
            unknown_only: self.unknown_only,
            essential: true,
        }
    }

    /// Whether a session at `acr` meets the request.
    pub(super) fn met_by(&self, acr: Option<&str>) -> bool {
        if self.unknown_only {
            return false;
        }
        let Some(weakest) = self.weakest else {
            return true;
        };
        acr.and_then(acr_rank).is_some_and(|rank| rank >= weakest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::{ACR_AAL1, ACR_AAL2};

    fn asked(acr_values: Option<&str>, claims: Option<&str>) -> Asked {
        let mut req: AuthorizationRequest = serde_json::from_value(serde_json::json!({
            "client_id": "app_01jd0000000000000000000000",
            "redirect_uri": "https://app.example/cb",
            "scope": "openid",
            "prompt": {"none": false, "login": false, "consent": false},
        }))
        .unwrap_or_else(|e| panic!("fixture request: {e}"));
        req.acr_values = acr_values.map(str::to_owned);
        req.claims = claims.map(str::to_owned);
        Asked::of(&req)
    }

    #[test]
    fn nothing_asked_is_met_by_anything() {
        let a = asked(None, None);
        assert!(a.met_by(None) && a.met_by(Some(ACR_AAL1)));
        assert!(!a.essential);
    }

    #[test]
    fn the_weakest_known_level_decides() {
        let a = asked(Some("urn:svc:aal2"), None);
        assert!(!a.met_by(Some(ACR_AAL1)));
        assert!(a.met_by(Some(ACR_AAL2)));
        let either = asked(Some("urn:svc:aal2 urn:svc:aal1 urn:x:gold"), None);
        assert!(either.met_by(Some(ACR_AAL1)));
        let low = asked(Some("urn:svc:aal1"), None);
        assert!(low.met_by(Some(ACR_AAL2)), "stronger meets weaker");
        assert!(!low.met_by(None));
    }

    #[test]
    fn unknown_levels_alone_are_never_met() {
        let a = asked(Some("urn:x:gold"), None);
        assert!(!a.met_by(Some(ACR_AAL2)));
        let e = asked(
            None,
            Some(r#"{"id_token":{"acr":{"essential":true,"values":["urn:x:gold"]}}}"#),
        );
        assert!(e.essential && !e.met_by(Some(ACR_AAL2)));
    }

    #[test]
    fn a_policy_floor_raises_what_was_asked_and_makes_it_essential() {
        let raised = asked(Some("urn:svc:aal1"), None).at_least(ACR_AAL2);
        assert!(raised.essential);
        assert!(!raised.met_by(Some(ACR_AAL1)));
        assert!(raised.met_by(Some(ACR_AAL2)));
        let nothing = asked(None, None).at_least(ACR_AAL2);
        assert!(!nothing.met_by(None) && nothing.met_by(Some(ACR_AAL2)));
    }

    #[test]
    fn an_essential_claim_wins_over_acr_values() {
        let a = asked(
            Some("urn:svc:aal1"),
            Some(r#"{"id_token":{"acr":{"essential":true,"values":["urn:svc:aal2"]}}}"#),
        );
        assert!(a.essential);
        assert!(!a.met_by(Some(ACR_AAL1)));
        let voluntary_claim = asked(
            Some("urn:svc:aal2"),
            Some(r#"{"id_token":{"acr":{"values":["urn:svc:aal1"]}}}"#),
        );
        assert!(!voluntary_claim.essential);
        assert!(!voluntary_claim.met_by(Some(ACR_AAL1)));
    }
}

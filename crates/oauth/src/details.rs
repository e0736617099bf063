//! Rich Authorization Requests at the token endpoint (RFC 9396 §6): which `authorization_details`
//! a token request gets.
//!
//! Rules:
//! 1. While the deployment has them off, a token request that sends them is refused
//!    (`invalid_request`), never silently ignored; details granted before they were switched
//!    off stay in the tokens of their grant, since the person approved them.
//! 2. A grant that carries details (a code, a refresh family) gives them whole unless the request
//!    narrows them (§6.1, §7): every requested object must narrow a granted one
//!    ([`AuthorizationDetails::narrows`]) and still match its type's schema. Asking for details
//!    on a grant made without any, or for more than was granted, is
//!    `invalid_authorization_details`.
//! 3. A request that starts a grant outside the authorization endpoint takes details directly,
//!    of the application's registered types (§6): client credentials at the token endpoint,
//!    and the device authorization and CIBA endpoints, whose requests keep them for the
//!    person to approve (the code their approval stores carries them into rule 2).
//!
//! Agents register detail types as applications do; their grants read the same rules over the
//! agent's types (`*_types` below): details asked directly for the agent itself (rule 3), the
//! details of a delegation a person approved for a token acting for them (rule 2).

use crate::error::OAuthError;
use svc_domain::{Application, AuthorizationDetails, DetailType};

/// Rule 1.
fn enabled(on: bool) -> Result<(), OAuthError> {
    if on {
        Ok(())
    } else {
        Err(OAuthError::invalid_request(
            "authorization_details is not enabled on this deployment \
             ([oidc].authorization_details = false)",
        ))
    }
}

fn parse(types: &[DetailType], raw: &str) -> Result<AuthorizationDetails, OAuthError> {
    AuthorizationDetails::parse(raw, types)
        .map_err(|e| OAuthError::invalid_authorization_details(e.0))
}

/// Rule 2: the details of a token issued from `granted`, given the request's `raw` parameter.
pub(crate) fn from_grant(
    app: &Application,
    granted: Option<&AuthorizationDetails>,
    raw: Option<&str>,
    on: bool,
) -> Result<Option<AuthorizationDetails>, OAuthError> {
    from_grant_types(&app.authorization_details_types, granted, raw, on)
}

/// Rule 2 over the detail types `types` (an agent's).
pub(crate) fn from_grant_types(
    types: &[DetailType],
    granted: Option<&AuthorizationDetails>,
    raw: Option<&str>,
    on: bool,
) -> Result<Option<AuthorizationDetails>, OAuthError> {
    let Some(raw) = raw else {
        return Ok(granted.cloned());
    };
    enabled(on)?;
    let Some(granted) = granted else {
        return Err(OAuthError::invalid_authorization_details(
            "this grant was made without authorization_details; a token request can only narrow \
             the details the person approved",
        ));
    };
    let wanted = parse(types, raw)?;
    if wanted.narrows(granted) {
        Ok(Some(wanted))
    } else {
        Err(OAuthError::invalid_authorization_details(
            "authorization_details asks for more than was granted (RFC 9396 §7: a token \
             request may only drop array elements of a granted object)",
        ))
    }
}

/// Rule 3: details asked for directly, without a grant.
pub(crate) fn direct(
    app: &Application,
    raw: Option<&str>,
    on: bool,
) -> Result<Option<AuthorizationDetails>, OAuthError> {
    direct_types(&app.authorization_details_types, raw, on)
}

/// Rule 3 over the detail types `types` (an agent's).
pub(crate) fn direct_types(
    types: &[DetailType],
    raw: Option<&str>,
    on: bool,
) -> Result<Option<AuthorizationDetails>, OAuthError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    enabled(on)?;
    parse(types, raw).map(Some)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    fn app() -> Application {
        let tenant = svc_store::conformance::tenant_fixture("acme", 1);
        let mut app = svc_store::conformance::application_fixture(&tenant, 1);
        app.authorization_details_types = vec![
            DetailType::parse(
                "account_information",
                "Read your accounts",
                json!({"properties": {"actions": {"items": {"enum": ["list", "read"]}}}}),
            )
            .unwrap(),
        ];
        app
    }

    const BOTH: &str = r#"[{"type":"account_information","actions":["list","read"]}]"#;
    const LIST: &str = r#"[{"type":"account_information","actions":["list"]}]"#;

    #[test]
    fn a_grant_gives_its_details_whole_or_narrowed_never_widened() {
        let app = app();
        let granted = AuthorizationDetails::parse(LIST, &app.authorization_details_types).unwrap();
        assert_eq!(
            from_grant(&app, Some(&granted), None, true).unwrap(),
            Some(granted.clone())
        );
        assert_eq!(
            from_grant(&app, Some(&granted), None, false).unwrap(),
            Some(granted.clone()),
            "switched off later: what the person approved stays"
        );
        let e = from_grant(&app, Some(&granted), Some(BOTH), true).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidAuthorizationDetails);
        let e = from_grant(&app, None, Some(LIST), true).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidAuthorizationDetails);
        let e = from_grant(&app, Some(&granted), Some(LIST), false).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        let wide = AuthorizationDetails::parse(BOTH, &app.authorization_details_types).unwrap();
        assert_eq!(
            from_grant(&app, Some(&wide), Some(LIST), true).unwrap(),
            Some(granted)
        );
    }

    #[test]
    fn details_asked_directly_are_checked_against_the_registered_types() {
        let app = app();
        assert_eq!(direct(&app, None, true).unwrap(), None);
        assert!(direct(&app, Some(LIST), true).unwrap().is_some());
        let e = direct(&app, Some(r#"[{"type":"payment"}]"#), true).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidAuthorizationDetails);
        let e = direct(
            &app,
            Some(r#"[{"type":"account_information","actions":["delete"]}]"#),
            true,
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidAuthorizationDetails);
        assert_eq!(
            direct(&app, Some(LIST), false).unwrap_err().code(),
            ErrorCode::InvalidRequest
        );
    }
}

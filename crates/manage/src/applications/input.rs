//! What a caller sends to register or reconfigure an application, and its validation into
//! domain values (parse, don't validate: the use cases only ever see [`ValidApplication`]).

use super::rules;
use crate::ManageError;
use serde::Deserialize;
use svc_domain::{
    GrantType, LogoutChannels, RedirectUri, ScopeSet, SigningAlg, TokenEndpointAuthMethod,
};

/// The configuration of an application as sent on create and (full replacement) update.
/// Unknown fields are refused, so a misspelt field is an error rather than silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "name": "Shop",
    "redirect_uris": ["https://shop.example/callback"],
    "post_logout_redirect_uris": ["https://shop.example/signed-out"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "client_secret_basic",
    "allowed_scopes": ["openid", "profile", "email", "offline_access"],
    "first_party": false,
    "minimum_acr": "urn:svc:aal2"
}))]
pub struct ApplicationInput {
    /// Display name, 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// Redirect URIs, matched exactly; at most 20.
    #[serde(default)]
    #[schema(max_items = 20)]
    pub redirect_uris: Vec<String>,
    /// Where RP-initiated logout may return (OpenID RP-Initiated Logout 1.0 §3), matched
    /// exactly; at most 20.
    #[serde(default)]
    #[schema(max_items = 20)]
    pub post_logout_redirect_uris: Vec<String>,
    /// At least one of `authorization_code`, `refresh_token`, `client_credentials`.
    #[schema(min_items = 1, value_type = Vec<super::names::GrantTypeName>)]
    pub grant_types: Vec<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    #[schema(value_type = super::names::AuthMethodName)]
    pub token_endpoint_auth_method: String,
    /// Scopes the application may be granted; at most 64.
    #[serde(default)]
    #[schema(max_items = 64)]
    pub allowed_scopes: Vec<String>,
    /// Audience of its access tokens (absolute URI); absent means the management API.
    #[serde(default)]
    pub api_audience: Option<String>,
    /// First-party applications skip consent.
    #[serde(default)]
    pub first_party: bool,
    /// `ES256`, `EdDSA` or `RS256` (default).
    #[serde(default)]
    #[schema(value_type = Option<super::names::SigningAlgName>)]
    pub id_token_signed_response_alg: Option<String>,
    /// Inline public JWK Set, for `private_key_jwt`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<serde_json::Value>,
    /// Where the public JWK Set is published (https), for `private_key_jwt`.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// The least assurance (`acr`) every authorization for the application must reach:
    /// `urn:svc:aal1` (a password) or `urn:svc:aal2` (a password and a second factor). Absent
    /// or `null`: no minimum of its own (on update, absent clears it like every optional field).
    #[serde(default)]
    #[schema(value_type = Option<super::names::AcrName>)]
    pub minimum_acr: Option<String>,
    /// Whether its sign-ins act in an organization: `allow` (default: a request may name one
    /// with `organization`) or `require` (every sign-in acts in one: the request names it, or
    /// the person picks one of theirs on the hosted page; a person in none is refused). On
    /// update, absent resets it to `allow` like every optional field.
    #[serde(default)]
    #[schema(value_type = Option<super::names::OrganizationUsageName>)]
    pub organization_usage: Option<String>,
    /// RFC 9126 §6: its authorization requests must be pushed to `/oauth/par` first; a plain
    /// one is refused with `invalid_request`. Default: false (on update, absent resets it like
    /// every optional field).
    #[serde(default)]
    pub require_pushed_authorization_requests: bool,
    /// RFC 9449 §5.2: it always receives DPoP-bound access tokens, so every token request must
    /// carry a `DPoP` proof (`invalid_dpop_proof` otherwise). Default: false (on update, absent
    /// resets it like every optional field).
    #[serde(default)]
    pub dpop_bound_access_tokens: bool,
    /// OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed when a session
    /// that signed into it ends (http or https, no fragment; reachable under the deployment's
    /// egress policy, `[webhooks].allow_internal_targets`). Needs `[logout].backchannel`.
    #[serde(default)]
    #[schema(max_length = 2048)]
    pub backchannel_logout_uri: Option<String>,
    /// Back-Channel Logout 1.0 §2.2: logout tokens must carry `sid` (svc always sends it).
    /// Needs `backchannel_logout_uri`. Default: false.
    #[serde(default)]
    pub backchannel_logout_session_required: bool,
    /// OpenID Connect Front-Channel Logout 1.0 §2: loaded in an iframe of the signed-out page
    /// when a session that signed into it ends there (https in production, no fragment). Needs
    /// `[logout].frontchannel`.
    #[serde(default)]
    #[schema(max_length = 2048)]
    pub frontchannel_logout_uri: Option<String>,
    /// Front-Channel Logout 1.0 §2: `iss` and `sid` are added to the iframe's URL. Needs
    /// `frontchannel_logout_uri`. Default: false.
    #[serde(default)]
    pub frontchannel_logout_session_required: bool,
    /// RFC 9396: the `authorization_details` types it may request, each with the words the
    /// consent page shows and the JSON Schema (2020-12, self-contained: no remote `$ref`) every
    /// object of the type must match. At most 16. Needs `[oidc].authorization_details`.
    /// Default: none.
    #[serde(default)]
    pub authorization_details_types: Vec<DetailTypeInput>,
}

/// One RAR type an application registers (RFC 9396 §2).
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "type": "payment_initiation",
    "description": "Make a payment from your account",
    "schema": {
        "type": "object",
        "required": ["type", "instructedAmount", "creditorName"],
        "properties": {
            "type": {"const": "payment_initiation"},
            "instructedAmount": {"title": "Amount", "type": "object"},
            "creditorName": {"title": "Payee", "type": "string", "maxLength": 70}
        }
    }
}))]
pub struct DetailTypeInput {
    /// The `type` value (printable ASCII without spaces, at most 128 characters).
    #[serde(rename = "type")]
    #[schema(max_length = 128)]
    pub name: String,
    /// What granting it means, for the person on the consent page (at most 200 characters).
    #[schema(max_length = 200)]
    pub description: String,
    /// The JSON Schema of a whole detail object (at most 16 KiB). Property `title`s label the
    /// values on the consent page.
    #[schema(value_type = Object)]
    pub schema: serde_json::Value,
}

impl From<&svc_domain::DetailType> for DetailTypeInput {
    fn from(t: &svc_domain::DetailType) -> Self {
        Self {
            name: t.name.clone(),
            description: t.description.clone(),
            schema: t.schema.clone(),
        }
    }
}

/// An [`ApplicationInput`] that passed every registration rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidApplication {
    pub(crate) name: String,
    pub(crate) redirect_uris: Vec<RedirectUri>,
    pub(crate) post_logout_redirect_uris: Vec<RedirectUri>,
    pub(crate) grant_types: Vec<GrantType>,
    pub(crate) token_endpoint_auth_method: TokenEndpointAuthMethod,
    pub(crate) allowed_scopes: ScopeSet,
    pub(crate) api_audience: Option<String>,
    pub(crate) first_party: bool,
    pub(crate) id_token_signed_response_alg: SigningAlg,
    pub(crate) jwks: Option<String>,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) minimum_acr: Option<String>,
    pub(crate) organization_usage: svc_domain::OrganizationUsage,
    pub(crate) require_pushed_authorization_requests: bool,
    pub(crate) dpop_bound_access_tokens: bool,
    pub(crate) logout: LogoutChannels,
    pub(crate) authorization_details_types: Vec<svc_domain::DetailType>,
}

impl ApplicationInput {
    /// Applies the registration rules in field order, then the rules relating fields; the first
    /// refusal is returned.
    pub(crate) fn validate(&self) -> Result<ValidApplication, ManageError> {
        let name = rules::check_name(&self.name)?;
        let redirect_uris = rules::check_redirect_uris("redirect_uris", &self.redirect_uris)?;
        let post_logout_redirect_uris = rules::check_redirect_uris(
            "post_logout_redirect_uris",
            &self.post_logout_redirect_uris,
        )?;
        let grant_types = rules::check_grant_types(&self.grant_types)?;
        let method = rules::check_auth_method(&self.token_endpoint_auth_method)?;
        let allowed_scopes = rules::check_scopes(&self.allowed_scopes)?;
        let api_audience = rules::check_api_audience(self.api_audience.as_deref())?;
        let alg = rules::check_id_token_alg(self.id_token_signed_response_alg.as_deref())?;
        let minimum_acr = rules::check_minimum_acr(self.minimum_acr.as_deref())?;
        let organization_usage =
            rules::check_organization_usage(self.organization_usage.as_deref())?;
        rules::check_code_grant_has_redirect_uri(&grant_types, &redirect_uris)?;
        rules::check_refresh_needs_code(&grant_types)?;
        rules::check_public_client_grants(method, &grant_types)?;
        let (jwks, jwks_uri) =
            rules::check_key_material(method, self.jwks.as_ref(), self.jwks_uri.as_deref())?;
        let logout = rules::check_logout_channels(
            (
                self.backchannel_logout_uri.as_deref(),
                self.backchannel_logout_session_required,
            ),
            (
                self.frontchannel_logout_uri.as_deref(),
                self.frontchannel_logout_session_required,
            ),
        )?;
        let authorization_details_types =
            rules::check_detail_types(&self.authorization_details_types)?;
        Ok(ValidApplication {
            name,
            redirect_uris,
            post_logout_redirect_uris,
            grant_types,
            token_endpoint_auth_method: method,
            allowed_scopes,
            api_audience,
            first_party: self.first_party,
            id_token_signed_response_alg: alg,
            jwks,
            jwks_uri,
            minimum_acr,
            organization_usage,
            require_pushed_authorization_requests: self.require_pushed_authorization_requests,
            dpop_bound_access_tokens: self.dpop_bound_access_tokens,
            logout,
            authorization_details_types,
        })
    }
}

impl ValidApplication {
    /// The rules that depend on what the deployment offers: an application cannot be promised a
    /// feature that is switched off, which would otherwise be a guard met by a flag that does
    /// nothing.
    pub(crate) fn offered_by(self, ctx: &crate::ManageContext) -> Result<Self, ManageError> {
        rules::check_dpop_offered(self.dpop_bound_access_tokens, ctx.dpop)?;
        rules::check_logout_offered(&self.logout, &ctx.logout)?;
        rules::check_details_offered(&self.authorization_details_types, ctx.authorization_details)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_typical_web_client_validates() {
        let input: ApplicationInput = serde_json::from_value(json!({
            "name": "Shop",
            "redirect_uris": ["https://shop.example/cb"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic",
            "allowed_scopes": ["openid", "offline_access"],
        }))
        .unwrap();
        let valid = input.validate().unwrap();
        assert_eq!(valid.name, "Shop");
        assert_eq!(valid.id_token_signed_response_alg, SigningAlg::Rs256);
        assert_eq!(valid.api_audience, None);
        assert!(!valid.first_party);
        assert_eq!((valid.jwks, valid.jwks_uri), (None, None));
        assert_eq!(valid.minimum_acr, None);
    }

    #[test]
    fn minimum_acr_is_read_from_json_checked_and_kept() {
        let base = json!({
            "name": "Bank",
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
        });
        let with = |acr: serde_json::Value| {
            let mut body = base.clone();
            body["minimum_acr"] = acr;
            serde_json::from_value::<ApplicationInput>(body).unwrap()
        };
        for level in svc_domain::ACR_LEVELS {
            assert_eq!(
                with(json!(level))
                    .validate()
                    .unwrap()
                    .minimum_acr
                    .as_deref(),
                Some(level)
            );
        }
        assert_eq!(with(json!(null)).validate().unwrap().minimum_acr, None);
        let err = with(json!("urn:svc:aal3")).validate().unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field, .. } if field == "minimum_acr"),
            "{err:?}"
        );
        assert!(
            serde_json::from_value::<ApplicationInput>({
                let mut body = base.clone();
                body["minimum_acr"] = json!(2);
                body
            })
            .is_err(),
            "a level is a string"
        );
    }

    #[test]
    fn unknown_fields_and_missing_required_fields_are_refused() {
        let unknown = serde_json::from_value::<ApplicationInput>(json!({
            "name": "x", "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic", "client_secret": "mine",
        }));
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `client_secret`")
        );
        let missing = serde_json::from_value::<ApplicationInput>(json!({"name": "x"}));
        assert!(missing.is_err());
    }

    #[test]
    fn cross_field_rules_apply_after_field_rules() {
        let input = ApplicationInput {
            name: "SPA".to_owned(),
            grant_types: vec!["client_credentials".to_owned()],
            token_endpoint_auth_method: "none".to_owned(),
            ..ApplicationInput::default()
        };
        let err = input.validate().unwrap_err();
        assert!(
            matches!(&err, ManageError::Invalid { field, message } if field == "grant_types" && message.contains("client_credentials is for confidential clients only")),
            "{err:?}"
        );
        let bad_name_first = ApplicationInput {
            name: String::new(),
            ..input
        };
        assert!(
            matches!(bad_name_first.validate(), Err(ManageError::Invalid { field, .. }) if field == "name")
        );
    }
}

//! Discovery metadata (OpenID Connect Discovery 1.0 §3, RFC 8414 §2) and protected-resource
//! metadata (RFC 9728 §2) for one tenant issuer.
//!
//! Rules enforced here:
//! - `issuer` is exactly the tenant's issuer and every endpoint is an absolute URL under it
//!   (Discovery §3, §4.3: the issuer in the document must equal the one it was fetched for).
//! - `grant_types_supported` and `request_uri_parameter_supported` are always explicit: their
//!   defaults (`authorization_code implicit`, `true`) would misdescribe us.
//! - `id_token_signing_alg_values_supported` includes RS256 (Discovery §3: "MUST be included").
//! - PKCE is S256 only (RFC 7636 §4.2; RFC 9700 §2.1.1 forbids `plain` in practice).
//! - Optional features appear only when enabled, and scopes and claims only when something uses
//!   them, so the document stays authoritative (`crates/runtime/tests/it/advertised.rs` holds
//!   every advertised value to a running server).

use serde_json::{Map, Value, json};
use svc_domain::{ACR_AAL1, ACR_AAL2, SigningAlg};

/// Features whose metadata appears only when the deployment enables them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionalFeatures {
    /// RP-initiated logout (`end_session_endpoint`).
    pub end_session: bool,
    /// Pushed authorization requests, RFC 9126.
    pub par: bool,
    /// Every authorization request must be pushed (`[oidc].pushed_authorization_requests =
    /// "required"`); meaningful only with `par`.
    pub par_required: bool,
    /// Signed request objects, RFC 9101 (`[oidc].request_objects`).
    pub request_objects: bool,
    /// Every authorization request must be signed (`[oidc].request_objects = "required"`);
    /// meaningful only with `request_objects`.
    pub request_objects_required: bool,
    /// Device authorization grant, RFC 8628.
    pub device_authorization: bool,
    /// Client-initiated backchannel authentication (poll mode).
    pub ciba: bool,
    /// Dynamic client registration, RFC 7591.
    pub registration: bool,
    /// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document §6): the
    /// tenant accepts an `https` URL as `client_id`.
    pub client_id_metadata_documents: bool,
    /// Token exchange, RFC 8693.
    pub token_exchange: bool,
    /// DPoP, RFC 9449.
    pub dpop: bool,
    /// Agent challenge-response (`[challenge]`): the challenge endpoint and the JWT bearer
    /// grant (RFC 7523 §2.1) agents answer it with.
    pub agent_challenge: bool,
    /// Token revocation, RFC 7009.
    pub revocation: bool,
    /// Token introspection, RFC 7662.
    pub introspection: bool,
    /// Second factors (`[two_factor]`): `urn:svc:aal2` becomes reachable.
    pub second_factors: bool,
    /// OpenID Connect Back-Channel Logout 1.0 (`[logout].backchannel`).
    pub backchannel_logout: bool,
    /// OpenID Connect Front-Channel Logout 1.0 (`[logout].frontchannel`).
    pub frontchannel_logout: bool,
    /// `[oidc].authorization_details`: RAR (RFC 9396) is taken.
    pub authorization_details: bool,
    /// The detail types the tenant's applications registered (sorted, once each): RFC 9396
    /// §10.1 `authorization_details_types_supported`, read per tenant.
    pub authorization_details_types: Vec<String>,
}

/// Everything the metadata depends on besides the issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoverySettings {
    /// Algorithm of access tokens (`jwt.default_algorithm`), listed first where order matters.
    pub access_token_alg: SigningAlg,
    /// Enabled optional features.
    pub features: OptionalFeatures,
}

/// Client authentication methods at the token endpoint (spec "Client authentication").
const TOKEN_AUTH_METHODS: [&str; 4] = [
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
    "none",
];

/// Claims an ID token or UserInfo response carries (`crate::id_token`, `crate::claims`): no
/// `azp`, which a single-audience ID token does not need, and no `tenant_id`, which only access
/// tokens carry.
const CLAIMS: [&str; 20] = [
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "acr",
    "amr",
    "sid",
    "name",
    "given_name",
    "family_name",
    "email",
    "email_verified",
    "updated_at",
    // The organization a grant acts in (`organization` parameter) and, with the `roles` scope,
    // the person's roles.
    "org_id",
    "org_slug",
    "roles",
    "org_roles",
];

/// Scopes defined by the protocol, and ours: `roles` (the person's tenant and organization roles
/// in ID tokens and UserInfo). API scopes of `<resource>:<action>` form are per application.
const SCOPES: [&str; 5] = ["openid", "profile", "email", "offline_access", "roles"];

fn id_token_algs() -> Vec<&'static str> {
    // RS256 first: the OIDC default for `id_token_signed_response_alg`.
    vec!["RS256", "ES256", "EdDSA"]
}

fn grant_types(features: &OptionalFeatures) -> Vec<&'static str> {
    let mut grants = vec!["authorization_code", "refresh_token", "client_credentials"];
    if features.device_authorization {
        grants.push("urn:ietf:params:oauth:grant-type:device_code");
    }
    if features.token_exchange {
        grants.push("urn:ietf:params:oauth:grant-type:token-exchange");
    }
    if features.ciba {
        grants.push("urn:openid:params:grant-type:ciba");
    }
    if features.agent_challenge {
        grants.push(crate::token::agent::JWT_BEARER_GRANT);
    }
    grants
}

/// RFC 8414 authorization-server metadata: the OAuth part shared with OpenID discovery.
pub fn authorization_server_metadata(issuer: &str, settings: &DiscoverySettings) -> Value {
    let at = |path: &str| format!("{issuer}{path}");
    let f = &settings.features;
    let mut doc = Map::new();
    let mut put = |k: &str, v: Value| {
        doc.insert(k.to_owned(), v);
    };
    put("issuer", json!(issuer));
    put("authorization_endpoint", json!(at("/oauth/authorize")));
    put("token_endpoint", json!(token_endpoint(issuer)));
    put("jwks_uri", json!(at("/.well-known/jwks.json")));
    put("scopes_supported", json!(SCOPES));
    put("response_types_supported", json!(["code"]));
    put("response_modes_supported", json!(["query"]));
    put("grant_types_supported", json!(grant_types(f)));
    put(
        "token_endpoint_auth_methods_supported",
        json!(TOKEN_AUTH_METHODS),
    );
    // Every private_key_jwt assertion is verified by `crate::client_jws`, which takes these.
    let client_algs = json!(crate::client_jws::SUPPORTED_ALGS);
    put(
        "token_endpoint_auth_signing_alg_values_supported",
        client_algs.clone(),
    );
    put("code_challenge_methods_supported", json!(["S256"]));
    put(
        "authorization_response_iss_parameter_supported",
        json!(true),
    );
    if f.revocation {
        put("revocation_endpoint", json!(at("/oauth/revoke")));
        put(
            "revocation_endpoint_auth_methods_supported",
            json!(TOKEN_AUTH_METHODS),
        );
        // RFC 8414 §2: required beside private_key_jwt.
        put(
            "revocation_endpoint_auth_signing_alg_values_supported",
            client_algs.clone(),
        );
    }
    if f.introspection {
        put("introspection_endpoint", json!(at("/oauth/introspect")));
        put(
            "introspection_endpoint_auth_methods_supported",
            json!(&TOKEN_AUTH_METHODS[..3]),
        );
        put(
            "introspection_endpoint_auth_signing_alg_values_supported",
            client_algs.clone(),
        );
    }
    if f.par {
        put(
            "pushed_authorization_request_endpoint",
            json!(at("/oauth/par")),
        );
        put(
            "require_pushed_authorization_requests",
            json!(f.par_required),
        );
    }
    if f.request_objects {
        // RFC 8414 §2 and RFC 9101 §10.5: the algorithms a request object may be signed with
        // (`crate::client_jws`), and whether unsigned requests are refused.
        put(
            "request_object_signing_alg_values_supported",
            json!(crate::client_jws::SUPPORTED_ALGS),
        );
        put(
            "require_signed_request_object",
            json!(f.request_objects_required),
        );
    }
    if f.registration {
        put("registration_endpoint", json!(at("/oauth/register")));
    }
    if f.client_id_metadata_documents {
        put("client_id_metadata_document_supported", json!(true));
    }
    if f.device_authorization {
        put(
            "device_authorization_endpoint",
            json!(at("/oauth/device/code")),
        );
    }
    if f.ciba {
        put(
            "backchannel_authentication_endpoint",
            json!(at("/bc-authorize")),
        );
        put(
            "backchannel_token_delivery_modes_supported",
            json!(["poll"]),
        );
        put("backchannel_user_code_parameter_supported", json!(false));
    }
    if f.agent_challenge {
        // Ours (no registered metadata name exists for it): where agents get the challenge
        // their JWT bearer assertion must carry as `nonce`.
        put(
            "agent_challenge_endpoint",
            json!(at("/oauth/agent/challenge")),
        );
    }
    if f.authorization_details {
        put(
            "authorization_details_types_supported",
            json!(f.authorization_details_types),
        );
    }
    if f.dpop {
        put(
            "dpop_signing_alg_values_supported",
            json!(crate::dpop::PROOF_ALGORITHMS),
        );
    }
    Value::Object(doc)
}

/// OpenID Connect Discovery 1.0 metadata: the RFC 8414 document plus the OpenID fields.
pub fn openid_configuration(issuer: &str, settings: &DiscoverySettings) -> Value {
    let mut doc = authorization_server_metadata(issuer, settings);
    if let Value::Object(map) = &mut doc {
        map.insert(
            "userinfo_endpoint".into(),
            json!(format!("{issuer}/userinfo")),
        );
        map.insert(
            "subject_types_supported".into(),
            json!(["public", "pairwise"]),
        );
        map.insert(
            "id_token_signing_alg_values_supported".into(),
            json!(id_token_algs()),
        );
        map.insert("claims_supported".into(), json!(CLAIMS));
        map.insert("claims_parameter_supported".into(), json!(true));
        // Exactly the levels a sign-in here can reach (CONTRACTS.md).
        let acr_values: &[&str] = if settings.features.second_factors {
            &[ACR_AAL1, ACR_AAL2]
        } else {
            &[ACR_AAL1]
        };
        map.insert("acr_values_supported".into(), json!(acr_values));
        map.insert(
            "prompt_values_supported".into(),
            json!(["none", "login", "consent", "select_account"]),
        );
        map.insert(
            "request_parameter_supported".into(),
            json!(settings.features.request_objects),
        );
        // OIDC Core §6.2 `request_uri` is a request object the OP fetches by URL: not supported.
        // PAR's `request_uri`s (RFC 9126 §4) are a different thing, advertised by
        // `pushed_authorization_request_endpoint`; RFC 9126 §5 keeps the two apart.
        map.insert("request_uri_parameter_supported".into(), json!(false));
        if settings.features.end_session {
            map.insert(
                "end_session_endpoint".into(),
                json!(format!("{issuer}/oauth/end-session")),
            );
        }
        // Back-Channel Logout 1.0 §2.1: `sid` is always in the logout token (and in every ID
        // token of a session), so `*_session_supported` is true with the channel.
        if settings.features.backchannel_logout {
            map.insert("backchannel_logout_supported".into(), json!(true));
            map.insert("backchannel_logout_session_supported".into(), json!(true));
        }
        // Front-Channel Logout 1.0 §3: `iss` and `sid` are added for applications that ask.
        if settings.features.frontchannel_logout {
            map.insert("frontchannel_logout_supported".into(), json!(true));
            map.insert("frontchannel_logout_session_supported".into(), json!(true));
        }
    }
    doc
}

/// The tenant's token endpoint, as advertised: what a DPoP proof's `htu` names.
pub fn token_endpoint(issuer: &str) -> String {
    format!("{issuer}/oauth/token")
}

/// The audience and resource identifier of the tenant management API (CONTRACTS.md).
pub fn management_api_resource(issuer: &str) -> String {
    format!("{issuer}/api/v1")
}

/// The audience of a person's access token when its application registered no `api_audience`:
/// the tenant's UserInfo endpoint, the one resource such a token is good for. Never the
/// management API, which a person's token must not reach by default.
pub fn userinfo_audience(issuer: &str) -> String {
    format!("{issuer}/userinfo")
}

/// RFC 9728 protected-resource metadata for the tenant's management API.
pub fn protected_resource_metadata(issuer: &str, settings: &DiscoverySettings) -> Value {
    let mut algs = vec![settings.access_token_alg.as_str()];
    algs.extend(
        ["ES256", "EdDSA"]
            .into_iter()
            .filter(|a| *a != settings.access_token_alg.as_str()),
    );
    let mut doc = json!({
        "resource": management_api_resource(issuer),
        "authorization_servers": [issuer],
        "jwks_uri": format!("{issuer}/.well-known/jwks.json"),
        "scopes_supported": svc_domain::MANAGEMENT_API_SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_signing_alg_values_supported": algs,
        "resource_name": "svc tenant management API",
    });
    // RFC 9728 §2: the API takes DPoP-bound tokens (with `Authorization: DPoP`) and bearer ones.
    if settings.features.dpop
        && let Some(map) = doc.as_object_mut()
    {
        map.insert(
            "dpop_signing_alg_values_supported".into(),
            json!(crate::dpop::PROOF_ALGORITHMS),
        );
        map.insert("dpop_bound_access_tokens_required".into(), json!(false));
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> DiscoverySettings {
        DiscoverySettings {
            access_token_alg: SigningAlg::Es256,
            features: OptionalFeatures::default(),
        }
    }

    #[test]
    fn openid_configuration_is_complete_and_absolute() {
        let issuer = "https://acme.id.example";
        let doc = openid_configuration(issuer, &settings());
        assert_eq!(doc["issuer"], issuer);
        for key in [
            "authorization_endpoint",
            "token_endpoint",
            "userinfo_endpoint",
            "jwks_uri",
        ] {
            let url = doc[key].as_str().unwrap_or_else(|| panic!("{key} missing"));
            assert!(url.starts_with("https://acme.id.example/"), "{key} = {url}");
        }
        assert!(
            doc["id_token_signing_alg_values_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("RS256"))
        );
        assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(
            doc["subject_types_supported"],
            json!(["public", "pairwise"])
        );
        assert_eq!(
            doc["authorization_response_iss_parameter_supported"],
            json!(true)
        );
        assert_eq!(
            doc["request_uri_parameter_supported"],
            json!(false),
            "default true would lie"
        );
        assert!(
            doc["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("client_credentials"))
        );
        assert!(
            !doc["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("implicit"))
        );
        assert!(
            doc["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("openid"))
        );
        for claim in ["sub", "acr", "auth_time", "updated_at", "email_verified"] {
            assert!(
                doc["claims_supported"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(claim)),
                "{claim}"
            );
        }
        assert_eq!(doc["claims_parameter_supported"], true);
        assert_eq!(doc["acr_values_supported"], json!(["urn:svc:aal1"]));
    }

    #[test]
    fn optional_features_appear_only_when_enabled() {
        let issuer = "https://acme.id.example";
        let off = openid_configuration(issuer, &settings());
        for key in [
            "end_session_endpoint",
            "pushed_authorization_request_endpoint",
            "require_pushed_authorization_requests",
            "device_authorization_endpoint",
            "backchannel_authentication_endpoint",
            "registration_endpoint",
            "dpop_signing_alg_values_supported",
            "revocation_endpoint",
            "introspection_endpoint",
            "request_object_signing_alg_values_supported",
            "require_signed_request_object",
            "authorization_details_types_supported",
            "agent_challenge_endpoint",
            "backchannel_logout_supported",
            "backchannel_logout_session_supported",
            "frontchannel_logout_supported",
            "frontchannel_logout_session_supported",
        ] {
            assert!(
                off.get(key).is_none(),
                "{key} must be absent while disabled"
            );
        }
        assert_eq!(off["request_parameter_supported"], false);
        assert!(
            !off["grant_types_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("urn:ietf:params:oauth:grant-type:jwt-bearer")),
            "the agent grant is absent while [challenge] is off"
        );
        let all = OptionalFeatures {
            end_session: true,
            par: true,
            par_required: true,
            request_objects: true,
            request_objects_required: true,
            device_authorization: true,
            ciba: true,
            registration: true,
            client_id_metadata_documents: true,
            token_exchange: true,
            dpop: true,
            agent_challenge: true,
            revocation: true,
            introspection: true,
            second_factors: true,
            backchannel_logout: true,
            frontchannel_logout: true,
            authorization_details: true,
            authorization_details_types: vec!["payment_initiation".into()],
        };
        let on = openid_configuration(
            issuer,
            &DiscoverySettings {
                features: all,
                ..settings()
            },
        );
        assert_eq!(
            on["acr_values_supported"],
            json!(["urn:svc:aal1", "urn:svc:aal2"])
        );
        assert_eq!(
            on["end_session_endpoint"],
            "https://acme.id.example/oauth/end-session"
        );
        assert_eq!(
            on["pushed_authorization_request_endpoint"],
            "https://acme.id.example/oauth/par"
        );
        assert_eq!(on["require_pushed_authorization_requests"], true);
        assert_eq!(on["client_id_metadata_document_supported"], true);
        assert!(off.get("client_id_metadata_document_supported").is_none());
        for key in [
            "backchannel_logout_supported",
            "backchannel_logout_session_supported",
            "frontchannel_logout_supported",
            "frontchannel_logout_session_supported",
        ] {
            assert_eq!(on[key], true, "{key}");
        }
        assert_eq!(
            on["authorization_details_types_supported"],
            json!(["payment_initiation"])
        );
        assert_eq!(on["request_parameter_supported"], true);
        assert_eq!(on["require_signed_request_object"], true);
        assert_eq!(
            on["request_object_signing_alg_values_supported"],
            json!(["ES256", "EdDSA", "RS256", "PS256"])
        );
        // RFC 9126 §5: PAR's request_uri is not OIDC Core §6.2's, which stays unsupported.
        assert_eq!(on["request_uri_parameter_supported"], false);
        assert_eq!(
            on["backchannel_token_delivery_modes_supported"],
            json!(["poll"])
        );
        let grants = on["grant_types_supported"].as_array().unwrap();
        assert!(grants.contains(&json!("urn:ietf:params:oauth:grant-type:device_code")));
        assert!(grants.contains(&json!("urn:openid:params:grant-type:ciba")));
        assert!(grants.contains(&json!("urn:ietf:params:oauth:grant-type:jwt-bearer")));
        assert_eq!(
            on["agent_challenge_endpoint"],
            "https://acme.id.example/oauth/agent/challenge"
        );
    }

    #[test]
    fn rfc8414_and_openid_documents_agree_on_shared_fields() {
        let issuer = "http://acme.localhost:8080";
        let oauth = authorization_server_metadata(issuer, &settings());
        let oidc = openid_configuration(issuer, &settings());
        for (key, value) in oauth.as_object().unwrap() {
            assert_eq!(&oidc[key], value, "{key} differs");
        }
        assert!(
            oauth.get("userinfo_endpoint").is_none(),
            "OpenID-only fields stay out of RFC 8414"
        );
    }

    #[test]
    fn protected_resource_names_the_management_audience() {
        let doc = protected_resource_metadata("https://acme.id.example", &settings());
        assert_eq!(doc["resource"], "https://acme.id.example/api/v1");
        assert_eq!(
            doc["authorization_servers"],
            json!(["https://acme.id.example"])
        );
        assert!(
            doc["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("webhooks:write"))
        );
        assert_eq!(doc["resource_signing_alg_values_supported"][0], "ES256");
    }
}

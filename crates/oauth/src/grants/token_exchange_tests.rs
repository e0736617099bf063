//! Unit tests of [`super`]: each check refuses what it must, with the RFC 8693 error code.

use super::*;
use crate::error::ErrorCode;
use serde_json::json;
use svc_domain::{ClientId, GrantType, SigningAlg, TenantId, TokenEndpointAuthMethod};
use time::OffsetDateTime;

const GATEWAY: &str = "app_01jd0000000000000000000001";
const SHOP: &str = "app_01jd0000000000000000000002";

fn gateway() -> Application {
    Application {
        id: ClientId::parse(GATEWAY).unwrap(),
        tenant_id: TenantId::parse("ten_01jd0000000000000000000000").unwrap(),
        name: "Gateway".into(),
        redirect_uris: vec![],
        post_logout_redirect_uris: Vec::new(),
        grant_types: vec![GrantType::TokenExchange],
        token_endpoint_auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
        allowed_scopes: ScopeSet::parse("").unwrap(),
        secret_hash: None,
        api_audience: Some("https://gateway.example".into()),
        first_party: true,
        id_token_signed_response_alg: SigningAlg::Rs256,
        jwks: None,
        jwks_uri: None,
        is_management: false,
        minimum_acr: None,
        organization_usage: svc_domain::OrganizationUsage::Allow,
        require_pushed_authorization_requests: false,
        dpop_bound_access_tokens: false,
        logout: Default::default(),
        authorization_details_types: Vec::new(),
        metadata_document: None,
        created_at: OffsetDateTime::UNIX_EPOCH,
        updated_at: OffsetDateTime::UNIX_EPOCH,
    }
}

fn map(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// A person's token issued to the shop for the gateway's API.
fn subject() -> Map<String, Value> {
    map(json!({
        "sub": "usr_1", "client_id": SHOP, "aud": "https://gateway.example",
        "scope": "orders:read orders:write", "exp": 2_000, "subject_type": "human"
    }))
}

fn request(form: &[(&str, &str)]) -> TokenRequest {
    let mut pairs = vec![(
        "grant_type".to_owned(),
        svc_domain::TOKEN_EXCHANGE_GRANT.to_owned(),
    )];
    pairs.extend(form.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    TokenRequest::parse(&pairs, None).unwrap()
}

fn code<T: std::fmt::Debug>(result: Result<T, OAuthError>) -> ErrorCode {
    result.unwrap_err().code()
}

fn client_acts() -> ExchangeActor {
    ExchangeActor {
        sub: GATEWAY.into(),
        is_client: true,
        is_agent: false,
    }
}

#[test]
fn parameters_follow_rfc_8693_section_2_1() {
    let ok = request(&[
        ("subject_token", "s"),
        ("subject_token_type", ACCESS_TOKEN_TYPE),
        ("actor_token", "a"),
        ("actor_token_type", ACCESS_TOKEN_TYPE),
        ("requested_token_type", ACCESS_TOKEN_TYPE),
        ("audience", "https://orders.example"),
        ("resource", "https://orders.example"),
    ]);
    let parsed = params(&ok).unwrap();
    assert_eq!(parsed.subject_token, "s");
    assert_eq!(parsed.actor_token, Some("a"));
    assert!(!parsed.actor_is_assertion);
    assert_eq!(parsed.target, Some("https://orders.example"));
    // An agent's signed assertion as the actor token (never as the subject token).
    let asserted = request(&[
        ("subject_token", "s"),
        ("subject_token_type", ACCESS_TOKEN_TYPE),
        ("actor_token", "a"),
        ("actor_token_type", JWT_TOKEN_TYPE),
    ]);
    assert!(params(&asserted).unwrap().actor_is_assertion);
    let jwt_subject = request(&[
        ("subject_token", "s"),
        ("subject_token_type", JWT_TOKEN_TYPE),
    ]);
    assert_eq!(code(params(&jwt_subject)), ErrorCode::InvalidRequest);

    let subject = [
        ("subject_token", "s"),
        ("subject_token_type", ACCESS_TOKEN_TYPE),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut form = subject.to_vec();
        form.extend_from_slice(extra);
        request(&form)
    };
    for (form, expected) in [
        (
            request(&[("subject_token_type", ACCESS_TOKEN_TYPE)]),
            ErrorCode::InvalidRequest,
        ),
        (
            request(&[("subject_token", "s")]),
            ErrorCode::InvalidRequest,
        ),
        (
            request(&[
                ("subject_token", "s"),
                (
                    "subject_token_type",
                    "urn:ietf:params:oauth:token-type:refresh_token",
                ),
            ]),
            ErrorCode::InvalidRequest,
        ),
        (with(&[("actor_token", "a")]), ErrorCode::InvalidRequest),
        (
            with(&[("actor_token_type", ACCESS_TOKEN_TYPE)]),
            ErrorCode::InvalidRequest,
        ),
        (
            with(&[
                ("actor_token", "a"),
                ("actor_token_type", "urn:ietf:params:oauth:token-type:saml2"),
            ]),
            ErrorCode::InvalidRequest,
        ),
        (
            with(&[(
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:refresh_token",
            )]),
            ErrorCode::InvalidRequest,
        ),
        (
            with(&[
                ("audience", "https://a.example"),
                ("resource", "https://b.example"),
            ]),
            ErrorCode::InvalidTarget,
        ),
        (
            with(&[
                ("resource", "https://a.example"),
                ("resource", "https://b.example"),
            ]),
            ErrorCode::InvalidTarget,
        ),
    ] {
        assert_eq!(code(params(&form)), expected, "{form:?}");
    }
}

#[test]
fn an_actor_token_is_the_presenting_clients_own_and_undelegated() {
    let own = map(json!({"sub": "agt_7", "client_id": GATEWAY}));
    assert_eq!(
        actor_of(&gateway(), Some(&own), false).unwrap(),
        ExchangeActor {
            sub: "agt_7".into(),
            is_client: false,
            is_agent: false,
        }
    );
    assert_eq!(actor_of(&gateway(), None, false).unwrap(), client_acts());
    let foreign = map(json!({"sub": "agt_7", "client_id": SHOP}));
    let delegated = map(json!({"sub": "agt_7", "client_id": GATEWAY, "act": {"sub": "x"}}));
    let nobody = map(json!({"sub": "", "client_id": GATEWAY}));
    for bad in [foreign, delegated, nobody] {
        assert_eq!(
            code(actor_of(&gateway(), Some(&bad), false)),
            ErrorCode::InvalidRequest
        );
    }
}

#[test]
fn an_agents_own_token_acts_only_through_the_client_that_owns_the_agent() {
    // The agent's token from challenge-response: its client is the agent itself.
    let agent = map(json!({"sub": "agt_7", "client_id": "agt_7", "subject_type": "agent"}));
    assert_eq!(
        actor_of(&gateway(), Some(&agent), true).unwrap(),
        ExchangeActor {
            sub: "agt_7".into(),
            is_client: false,
            is_agent: true,
        }
    );
    assert_eq!(
        code(actor_of(&gateway(), Some(&agent), false)),
        ErrorCode::InvalidRequest,
        "another client's agent"
    );
    let mut delegated = agent.clone();
    delegated.insert("act".into(), json!({"sub": "agt_1"}));
    assert_eq!(
        code(actor_of(&gateway(), Some(&delegated), true)),
        ErrorCode::InvalidRequest,
        "an agent acting for someone is no actor in its own right"
    );
    // Its link says it is an agent; the presenting client stays the link's client.
    let actor = actor_of(&gateway(), Some(&agent), true).unwrap();
    assert_eq!(
        chain(&gateway(), &subject(), &actor, 3).unwrap(),
        Some(json!({"sub": "agt_7", "subject_type": "agent", "client_id": GATEWAY}))
    );
}

#[test]
fn a_subject_token_is_presented_by_its_client_its_api_or_whom_may_act_names() {
    let app = gateway();
    // For the gateway's API (on behalf of), and issued to the gateway itself.
    assert!(check_presentable(&app, &subject(), &client_acts()).is_ok());
    let mut own = subject();
    own.insert("client_id".into(), json!(GATEWAY));
    own.insert("aud".into(), json!("https://elsewhere.example"));
    assert!(check_presentable(&app, &own, &client_acts()).is_ok());
    // Neither: another API's token, of another client.
    let mut elsewhere = subject();
    elsewhere.insert("aud".into(), json!("https://elsewhere.example"));
    assert_eq!(
        code(check_presentable(&app, &elsewhere, &client_acts())),
        ErrorCode::InvalidRequest
    );
    // may_act decides when present (RFC 8693 §4.4), both ways.
    let mut named = elsewhere.clone();
    named.insert("may_act".into(), json!({"sub": GATEWAY}));
    assert!(check_presentable(&app, &named, &client_acts()).is_ok());
    let mut other_named = subject();
    other_named.insert("may_act".into(), json!({"sub": "agt_9"}));
    assert_eq!(
        code(check_presentable(&app, &other_named, &client_acts())),
        ErrorCode::InvalidRequest,
        "may_act naming someone else overrides the audience rule"
    );
    let mut other_client = subject();
    other_client.insert("may_act".into(), json!({"sub": GATEWAY, "client_id": SHOP}));
    assert!(check_presentable(&app, &other_client, &client_acts()).is_err());
}

#[test]
fn chains_nest_newest_outermost_refuse_loops_and_cap_depth() {
    let app = gateway();
    let act = chain(&app, &subject(), &client_acts(), 3).unwrap().unwrap();
    assert_eq!(act, json!({"sub": GATEWAY, "client_id": GATEWAY}));

    // A subject already delegated: the gateway goes outermost.
    let mut delegated = subject();
    delegated.insert(
        "act".into(),
        json!({"sub": "agt_1", "act": {"sub": "agt_0"}}),
    );
    let act = chain(&app, &delegated, &client_acts(), 3).unwrap().unwrap();
    assert_eq!(
        act,
        json!({"sub": GATEWAY, "client_id": GATEWAY, "act": {"sub": "agt_1", "act": {"sub": "agt_0"}}})
    );
    assert_eq!(
        code(chain(&app, &delegated, &client_acts(), 2)),
        ErrorCode::InvalidRequest,
        "three actors over a cap of two"
    );

    // Loops: the actor is the subject, or already in the chain.
    let as_subject = ExchangeActor {
        sub: "usr_1".into(),
        is_client: false,
        is_agent: false,
    };
    assert_eq!(
        code(chain(&app, &subject(), &as_subject, 3)),
        ErrorCode::InvalidRequest
    );
    let again = ExchangeActor {
        sub: "agt_0".into(),
        is_client: false,
        is_agent: false,
    };
    assert_eq!(
        code(chain(&app, &delegated, &again, 8)),
        ErrorCode::InvalidRequest
    );

    // One's own token, no actor token: nobody new acts; an earlier chain is kept.
    let mut own = delegated.clone();
    own.insert("client_id".into(), json!(GATEWAY));
    assert_eq!(
        chain(&app, &own, &client_acts(), 1).unwrap(),
        Some(json!({"sub": "agt_1", "act": {"sub": "agt_0"}}))
    );
    let mut plain_own = subject();
    plain_own.insert("client_id".into(), json!(GATEWAY));
    assert_eq!(chain(&app, &plain_own, &client_acts(), 1).unwrap(), None);
}

#[test]
fn bound_tokens_need_a_proof_of_their_key() {
    let bound = map(json!({"cnf": {"jkt": "k1"}}));
    assert!(check_bound(&bound, Some("k1"), "subject_token").is_ok());
    assert!(check_bound(&bound, Some("k2"), "subject_token").is_err());
    assert!(check_bound(&bound, None, "subject_token").is_err());
    let odd = map(json!({"cnf": {"jkt": 5}}));
    assert!(check_bound(&odd, None, "subject_token").is_err());
    assert!(check_bound(&subject(), None, "subject_token").is_ok());
}

#[test]
fn scopes_never_widen() {
    assert_eq!(
        scope_of(&subject(), None).unwrap().to_string(),
        "orders:read orders:write"
    );
    assert_eq!(
        scope_of(&subject(), Some("orders:read"))
            .unwrap()
            .to_string(),
        "orders:read"
    );
    let widened = scope_of(&subject(), Some("orders:read orders:delete")).unwrap_err();
    assert_eq!(widened.code(), ErrorCode::InvalidScope);
    assert!(
        widened.description().contains("orders:delete"),
        "{}",
        widened.description()
    );
    assert_eq!(
        code(scope_of(&subject(), Some("bad\u{7f}"))),
        ErrorCode::InvalidScope
    );
}

#[test]
fn audiences_stay_or_move_to_a_registered_api() {
    assert_eq!(
        audience_of(&subject(), None, false).unwrap(),
        "https://gateway.example"
    );
    assert_eq!(
        audience_of(&subject(), Some("https://gateway.example"), false).unwrap(),
        "https://gateway.example"
    );
    assert_eq!(
        audience_of(&subject(), Some("https://orders.example"), true).unwrap(),
        "https://orders.example"
    );
    assert_eq!(
        code(audience_of(&subject(), Some("https://evil.example"), false)),
        ErrorCode::InvalidTarget
    );
}

#[test]
fn the_exchanged_token_never_outlives_what_was_presented() {
    let actor = map(json!({"exp": 1_500}));
    assert_eq!(not_after(&subject(), Some(&actor)), Some(1_500));
    assert_eq!(not_after(&subject(), None), Some(2_000));
}

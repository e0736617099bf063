//! The access-token validation contract (spec "Authentication", rules 2–10 and 6b) end to end
//! through `validate_with_jwks`, with real ES256/EdDSA/RS256 keys: each rule's failure on its
//! own, the order in which failures are reported, and the algorithm attacks of RFC 8725 §2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, OctetKeyParameters, OctetKeyType};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use svc_sdk::{
    AccessTokenClaims, Requirements, SubjectType, ValidationError, bearer_token, check_claims,
    validate_with_jwks,
};

fn validate(
    key: &TestKey,
    claims: &Value,
    req: &Requirements,
) -> Result<AccessTokenClaims, ValidationError> {
    validate_with_jwks(&key.sign(claims), &jwks(&[key]), req, NOW)
}

fn with(mut claims: Value, changes: Value) -> Value {
    for (k, v) in changes.as_object().unwrap() {
        if v.is_null() {
            claims.as_object_mut().unwrap().remove(k);
        } else {
            claims[k] = v.clone();
        }
    }
    claims
}

// Rule 2 -------------------------------------------------------------------------------------

#[test]
fn rule_2_es256_and_eddsa_tokens_pass() {
    for key in [TestKey::es256("es"), TestKey::eddsa("ed")] {
        let claims = validate(&key, &claims(), &requirements()).unwrap();
        assert_eq!(claims.tenant_id, TENANT);
        assert_eq!(claims.aud, vec![AUDIENCE.to_owned()]);
        assert!(claims.has_scope("users:read") && claims.has_scope("openid"));
        assert_eq!(claims.subject_type, SubjectType::Human);
        assert_eq!(claims.exp, NOW + 900);
    }
}

#[test]
fn rule_2_the_right_key_is_chosen_by_kid_among_several() {
    let (a, b, rsa) = (
        TestKey::es256("a"),
        TestKey::eddsa("b"),
        TestKey::rs256("r"),
    );
    let set = jwks(&[&rsa, &a, &b]);
    for key in [&a, &b] {
        validate_with_jwks(&key.sign(&claims()), &set, &requirements(), NOW).unwrap();
    }
}

#[test]
fn rule_2_alg_none_is_refused() {
    let key = TestKey::es256("k");
    for alg in ["none", "None", "NONE"] {
        let token = unsigned(
            &json!({"alg": alg, "typ": "at+jwt", "kid": "k"}),
            &claims(),
            "",
        );
        assert_eq!(
            validate_with_jwks(&token, &jwks(&[&key]), &requirements(), NOW).unwrap_err(),
            ValidationError::DisallowedAlgorithm
        );
    }
}

#[test]
fn rule_2_hs256_with_the_public_key_as_secret_is_refused() {
    // Algorithm confusion (RFC 8725 §2.1): an attacker signs with HMAC, using the published
    // public key as the shared secret, and names the real key's kid.
    let key = TestKey::es256("k");
    let AlgorithmParameters::EllipticCurve(ec) = &key.jwk.algorithm else {
        panic!()
    };
    for secret in [
        serde_json::to_vec(&key.jwk).unwrap(),
        ec.x.as_bytes().to_vec(),
    ] {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some("at+jwt".into());
        header.kid = Some("k".into());
        let token =
            jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_secret(&secret)).unwrap();
        assert_eq!(
            validate_with_jwks(&token, &jwks(&[&key]), &requirements(), NOW).unwrap_err(),
            ValidationError::DisallowedAlgorithm
        );
    }
}

#[test]
fn rule_2_an_hmac_key_in_the_set_is_never_used() {
    // Even a symmetric JWK published under the token's kid cannot verify an ES256 token.
    let oct = Jwk {
        common: jsonwebtoken::jwk::CommonParameters {
            key_id: Some("k".into()),
            key_algorithm: Some(KeyAlgorithm::HS256),
            ..Default::default()
        },
        algorithm: AlgorithmParameters::OctetKey(OctetKeyParameters {
            key_type: OctetKeyType::Octet,
            value: "c2VjcmV0".into(),
        }),
    };
    let key = TestKey::es256("k");
    let set = jsonwebtoken::jwk::JwkSet { keys: vec![oct] };
    assert_eq!(
        validate_with_jwks(&key.sign(&claims()), &set, &requirements(), NOW).unwrap_err(),
        ValidationError::KeyMismatch
    );
}

#[test]
fn rule_2_rs256_access_tokens_are_refused_even_with_a_published_rsa_key() {
    let rsa = TestKey::rs256("r");
    assert_eq!(
        validate(&rsa, &claims(), &requirements()).unwrap_err(),
        ValidationError::DisallowedAlgorithm
    );
}

#[test]
fn rule_2_typ_must_be_at_jwt() {
    let key = TestKey::eddsa("k");
    for typ in [Some("JWT"), Some("jwt"), None, Some("application/jwt")] {
        let mut header = key.header();
        header.typ = typ.map(str::to_owned);
        let token = key.sign_with(&header, &claims());
        assert_eq!(
            validate_with_jwks(&token, &jwks(&[&key]), &requirements(), NOW).unwrap_err(),
            ValidationError::WrongTokenType,
            "{typ:?}"
        );
    }
    for typ in ["application/at+jwt", "AT+JWT"] {
        let mut header = key.header();
        header.typ = Some(typ.into());
        validate_with_jwks(
            &key.sign_with(&header, &claims()),
            &jwks(&[&key]),
            &requirements(),
            NOW,
        )
        .unwrap();
    }
}

#[test]
fn rule_2_unknown_or_missing_kid_is_refused() {
    let (signer, published) = (TestKey::es256("k1"), TestKey::es256("k2"));
    assert_eq!(
        validate_with_jwks(
            &signer.sign(&claims()),
            &jwks(&[&published]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::UnknownKey
    );
    let mut header = signer.header();
    header.kid = None;
    assert_eq!(
        validate_with_jwks(
            &signer.sign_with(&header, &claims()),
            &jwks(&[&signer]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::MissingKeyId
    );
}

#[test]
fn rule_2_a_published_key_under_the_same_kid_but_another_key_fails_the_signature() {
    let (signer, impostor) = (TestKey::es256("k"), TestKey::es256("k"));
    assert_eq!(
        validate_with_jwks(
            &signer.sign(&claims()),
            &jwks(&[&impostor]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::BadSignature
    );
}

#[test]
fn rule_2_a_key_of_the_wrong_type_for_alg_is_refused() {
    // An ES256 token whose kid names an Ed25519 key (and the reverse).
    let (es, ed) = (TestKey::es256("es"), TestKey::eddsa("ed"));
    let mut header = es.header();
    header.kid = Some("ed".into());
    assert_eq!(
        validate_with_jwks(
            &es.sign_with(&header, &claims()),
            &jwks(&[&ed]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::KeyMismatch
    );
    // A JWK restricted to another `alg` or to encryption is not used either.
    let mut restricted = es.jwk.clone();
    restricted.common.key_algorithm = Some(KeyAlgorithm::ES384);
    let set = jsonwebtoken::jwk::JwkSet {
        keys: vec![restricted],
    };
    assert_eq!(
        validate_with_jwks(&es.sign(&claims()), &set, &requirements(), NOW).unwrap_err(),
        ValidationError::KeyMismatch
    );
    let mut encryption = es.jwk.clone();
    encryption.common.public_key_use = Some(jsonwebtoken::jwk::PublicKeyUse::Encryption);
    let set = jsonwebtoken::jwk::JwkSet {
        keys: vec![encryption],
    };
    assert_eq!(
        validate_with_jwks(&es.sign(&claims()), &set, &requirements(), NOW).unwrap_err(),
        ValidationError::KeyMismatch
    );
}

#[test]
fn rule_2_tampering_is_caught() {
    let key = TestKey::eddsa("k");
    let token = key.sign(&claims());
    let [h, _, s]: [&str; 3] = token.split('.').collect::<Vec<_>>().try_into().unwrap();
    let forged_claims = with(claims(), json!({"tenant_id": "ten_other"}));
    let forged = unsigned(&json!({}), &forged_claims, "");
    let forged_payload = forged.split('.').nth(1).unwrap();
    assert_eq!(
        validate_with_jwks(
            &format!("{h}.{forged_payload}.{s}"),
            &jwks(&[&key]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::BadSignature
    );
    assert_eq!(
        validate_with_jwks(
            &format!("{h}.{}.", token.split('.').nth(1).unwrap()),
            &jwks(&[&key]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::BadSignature
    );
}

#[test]
fn rule_2_garbage_is_malformed() {
    let key = TestKey::es256("k");
    for token in ["", "abc", "a.b.c", "a.b.c.d.e"] {
        assert_eq!(
            validate_with_jwks(token, &jwks(&[&key]), &requirements(), NOW).unwrap_err(),
            ValidationError::MalformedToken,
            "{token}"
        );
    }
}

// Rules 3–10, one failure each -------------------------------------------------------------

#[test]
fn rule_3_issuer_must_match_exactly() {
    let key = TestKey::es256("k");
    for iss in [
        json!("https://beta.id.example"),
        json!(format!("{ISSUER}/")),
        json!(null),
    ] {
        assert_eq!(
            validate(&key, &with(claims(), json!({"iss": iss})), &requirements()).unwrap_err(),
            ValidationError::WrongIssuer
        );
    }
}

#[test]
fn rule_4_audience_string_or_array() {
    let key = TestKey::es256("k");
    let ok = validate(
        &key,
        &with(
            claims(),
            json!({"aud": ["https://other.example", AUDIENCE]}),
        ),
        &requirements(),
    )
    .unwrap();
    assert_eq!(
        ok.aud,
        vec!["https://other.example".to_owned(), AUDIENCE.to_owned()]
    );
    for aud in [
        json!("https://other.example"),
        json!(["https://other.example"]),
        json!([]),
        json!(null),
    ] {
        assert_eq!(
            validate(&key, &with(claims(), json!({"aud": aud})), &requirements()).unwrap_err(),
            ValidationError::WrongAudience
        );
    }
}

#[test]
fn rule_5_expiry_not_before_and_leeway() {
    let key = TestKey::eddsa("k");
    let req = requirements();
    assert_eq!(
        validate(&key, &with(claims(), json!({"exp": NOW})), &req).unwrap_err(),
        ValidationError::Expired
    );
    assert_eq!(
        validate(&key, &with(claims(), json!({"exp": null})), &req).unwrap_err(),
        ValidationError::MissingExpiry
    );
    assert_eq!(
        validate(&key, &with(claims(), json!({"nbf": NOW + 10})), &req).unwrap_err(),
        ValidationError::NotYetValid
    );
    let lenient = requirements().with_leeway_secs(30);
    validate(&key, &with(claims(), json!({"exp": NOW - 29})), &lenient).unwrap();
    validate(&key, &with(claims(), json!({"nbf": NOW + 30})), &lenient).unwrap();
    assert_eq!(
        validate(&key, &with(claims(), json!({"exp": NOW - 30})), &lenient).unwrap_err(),
        ValidationError::Expired
    );
}

#[test]
fn rule_6_tenant_must_own_the_resource() {
    let key = TestKey::es256("k");
    for tenant in [json!("ten_other"), json!(null)] {
        let err = validate(
            &key,
            &with(claims(), json!({"tenant_id": tenant})),
            &requirements(),
        )
        .unwrap_err();
        assert_eq!(err, ValidationError::WrongTenant);
        assert_eq!((err.status(), err.error_code()), (403, "forbidden"));
    }
}

/// The organization of the route in the rule 6b tests.
const ORG: &str = "org_01hzzzzzzzzzzzzzzzzzzzzzzz";

#[test]
fn rule_6b_organization_must_own_the_resource() {
    let key = TestKey::es256("k");
    let route = requirements().with_organization(ORG);
    for org in [
        json!({"org_id": ORG, "org": ORG, "org_slug": "acme-eu"}),
        json!({"org_id": ORG}),
        json!({"org": ORG}),
    ] {
        let c = validate(&key, &with(claims(), org.clone()), &route).unwrap();
        assert_eq!(c.org.as_deref(), Some(ORG), "{org}");
    }
    for org in [
        json!({"org_id": "org_other", "org": "org_other"}),
        json!({"org_id": "org_01hzzzzzzzzzzzzzzzzzzzzzzy"}),
        json!({"org_id": ORG.to_uppercase()}),
        json!({"org": ORG.to_uppercase()}),
        json!({"org_id": [ORG]}),
        json!({"org": 1}),
        json!({"org_id": "org_other", "org": ORG}),
        json!({"org_slug": ORG}),
        json!({}),
    ] {
        let err = validate(&key, &with(claims(), org.clone()), &route).unwrap_err();
        assert_eq!(err, ValidationError::WrongOrganization, "{org}");
        assert_eq!((err.status(), err.error_code()), (403, "forbidden"));
        assert_eq!(err.www_authenticate(), "Bearer");
    }
    // A route that names no organization accepts a token with or without one.
    let c = validate(
        &key,
        &with(
            claims(),
            json!({"org_id": "org_other", "org_slug": "other"}),
        ),
        &requirements(),
    )
    .unwrap();
    assert_eq!(
        (c.org.as_deref(), c.org_slug.as_deref()),
        (Some("org_other"), Some("other"))
    );
    assert_eq!(
        validate(&key, &claims(), &requirements()).unwrap().org,
        None
    );
}

#[test]
fn rule_6b_differing_org_id_and_org_are_an_invalid_token() {
    let key = TestKey::es256("k");
    let both = with(claims(), json!({"org_id": ORG, "org": "org_other"}));
    for route in [requirements(), requirements().with_organization(ORG)] {
        let err = validate(&key, &both, &route).unwrap_err();
        assert_eq!(err, ValidationError::InvalidClaim { claim: "org_id" });
        assert_eq!((err.status(), err.error_code()), (401, "invalid_token"));
    }
}

#[test]
fn rule_7_scope_write_does_not_imply_read() {
    let key = TestKey::es256("k");
    let err = validate(
        &key,
        &with(claims(), json!({"scope": "users:write"})),
        &requirements(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        ValidationError::InsufficientScope {
            required: SCOPE.into()
        }
    );
    assert_eq!(
        (err.status(), err.error_code()),
        (403, "insufficient_scope")
    );
    assert_eq!(
        err.www_authenticate(),
        "Bearer error=\"insufficient_scope\", scope=\"users:read\""
    );
    let no_scope_route = Requirements {
        required_scope: None,
        ..requirements()
    };
    validate(
        &key,
        &with(claims(), json!({"scope": null})),
        &no_scope_route,
    )
    .unwrap();
}

#[test]
fn rule_8_subject_type_must_be_accepted() {
    let key = TestKey::es256("k");
    for st in [
        json!("agent"),
        json!("anonymous"),
        json!("robot"),
        json!(null),
    ] {
        assert_eq!(
            validate(
                &key,
                &with(claims(), json!({"subject_type": st})),
                &requirements()
            )
            .unwrap_err(),
            ValidationError::SubjectTypeNotAccepted
        );
    }
    let system = validate(
        &key,
        &with(claims(), json!({"subject_type": "system"})),
        &requirements(),
    )
    .unwrap();
    assert_eq!(system.subject_type, SubjectType::System);
}

#[test]
fn rule_9_delegation_only_where_allowed() {
    let key = TestKey::es256("k");
    let delegated = with(
        claims(),
        json!({"act": {"sub": "agt_1", "act": {"sub": "usr_2"}}}),
    );
    assert_eq!(
        validate(&key, &delegated, &requirements()).unwrap_err(),
        ValidationError::DelegationNotAllowed
    );
    let allowing = requirements().with_delegation(true);
    let claims_ok = validate(&key, &delegated, &allowing).unwrap();
    let act = claims_ok.act.as_ref().unwrap();
    assert_eq!(act.sub, "agt_1");
    assert_eq!(act.act.as_ref().unwrap().sub, "usr_2");
    assert!(claims_ok.is_delegated());
    for act in [
        json!("agt_1"),
        json!({"client_id": "x"}),
        json!({"sub": "a", "act": {"sub": 5}}),
    ] {
        assert_eq!(
            validate(&key, &with(claims(), json!({"act": act})), &allowing).unwrap_err(),
            ValidationError::InvalidActor
        );
    }
    // The route's policy: chain length and the parties trusted to act (the outermost actor).
    assert_eq!(
        validate(
            &key,
            &delegated,
            &allowing.clone().with_max_delegation_depth(1)
        )
        .unwrap_err(),
        ValidationError::DelegationTooDeep
    );
    assert!(
        validate(
            &key,
            &delegated,
            &allowing.clone().with_trusted_actors(["agt_1"])
        )
        .is_ok()
    );
    let untrusted = allowing.with_trusted_actors(["usr_2"]);
    let refused = validate(&key, &delegated, &untrusted).unwrap_err();
    assert_eq!(refused, ValidationError::ActorNotTrusted);
    assert_eq!((refused.status(), refused.error_code()), (403, "forbidden"));
}

#[test]
fn rule_10_dpop_bound_tokens_need_a_matching_verified_proof() {
    let key = TestKey::es256("k");
    let bound = with(claims(), json!({"cnf": {"jkt": "thumb-1"}}));
    let err = validate(&key, &bound, &requirements()).unwrap_err();
    assert_eq!(err, ValidationError::DpopProofRequired);
    assert_eq!(err.status(), 401);
    assert_eq!(
        validate(&key, &bound, &requirements().with_dpop_jkt("thumb-2")).unwrap_err(),
        ValidationError::DpopKeyMismatch
    );
    let ok = validate(&key, &bound, &requirements().with_dpop_jkt("thumb-1")).unwrap();
    assert_eq!(ok.cnf.unwrap().jkt, "thumb-1");
    assert_eq!(
        validate(
            &key,
            &with(claims(), json!({"cnf": {"x5t#S256": "abc"}})),
            &requirements()
        )
        .unwrap_err(),
        ValidationError::UnsupportedConfirmation
    );
}

#[test]
fn rfc_9068_required_claims_are_checked_last() {
    let key = TestKey::es256("k");
    for claim in ["sub", "client_id", "jti", "iat"] {
        assert_eq!(
            validate(&key, &with(claims(), json!({claim: null})), &requirements()).unwrap_err(),
            ValidationError::InvalidClaim { claim }
        );
    }
}

// Order ----------------------------------------------------------------------------------------

#[test]
fn order_tenant_is_reported_before_scope() {
    let key = TestKey::es256("k");
    let both = with(
        claims(),
        json!({"tenant_id": "ten_other", "scope": "users:write"}),
    );
    assert_eq!(
        validate(&key, &both, &requirements()).unwrap_err(),
        ValidationError::WrongTenant
    );
}

#[test]
fn order_organization_is_reported_before_scope() {
    let key = TestKey::es256("k");
    let both = with(
        claims(),
        json!({"org_id": "org_other", "scope": "users:write"}),
    );
    assert_eq!(
        validate(&key, &both, &requirements().with_organization(ORG)).unwrap_err(),
        ValidationError::WrongOrganization
    );
}

#[test]
fn order_tenant_is_reported_before_organization() {
    let key = TestKey::es256("k");
    let both = with(
        claims(),
        json!({"tenant_id": "ten_other", "org_id": "org_other", "scope": "users:write"}),
    );
    assert_eq!(
        validate(&key, &both, &requirements().with_organization(ORG)).unwrap_err(),
        ValidationError::WrongTenant
    );
}

#[test]
fn order_issuer_is_reported_before_expiry() {
    let key = TestKey::es256("k");
    let both = with(
        claims(),
        json!({"iss": "https://evil.example", "exp": NOW - 3600}),
    );
    assert_eq!(
        validate(&key, &both, &requirements()).unwrap_err(),
        ValidationError::WrongIssuer
    );
}

#[test]
fn order_signature_is_reported_before_any_claim() {
    let (signer, published) = (TestKey::es256("k"), TestKey::es256("k"));
    let everything_wrong = json!({"iss": "x", "aud": "y", "exp": 0, "tenant_id": "z"});
    assert_eq!(
        validate_with_jwks(
            &signer.sign(&everything_wrong),
            &jwks(&[&published]),
            &requirements(),
            NOW
        )
        .unwrap_err(),
        ValidationError::BadSignature
    );
}

// Reuse by the server: rule 1 and the claim rules on their own ----------------------------------

#[test]
fn check_claims_runs_rules_3_to_10_without_a_signature() {
    let claims_ok = check_claims(&claims(), &requirements(), NOW).unwrap();
    assert_eq!(claims_ok.client_id, "app_01jd0000000000000000000001");
    assert_eq!(
        check_claims(&with(claims(), json!({"aud": "x"})), &requirements(), NOW).unwrap_err(),
        ValidationError::WrongAudience
    );
}

#[test]
fn errors_never_echo_the_token() {
    let key = TestKey::es256("k");
    let token = key.sign(&with(claims(), json!({"tenant_id": "ten_secret_marker"})));
    let err = validate_with_jwks(&token, &jwks(&[&key]), &requirements(), NOW).unwrap_err();
    for text in [err.to_string(), format!("{err:?}"), err.www_authenticate()] {
        assert!(
            !text.contains(&token) && !text.contains("ten_secret_marker"),
            "{text}"
        );
    }
    let token = key.sign(&with(claims(), json!({"org_id": "org_secret_marker"})));
    let err = validate_with_jwks(
        &token,
        &jwks(&[&key]),
        &requirements().with_organization(ORG),
        NOW,
    )
    .unwrap_err();
    assert_eq!(err, ValidationError::WrongOrganization);
    for text in [err.to_string(), format!("{err:?}"), err.www_authenticate()] {
        assert!(!text.contains("org_secret_marker"), "{text}");
    }
    let header = format!("Bearer {token} extra");
    let err = bearer_token(Some(&header)).unwrap_err();
    assert!(!err.to_string().contains(&token) && !format!("{err:?}").contains(&token));
}

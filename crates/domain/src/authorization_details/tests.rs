use super::*;
use serde_json::json;

fn payment() -> DetailType {
    DetailType::parse(
        "payment_initiation",
        "Make a payment from your account",
        json!({
            "type": "object",
            "required": ["type", "instructedAmount", "creditorName"],
            "properties": {
                "type": {"const": "payment_initiation"},
                "actions": {"type": "array", "items": {"enum": ["initiate", "status", "cancel"]}},
                "locations": {"type": "array"},
                "instructedAmount": {
                    "title": "Amount",
                    "type": "object",
                    "required": ["currency", "amount"],
                    "properties": {
                        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
                        "amount": {"type": "string"}
                    },
                    "additionalProperties": false
                },
                "creditorName": {"title": "Payee", "type": "string", "maxLength": 70}
            },
            "additionalProperties": false
        }),
    )
    .unwrap()
}

fn one_payment() -> String {
    json!([{
        "type": "payment_initiation",
        "actions": ["initiate", "status"],
        "locations": ["https://bank.example/payments"],
        "instructedAmount": {"currency": "EUR", "amount": "123.50"},
        "creditorName": "Merchant A"
    }])
    .to_string()
}

#[test]
fn a_registered_type_that_matches_its_schema_is_accepted() {
    let details = AuthorizationDetails::parse(&one_payment(), &[payment()]).unwrap();
    assert_eq!(details.objects().len(), 1);
    assert_eq!(
        details.objects()[0]["creditorName"],
        json!("Merchant A"),
        "values are kept as sent"
    );
    let again = AuthorizationDetails::from_stored(&details.to_json()).unwrap();
    assert_eq!(again, details, "stored text reads back the same");
    assert_eq!(payment().label("creditorName"), "Payee");
    assert_eq!(payment().label("actions"), "actions", "no title: the key");
}

#[test]
fn an_unknown_type_is_named_in_the_error() {
    let e = AuthorizationDetails::parse(r#"[{"type":"account_information"}]"#, &[payment()])
        .unwrap_err();
    assert!(e.0.contains("account_information"), "{e}");
    assert!(e.0.contains("not registered"), "{e}");
}

#[test]
fn schema_violations_are_refused_with_their_place() {
    let wrong_currency = one_payment().replace("EUR", "euro");
    let e = AuthorizationDetails::parse(&wrong_currency, &[payment()]).unwrap_err();
    assert!(e.0.contains("/instructedAmount/currency"), "{e}");
    let extra = json!([{"type": "payment_initiation", "instructedAmount": {"currency": "EUR",
        "amount": "1"}, "creditorName": "x", "sneaky": true}])
    .to_string();
    assert!(AuthorizationDetails::parse(&extra, &[payment()]).is_err());
    let missing = json!([{"type": "payment_initiation"}]).to_string();
    assert!(AuthorizationDetails::parse(&missing, &[payment()]).is_err());
}

#[test]
fn malformed_shapes_and_sizes_are_refused() {
    let types = [payment()];
    for bad in [
        "",
        "not json",
        "{}",
        "[]",
        "[1]",
        r#"["payment_initiation"]"#,
        r#"[{"actions":["initiate"]}]"#,
        r#"[{"type":7}]"#,
    ] {
        assert!(
            AuthorizationDetails::parse(bad, &types).is_err(),
            "{bad} should be refused"
        );
    }
    let eleven = format!(
        "[{}]",
        vec![one_payment()[1..one_payment().len() - 1].to_owned(); 11].join(",")
    );
    assert!(
        AuthorizationDetails::parse(&eleven, &types)
            .unwrap_err()
            .0
            .contains("1 to 10")
    );
    let huge = format!(
        r#"[{{"type":"payment_initiation","creditorName":"{}"}}]"#,
        "a".repeat(9000)
    );
    assert!(
        AuthorizationDetails::parse(&huge, &types)
            .unwrap_err()
            .0
            .contains("larger")
    );
    let deep = format!(
        r#"[{{"type":"payment_initiation","x":{}1{}}}]"#,
        "[".repeat(20),
        "]".repeat(20)
    );
    assert!(
        AuthorizationDetails::parse(&deep, &types)
            .unwrap_err()
            .0
            .contains("nests")
    );
}

#[test]
fn common_fields_have_their_rfc_shapes() {
    let open = DetailType::parse("open", "Anything", json!({})).unwrap();
    for bad in [
        r#"[{"type":"open","actions":"read"}]"#,
        r#"[{"type":"open","locations":[1]}]"#,
        r#"[{"type":"open","identifier":5}]"#,
        r#"[{"type":"open","privileges":{"a":1}}]"#,
    ] {
        let e = AuthorizationDetails::parse(bad, std::slice::from_ref(&open)).unwrap_err();
        assert!(e.0.contains("RFC 9396 §2.2"), "{bad}: {e}");
    }
    assert!(
        AuthorizationDetails::parse(r#"[{"type":"open","actions":["read"]}]"#, &[open]).is_ok()
    );
}

#[test]
fn registration_refuses_bad_types() {
    let schema = json!({"type": "object"});
    assert!(DetailType::parse("", "d", schema.clone()).is_err());
    assert!(DetailType::parse("has space", "d", schema.clone()).is_err());
    assert!(DetailType::parse(&"t".repeat(129), "d", schema.clone()).is_err());
    assert!(DetailType::parse("t", " ", schema.clone()).is_err());
    assert!(DetailType::parse("t", "line\nbreak", schema.clone()).is_err());
    assert!(DetailType::parse("t", "d", json!("object")).is_err());
    assert!(DetailType::parse("t", "d", json!({"type": "no-such-type"})).is_err());
    let remote = json!({"$ref": "https://127.0.0.1:1/schema.json"});
    let e = DetailType::parse("t", "d", remote).unwrap_err();
    assert!(e.0.contains("does not compile"), "{e}");
    let big = json!({"description": "x".repeat(MAX_DETAIL_SCHEMA_BYTES)});
    assert!(
        DetailType::parse("t", "d", big)
            .unwrap_err()
            .0
            .contains("larger")
    );
    let twice = [
        DetailType::parse("t", "d", schema.clone()).unwrap(),
        DetailType::parse("t", "e", schema.clone()).unwrap(),
    ];
    assert!(check_detail_types(&twice).is_err());
    let many: Vec<_> = (0..17)
        .map(|i| DetailType::parse(&format!("t{i}"), "d", schema.clone()).unwrap())
        .collect();
    assert!(check_detail_types(&many).is_err());
    assert!(check_detail_types(&many[..16]).is_ok());
}

#[test]
fn a_backtracking_pattern_runs_in_linear_time_or_is_refused() {
    // Look-around and back-references need a backtracking engine: the linear-time one refuses
    // them at registration, so no request can run an exponential match.
    let e = DetailType::parse(
        "t",
        "d",
        json!({"properties": {"x": {"pattern": "^(a+)+\\1$"}}}),
    );
    assert!(e.is_err(), "a back-reference must not compile");
}

#[test]
fn narrowing_drops_array_elements_never_keys_or_values() {
    let types = [payment()];
    let granted = AuthorizationDetails::parse(&one_payment(), &types).unwrap();
    let fewer_actions =
        AuthorizationDetails::parse(&one_payment().replace(r#","status""#, ""), &types).unwrap();
    assert!(fewer_actions.narrows(&granted));
    assert!(granted.narrows(&granted), "the same is a narrowing");
    let more_actions = AuthorizationDetails::parse(
        &one_payment().replace(r#""status""#, r#""status","cancel""#),
        &types,
    )
    .unwrap();
    assert!(!more_actions.narrows(&granted), "an added action widens");
    let other_amount =
        AuthorizationDetails::parse(&one_payment().replace("123.50", "999"), &types).unwrap();
    assert!(!other_amount.narrows(&granted), "a changed value widens");
    let no_locations = json!([{
        "type": "payment_initiation",
        "actions": ["initiate", "status"],
        "instructedAmount": {"currency": "EUR", "amount": "123.50"},
        "creditorName": "Merchant A"
    }]);
    let no_locations = AuthorizationDetails::from_value(no_locations, &types).unwrap();
    assert!(
        !no_locations.narrows(&granted),
        "a dropped key may lift a limit"
    );
}

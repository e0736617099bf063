//! Property tests (proptest) of the SCIM filter parsers of `/Users` and `/Groups` (issue 20:
//! "fuzz the filter parser"). Three properties, each over generated input:
//!
//! 1. **Total**: any string — random Unicode, or soup of the grammar's own tokens, quotes,
//!    brackets and escapes — is a filter or `invalidFilter`, never a panic or another error.
//! 2. **Sound**: a well-formed filter over the attributes and operators the User allow-list
//!    supports (nested `and`/`or`/`not`, grouping, `emails[…]`, up to four levels) always parses.
//! 3. **Faithful**: the value of `userName eq "<s>"`, written as a JSON string with every escape
//!    RFC 7644 §3.4.2.2 allows (its `compValue` is JSON), reaches the store unchanged, so quoting
//!    can neither lose nor smuggle characters.
//!
//! CI runs 1,000 cases per property (a few seconds); `PROPTEST_CASES=<n>` runs more, e.g.
//! `PROPTEST_CASES=200000 cargo test -p svc-manage --lib scim::filter_props` (see
//! docs/scim-directories.md for the longest run's result). A failure prints its shrunk input.

use super::ScimError;
use super::{filter, group_filter};
use proptest::prelude::*;
use svc_store::{ScimFilter, ScimValue};

/// Cases per property: `PROPTEST_CASES` when set, else 1,000.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    ProptestConfig {
        cases,
        // Shrinking a failure must end even for long inputs.
        max_shrink_iters: 10_000,
        // A failure prints its shrunk input; no regression files appear in the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Pieces of the grammar and characters that have broken parsers before.
const PIECES: &[&str] = &[
    "userName",
    "emails",
    "members",
    "displayName",
    "name.givenName",
    "meta.created",
    "value",
    "type",
    "[",
    "]",
    "(",
    ")",
    " ",
    "  ",
    "\t",
    "eq",
    "ne",
    "co",
    "sw",
    "ew",
    "gt",
    "ge",
    "lt",
    "le",
    "pr",
    "and",
    "or",
    "not",
    "AND",
    "Or",
    "\"",
    "\\",
    "\\\"",
    "\\u",
    "\\u00",
    "'",
    "true",
    "false",
    "null",
    "1",
    "-1e999",
    "%",
    ".",
    ":",
    "urn:ietf:params:scim:schemas:core:2.0:User:",
    "\u{0}",
    "\u{202e}",
    "é",
    "𝓊",
    "\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

/// A string attribute of the User allow-list, as a client might spell it.
fn string_attr() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "userName",
        "USERNAME",
        "displayName",
        "externalId",
        "id",
        "name.givenName",
        "name.familyName",
        "emails",
        "emails.value",
        "urn:ietf:params:scim:schemas:core:2.0:User:userName",
    ])
}

fn string_op() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "EQ", "Co",
    ])
}

/// Any text as a JSON string literal (quotes, backslashes, controls and non-ASCII escaped the
/// way serde_json writes them).
fn json_string() -> impl Strategy<Value = (String, String)> {
    any::<String>().prop_map(|s| {
        let literal = serde_json::to_string(&s).expect("a string serialises");
        (s, literal)
    })
}

/// One supported comparison or presence test.
fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (string_attr(), string_op(), json_string())
            .prop_map(|(attr, op, (_, literal))| format!("{attr} {op} {literal}")),
        (string_attr()).prop_map(|attr| format!("{attr} pr")),
        (prop::sample::select(vec!["eq", "ne"]), prop::bool::ANY)
            .prop_map(|(op, b)| format!("active {op} {b}")),
        (
            prop::sample::select(vec!["meta.created", "meta.lastModified"]),
            prop::sample::select(vec!["eq", "ne", "gt", "ge", "lt", "le"]),
            0i64..4_000_000_000,
        )
            .prop_map(|(attr, op, secs)| {
                let at = time::OffsetDateTime::from_unix_timestamp(secs).expect("in range");
                let text = at
                    .format(&time::format_description::well_known::Rfc3339)
                    .expect("formats");
                format!("{attr} {op} \"{text}\"")
            }),
        (string_attr(), prop::sample::select(vec!["eq", "ne"]))
            .prop_map(|(attr, op)| format!("{attr} {op} null")),
        json_string().prop_map(|(_, v)| format!("emails[value co {v}]")),
        prop::sample::select(vec![
            "emails[type eq \"work\"]",
            "emails[primary eq true]",
            "emails[type eq \"work\" and value pr]",
        ])
        .prop_map(str::to_owned),
    ]
}

/// Well-formed filters of up to four levels.
fn well_formed() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|f| format!("({f})")),
            inner.clone().prop_map(|f| format!("not ({f})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} and {b}")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a}) or ({b})")),
        ]
    })
}

/// A filter or `invalidFilter`: the only two acceptable outcomes.
fn filter_or_invalid<T>(raw: &str, outcome: Result<T, ScimError>) -> Result<(), TestCaseError> {
    match outcome {
        Ok(_) | Err(ScimError::InvalidFilter(_)) => Ok(()),
        Err(other) => Err(TestCaseError::fail(format!("{raw:?}: {other:?}"))),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_is_a_filter_or_invalid_filter(raw in any::<String>()) {
        filter_or_invalid(&raw, filter::parse(&raw))?;
        filter_or_invalid(&raw, group_filter::parse(&raw))?;
    }

    #[test]
    fn token_soup_is_a_filter_or_invalid_filter(raw in token_soup()) {
        filter_or_invalid(&raw, filter::parse(&raw))?;
        filter_or_invalid(&raw, group_filter::parse(&raw))?;
    }

    #[test]
    fn well_formed_user_filters_parse(raw in well_formed()) {
        if raw.chars().count() <= filter::MAX_FILTER_CHARS {
            let parsed = filter::parse(&raw);
            prop_assert!(parsed.is_ok(), "{raw:?}: {parsed:?}");
        }
    }

    #[test]
    fn quoted_values_reach_the_store_unchanged((value, literal) in json_string()) {
        let raw = format!("userName eq {literal}");
        prop_assume!(raw.chars().count() <= filter::MAX_FILTER_CHARS);
        match filter::parse(&raw) {
            Ok(ScimFilter::Compare(_, _, ScimValue::Str(seen))) => prop_assert_eq!(seen, value),
            other => prop_assert!(false, "{raw:?}: {other:?}"),
        }
    }
}

//! RAR details (RFC 9396 §2) in words for the consent page: each object under its type's
//! description, each value under the `title` its schema gives it (the key otherwise). Nested
//! objects read as `title: value` pairs; arrays as comma-separated lists. The text is the
//! client's and the tenant's: the page escapes it.

use serde_json::Value;
use svc_domain::{AuthorizationDetails, DetailType};

/// One requested detail object, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentDetail {
    /// The type's description ("Make a payment from your account"), or the type name when the
    /// application no longer registers it.
    pub description: String,
    /// `(label, value)` for every member but `type`, in the object's order.
    pub lines: Vec<(String, String)>,
}

/// The details of `details` in words, using the schemas of `types`.
pub(crate) fn describe(details: &AuthorizationDetails, types: &[DetailType]) -> Vec<ConsentDetail> {
    details
        .objects()
        .iter()
        .map(|object| {
            let name = object.get("type").and_then(Value::as_str).unwrap_or("");
            let kind = types.iter().find(|t| t.name == name);
            let schema = kind.map(|t| &t.schema);
            ConsentDetail {
                description: kind.map_or_else(|| name.to_owned(), |t| t.description.clone()),
                lines: object
                    .iter()
                    .filter(|(key, _)| key.as_str() != "type")
                    .map(|(key, value)| (label(schema, key), words(value, property(schema, key))))
                    .collect(),
            }
        })
        .collect()
}

fn property<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(key))
}

fn label(schema: Option<&Value>, key: &str) -> String {
    property(schema, key)
        .and_then(|p| p.get("title"))
        .and_then(Value::as_str)
        .unwrap_or(key)
        .to_owned()
}

fn words(value: &Value, schema: Option<&Value>) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => {
            let items_schema = schema.and_then(|s| s.get("items"));
            items
                .iter()
                .map(|v| words(v, items_schema))
                .collect::<Vec<_>>()
                .join(", ")
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{}: {}", label(schema, k), words(v, property(schema, k))))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn values_read_under_their_schema_titles() {
        let types = [DetailType::parse(
            "payment_initiation",
            "Make a payment from your account",
            json!({"properties": {
                "instructedAmount": {"title": "Amount", "properties": {
                    "currency": {"title": "Currency"}, "amount": {"title": "Sum"}}},
                "creditorName": {"title": "Payee"},
                "urgent": {"title": "Urgent"}
            }}),
        )
        .unwrap()];
        let details = AuthorizationDetails::parse(
            r#"[{"type":"payment_initiation","actions":["initiate","status"],
                "instructedAmount":{"currency":"EUR","amount":"123.50"},
                "creditorName":"<b>Merchant</b>","urgent":false}]"#,
            &types,
        )
        .unwrap();
        let shown = describe(&details, &types);
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].description, "Make a payment from your account");
        let lines: Vec<(&str, &str)> = shown[0]
            .lines
            .iter()
            .map(|(l, v)| (l.as_str(), v.as_str()))
            .collect();
        assert!(
            lines.contains(&("actions", "initiate, status")),
            "{lines:?}"
        );
        assert!(
            lines.contains(&("Amount", "Currency: EUR, Sum: 123.50"))
                || lines.contains(&("Amount", "Sum: 123.50, Currency: EUR")),
            "{lines:?}"
        );
        assert!(
            lines.contains(&("Payee", "<b>Merchant</b>")),
            "kept raw; the page escapes"
        );
        assert!(lines.contains(&("Urgent", "no")));
        assert!(!lines.iter().any(|(l, _)| *l == "type"));
    }
}

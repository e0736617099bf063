//! Stored values back into domain types: [`Record`] names a record in [`StoreError::Corrupt`]
//! messages (`table.column value of record: why`) while parsing its columns, and the JSON-array
//! encoding of list-valued columns. Every row form's `decode` goes through these.

use std::fmt::Display;
use svc_domain::{Scope, ScopeSet, SecretHash};
use svc_store::StoreError;

/// Encodes list-valued columns (redirect URIs, grant types, scopes) as a JSON array of strings.
pub fn encode_strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<String, StoreError> {
    let items: Vec<&str> = items.into_iter().collect();
    serde_json::to_string(&items)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON array: {e}")))
}

/// Encodes a scope set the way every scope column stores it: a JSON array of the scopes, sorted.
pub fn encode_scopes(scopes: &ScopeSet) -> Result<String, StoreError> {
    encode_strings(scopes.iter().map(Scope::as_str))
}

/// Decodes a JSON array of strings read from `column` of the record `of`.
pub fn decode_strings(text: &str, column: &str, of: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Corrupt(format!(
            "{column} of {of}: not a JSON array of strings: {e}"
        ))
    })
}

/// Names one stored record in [`StoreError::Corrupt`] messages and parses its columns: every
/// message reads `table.column value of record: why`.
pub(crate) struct Record<'a> {
    pub(crate) table: &'static str,
    pub(crate) name: &'a str,
}

impl Record<'_> {
    pub(crate) fn corrupt(
        &self,
        column: &str,
        value: &dyn Display,
        why: &dyn Display,
    ) -> StoreError {
        StoreError::Corrupt(format!(
            "{}.{column} {value} of {}: {why}",
            self.table, self.name
        ))
    }

    /// Parses a text column with `parse`, naming the column and value on failure.
    pub(crate) fn parse<T, E: Display>(
        &self,
        column: &str,
        value: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, StoreError> {
        parse(value).map_err(|e| self.corrupt(column, &format_args!("{value:?}"), &e))
    }

    /// Parses an optional text column.
    pub(crate) fn parse_opt<T, E: Display>(
        &self,
        column: &str,
        value: Option<&str>,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, StoreError> {
        value.map(|v| self.parse(column, v, parse)).transpose()
    }

    /// A 32-byte SHA-256 column.
    pub(crate) fn hash(&self, column: &str, bytes: &[u8]) -> Result<SecretHash, StoreError> {
        SecretHash::from_bytes(bytes).ok_or_else(|| {
            self.corrupt(
                column,
                &format_args!("({} bytes)", bytes.len()),
                &"not 32 bytes",
            )
        })
    }

    /// A JSON array of strings.
    pub(crate) fn strings(&self, column: &str, text: &str) -> Result<Vec<String>, StoreError> {
        serde_json::from_str(text).map_err(|e| {
            self.corrupt(
                column,
                &format_args!("{text:?}"),
                &format_args!("not a JSON array of strings: {e}"),
            )
        })
    }

    /// An optional RAR `authorization_details` column (JSON text, validated when written).
    pub(crate) fn details(
        &self,
        column: &str,
        text: Option<&str>,
    ) -> Result<Option<svc_domain::AuthorizationDetails>, StoreError> {
        text.map(|t| {
            svc_domain::AuthorizationDetails::from_stored(t)
                .ok_or_else(|| self.corrupt(column, &"(JSON)", &"not an array of detail objects"))
        })
        .transpose()
    }

    /// A JSON array of scopes (see [`encode_scopes`]).
    pub(crate) fn scopes(&self, column: &str, text: &str) -> Result<ScopeSet, StoreError> {
        self.strings(column, text)?
            .iter()
            .map(|scope| self.parse(column, scope, Scope::parse))
            .collect::<Result<Vec<_>, _>>()
            .map(ScopeSet::from_scopes)
    }
}

/// How a record keyed by a hash is named in messages: a short prefix of the hash (the hash of a
/// 256-bit secret; four bytes of it reveal nothing and are enough to find the row).
pub(crate) fn hash_name(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("hash {hex}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_lists_round_trip_as_json_arrays() {
        let text = encode_strings(["a", "b \"c\""]).unwrap();
        assert_eq!(
            decode_strings(&text, "t.c", "x").unwrap(),
            vec!["a", "b \"c\""]
        );
        assert!(matches!(
            decode_strings("{}", "t.c", "x"),
            Err(StoreError::Corrupt(_))
        ));
    }

    #[test]
    fn scopes_are_stored_as_sorted_json_arrays() {
        let set = ScopeSet::parse("profile openid").unwrap();
        assert_eq!(encode_scopes(&set).unwrap(), r#"["openid","profile"]"#);
    }
}

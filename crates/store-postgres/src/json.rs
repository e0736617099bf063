//! List-valued columns (redirect URIs, grant types, scopes) are stored as JSON arrays of strings.

use svc_store::StoreError;

/// Encodes strings as a JSON array.
pub(crate) fn encode_strings<'a>(
    items: impl IntoIterator<Item = &'a str>,
) -> Result<String, StoreError> {
    let items: Vec<&str> = items.into_iter().collect();
    serde_json::to_string(&items)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode a JSON array: {e}")))
}

/// Decodes a JSON array of strings read from `column` of the record `of`.
pub(crate) fn decode_strings(
    text: &str,
    column: &str,
    of: &str,
) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Corrupt(format!(
            "{column} of {of}: not a JSON array of strings: {e}"
        ))
    })
}

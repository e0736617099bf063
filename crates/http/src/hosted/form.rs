//! Reading the hosted pages' inputs: URL-encoded form bodies (size-limited, duplicate fields
//! refused) and query strings (unknown parameters ignored).
//!
//! Hosted forms are small; a body over [`FORM_LIMIT`] is refused with 413 before it is read
//! further, whatever the server-wide body limit allows. A field sent twice is ambiguous (which
//! password? which csrf?) and refused with 400 rather than guessed.

use axum::body::Body;
use http::HeaderMap;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use std::collections::HashSet;

/// Largest hosted form body accepted, in bytes.
pub(crate) const FORM_LIMIT: usize = 16 * 1024;

/// Why a form was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormError {
    /// Over [`FORM_LIMIT`] (413).
    TooLarge,
    /// Not `application/x-www-form-urlencoded`, unreadable, or a field sent twice (400).
    Malformed,
}

/// Name/value pairs in request order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields(Vec<(String, String)>);

impl Fields {
    /// The value of `name`, if present.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `name` when present and not blank.
    pub(crate) fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    /// Every pair, for endpoints that pass them on (authorize, end-session).
    pub(crate) fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// The pairs of a query string (`None` is empty). Repeated names are kept in order.
    pub(crate) fn from_query(query: Option<&str>) -> Self {
        Self(
            url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// Pairs built by a handler.
    pub(crate) fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        Self(pairs)
    }

    /// Whether some name occurs twice.
    fn has_duplicates(&self) -> bool {
        let mut seen = HashSet::new();
        self.0.iter().any(|(n, _)| !seen.insert(n.as_str()))
    }
}

/// Reads a URL-encoded form body. With `unique`, a repeated field name is refused; without it
/// the pairs are handed on as sent (a protocol engine judges repeats itself).
pub(crate) async fn read(
    headers: &HeaderMap,
    body: Body,
    unique: bool,
) -> Result<Fields, FormError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > FORM_LIMIT as u64) {
        return Err(FormError::TooLarge);
    }
    let is_form = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !is_form {
        return Err(FormError::Malformed);
    }
    let bytes = axum::body::to_bytes(body, FORM_LIMIT).await.map_err(|e| {
        if is_length_limit(&e) {
            FormError::TooLarge
        } else {
            FormError::Malformed
        }
    })?;
    let fields = Fields(url::form_urlencoded::parse(&bytes).into_owned().collect());
    if unique && fields.has_duplicates() {
        return Err(FormError::Malformed);
    }
    Ok(fields)
}

/// Whether a body error is a length limit (ours or the server-wide one), anywhere in its chain.
fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use http::HeaderValue;

    fn form_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded; charset=utf-8"),
        );
        headers
    }

    #[tokio::test]
    async fn a_form_is_read_in_order() {
        let fields = read(&form_headers(), Body::from("a=1&b=x+y&c=%3C"), true)
            .await
            .unwrap();
        assert_eq!(fields.get("b"), Some("x y"));
        assert_eq!(fields.get("c"), Some("<"));
        assert_eq!(fields.get("d"), None);
        assert_eq!(fields.pairs().len(), 3);
    }

    #[tokio::test]
    async fn duplicate_fields_are_refused_only_when_unique() {
        let body = "csrf=a&csrf=b";
        let err = read(&form_headers(), Body::from(body), true)
            .await
            .unwrap_err();
        assert_eq!(err, FormError::Malformed);
        let fields = read(&form_headers(), Body::from(body), false)
            .await
            .unwrap();
        assert_eq!(fields.pairs().len(), 2);
    }

    #[tokio::test]
    async fn oversized_bodies_are_refused_declared_or_streamed() {
        let big = "a=".to_owned() + &"x".repeat(FORM_LIMIT);
        let mut declared = form_headers();
        declared.insert(CONTENT_LENGTH, HeaderValue::from(big.len()));
        let err = read(&declared, Body::from(big.clone()), true)
            .await
            .unwrap_err();
        assert_eq!(err, FormError::TooLarge);
        let chunks = big
            .into_bytes()
            .chunks(1024)
            .map(|c| Ok::<_, std::io::Error>(Bytes::copy_from_slice(c)))
            .collect::<Vec<_>>();
        let streamed = Body::from_stream(futures_util::stream::iter(chunks));
        let err = read(&form_headers(), streamed, true).await.unwrap_err();
        assert_eq!(err, FormError::TooLarge);
    }

    #[tokio::test]
    async fn other_content_types_are_refused() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let err = read(&headers, Body::from("{}"), true).await.unwrap_err();
        assert_eq!(err, FormError::Malformed);
        let err = read(&HeaderMap::new(), Body::from("a=1"), true)
            .await
            .unwrap_err();
        assert_eq!(err, FormError::Malformed);
    }

    #[test]
    fn queries_keep_unknown_parameters_harmlessly() {
        let q = Fields::from_query(Some("interaction=int_1&utm_source=x"));
        assert_eq!(q.get("interaction"), Some("int_1"));
        assert_eq!(Fields::from_query(None).pairs().len(), 0);
    }
}

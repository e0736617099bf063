//! The redirects back to the client: a code with `state` and `iss` (RFC 6749 §4.1.2, RFC 9207
//! §2), or an error (RFC 6749 §4.1.2.1), added to the registered URI's own query.

use super::request::RedirectError;

/// `redirect_uri` with `code`, `state` and `iss` added to its query (RFC 6749 §4.1.2,
/// RFC 9207 §2).
pub(super) fn code_redirect(
    redirect_uri: &str,
    code: &str,
    state: Option<&str>,
    issuer: &str,
) -> String {
    with_params(
        redirect_uri,
        &[
            ("code", Some(code)),
            ("state", state),
            ("iss", Some(issuer)),
        ],
    )
}

/// `redirect_uri` with `error`, `error_description`, `state` and `iss` (RFC 6749 §4.1.2.1).
pub(super) fn error_redirect(
    redirect_uri: &str,
    error: &RedirectError,
    state: Option<&str>,
    issuer: &str,
) -> String {
    with_params(
        redirect_uri,
        &[
            ("error", Some(error.error)),
            ("error_description", Some(&error.description)),
            ("state", state),
            ("iss", Some(issuer)),
        ],
    )
}

fn with_params(base: &str, params: &[(&str, Option<&str>)]) -> String {
    match url::Url::parse(base) {
        Ok(mut url) => {
            {
                let mut query = url.query_pairs_mut();
                for (name, value) in params {
                    if let Some(value) = value {
                        query.append_pair(name, value);
                    }
                }
            }
            url.to_string()
        }
        // Registered URIs always parse (RedirectUri::parse); keep the base rather than panic.
        Err(_) => base.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_keep_the_registered_query_and_encode_values() {
        let url = code_redirect(
            "https://app.example/cb?tenant=a",
            "ac_x",
            Some("s &=x"),
            "https://id.example",
        );
        assert_eq!(
            url,
            "https://app.example/cb?tenant=a&code=ac_x&state=s+%26%3Dx&iss=https%3A%2F%2Fid.example"
        );
        let err = error_redirect(
            "http://127.0.0.1:9/cb",
            &RedirectError::new("access_denied", "no"),
            None,
            "http://127.0.0.1:8080",
        );
        assert!(err.starts_with("http://127.0.0.1:9/cb?error=access_denied&error_description=no"));
        assert!(!err.contains("state="));
    }
}

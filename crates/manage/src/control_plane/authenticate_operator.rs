//! Authenticates a presented control-plane operator token.

use super::OPERATOR_TOKEN_PREFIX;
use crate::{ManageContext, ManageError};
use svc_domain::{OperatorToken, SecretHash};

/// Longest string worth hashing: a generated token is 49 characters.
const MAX_TOKEN_LEN: usize = 256;

/// The operator token `presented` is, or `None` when it is not one. A string without the
/// `svcop_` prefix (e.g. a tenant access token sent to the control plane) is refused before
/// the store is touched.
///
/// Errors: only [`ManageError::Unavailable`]/[`ManageError::Internal`] when the store fails.
pub async fn authenticate_operator(
    ctx: &ManageContext,
    presented: &str,
) -> Result<Option<OperatorToken>, ManageError> {
    if !looks_like_operator_token(presented) {
        return Ok(None);
    }
    let hash = SecretHash::of(presented);
    let mut tx = ctx.store.read().await?;
    let token = tx.operator_token_by_hash(&hash).await?;
    tx.finish().await?;
    // The lookup key is the hash; verifying again costs nothing and keeps the comparison
    // constant-time even if a backend matched loosely.
    Ok(token.filter(|t| t.token_hash.verify(presented)))
}

/// Rule: an operator token starts with `svcop_` and is of plausible length.
fn looks_like_operator_token(presented: &str) -> bool {
    presented.len() <= MAX_TOKEN_LEN
        && presented
            .strip_prefix(OPERATOR_TOKEN_PREFIX)
            .is_some_and(|rest| !rest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_prefixed_tokens_of_plausible_length_are_looked_up() {
        assert!(looks_like_operator_token(
            "svcop_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        ));
        for refused in [
            "",
            "svcop_",
            "cs_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "eyJhbGciOiJFUzI1NiJ9.e30.sig",
            "SVCOP_AAAA",
            &format!("svcop_{}", "A".repeat(300)),
        ] {
            assert!(!looks_like_operator_token(refused), "{refused:?}");
        }
    }
}

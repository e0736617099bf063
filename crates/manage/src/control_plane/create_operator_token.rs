//! Creates a control-plane operator token (`svc-runtime operator create-token --name NAME`):
//! 256 random bits shown once; only the hash is stored (CONTRACTS.md "Operator tokens and
//! bootstrap").

use super::rules::check_operator_token_name;
use crate::audit::{self, action};
use crate::{Actor, ManageContext, ManageError, RequestMeta};
use svc_domain::{GeneratedSecret, OperatorToken, OperatorTokenId};

/// Prefix of every operator token, so a leaked string says what it is and other credentials
/// are refused without a database lookup.
pub const OPERATOR_TOKEN_PREFIX: &str = "svcop_";

/// Creates an operator token named `name`, audited as `operator_token.created` by `system`.
/// Returns the stored record and the plaintext token (`svcop_…`), which is never shown again.
///
/// Errors: [`ManageError::Invalid`] for a name that is empty or longer than 200 characters.
pub async fn create_operator_token(
    ctx: &ManageContext,
    name: &str,
) -> Result<(OperatorToken, String), ManageError> {
    let name = check_operator_token_name(name)?;
    let secret = GeneratedSecret::generate(OPERATOR_TOKEN_PREFIX, ctx.rng.as_ref());
    let token = OperatorToken {
        id: OperatorTokenId::generate(ctx.clock.as_ref(), ctx.rng.as_ref()),
        name,
        token_hash: secret.hash,
        created_at: ctx.now(),
    };
    let mut tx = ctx.store.write().await?;
    tx.insert_operator_token(&token).await?;
    let entry = audit::entry(
        ctx,
        &Actor::System,
        &RequestMeta::default(),
        None,
        action::OPERATOR_TOKEN_CREATED,
        Some(token.id.as_str()),
    );
    audit::record(tx.as_mut(), &entry).await?;
    tx.commit().await?;
    Ok((token, secret.plaintext))
}

//! The token exchange grant (RFC 8693): a confidential client presents an access token of this
//! tenant (the subject token) and gets one it uses for that subject, naming itself — or the
//! actor whose token it also presents — in `act`, newest actor outermost (§4.1).
//!
//! Checks, in order (the endpoint has verified both tokens are active access tokens of the
//! tenant, [`crate::access_token::active_claims`], and that a person behind them may still sign
//! in; anything else is `invalid_request`, §2.2.2):
//! 1. [`params`]: `subject_token` with `subject_token_type` access token; `actor_token` and
//!    `actor_token_type` together or not at all (§2.1), an access token or an agent's signed
//!    assertion ([`JWT_TOKEN_TYPE`]); `requested_token_type`, if sent, an
//!    access token (the only type issued); at most one target, `audience` or `resource`
//!    (`invalid_target` when they differ: a token has one audience).
//! 2. [`actor_of`]: an actor token belongs to the client presenting it (its `client_id`) and
//!    acts in its own right (no `act` of its own); without one the client itself acts. An
//!    agent's own token (`subject_type` `agent`, from challenge-response) is an actor token of
//!    the client that owns the agent; such an agent acts for a person only on a live delegation
//!    from them (`crate::token::exchange`: the token's scope and audience stay within it, and
//!    `act` names it).
//! 3. [`check_presentable`]: the subject token was issued to the client, or for it (its `aud` is
//!    the client's registered `api_audience`: the on-behalf-of case, as introspection allows),
//!    or its `may_act` names the actor (§4.4). A `may_act` present must name the actor.
//! 4. [`chain`]: a client exchanging its own token adds no link; any other exchange adds the
//!    actor outermost. No actor twice and never the subject itself (loops, A for B for A), and no
//!    longer than `[delegation].max_chain_depth`.
//! 5. [`check_bound`]: a DPoP-bound token is presented with a proof of its key (RFC 9449 §6.1:
//!    whoever holds it without the key must not turn it into an unbound one).
//! 6. [`scope_of`]: `scope` within the subject token's (`invalid_scope` naming the first other);
//!    none asked means the subject token's.
//! 7. [`audience_of`]: the subject token's audience unless another is asked, which must be an
//!    API resource the tenant registered (`invalid_target` otherwise; never the management API
//!    from another audience).
//!
//! The issued token keeps the subject (`sub`, `subject_type`, organization, how the person
//! authenticated), is issued to the client (`client_id`), never outlives either presented token,
//! and comes without a refresh token.

use crate::error::OAuthError;
use crate::token::request::TokenRequest;
use serde_json::{Map, Value, json};
use svc_domain::{Application, ScopeSet};

/// The token type of access tokens (RFC 8693 §3): the only type issued here, and the subject
/// token's.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// The token type of a JWT (RFC 8693 §3): an actor token that is an agent's signed assertion
/// answering a challenge (as for the agent grant, `crate::token::agent`).
pub const JWT_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:jwt";

/// The parameters of an exchange (check 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExchangeParams<'r> {
    /// `subject_token`.
    pub subject_token: &'r str,
    /// `actor_token`, when sent.
    pub actor_token: Option<&'r str>,
    /// Whether `actor_token` is an agent's assertion (`actor_token_type` [`JWT_TOKEN_TYPE`])
    /// rather than an access token of this issuer.
    pub actor_is_assertion: bool,
    /// The one target asked for (`audience` or `resource`), when sent.
    pub target: Option<&'r str>,
}

/// Check 1.
pub fn params(request: &TokenRequest) -> Result<ExchangeParams<'_>, OAuthError> {
    let subject_token = request
        .param("subject_token")
        .ok_or_else(|| OAuthError::invalid_request("subject_token is required (RFC 8693 §2.1)"))?;
    access_token_type(request.param("subject_token_type"), "subject_token_type")?;
    let actor_token = request.param("actor_token");
    let mut actor_is_assertion = false;
    match (actor_token, request.param("actor_token_type")) {
        (Some(_), Some(JWT_TOKEN_TYPE)) => actor_is_assertion = true,
        (Some(_), kind @ Some(_)) => access_token_type(kind, "actor_token_type")?,
        (None, None) => {}
        (Some(_), None) => {
            return Err(OAuthError::invalid_request(
                "actor_token_type is required with actor_token (RFC 8693 §2.1)",
            ));
        }
        (None, Some(_)) => {
            return Err(OAuthError::invalid_request(
                "actor_token_type must not be sent without actor_token (RFC 8693 §2.1)",
            ));
        }
    }
    if let Some(requested) = request.param("requested_token_type")
        && requested != ACCESS_TOKEN_TYPE
    {
        return Err(OAuthError::invalid_request(format!(
            "requested_token_type must be {ACCESS_TOKEN_TYPE}: the only token type issued"
        )));
    }
    let target = target(request)?;
    Ok(ExchangeParams {
        subject_token,
        actor_token,
        actor_is_assertion,
        target,
    })
}

fn access_token_type(value: Option<&str>, name: &str) -> Result<(), OAuthError> {
    match value {
        Some(ACCESS_TOKEN_TYPE) => Ok(()),
        Some(_) => Err(OAuthError::invalid_request(format!(
            "{name} must be {ACCESS_TOKEN_TYPE}: access tokens of this issuer are exchanged"
        ))),
        None => Err(OAuthError::invalid_request(format!(
            "{name} is required (RFC 8693 §2.1)"
        ))),
    }
}

/// Check 1's target: one audience, whether named by `audience` or `resource` (RFC 8693 §2.1
/// allows both; we issue one `aud`).
fn target(request: &TokenRequest) -> Result<Option<&str>, OAuthError> {
    let resource = match request.resources() {
        [] => None,
        [one] => Some(one.as_str()),
        _ => {
            return Err(OAuthError::invalid_target(
                "one resource at most: an exchanged token has a single audience",
            ));
        }
    };
    match (request.param("audience"), resource) {
        (Some(a), Some(r)) if a != r => Err(OAuthError::invalid_target(
            "audience and resource name different targets: an exchanged token has a single audience",
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, r) => Ok(r),
    }
}

/// Who acts: the subject of the actor token, or the client itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeActor {
    /// The actor's `sub`.
    pub sub: String,
    /// Whether it is the presenting client acting for itself (no actor token).
    pub is_client: bool,
    /// Whether the actor is an agent of the presenting client (its own token as actor token):
    /// it then acts for a person only on a live delegation from them.
    pub is_agent: bool,
}

/// Check 2, on the verified claims of the actor token, if any. `owns_agent`: whether the
/// actor token's subject is an active agent that the presenting client owns.
pub fn actor_of(
    client: &Application,
    actor: Option<&Map<String, Value>>,
    owns_agent: bool,
) -> Result<ExchangeActor, OAuthError> {
    let Some(actor) = actor else {
        return Ok(ExchangeActor {
            sub: client.id.as_str().to_owned(),
            is_client: true,
            is_agent: false,
        });
    };
    if actor.get("subject_type").and_then(Value::as_str) == Some("agent") {
        // An agent's own token (challenge-response): its client is the agent itself, so what
        // ties it to the presenting client is ownership — an agent a platform registered acts
        // through that platform, nobody else.
        if !owns_agent {
            return Err(OAuthError::invalid_request(
                "the actor_token is an agent's that this client does not own",
            ));
        }
        if actor.contains_key("act") {
            return Err(OAuthError::invalid_request(
                "the actor_token is itself delegated: an actor acts in its own right",
            ));
        }
        let sub = actor.get("sub").and_then(Value::as_str).unwrap_or_default();
        return Ok(ExchangeActor {
            sub: sub.to_owned(),
            is_client: false,
            is_agent: true,
        });
    }
    if actor.get("client_id").and_then(Value::as_str) != Some(client.id.as_str()) {
        return Err(OAuthError::invalid_request(
            "the actor_token was issued to another client: an actor token is the presenting client's own",
        ));
    }
    if actor.contains_key("act") {
        return Err(OAuthError::invalid_request(
            "the actor_token is itself delegated: an actor acts in its own right",
        ));
    }
    let sub = actor
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| OAuthError::invalid_request("the actor_token names no subject"))?;
    Ok(ExchangeActor {
        sub: sub.to_owned(),
        is_client: false,
        is_agent: false,
    })
}

/// Check 3.
pub fn check_presentable(
    client: &Application,
    subject: &Map<String, Value>,
    actor: &ExchangeActor,
) -> Result<(), OAuthError> {
    if let Some(may_act) = subject.get("may_act") {
        // RFC 8693 §4.4: the subject token says who may act for it; nobody else may.
        return if names_actor(may_act, client, actor) {
            Ok(())
        } else {
            Err(OAuthError::invalid_request(
                "the subject token's may_act does not name this actor",
            ))
        };
    }
    let issued_to_client =
        subject.get("client_id").and_then(Value::as_str) == Some(client.id.as_str());
    let issued_for_client = client
        .api_audience
        .as_deref()
        .is_some_and(|own| subject.get("aud").and_then(Value::as_str) == Some(own));
    if issued_to_client || issued_for_client {
        Ok(())
    } else {
        Err(OAuthError::invalid_request(
            "the subject token was neither issued to this client nor for its API (api_audience)",
        ))
    }
}

/// Whether `may_act` (an object of claims identifying one party, RFC 8693 §4.4) names the
/// actor: its `sub` is the actor's and a `client_id` in it, if any, is the presenting client's.
fn names_actor(may_act: &Value, client: &Application, actor: &ExchangeActor) -> bool {
    let Some(may_act) = may_act.as_object() else {
        return false;
    };
    let sub_matches = may_act.get("sub").and_then(Value::as_str) == Some(actor.sub.as_str());
    let client_matches = match may_act.get("client_id") {
        None => true,
        Some(id) => id.as_str() == Some(client.id.as_str()),
    };
    sub_matches && client_matches
}

/// Check 4: the `act` claim of the issued token, if any.
pub fn chain(
    client: &Application,
    subject: &Map<String, Value>,
    actor: &ExchangeActor,
    max_depth: usize,
) -> Result<Option<Value>, OAuthError> {
    let previous = subject.get("act");
    let own_token = actor.is_client
        && subject.get("client_id").and_then(Value::as_str) == Some(client.id.as_str());
    if own_token {
        // Down-scoping one's own token: nobody new acts.
        return Ok(previous.cloned());
    }
    let subject_sub = subject
        .get("sub")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let earlier = actors_in(previous);
    if actor.sub == subject_sub || earlier.contains(&actor.sub.as_str()) {
        return Err(OAuthError::invalid_request(
            "the actor already appears in the subject token's chain: delegation loops are refused",
        ));
    }
    if earlier.len() + 1 > max_depth {
        return Err(OAuthError::invalid_request(format!(
            "the actor chain would name {} actors; at most {max_depth} are allowed",
            earlier.len() + 1
        )));
    }
    let mut link = Map::new();
    link.insert("sub".into(), json!(actor.sub));
    if actor.is_agent {
        link.insert("subject_type".into(), json!("agent"));
    }
    link.insert("client_id".into(), json!(client.id.as_str()));
    if let Some(previous) = previous {
        link.insert("act".into(), previous.clone());
    }
    Ok(Some(Value::Object(link)))
}

/// The `sub` of every link of an `act` chain, outermost first.
fn actors_in(act: Option<&Value>) -> Vec<&str> {
    let mut found = Vec::new();
    let mut next = act;
    while let Some(link) = next.and_then(Value::as_object) {
        found.push(link.get("sub").and_then(Value::as_str).unwrap_or_default());
        next = link.get("act");
    }
    found
}

/// Check 5: each presented token bound to a DPoP key needs the request's proof of that key.
pub fn check_bound(
    presented: &Map<String, Value>,
    proof_jkt: Option<&str>,
    which: &str,
) -> Result<(), OAuthError> {
    let Some(jkt) = presented.get("cnf").and_then(|c| c.get("jkt")) else {
        return Ok(());
    };
    if jkt.as_str().is_some() && jkt.as_str() == proof_jkt {
        Ok(())
    } else {
        Err(OAuthError::invalid_request(format!(
            "the {which} is DPoP-bound: send a DPoP proof of its key (RFC 9449 §6.1)"
        )))
    }
}

/// Check 6.
pub fn scope_of(
    subject: &Map<String, Value>,
    requested: Option<&str>,
) -> Result<ScopeSet, OAuthError> {
    let held = ScopeSet::parse(
        subject
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
    .map_err(|_| OAuthError::invalid_request("the subject token's scope is malformed"))?;
    let Some(requested) = requested else {
        return Ok(held);
    };
    let requested = ScopeSet::parse(requested)
        .map_err(|e| OAuthError::invalid_scope(format!("scope is malformed: {e}")))?;
    if let Some(first) = requested.not_in(&held).next() {
        return Err(OAuthError::invalid_scope(format!(
            "scope `{}` is not granted by the subject token: an exchange never widens it",
            first.as_str()
        )));
    }
    Ok(requested)
}

/// Check 7: the audience, given whether `target` is an API resource the tenant registered.
pub fn audience_of(
    subject: &Map<String, Value>,
    target: Option<&str>,
    target_registered: bool,
) -> Result<String, OAuthError> {
    let current = subject
        .get("aud")
        .and_then(Value::as_str)
        .ok_or_else(|| OAuthError::invalid_request("the subject token names no audience"))?;
    match target {
        None => Ok(current.to_owned()),
        Some(t) if t == current => Ok(current.to_owned()),
        Some(t) if target_registered => Ok(t.to_owned()),
        Some(_) => Err(OAuthError::invalid_target(
            "the target is not an API resource of this tenant",
        )),
    }
}

/// The earliest `exp` of the presented tokens: the exchanged token's latest.
pub fn not_after(subject: &Map<String, Value>, actor: Option<&Map<String, Value>>) -> Option<i64> {
    let exp = |claims: &Map<String, Value>| claims.get("exp").and_then(Value::as_i64);
    match (exp(subject), actor.and_then(exp)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
#[path = "token_exchange_tests.rs"]
mod tests;

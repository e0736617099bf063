//! `POST /oauth/agent/challenge` (`[challenge]`): an agent asks for a challenge to answer at
//! the token endpoint with an assertion signed by its registered key
//! (`svc_oauth::agent_challenge`). It takes the protocol prelude of the token endpoint
//! (`super::protocol`: tenant, body limit, form media type, throttling per address) and answers
//! `200` with the challenge or an RFC 6749 §5.2 JSON error, never cached.
//!
//! The runtime merges this router only while `[challenge].enabled`, so a disabled deployment
//! answers the router's plain 404 here.

use super::protocol::{EndpointState, ProtocolRequest};
use super::token::OAuthErrorBody;
use crate::error::oauth::{self, no_store};
use crate::openapi::refusals::{self, Refusals};
use crate::openapi::tags;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use svc_oauth::agent_challenge::ChallengeEndpoint;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// State of the challenge route.
pub type ChallengeState = EndpointState<ChallengeEndpoint>;

fn api() -> OpenApiRouter<ChallengeState> {
    OpenApiRouter::new().routes(routes!(challenge))
}

/// The challenge route.
pub fn router(state: ChallengeState) -> Router {
    api().split_for_parts().0.with_state(state)
}

/// Its OpenAPI operation, with the refusals of the protocol prelude.
#[must_use]
pub fn operations() -> utoipa::openapi::OpenApi {
    let mut doc = api().into_openapi();
    refusals::add(&mut doc, |_| Refusals::THROTTLED_TENANT);
    doc
}

#[utoipa::path(
    post, path = "/oauth/agent/challenge", tag = tags::PROTOCOL,
    operation_id = "startAgentChallenge",
    summary = "Get a challenge for an agent",
    description = "Agent challenge-response, first step. A registered agent (`/api/v1/agents`) \
        asks for a challenge with its id and answers it at the token endpoint with \
        `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` and an `assertion` it signed \
        with one of its registered keys, carrying the challenge as `nonce` (RFC 7523 §2.1). \
        No secret of the agent crosses the wire.\n\n\
        A challenge names its agent and tenant, may be answered once, and only within \
        `expires_in` seconds (`[challenge].challenge_lifetime_secs`). Any well-formed agent id \
        gets one, whether such an agent exists or not, so this endpoint does not tell which \
        agents exist; only the token endpoint checks the agent, its status and its key.\n\n\
        Served while `[challenge].enabled`; the authoritative signals are \
        `agent_challenge_endpoint` and the JWT bearer grant in `grant_types_supported` in \
        `/.well-known/oauth-authorization-server`.",
    request_body(
        content = AgentChallengeRequestBody,
        content_type = "application/x-www-form-urlencoded",
        description = "The agent's id.",
    ),
    responses(
        (status = 200, description = "A challenge.", body = AgentChallengeResponseBody,
         headers(
             ("Cache-Control" = String, description = "`no-store`."),
             ("Pragma" = String, description = "`no-cache`."),
         )),
        (status = 400, description = "RFC 6749 §5.2 JSON `invalid_request`: `agent_id` missing, \
            repeated or not an agent id (`agt_…`), or the body is not a form.",
         body = OAuthErrorBody),
        (status = 500, description = "RFC 6749 §5.2 `server_error`.", body = OAuthErrorBody),
    ),
    security(()),
)]
async fn challenge(State(state): State<ChallengeState>, request: ProtocolRequest) -> Response {
    match state.endpoint.start(&request.current.tenant, &request.form) {
        Ok(answer) => no_store(
            axum::Json(AgentChallengeResponseBody {
                challenge: answer.challenge,
                expires_in: answer.expires_in,
            })
            .into_response(),
        ),
        Err(error) => oauth::response(&error),
    }
}

/// A challenge request.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"agent_id": "agt_01JB7Q3M2X8V6N4K0T5R9C1D2E"}))]
pub struct AgentChallengeRequestBody {
    /// The agent's id, as `/api/v1/agents` returned it.
    pub agent_id: String,
}

/// A challenge to answer.
#[derive(Serialize, ToSchema)]
#[schema(as = AgentChallengeResponse, example = json!({
    "challenge": "AAAAAGdCJ8Q9mJ1dC0x3Yx2fHq5hY2FpVo7kG1l8oW0tJd3w9A",
    "expires_in": 60
}))]
pub struct AgentChallengeResponseBody {
    /// What the agent's assertion must carry as `nonce`.
    pub challenge: String,
    /// Seconds it may be answered (once).
    pub expires_in: u64,
}

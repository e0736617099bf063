"""Authlib against svc's agent challenge-response ([challenge]): Authlib's AssertionSession (its
RFC 7521/7523 assertion client, which signs a JWT bearer assertion with joserfc and posts it
to the token endpoint) obtains an access token for a registered agent, the challenge of
/oauth/agent/challenge carried as the assertion's `nonce`. The token is verified independently
with PyJWT against the published JWKS and introspected by the API's resource server; answering
the same challenge again must be refused (invalid_grant), and a new challenge gives a new token.
The RFC 8414 metadata is checked with Authlib's own validator.

Environment: ISSUER, AGENT_ID, AGENT_PRIVATE_KEY_PEM (PKCS#8, the private half of the agent's
registered ES256 key), AGENT_KID, RESOURCE (the API the agent may call), RS_CLIENT_ID and
RS_CLIENT_SECRET (that API's resource server, for introspection). Prints one JSON line on stdout;
exits 1 with "interop check failed: ..." on stderr otherwise.
"""

from __future__ import annotations

import sys

import jwt
import requests
from authlib.integrations.requests_client import AssertionSession
from authlib.oauth2 import OAuth2Error, rfc8414

from rp import TIMEOUT, check, check_equal, env, run_steps, snippet

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def discovery(issuer: str, step) -> dict:
    step("discovery (Authlib RFC 8414 validator)")
    response = requests.get(f"{issuer}/.well-known/oauth-authorization-server", timeout=TIMEOUT)
    check(response.status_code == 200, f"RFC 8414 metadata: {snippet(response)}")
    metadata = rfc8414.AuthorizationServerMetadata(response.json())
    metadata.validate()
    check(JWT_BEARER in metadata["grant_types_supported"], "the JWT bearer grant is advertised")
    check_equal(metadata.get("agent_challenge_endpoint"), f"{issuer}/oauth/agent/challenge",
                "agent_challenge_endpoint")
    return dict(metadata)


def challenge(meta: dict, agent: str) -> str:
    response = requests.post(meta["agent_challenge_endpoint"], data={"agent_id": agent}, timeout=TIMEOUT)
    check(response.status_code == 200, f"challenge: {snippet(response)}")
    check_equal(response.headers.get("cache-control"), "no-store", "challenge Cache-Control")
    return response.json()["challenge"]


def main(step) -> dict:
    issuer = env("ISSUER")
    agent = env("AGENT_ID")
    resource = env("RESOURCE")
    meta = discovery(issuer, step)
    jwks = jwt.PyJWKClient(meta["jwks_uri"])

    step("Authlib AssertionSession answers a challenge")
    session = AssertionSession(
        token_endpoint=meta["token_endpoint"],
        issuer=agent,
        subject=agent,
        audience=meta["token_endpoint"],
        grant_type=AssertionSession.JWT_BEARER_GRANT_TYPE,
        claims={"nonce": challenge(meta, agent)},
        scope="bookings:read",
        key=env("AGENT_PRIVATE_KEY_PEM"),
        header={"alg": "ES256", "kid": env("AGENT_KID")},
        # Authlib signs assertions valid for an hour by default; svc takes at most 300 s.
        expires_in=120,
    )
    token = session.refresh_token()
    check_equal(token.get("token_type"), "Bearer", "token_type")
    check_equal(token.get("scope"), "bookings:read", "scope")
    check("refresh_token" not in token, "no refresh token for an agent")

    step("access token verified with PyJWT")
    access = token["access_token"]
    header = jwt.get_unverified_header(access)
    check_equal(header.get("typ"), "at+jwt", "access token typ")
    claims = jwt.decode(access, jwks.get_signing_key_from_jwt(access).key, algorithms=[header["alg"]],
                        audience=resource, issuer=issuer,
                        options={"require": ["iss", "sub", "aud", "exp", "iat", "jti"]})
    check_equal(claims.get("sub"), agent, "sub")
    check_equal(claims.get("client_id"), agent, "client_id")
    check_equal(claims.get("subject_type"), "agent", "subject_type")

    step("introspection by the API")
    seen = requests.post(meta["introspection_endpoint"], data={"token": access},
                         auth=(env("RS_CLIENT_ID"), env("RS_CLIENT_SECRET")), timeout=TIMEOUT).json()
    check_equal(seen.get("active"), True, "introspection active")
    check_equal(seen.get("sub"), agent, "introspection sub")

    step("the same challenge answered again is refused")
    replay_error = None
    try:
        session.refresh_token()
    except OAuth2Error as error:
        replay_error = error.error
    check_equal(replay_error, "invalid_grant", "replayed challenge")

    step("a new challenge gives a new token")
    session.claims = {"nonce": challenge(meta, agent)}
    second = session.refresh_token()
    check(second["access_token"] != access, "a new token")

    return {
        "issuer": issuer,
        "sub": claims["sub"],
        "aud": claims["aud"],
        "subject_type": claims["subject_type"],
        "alg": header["alg"],
        "introspected": seen.get("active"),
        "replay_error": replay_error,
        "second_token": True,
    }


if __name__ == "__main__":
    sys.exit(run_steps("authlib-agent", main))

"""Authlib against svc's signed request objects (RFC 9101, JAR): Authlib's OAuth2Session builds the
authorization request (PKCE S256, state, nonce), its parameters are signed as a request object
with joserfc (Authlib's JOSE library) under the client's registered ES256 key, and the request is
sent twice — by value to the authorization endpoint, then pushed to /oauth/par (RFC 9126) — each
time through the hosted sign-in and consent forms (rp.py's Browser), the code exchanged by
Authlib and the ID token verified independently with PyJWT. The discovery documents are checked
with Authlib's own RFC 8414 and RFC 9101 metadata validators. A request object signed by a key the
client never registered must be refused with an error page (invalid_request_object), not a code.

Environment: ISSUER, REDIRECT_URI, USER_EMAIL, USER_PASSWORD, JAR_CLIENT_ID, JAR_CLIENT_SECRET
(client_secret_basic), JAR_PRIVATE_KEY_PEM (PKCS#8, the private half of the registered key),
JAR_KID (its kid). Prints one JSON line on stdout; exits 1 with "interop check failed: ..." on
stderr otherwise.
"""

from __future__ import annotations

import sys
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2 import rfc8414, rfc9101
from joserfc import jwt as jose_jwt
from joserfc.jwk import ECKey

from rp import TIMEOUT, Browser, check, check_equal, env, run_steps, snippet, verify_id_token

REQUEST_OBJECT_TYP = "oauth-authz-req+jwt"


def discovery(issuer: str, step) -> dict:
    step("discovery (Authlib RFC 8414 + RFC 9101 validators)")
    meta = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=TIMEOUT).json()
    check_equal(meta.get("request_parameter_supported"), True, "request_parameter_supported")
    algs = meta.get("request_object_signing_alg_values_supported") or []
    check("ES256" in algs and "none" not in algs, f"request_object_signing_alg_values_supported: {algs}")
    as_meta = requests.get(f"{issuer}/.well-known/oauth-authorization-server", timeout=TIMEOUT)
    check(as_meta.status_code == 200, f"RFC 8414 metadata: {snippet(as_meta)}")
    metadata = rfc8414.AuthorizationServerMetadata(as_meta.json())
    # Raises on any invalid member, the JAR extension's `require_signed_request_object` included.
    metadata.validate(metadata_classes=[rfc9101.AuthorizationServerMetadata])
    check_equal(metadata.get("require_signed_request_object"), False, "require_signed_request_object")
    return meta


def request_object(key: ECKey, kid: str, *, client_id: str, issuer: str, params: dict[str, str]) -> str:
    """The authorization parameters Authlib produced, signed as an RFC 9101 request object."""
    now = int(time.time())
    claims = {**params, "iss": client_id, "aud": issuer, "client_id": client_id,
              "iat": now, "nbf": now, "exp": now + 300, "jti": generate_token(16)}
    header = {"alg": "ES256", "kid": kid, "typ": REQUEST_OBJECT_TYP}
    return jose_jwt.encode(header, claims, key)


def authlib_parameters(session: OAuth2Session, meta: dict) -> tuple[dict[str, str], str, str, str]:
    """Authlib's authorization request: its parameters, the PKCE verifier, state and nonce."""
    verifier = generate_token(64)
    nonce = generate_token(24)
    url, state = session.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce, prompt="consent"
    )
    params = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
    check_equal(params.get("code_challenge_method"), "S256", "authlib sent code_challenge_method")
    return params, verifier, state, nonce


def finish(session: OAuth2Session, meta: dict, browser: Browser, url: str, *, verifier: str, state: str,
           nonce: str, issuer: str, client_id: str) -> dict:
    """Signs in through `url`, lets Authlib redeem the code, verifies the ID token."""
    callback = browser.authorize(url, env("USER_EMAIL"), env("USER_PASSWORD"))
    params = parse_qs(urlsplit(callback).query)
    check("error" not in params, f"authorization error: {callback}")
    check_equal(params.get("state"), [state], "state from the request object")
    check_equal(params.get("iss"), [issuer], "RFC 9207 iss")
    token = session.fetch_token(meta["token_endpoint"], authorization_response=callback,
                                code_verifier=verifier, state=state)
    jwks = jwt.PyJWKClient(meta["jwks_uri"], timeout=TIMEOUT)
    header, claims = verify_id_token(jwks, token["id_token"], issuer, client_id)
    return {
        "pages": browser.pages,
        "id_token_alg": header["alg"],
        "nonce_matches": claims.get("nonce") == nonce,
        "scope": token.get("scope"),
    }


def main(step) -> dict:
    issuer = env("ISSUER")
    client_id = env("JAR_CLIENT_ID")
    secret = env("JAR_CLIENT_SECRET")
    redirect_uri = env("REDIRECT_URI")
    key = ECKey.import_key(env("JAR_PRIVATE_KEY_PEM"))
    kid = env("JAR_KID")
    meta = discovery(issuer, step)

    def session() -> OAuth2Session:
        return OAuth2Session(client_id, secret, scope="openid profile email", redirect_uri=redirect_uri,
                             token_endpoint_auth_method="client_secret_basic", code_challenge_method="S256")

    step("request object by value")
    by_value = session()
    params, verifier, state, nonce = authlib_parameters(by_value, meta)
    signed = request_object(key, kid, client_id=client_id, issuer=issuer, params=params)
    url = f"{meta['authorization_endpoint']}?{urlencode({'client_id': client_id, 'request': signed})}"
    value_flow = finish(by_value, meta, Browser(issuer, redirect_uri), url, verifier=verifier, state=state,
                        nonce=nonce, issuer=issuer, client_id=client_id)

    step("request object pushed to /oauth/par")
    pushed = session()
    params, verifier, state, nonce = authlib_parameters(pushed, meta)
    signed = request_object(key, kid, client_id=client_id, issuer=issuer, params=params)
    response = requests.post(meta["pushed_authorization_request_endpoint"], data={"request": signed},
                             auth=(client_id, secret), timeout=TIMEOUT)
    check(response.status_code == 201, f"PAR with a request object: {snippet(response)}")
    request_uri = response.json()["request_uri"]
    url = f"{meta['authorization_endpoint']}?{urlencode({'client_id': client_id, 'request_uri': request_uri})}"
    pushed_flow = finish(pushed, meta, Browser(issuer, redirect_uri), url, verifier=verifier, state=state,
                         nonce=nonce, issuer=issuer, client_id=client_id)

    step("a request object signed by an unregistered key")
    stranger = ECKey.generate_key("P-256")
    params, _, _, _ = authlib_parameters(session(), meta)
    forged = request_object(stranger, kid, client_id=client_id, issuer=issuer, params=params)
    url = f"{meta['authorization_endpoint']}?{urlencode({'client_id': client_id, 'request': forged})}"
    refused = requests.get(url, allow_redirects=False, timeout=TIMEOUT)

    return {
        "issuer": issuer,
        "by_value": value_flow,
        "pushed": pushed_flow,
        "forged_status": refused.status_code,
        "forged_is_invalid_request_object": "invalid_request_object" in refused.text,
        "forged_redirected": "location" in {k.lower() for k in refused.headers},
    }


if __name__ == "__main__":
    sys.exit(run_steps("authlib-jar", main))

"""Authlib against svc's Rich Authorization Requests (RFC 9396): Authlib's OAuth2Session builds the
authorization request with `authorization_details` (a payment of a type the client registered with
a JSON Schema) — once plain, once pushed to /oauth/par (RFC 9126) — through the hosted sign-in and
consent forms (rp.py's Browser); Authlib redeems the code asking for a narrowing (one action
dropped); the access token is verified with PyJWT and its `authorization_details` claim compared;
introspection must show the same details; Authlib's refresh carries the granted details, and a
refresh that widens them must fail with `invalid_authorization_details` (Authlib raises it) while
the refresh token stays usable. An unregistered type must come back to the redirect URI as
`invalid_authorization_details`. Discovery must list the type in
`authorization_details_types_supported` (RFC 9396 §10.1).

Environment: ISSUER, REDIRECT_URI, USER_EMAIL, USER_PASSWORD, RAR_CLIENT_ID, RAR_CLIENT_SECRET
(client_secret_basic). Prints one JSON line on stdout; exits 1 with "interop check failed: ..." on
stderr otherwise.
"""

from __future__ import annotations

import json
import sys
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from rp import TIMEOUT, Browser, check, check_equal, env, run_steps, snippet, verify_access_token

TYPE = "payment_initiation"


def payment(actions: list[str]) -> list[dict]:
    return [{
        "type": TYPE,
        "actions": actions,
        "instructedAmount": {"currency": "EUR", "amount": "42.00"},
        "creditorName": "Interop Merchant",
    }]


def canonical(details) -> str:
    """Order-insensitive comparison of JSON values (object member order is not significant)."""
    return json.dumps(details, sort_keys=True)


def main(step) -> dict:
    issuer = env("ISSUER")
    client_id = env("RAR_CLIENT_ID")
    secret = env("RAR_CLIENT_SECRET")
    redirect_uri = env("REDIRECT_URI")

    step("discovery")
    meta = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=TIMEOUT).json()
    check(TYPE in (meta.get("authorization_details_types_supported") or []),
          f"authorization_details_types_supported: {meta.get('authorization_details_types_supported')}")
    jwks = jwt.PyJWKClient(meta["jwks_uri"], timeout=TIMEOUT)

    def session() -> OAuth2Session:
        return OAuth2Session(client_id, secret, scope="openid offline_access", redirect_uri=redirect_uri,
                             token_endpoint_auth_method="client_secret_basic", code_challenge_method="S256")

    granted = payment(["initiate", "status"])
    narrowed = payment(["initiate"])

    def flow(pushed: bool) -> dict:
        client = session()
        verifier = generate_token(64)
        url, state = client.create_authorization_url(
            meta["authorization_endpoint"], code_verifier=verifier, nonce=generate_token(24),
            authorization_details=json.dumps(granted),
        )
        params = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
        check_equal(json.loads(params["authorization_details"]), granted, "authlib sent authorization_details")
        if pushed:
            response = requests.post(meta["pushed_authorization_request_endpoint"], data=params,
                                     auth=(client_id, secret), timeout=TIMEOUT)
            check(response.status_code == 201, f"PAR with authorization_details: {snippet(response)}")
            url = f"{meta['authorization_endpoint']}?" + urlencode(
                {"client_id": client_id, "request_uri": response.json()["request_uri"]})
        browser = Browser(issuer, redirect_uri)
        callback = browser.authorize(url, env("USER_EMAIL"), env("USER_PASSWORD"))
        check("error" not in parse_qs(urlsplit(callback).query), f"authorization error: {callback}")
        token = client.fetch_token(meta["token_endpoint"], authorization_response=callback,
                                   code_verifier=verifier, state=state,
                                   authorization_details=json.dumps(narrowed))
        check_equal(canonical(token.get("authorization_details")), canonical(narrowed),
                    "token response authorization_details (narrowed)")
        _, claims = verify_access_token(jwks, token["access_token"], issuer, f"{issuer}/userinfo", client_id)
        introspected = requests.post(meta["introspection_endpoint"], data={"token": token["access_token"]},
                                     auth=(client_id, secret), timeout=TIMEOUT).json()
        refreshed = client.refresh_token(meta["token_endpoint"], refresh_token=token["refresh_token"])
        widened_error = None
        try:
            client.refresh_token(meta["token_endpoint"], refresh_token=refreshed["refresh_token"],
                                 authorization_details=json.dumps(payment(["initiate", "status", "cancel"])))
        except OAuthError as e:
            widened_error = e.error
        after = client.refresh_token(meta["token_endpoint"], refresh_token=refreshed["refresh_token"])
        return {
            "pages": browser.pages,
            "access_token_details_match": canonical(claims.get("authorization_details")) == canonical(narrowed),
            "introspection_details_match":
                canonical(introspected.get("authorization_details")) == canonical(narrowed),
            "refresh_details_are_the_grant":
                canonical(refreshed.get("authorization_details")) == canonical(granted),
            "widened_refresh_error": widened_error,
            "refresh_after_refusal_works": "access_token" in after,
        }

    step("plain request")
    plain = flow(pushed=False)
    step("pushed request")
    pushed = flow(pushed=True)

    step("an unregistered type")
    client = session()
    url, _ = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=generate_token(64),
        authorization_details=json.dumps([{"type": "account_information"}]),
    )
    refused = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    location = refused.headers.get("location", "")
    return {
        "issuer": issuer,
        "plain": plain,
        "pushed": pushed,
        "unknown_type_error": parse_qs(urlsplit(location).query).get("error", [None])[0]
        if location.startswith(redirect_uri) else f"no redirect: {refused.status_code}",
    }


if __name__ == "__main__":
    sys.exit(run_steps("authlib-rar", main))

"""Authlib (requests integration) against svc: the authorization code flow with PKCE (S256),
once with client_secret_basic and once with client_secret_post, through the hosted sign-in and
consent forms driven by a plain `requests` session (the forms parsed with html.parser, every
input posted, hidden ones included; the final redirect to the client is read from `Location`,
never followed), then the code exchange, a refresh and UserInfo with authlib's OAuth2Session. The
ID tokens and the access tokens are verified independently with PyJWT (PyJWKClient on jwks_uri):
ID tokens RS256 with aud = the client; access tokens ES256/EdDSA with typ at+jwt, iss, exp and
aud = API_AUDIENCE (RFC 9068). The summary reports what was observed, computed from the
responses, never constants.

Environment: ISSUER, CLIENT_ID + CLIENT_SECRET (client_secret_basic), POST_CLIENT_ID +
POST_CLIENT_SECRET (client_secret_post), REDIRECT_URI, USER_EMAIL, USER_PASSWORD, API_AUDIENCE
(the audience both clients registered).
Prints one JSON line on stdout; exits 1 with "interop check failed: ..." on stderr otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import jwt
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.common.security import generate_token

TIMEOUT = 30


class CheckFailed(Exception):
    """A failed interop check."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def check_equal(actual, expected, what: str) -> None:
    if actual != expected:
        raise CheckFailed(f"{what}: expected {expected!r}, got {actual!r}")


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise CheckFailed(f"environment variable {name} is required")
    return value


class Forms(HTMLParser):
    """Every <form> of a page: action, method, inputs (name → value) and submit buttons."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self._current: dict | None = None
        self._button: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._current = {
                "action": a.get("action", ""),
                "method": a.get("method", "get").lower(),
                "inputs": [],
                "buttons": [],
            }
            self.forms.append(self._current)
        elif self._current is None:
            return
        elif tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "submit":
                self._current["buttons"].append({"name": a.get("name"), "value": a.get("value", ""), "text": ""})
            elif "name" in a and kind not in ("button", "image", "reset", "file"):
                if kind in ("checkbox", "radio") and "checked" not in a:
                    return
                self._current["inputs"].append((a["name"], a.get("value", "")))
        elif tag == "button":
            kind = a.get("type", "submit").lower()
            if kind == "submit":
                self._button = {"name": a.get("name"), "value": a.get("value", ""), "text": ""}
                self._current["buttons"].append(self._button)
        elif tag in ("select", "textarea") and "name" in a:
            self._current["inputs"].append((a["name"], ""))

    def handle_data(self, data):
        if self._button is not None:
            self._button["text"] += data

    def handle_endtag(self, tag):
        if tag == "button":
            self._button = None
        elif tag == "form":
            self._current = None


def parse_forms(html: str) -> list[dict]:
    parser = Forms()
    parser.feed(html)
    parser.close()
    return parser.forms


def snippet(response: requests.Response) -> str:
    text = " ".join(response.text.split())
    return f"{response.status_code} {response.url} — {text[:400]!r}"


class Browser:
    """A `requests` session acting as the user agent: follows redirects by hand so the final
    redirect to the client is read from `Location`, never followed."""

    def __init__(self, issuer: str, client_prefix: str) -> None:
        self.http = requests.Session()
        self.issuer = issuer
        self.client_prefix = client_prefix
        self.pages: list[str] = []

    def _follow(self, response: requests.Response) -> tuple[str | None, requests.Response]:
        """Follows redirects within the server; returns (client URL, None) or (None, page)."""
        for _ in range(10):
            if response.status_code in (301, 302, 303, 307, 308):
                location = urljoin(response.url, response.headers["Location"])
                if location.startswith(self.client_prefix):
                    return location, response
                check(
                    location.startswith(self.issuer + "/"),
                    f"redirected outside the server and the client: {location}",
                )
                response = self.http.get(location, allow_redirects=False, timeout=TIMEOUT)
                continue
            check(response.status_code == 200, f"unexpected answer: {snippet(response)}")
            return None, response
        raise CheckFailed("too many redirects")

    def submit(self, page: requests.Response, form: dict, extra: dict[str, str], button: dict | None):
        data = list(form["inputs"])
        names = {n for n, _ in data}
        for name, value in extra.items():
            check(name in names, f"the form has no input named {name!r}: {form}")
            data = [(n, value if n == name else v) for n, v in data]
        if button and button.get("name"):
            data.append((button["name"], button["value"]))
        action = urljoin(page.url, form["action"] or page.url)
        check(form["method"] == "post", f"the form posts with {form['method']}, not post")
        return self.http.post(action, data=data, allow_redirects=False, timeout=TIMEOUT)

    def authorize(self, url: str, email: str | None, password: str | None,
                  second_factor: Callable[[], str] | None = None) -> str:
        """Runs the hosted interaction until the server redirects to the client; returns that URL.
        `second_factor` gives the code when the second-factor page asks for one (interop/authlib/
        mfa.py); without it that page fails the check, like a sign-in page without `email`."""
        client_url, page = self._follow(self.http.get(url, allow_redirects=False, timeout=TIMEOUT))
        for _ in range(6):
            if client_url is not None:
                return client_url
            path = urlsplit(page.url).path
            forms = [f for f in parse_forms(page.text) if f["method"] == "post"]
            if path == "/auth/sign-in":
                check("sign-in" not in self.pages, f"sign-in refused: {snippet(page)}")
                check(email is not None, f"a sign-in page where none was expected: {snippet(page)}")
                self.pages.append("sign-in")
                form = next((f for f in forms if any(n == "password" for n, _ in f["inputs"])), None)
                check(form is not None, f"no sign-in form with a password input: {snippet(page)}")
                names = [n for n, _ in form["inputs"]]
                for hidden in ("csrf", "interaction", "email"):
                    check(hidden in names, f"the sign-in form has no input {hidden!r}: {names}")
                button = form["buttons"][0] if form["buttons"] else None
                response = self.submit(page, form, {"email": email, "password": password}, button)
            elif path == "/auth/consent":
                check("consent" not in self.pages, f"consent shown twice: {snippet(page)}")
                self.pages.append("consent")
                form = next(
                    (f for f in forms if any(b.get("name") == "decision" and b["value"] == "allow" for b in f["buttons"])),
                    None,
                )
                check(form is not None, f"no consent form with decision=allow: {snippet(page)}")
                button = next(b for b in form["buttons"] if b.get("name") == "decision" and b["value"] == "allow")
                names = [n for n, _ in form["inputs"]]
                for hidden in ("csrf", "interaction"):
                    check(hidden in names, f"the consent form has no input {hidden!r}: {names}")
                response = self.submit(page, form, {}, button)
            elif path == "/auth/second-factor":
                check("second-factor" not in self.pages, f"second factor refused: {snippet(page)}")
                check(second_factor is not None, f"a second factor was asked for: {snippet(page)}")
                self.pages.append("second-factor")
                form = next((f for f in forms if any(n == "code" for n, _ in f["inputs"])), None)
                check(form is not None, f"no second-factor form with a code input: {snippet(page)}")
                names = [n for n, _ in form["inputs"]]
                for hidden in ("csrf", "interaction"):
                    check(hidden in names, f"the second-factor form has no input {hidden!r}: {names}")
                button = form["buttons"][0] if form["buttons"] else None
                response = self.submit(page, form, {"code": second_factor()}, button)
            else:
                raise CheckFailed(f"unexpected page in the interaction: {snippet(page)}")
            client_url, page = self._follow(response)
        raise CheckFailed("the interaction did not reach the client")


def at_hash(access_token: str) -> str:
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode()


def verify_id_token(jwks: jwt.PyJWKClient, token: str, issuer: str, client_id: str) -> tuple[dict, dict]:
    """The independent JOSE check: PyJWT with the server's published keys."""
    header = jwt.get_unverified_header(token)
    check_equal(header.get("alg"), "RS256", "ID token alg (default RS256)")
    key = jwks.get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        key.key,
        algorithms=["RS256"],
        audience=client_id,
        issuer=issuer,
        options={"require": ["iss", "sub", "aud", "exp", "iat"]},
    )
    return header, claims


def verify_access_token(jwks: jwt.PyJWKClient, token: str, issuer: str, audience: str,
                        client_id: str) -> tuple[dict, dict]:
    """The independent JOSE check of an RFC 9068 access token: PyJWT with the published keys."""
    header = jwt.get_unverified_header(token)
    check_equal(header.get("typ"), "at+jwt", "access token typ (RFC 9068 §2.1)")
    check(header.get("alg") in ("ES256", "EdDSA"), f"access token alg: {header.get('alg')!r}")
    key = jwks.get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        key.key,
        algorithms=[header["alg"]],
        audience=audience,
        issuer=issuer,
        options={"require": ["iss", "sub", "aud", "exp", "iat", "jti"], "verify_exp": True},
    )
    check_equal(claims.get("client_id"), client_id, "access token client_id")
    return header, claims


def run_flow(meta: dict, jwks: jwt.PyJWKClient, *, issuer: str, client_id: str, client_secret: str,
             method: str, redirect_uri: str, email: str, password: str, audience: str) -> dict:
    """One complete code flow with PKCE for a confidential client using `method`."""
    scope = "openid profile email offline_access"
    session = OAuth2Session(
        client_id,
        client_secret,
        scope=scope,
        redirect_uri=redirect_uri,
        token_endpoint_auth_method=method,
        code_challenge_method="S256",
    )
    verifier = generate_token(64)
    nonce = generate_token(24)
    url, state = session.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce, prompt="consent"
    )
    query = parse_qs(urlsplit(url).query)
    check_equal(query.get("code_challenge_method"), ["S256"], "authlib sent code_challenge_method")

    browser = Browser(issuer, redirect_uri)
    started = int(time.time())
    callback = browser.authorize(url, email, password)
    params = parse_qs(urlsplit(callback).query)
    check("error" not in params, f"authorization error: {callback}")
    check_equal(params.get("state"), [state], "state in the authorization response")
    check_equal(params.get("iss"), [issuer], "RFC 9207 iss in the authorization response")

    # authlib parses the response (checks state) and authenticates with `method`.
    token = session.fetch_token(
        meta["token_endpoint"], authorization_response=callback, code_verifier=verifier, state=state
    )
    check_equal(str(token.get("token_type", "")).lower(), "bearer", "token_type")
    for field in ("access_token", "refresh_token", "id_token"):
        check(isinstance(token.get(field), str), f"{field} issued ({method})")

    header, claims = verify_id_token(jwks, token["id_token"], issuer, client_id)
    at_header, at_claims = verify_access_token(jwks, token["access_token"], issuer, audience, client_id)
    check_equal(claims.get("nonce"), nonce, "ID token nonce")
    check_equal(claims.get("at_hash"), at_hash(token["access_token"]), "ID token at_hash")
    check(isinstance(claims.get("sid"), str), f"ID token sid: {claims.get('sid')!r}")
    auth_time = claims.get("auth_time")
    check(isinstance(auth_time, int) and started - 60 <= auth_time <= int(time.time()) + 60,
          f"ID token auth_time {auth_time!r} not within this sign-in")

    # UserInfo with the session's bearer token.
    info = session.get(meta["userinfo_endpoint"], timeout=TIMEOUT)
    check(info.status_code == 200, f"UserInfo: {snippet(info)}")
    userinfo = info.json()
    check_equal(userinfo.get("email"), email, "UserInfo email")

    # Refresh (rotation): a new refresh token and a new ID token for the same person; the new
    # access token verifies and works at UserInfo too.
    old_refresh = token["refresh_token"]
    refreshed = session.refresh_token(meta["token_endpoint"], refresh_token=old_refresh)
    check(isinstance(refreshed.get("access_token"), str), "refresh: new access token")
    check(isinstance(refreshed.get("refresh_token"), str), "refresh: new refresh token")
    check(isinstance(refreshed.get("id_token"), str), "refresh: new ID token (openid granted)")
    _, again = verify_id_token(jwks, refreshed["id_token"], issuer, client_id)
    verify_access_token(jwks, refreshed["access_token"], issuer, audience, client_id)
    info_after = session.get(meta["userinfo_endpoint"], timeout=TIMEOUT)
    check(info_after.status_code == 200, f"UserInfo after refresh: {snippet(info_after)}")

    # Observations, reported as found; the Rust side asserts them.
    return {
        "method": method,
        "pages": browser.pages,
        "id_token_alg": header["alg"],
        "access_token_alg": at_header["alg"],
        "access_token_typ": at_header["typ"],
        "access_token_aud": at_claims["aud"],
        "access_token_sub_matches_id_token": at_claims["sub"] == claims["sub"],
        "refresh_rotated": refreshed["refresh_token"] != old_refresh,
        "refreshed_id_token_sub_matches": again["sub"] == claims["sub"],
        "userinfo_sub_matches": userinfo.get("sub") == claims["sub"]
        and info_after.json().get("sub") == claims["sub"],
    }


def main(step) -> dict:
    issuer = env("ISSUER")
    redirect_uri = env("REDIRECT_URI")
    email = env("USER_EMAIL")
    password = env("USER_PASSWORD")
    audience = env("API_AUDIENCE")
    clients = [
        ("client_secret_basic", env("CLIENT_ID"), env("CLIENT_SECRET")),
        ("client_secret_post", env("POST_CLIENT_ID"), env("POST_CLIENT_SECRET")),
    ]

    step("discovery")
    response = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=TIMEOUT)
    check(response.status_code == 200, f"discovery: {snippet(response)}")
    meta = response.json()
    check_equal(meta.get("issuer"), issuer, "discovery issuer")
    check_equal(meta.get("authorization_response_iss_parameter_supported"), True,
                "authorization_response_iss_parameter_supported")
    methods = meta.get("token_endpoint_auth_methods_supported") or []
    for method, _, _ in clients:
        check(method in methods, f"{method} not in token_endpoint_auth_methods_supported {methods}")
    jwks = jwt.PyJWKClient(meta["jwks_uri"], timeout=TIMEOUT)

    flows = []
    for method, client_id, client_secret in clients:
        step(f"code flow with {method}")
        flows.append(run_flow(meta, jwks, issuer=issuer, client_id=client_id, client_secret=client_secret,
                              method=method, redirect_uri=redirect_uri, email=email, password=password,
                              audience=audience))
    return {"issuer": issuer, "flows": flows, "auth_methods": [f["method"] for f in flows]}


def run_steps(client: str, main) -> int:
    """Runs `main(step)`, reporting each step on stderr, and prints one JSON summary line: the
    observations `main` returns, or the step that failed and why. The exit status says which."""
    started = time.time()
    progress: list[str] = []

    def step(label: str) -> None:
        progress.append(label)
        print(f"[{client}] {label}", file=sys.stderr, flush=True)

    try:
        summary = main(step)
    except Exception as error:  # noqa: BLE001 - every failure is reported the same way
        last = progress[-1] if progress else "(start)"
        detail = str(error) if isinstance(error, CheckFailed) else traceback.format_exc()
        print(f'interop check failed during "{last}": {detail}', file=sys.stderr, flush=True)
        print(json.dumps({"client": client, "ok": False, "failed_step": last, "error": str(error),
                          "passed_steps": progress[:-1]}), flush=True)
        return 1
    summary = {"client": client, "ok": True, **summary, "elapsed_ms": int((time.time() - started) * 1000)}
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_steps("authlib", main))

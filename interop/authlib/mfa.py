"""Authlib + pyotp against svc's second factor (`[two_factor]`): TOTP enrolment on the hosted
account page, step-up of a password-only session for `acr_values=urn:svc:aal2`, and sign-in with
a TOTP code or a backup code. The codes come from pyotp (RFC 6238, SHA-1, 6 digits, 30 s), an
implementation independent of the server's; the forms are posted by a plain `requests` session
(every input of the form, hidden ones included, as in rp.py, whose helpers this reuses); the
code flows use Authlib's `OAuth2Session` (PKCE S256, client_secret_basic); ID tokens and access
tokens are verified with PyJWT against the JWKS.

Steps, in order:
  (a) sign in with the password, code flow asking acr_values=urn:svc:aal2: no factor yet, so no
      step-up and the ID token says acr urn:svc:aal1, amr ["pwd"]; this session stays aal1;
  (b) in a second session (password only), enrol an authenticator on /auth/account/two-factor:
      the key from the page into pyotp, a wrong first code refused (401, same key), the right one
      shows 10 backup codes and raises that enrolling session to aal2 (a new session cookie; a
      code flow asking aal2 there is not asked for a code);
  (d) prompt=none asking aal2 on the aal1 session of (a): error=interaction_required;
  (c) interactive, asking aal2 on that session: the second-factor page (step-up), a pyotp code,
      then tokens with acr urn:svc:aal2 and amr pwd+otp+mfa (ID token, access token,
      introspection);
  (e) a new session: password → only the challenge cookie, no session → pyotp code → signed
      in; a code flow then gets acr aal2 without being asked again;
  (g) a new session: the TOTP code used in (e) replayed → 401;
  (f) code flows in new sessions: password + a backup code → acr aal2; the same backup code in
      another new session → 401.
A TOTP code is accepted once per 30 s step, ±1 step: each code here is for a step later than the
one used before it (waiting for the clock when needed).

Environment: ISSUER, CLIENT_ID + CLIENT_SECRET (client_secret_basic), REDIRECT_URI, USER_EMAIL,
USER_PASSWORD (a person without a second factor yet), API_AUDIENCE.
Prints one JSON line of observed values on stdout; exits 1 with
`interop check failed during "<step>": ...` on stderr otherwise.
"""

from __future__ import annotations

import html
import re
import sys
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import jwt
import requests

try:
    import pyotp
except ImportError:  # a venv from before pyotp was pinned
    print("interop check failed during \"(start)\": pyotp is not installed in interop/authlib/.venv; "
          "run `bash scripts/interop-setup.sh`", file=sys.stderr)
    sys.exit(1)
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

from rp import (
    TIMEOUT,
    Browser,
    CheckFailed,
    at_hash,
    check,
    check_equal,
    env,
    parse_forms,
    run_steps,
    snippet,
    verify_access_token,
    verify_id_token,
)

AAL1 = "urn:svc:aal1"
AAL2 = "urn:svc:aal2"
STEP_SECONDS = 30
SESSION_COOKIES = ("svc_session", "__Host-svc_session")
CHALLENGE_COOKIES = ("svc_mfa", "__Host-svc_mfa")


class Authenticator:
    """The authenticator app: pyotp with the key the setup page shows. Every code it gives is for
    a later time step than the one before (the server accepts one code per step, RFC 6238 §5.2)
    and within ±1 step of now; it waits for the clock when the next usable step is too far."""

    def __init__(self, key: str) -> None:
        self.totp = pyotp.TOTP(key)  # SHA-1, 6 digits, 30 s: the RFC 6238 defaults
        self.last_step: int | None = None

    def steps_in_window(self) -> set[int]:
        now = int(time.time()) // STEP_SECONDS
        return {now - 1, now, now + 1}

    def code(self) -> str:
        now = int(time.time()) // STEP_SECONDS
        step = now if self.last_step is None else max(now, self.last_step + 1)
        if step > now + 1:
            # The next usable step is two ahead: wait until it is the next one.
            time.sleep(max(0.0, (step - 1) * STEP_SECONDS + 0.5 - time.time()))
        self.last_step = step
        return self.totp.at(step * STEP_SECONDS)

    def wrong_code(self) -> str:
        """A code that no step within the server's window produces."""
        valid = {self.totp.at(s * STEP_SECONDS) for s in self.steps_in_window()}
        for candidate in ("000000", "123456", "999999", "314159"):
            if candidate not in valid:
                return candidate
        raise CheckFailed("no wrong code found")  # never: four candidates, at most three codes


def cookie(http: requests.Session, names: tuple[str, ...]) -> str | None:
    for c in http.cookies:
        if c.name in names:
            return c.value
    return None


def post_form(browser: Browser, page: requests.Response, form: dict, fields: dict[str, str],
              button: dict | None) -> requests.Response:
    return browser.submit(page, form, fields, button)


def get_page(browser: Browser, path: str, what: str) -> requests.Response:
    response = browser.http.get(urljoin(browser.issuer + "/", path.lstrip("/")), allow_redirects=False,
                                timeout=TIMEOUT)
    check(response.status_code == 200, f"{what}: {snippet(response)}")
    return response


def form_with(page: requests.Response, *, input_name: str | None = None,
              button: tuple[str, str] | None = None) -> tuple[dict, dict | None]:
    """The POST form of `page` with an input `input_name` and/or a button `name=value`."""
    for form in parse_forms(page.text):
        if form["method"] != "post":
            continue
        if input_name is not None and not any(n == input_name for n, _ in form["inputs"]):
            continue
        chosen = form["buttons"][0] if form["buttons"] else None
        if button is not None:
            chosen = next((b for b in form["buttons"] if (b.get("name"), b["value"]) == button), None)
            if chosen is None:
                continue
        return form, chosen
    raise CheckFailed(f"no form with input {input_name!r} and button {button!r}: {snippet(page)}")


def sign_in(browser: Browser, email: str, password: str) -> requests.Response:
    """Posts the hosted sign-in form (no authorization request); returns the 303."""
    page = get_page(browser, "/auth/sign-in", "the sign-in page")
    form, button = form_with(page, input_name="password")
    names = [n for n, _ in form["inputs"]]
    check("csrf" in names and "email" in names, f"the sign-in form's inputs: {names}")
    response = post_form(browser, page, form, {"email": email, "password": password}, button)
    check(response.status_code == 303, f"sign-in with the password: {snippet(response)}")
    return response


def second_factor_page(browser: Browser, location: str) -> tuple[requests.Response, dict, dict | None]:
    """GETs the second-factor page at `location`; returns it with its code form."""
    path = urlsplit(urljoin(browser.issuer + "/", location)).path
    check_equal(path, "/auth/second-factor", "after the password the browser is sent to")
    page = get_page(browser, location, "the second-factor page")
    form, button = form_with(page, input_name="code")
    names = [n for n, _ in form["inputs"]]
    check("csrf" in names, f"the second-factor form has no csrf input: {names}")
    return page, form, button


def detail(page: requests.Response, label: str) -> str:
    found = re.search(rf"<dt>{re.escape(label)}</dt>\s*<dd>([^<]*)</dd>", page.text)
    check(found is not None, f"no <dt>{label}</dt><dd>…</dd> on the page: {snippet(page)}")
    return html.unescape(found.group(1)).strip()


class Client:
    """The relying party: Authlib's OAuth2Session with client_secret_basic and PKCE S256."""

    def __init__(self, meta: dict, jwks: jwt.PyJWKClient, *, issuer: str, client_id: str, client_secret: str,
                 redirect_uri: str, audience: str) -> None:
        self.meta, self.jwks, self.issuer = meta, jwks, issuer
        self.client_id, self.client_secret = client_id, client_secret
        self.redirect_uri, self.audience = redirect_uri, audience

    def flow(self, browser: Browser, *, email: str | None = None, password: str | None = None,
             second_factor=None, **params) -> dict:
        """One authorization request in `browser` with extra `params` (acr_values, prompt…).
        Returns {"callback", "params", "pages"} and, when a code came back, the verified tokens."""
        session = OAuth2Session(
            self.client_id,
            self.client_secret,
            scope="openid profile email",
            redirect_uri=self.redirect_uri,
            token_endpoint_auth_method="client_secret_basic",
            code_challenge_method="S256",
        )
        verifier = generate_token(64)
        nonce = generate_token(24)
        url, state = session.create_authorization_url(
            self.meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce, **params
        )
        check_equal(parse_qs(urlsplit(url).query).get("code_challenge_method"), ["S256"],
                    "authlib sent code_challenge_method")
        browser.pages = []
        started = int(time.time())
        callback = browser.authorize(url, email, password, second_factor)
        query = parse_qs(urlsplit(callback).query)
        check_equal(query.get("state"), [state], "state in the authorization response")
        check_equal(query.get("iss"), [self.issuer], "RFC 9207 iss in the authorization response")
        result = {"callback": callback, "params": query, "pages": list(browser.pages)}
        if "error" in query:
            return result
        token = session.fetch_token(
            self.meta["token_endpoint"], authorization_response=callback, code_verifier=verifier, state=state
        )
        check(isinstance(token.get("id_token"), str), "an ID token was issued")
        _, claims = verify_id_token(self.jwks, token["id_token"], self.issuer, self.client_id)
        check_equal(claims.get("nonce"), nonce, "ID token nonce")
        check_equal(claims.get("at_hash"), at_hash(token["access_token"]), "ID token at_hash")
        _, at_claims = verify_access_token(self.jwks, token["access_token"], self.issuer, self.audience,
                                           self.client_id)
        auth_time = claims.get("auth_time")
        check(isinstance(auth_time, int) and auth_time <= int(time.time()) + 60,
              f"ID token auth_time {auth_time!r}")
        result.update(token=token, id_claims=claims, at_claims=at_claims, started=started)
        return result

    def introspect(self, token: str) -> dict:
        response = requests.post(
            self.meta["introspection_endpoint"],
            data={"token": token},
            auth=(self.client_id, self.client_secret),
            timeout=TIMEOUT,
        )
        check(response.status_code == 200, f"introspection: {snippet(response)}")
        return response.json()


def main(step) -> dict:
    issuer = env("ISSUER")
    redirect_uri = env("REDIRECT_URI")
    email = env("USER_EMAIL")
    password = env("USER_PASSWORD")
    audience = env("API_AUDIENCE")

    step("discovery")
    response = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=TIMEOUT)
    check(response.status_code == 200, f"discovery: {snippet(response)}")
    meta = response.json()
    check_equal(meta.get("issuer"), issuer, "discovery issuer")
    check(isinstance(meta.get("introspection_endpoint"), str), "discovery names introspection_endpoint")
    acr_values_supported = meta.get("acr_values_supported")
    jwks = jwt.PyJWKClient(meta["jwks_uri"], timeout=TIMEOUT)
    client = Client(meta, jwks, issuer=issuer, client_id=env("CLIENT_ID"), client_secret=env("CLIENT_SECRET"),
                    redirect_uri=redirect_uri, audience=audience)

    # (a) A password-only session; asking for aal2 without a factor goes on at aal1.
    step("(a) password sign-in, code flow asking aal2 without a factor")
    user = Browser(issuer, redirect_uri)
    signed_in = sign_in(user, email, password)
    check_equal(urlsplit(signed_in.headers.get("Location", "")).path, "/auth/account",
                "sign-in without a factor sends the browser to")
    aal1_session = cookie(user.http, SESSION_COOKIES)
    check(aal1_session is not None, f"no session cookie after the password: {list(user.http.cookies.keys())}")
    before = client.flow(user, acr_values=AAL2)
    check("error" not in before["params"], f"authorization error: {before['callback']}")

    # (b) Enrolment in another password-only session, with codes from pyotp.
    step("(b) enrol an authenticator")
    enroller = Browser(issuer, redirect_uri)
    sign_in(enroller, email, password)
    password_session = cookie(enroller.http, SESSION_COOKIES)
    overview = get_page(enroller, "/auth/account/two-factor", "the two-factor page")
    form, button = form_with(overview, button=("action", "setup"))
    setup = post_form(enroller, overview, form, {}, button)
    check(setup.status_code == 200, f"action=setup: {snippet(setup)}")
    qr_figure = re.search(r'<figure[^>]*\brole="img"[^>]*>\s*<svg\b', setup.text) is not None
    check(qr_figure, f"no <figure role=\"img\"><svg> QR code on the setup page: {snippet(setup)}")
    key = detail(setup, "Key").replace(" ", "")
    check(re.fullmatch(r"[A-Z2-7]+=*", key) is not None and len(key) >= 16,
          f"the key is not base32 of 80 bits or more: {key!r}")
    authenticator = Authenticator(key)
    form, button = form_with(setup, input_name="code", button=("action", "confirm"))
    check(any(n == "factor" for n, _ in form["inputs"]), f"the setup form has no factor input: {form}")
    check(re.search(r'<input[^>]*name="code"[^>]*autocomplete="one-time-code"', setup.text) is not None,
          'the code input is not autocomplete="one-time-code"')
    wrong = post_form(enroller, setup, form, {"code": authenticator.wrong_code()}, button)
    check_equal(wrong.status_code, 401, f"a wrong first code ({snippet(wrong)})")
    check_equal(detail(wrong, "Key").replace(" ", ""), key, "the key shown again after a wrong code")
    form, button = form_with(wrong, input_name="code", button=("action", "confirm"))
    confirmed = post_form(enroller, wrong, form, {"code": authenticator.code()}, button)
    check(confirmed.status_code == 200, f"action=confirm with the pyotp code: {snippet(confirmed)}")
    backup_codes = [html.unescape(c) for c in re.findall(r"<code>([^<]*)</code>", confirmed.text)]
    check_equal(len(backup_codes), 10, f"backup codes shown ({snippet(confirmed)})")
    check(all(re.fullmatch(r"[0-9A-Za-z]{5}-[0-9A-Za-z]{5}", c) for c in backup_codes),
          f"backup codes not XXXXX-XXXXX: {backup_codes}")
    check_equal(len(set(backup_codes)), 10, "distinct backup codes")
    enrolled_session = cookie(enroller.http, SESSION_COOKIES)
    after = get_page(enroller, "/auth/account/two-factor", "the two-factor page after enrolment")
    buttons = {(b.get("name"), b["value"]) for f in parse_forms(after.text) for b in f["buttons"]}
    enrolled_actions = sorted(v for n, v in buttons if n == "action")
    step("(b) code flow asking aal2 in the enrolling session")
    enrolled = client.flow(enroller, acr_values=AAL2)
    check("error" not in enrolled["params"], f"authorization error: {enrolled['callback']}")

    # (d) The session of (a) is still aal1: prompt=none cannot step it up.
    step("(d) prompt=none asking aal2 on the aal1 session")
    none = client.flow(user, acr_values=AAL2, prompt="none")
    prompt_none_error = (none["params"].get("error") or [None])[0]

    # (c) Step-up of the session of (a): the second-factor page, a pyotp code, tokens at aal2.
    step("(c) step-up of the aal1 session")
    check_equal(cookie(user.http, SESSION_COOKIES), aal1_session, "the session of (a) before the step-up")
    stepped = client.flow(user, acr_values=AAL2, second_factor=authenticator.code)
    check("error" not in stepped["params"], f"authorization error: {stepped['callback']}")
    step_up_session = cookie(user.http, SESSION_COOKIES)
    at = stepped["at_claims"]
    check(isinstance(at.get("auth_time"), int), f"access token auth_time: {at.get('auth_time')!r}")
    described = client.introspect(stepped["token"]["access_token"])
    check_equal(described.get("active"), True, "introspection active")

    # (e) Sign-in with the password and a TOTP code.
    step("(e) new session: password + TOTP code")
    totp_user = Browser(issuer, redirect_uri)
    challenged = sign_in(totp_user, email, password)
    challenge_location = challenged.headers.get("Location", "")
    session_after_password = cookie(totp_user.http, SESSION_COOKIES)
    challenge_cookie = cookie(totp_user.http, CHALLENGE_COOKIES)
    page, form, button = second_factor_page(totp_user, challenge_location)
    totp_code = authenticator.code()
    passed = post_form(totp_user, page, form, {"code": totp_code}, button)
    check(passed.status_code == 303, f"the TOTP code at sign-in: {snippet(passed)}")
    totp_location = urlsplit(passed.headers.get("Location", "")).path
    check(cookie(totp_user.http, SESSION_COOKIES) is not None, "no session cookie after the TOTP code")
    totp_flow = client.flow(totp_user, acr_values=AAL2)
    check("error" not in totp_flow["params"], f"authorization error: {totp_flow['callback']}")

    # (g) The TOTP code of (e) again, while its step is still within the window.
    step("(g) replayed TOTP code")
    replayer = Browser(issuer, redirect_uri)
    replay_location = sign_in(replayer, email, password).headers.get("Location", "")
    page, form, button = second_factor_page(replayer, replay_location)
    replay = post_form(replayer, page, form, {"code": totp_code}, button)
    replay_in_window = authenticator.last_step in authenticator.steps_in_window()
    check(replay_in_window, "the replay came too late to test replay protection")
    replay_alert = 'role="alert"' in replay.text
    check(cookie(replayer.http, SESSION_COOKIES) is None, "a session cookie after a replayed code")

    # (f) A backup code, through an authorization request; then the same one again.
    step("(f) new session: password + backup code in a code flow")
    backup_user = Browser(issuer, redirect_uri)
    backup_flow = client.flow(backup_user, email=email, password=password, acr_values=AAL2,
                              second_factor=lambda: backup_codes[0])
    check("error" not in backup_flow["params"], f"authorization error: {backup_flow['callback']}")
    account = get_page(backup_user, "/auth/account/two-factor", "the two-factor page after a backup code")
    left = re.findall(r"<dd>(\d+)</dd>", account.text)
    check(len(left) == 1, f"one count of unused backup codes on the two-factor page: {snippet(account)}")
    step("(f) the same backup code again")
    again = Browser(issuer, redirect_uri)
    again_location = sign_in(again, email, password).headers.get("Location", "")
    page, form, button = second_factor_page(again, again_location)
    reuse = post_form(again, page, form, {"code": backup_codes[0]}, button)
    check(cookie(again.http, SESSION_COOKIES) is None, "a session cookie after a used backup code")

    def id_claim(flow: dict, name: str):
        return flow["id_claims"].get(name)

    return {
        "issuer": issuer,
        "acr_values_supported": acr_values_supported,
        # (a)
        "acr_before": id_claim(before, "acr"),
        "amr_before": id_claim(before, "amr"),
        "pages_before": before["pages"],
        # (b)
        "qr_svg_in_figure_role_img": qr_figure,
        "key_length": len(key),
        "wrong_enrolment_code_status": wrong.status_code,
        "backup_codes_shown": len(backup_codes),
        "two_factor_actions_after_enrolment": enrolled_actions,
        "enrolment_replaced_session_cookie": enrolled_session is not None and enrolled_session != password_session,
        "pages_after_enrolment": enrolled["pages"],
        "acr_after_enrolment": id_claim(enrolled, "acr"),
        "amr_after_enrolment": id_claim(enrolled, "amr"),
        # (d)
        "prompt_none_step_up_error": prompt_none_error,
        # (c)
        "pages_step_up": stepped["pages"],
        "step_up_replaced_session_cookie": step_up_session is not None and step_up_session != aal1_session,
        "acr_step_up": id_claim(stepped, "acr"),
        "amr_step_up": id_claim(stepped, "amr"),
        "at_typ": jwt.get_unverified_header(stepped["token"]["access_token"]).get("typ"),
        "at_acr": at.get("acr"),
        "at_amr": at.get("amr"),
        "at_auth_time_matches_id_token": at.get("auth_time") == id_claim(stepped, "auth_time"),
        "introspection_active": described.get("active"),
        "introspection_acr": described.get("acr"),
        "introspection_amr": described.get("amr"),
        # (e)
        "sign_in_with_factor_redirect": urlsplit(challenge_location).path,
        "session_cookie_after_password": session_after_password is not None,
        "challenge_cookie_after_password": challenge_cookie is not None,
        "totp_sign_in_status": passed.status_code,
        "totp_sign_in_redirect": totp_location,
        "totp_sign_in_pages": totp_flow["pages"],
        "totp_sign_in_acr": id_claim(totp_flow, "acr"),
        "totp_sign_in_amr": id_claim(totp_flow, "amr"),
        # (g)
        "totp_replay_status": replay.status_code,
        "totp_replay_alert": replay_alert,
        # (f)
        "backup_sign_in_pages": backup_flow["pages"],
        "backup_sign_in_acr": id_claim(backup_flow, "acr"),
        "backup_sign_in_amr": id_claim(backup_flow, "amr"),
        "backup_codes_left_after_one_used": int(left[0]),
        "backup_code_reuse_status": reuse.status_code,
    }


if __name__ == "__main__":
    sys.exit(run_steps("authlib-mfa", main))

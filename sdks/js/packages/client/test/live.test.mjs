// @svc/client against a running svc (single-tenant, plain-http loopback issuer). The runtime's
// js_sdk test (crates/runtime/tests/it/js_sdk.rs) starts the service, provisions the tenant's
// management credentials and runs this with SVC_E2E_* set; without them it is skipped (and
// reported as skipped), never faked. The browser is Node's fetch with a cookie jar, following
// no redirects, through the hosted sign-in form, as sdks/go/live_test.go does.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthorizationError,
  DiscoveryError,
  IdTokenError,
  IssuerMismatchError,
  KeySet,
  LoginRequiredError,
  MemoryStorage,
  StateMismatchError,
  TokenError,
  createAuthorizationUrl,
  createSvcClient,
  discover,
  exchangeCode,
  refreshTokens,
  validateIdToken,
} from "../dist/index.js";
import { BYE, PASSWORD, REDIRECT, browser, env, management, managementToken, signIn, skip } from "./e2e.mjs";

test("live: @svc/client against a running svc", { skip, timeout: 120_000 }, async () => {
  const { issuer } = env;

  // Provisioning through the management API: a public SPA application and a person.
  const machine = await managementToken(issuer, "applications:read applications:write users:read users:write");
  const app = await management(issuer, machine, "POST", "/applications", {
    name: "JS SPA (@svc/client)",
    first_party: true,
    redirect_uris: [REDIRECT],
    post_logout_redirect_uris: [BYE],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "none",
    allowed_scopes: ["openid", "profile", "email", "offline_access"],
  });
  assert.equal(app.client_secret ?? undefined, undefined, "a public client has no secret");
  const email = `ada.${Date.now().toString(36)}@example.com`;
  const person = await management(issuer, machine, "POST", "/tenant-users", { email, password: PASSWORD, name: "Ada Lovelace" });

  // Discovery: exactly this issuer.
  await assert.rejects(discover(`${issuer}/`), DiscoveryError);
  const metadata = await discover(issuer);
  assert.equal(metadata.authorization_response_iss_parameter_supported, true);
  assert.ok(metadata.dpop_signing_alg_values_supported?.includes("ES256"), "svc offers DPoP: the client binds its tokens");

  let navigatedTo;
  const transient = new MemoryStorage();
  const client = createSvcClient({
    baseURL: issuer,
    oauth: { clientId: app.client_id, redirectUri: REDIRECT, scopes: ["openid", "profile", "email", "offline_access"], postLogoutRedirectUri: BYE },
    transientStorage: transient,
    navigate: (url) => {
      navigatedTo = url;
    },
  });
  const b = browser(issuer);

  // login() (redirect) through the hosted sign-in; hostile callbacks are refused before the code is used.
  await client.login({ returnTo: "/after" });
  const authUrl = new URL(navigatedTo);
  assert.equal(authUrl.searchParams.get("code_challenge_method"), "S256");
  const callback = await signIn(b, issuer, navigatedTo, email);
  const cb = new URL(callback);
  assert.equal(cb.searchParams.get("iss"), issuer, "svc sends iss (RFC 9207)");
  const wrongState = new URL(callback);
  wrongState.searchParams.set("state", "not-the-state");
  await assert.rejects(client.handleCallback(wrongState), StateMismatchError);
  const wrongIss = new URL(callback);
  wrongIss.searchParams.set("iss", "https://evil.example");
  await assert.rejects(client.handleCallback(wrongIss), IssuerMismatchError);
  const noIss = new URL(callback);
  noIss.searchParams.delete("iss");
  await assert.rejects(client.handleCallback(noIss), IssuerMismatchError);
  const signed = await client.handleCallback(callback);
  assert.equal(signed.user.sub, person.id, "a first-party application sees the person's id");
  assert.equal(signed.user.nonce, authUrl.searchParams.get("nonce"));
  assert.equal(signed.returnTo, "/after");
  assert.ok(signed.tokens.refreshToken, "offline_access brought a refresh token");
  // DPoP by default (RFC 9449): the tokens are bound to the client's non-extractable key.
  assert.equal(signed.tokens.tokenType, "DPoP");
  const bound = JSON.parse(Buffer.from(signed.tokens.accessToken.split(".")[1], "base64url"));
  assert.ok(typeof bound.cnf?.jkt === "string" && bound.cnf.jkt.length === 43, JSON.stringify(bound.cnf));
  const asBearer = await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${signed.tokens.accessToken}` } });
  assert.equal(asBearer.status, 401, "a bound token is refused as a bearer token");
  await assert.rejects(client.handleCallback(callback), StateMismatchError, "a callback is single-use");

  // An error callback from svc itself: a scope the application may not ask for.
  await client.login({ scopes: "openid admin:everything" });
  const refused = await b.request(navigatedTo);
  assert.equal(refused.status, 303);
  assert.ok(refused.location.startsWith(REDIRECT), refused.location);
  await assert.rejects(client.handleCallback(refused.location), (e) => e instanceof AuthorizationError && e.error === "invalid_scope");

  // A sign-in whose pending nonce is not the request's: the ID token is refused, and the code
  // it spent is refused by svc when presented again.
  await client.login();
  const second = await signIn(b, issuer, navigatedTo, email);
  const stateKey = `svc:${app.client_id}:login:${new URL(second).searchParams.get("state")}`;
  const pending = JSON.parse(transient.get(stateKey));
  transient.set(stateKey, JSON.stringify({ ...pending, nonce: "another-nonce" }));
  await assert.rejects(client.handleCallback(second), (e) => e instanceof IdTokenError && e.rule === "nonce");
  await assert.rejects(
    exchangeCode(metadata, new URL(second).searchParams.get("code"), pending, { clientId: app.client_id }),
    (e) => e instanceof TokenError && e.error === "invalid_grant",
  );
  assert.equal((await client.getUser()).sub, person.id, "the refused sign-in left the session alone");

  // The ID token is this client's, current and signed by the issuer.
  const keys = new KeySet(metadata.jwks_uri, (u, i) => fetch(u, i));
  const idToken = signed.tokens.idToken;
  const expected = { issuer, clientId: app.client_id };
  await validateIdToken(idToken, keys, expected);
  await assert.rejects(validateIdToken(idToken, keys, { ...expected, clientId: "app_01jd0000000000000000000000" }), (e) => e.rule === "audience");
  await assert.rejects(validateIdToken(idToken, keys, { ...expected, now: Date.now() + 2 * 3600_000 }), (e) => e.rule === "expired");
  await assert.rejects(validateIdToken(idToken, keys, { ...expected, issuer: `${issuer}/` }), (e) => e.rule === "issuer");
  const [header, payload, signature] = idToken.split(".");
  const claims = JSON.parse(Buffer.from(payload, "base64url"));
  const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: "usr_someone_else" })).toString("base64url")}.${signature}`;
  await assert.rejects(validateIdToken(tampered, keys, expected), (e) => e instanceof IdTokenError && e.rule === "signature");
  const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`;
  await assert.rejects(validateIdToken(unsigned, keys, expected), (e) => e.rule === "algorithm");
  await assert.rejects(validateIdToken(idToken, keys, { ...expected, algorithm: "ES256" }), (e) => e.rule === "algorithm");

  // The other algorithms svc signs ID tokens with, for applications that registered them: the
  // issuer's ES256 and Ed25519 keys from its JWKS through WebCrypto (the svc session makes these
  // sign-ins a straight redirect).
  for (const alg of ["ES256", "EdDSA"]) {
    const other = await management(issuer, machine, "POST", "/applications", {
      name: `JS SPA (${alg} ID tokens)`,
      first_party: true,
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "none",
      allowed_scopes: ["openid"],
      id_token_signed_response_alg: alg,
    });
    let to;
    const rp = createSvcClient({
      baseURL: issuer,
      oauth: { clientId: other.client_id, redirectUri: REDIRECT, scopes: "openid", idTokenSigningAlg: alg },
      navigate: (url) => {
        to = url;
      },
    });
    await rp.login();
    const result = await rp.handleCallback(await signIn(b, issuer, to, email));
    assert.equal(result.user.sub, person.id, alg);
    assert.equal(JSON.parse(Buffer.from(result.tokens.idToken.split(".")[0], "base64url")).alg, alg);
    // The same application's token, checked as if RS256 had been registered: refused.
    const { url, pending } = await createAuthorizationUrl(metadata, { clientId: other.client_id, redirectUri: REDIRECT, scope: "openid" });
    const code = new URL(await signIn(b, issuer, url, email)).searchParams.get("code");
    await assert.rejects(exchangeCode(metadata, code, pending, { clientId: other.client_id }), (e) => e instanceof IdTokenError && e.rule === "algorithm", `${alg} token where RS256 is expected`);
  }

  // getAccessToken: the stored token while fresh; a forced refresh rotates, and concurrent
  // callers share one refresh (two refreshes with one token would be reuse to svc).
  assert.equal(await client.getAccessToken(), signed.tokens.accessToken);
  const firstRefresh = signed.tokens.refreshToken;
  const refreshed = await Promise.all([1, 2, 3].map(() => client.getAccessToken({ forceRefresh: true })));
  assert.notEqual(refreshed[0], signed.tokens.accessToken);
  assert.deepEqual(refreshed, [refreshed[0], refreshed[0], refreshed[0]]);
  const rotated = (await client.getTokens()).refreshToken;
  assert.ok(rotated && rotated !== firstRefresh, "the refresh token rotated and the new one is stored");
  assert.equal(await client.getAccessToken(), refreshed[0]);

  // UserInfo for the ID token's subject.
  const info = await client.fetchUserInfo();
  assert.equal(info.sub, person.id);
  assert.equal(info.email, email);

  // Rotation proper, on a second client riding the same svc session (no password sign-in):
  // after a refresh the old refresh token is refused, and presenting it revokes the family, so
  // the client's current one ends too and it asks for a login.
  let rotatingTo;
  const rotating = createSvcClient({
    baseURL: issuer,
    oauth: { clientId: app.client_id, redirectUri: REDIRECT },
    navigate: (url) => {
      rotatingTo = url;
    },
  });
  await rotating.login();
  const third = await rotating.handleCallback(await signIn(b, issuer, rotatingTo, email));
  const old = third.tokens.refreshToken;
  await rotating.getAccessToken({ forceRefresh: true });
  await assert.rejects(refreshTokens(metadata, old, { clientId: app.client_id }), (e) => e instanceof TokenError && e.error === "invalid_grant");
  await assert.rejects(rotating.getAccessToken({ forceRefresh: true }), (e) => e instanceof LoginRequiredError && e.cause?.error === "invalid_grant");
  assert.equal(await rotating.getTokens(), null);

  // RP-initiated logout: the refresh token is revoked, and svc returns to the registered address with the state.
  const latestIdToken = (await client.getTokens()).idToken;
  assert.notEqual(latestIdToken, idToken, "the refresh brought a new ID token, validated and stored");
  const { url: logoutUrl, state } = await client.logout({ navigate: false });
  const logoutParams = new URL(logoutUrl).searchParams;
  assert.ok(logoutParams.get("id_token_hint") === latestIdToken, "the hint is the latest ID token");
  assert.equal(logoutParams.get("client_id"), app.client_id);
  assert.equal(await client.getTokens(), null);
  await assert.rejects(client.getAccessToken(), LoginRequiredError);
  const bye = await b.request(logoutUrl);
  assert.equal(bye.status, 303, bye.body.slice(0, 300));
  assert.ok(bye.location.startsWith(BYE) && new URL(bye.location).searchParams.get("state") === state, bye.location);
  await assert.rejects(refreshTokens(metadata, rotated, { clientId: app.client_id }), (e) => e instanceof TokenError && e.error === "invalid_grant");

  console.log("svc-js live test: passed against", issuer);
});

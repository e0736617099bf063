// openid-client (a certified OpenID Connect relying party) against svc: discovery, the
// authorization code flow with PKCE (S256) through the hosted sign-in and consent pages in
// Chromium, the token response checked by openid-client (state, nonce, iss per RFC 9207) and
// independently by jose, UserInfo, refresh-token rotation and reuse, a pushed authorization
// request (RFC 9126, buildAuthorizationUrlWithPAR), the device authorization grant (RFC 8628,
// initiateDeviceAuthorization + pollDeviceAuthorizationGrant, approved in Chromium),
// CIBA in poll mode (initiateBackchannelAuthentication +
// pollBackchannelAuthenticationGrant, approved on the hosted page, then again by the person's own
// first-party app — APPROVER_CLIENT_ID — with a token for them through fetchProtectedResource on
// /api/v1/identity/ciba/requests), introspection, revocation,
// RP-initiated logout, and dynamic client registration (RFC 7591,
// dynamicClientRegistration) followed by a code flow as the registered client and its RFC 7592
// read and delete (the tenant's registration policy is opened by the test before the run), and a
// client known by the URL of its client ID metadata document (DOCUMENT_CLIENT_ID, served by the
// test on loopback): code flow and refresh, its URL as the ID token's aud.
// DPoP (RFC 9449) through openid-client's DPoP handle: PAR, code, UserInfo and refresh bound to
// the handle's key, with server nonces required by the deployment. Token exchange (RFC 8693)
// through genericGrantRequest by a first-party service (GATEWAY_CLIENT_ID/SECRET, registered for
// the grant with API_AUDIENCE): the `act` chain is checked here with jose and by the Rust test
// with svc-sdk.
//
// Environment: ISSUER, CLIENT_ID (public client, token_endpoint_auth_method none),
// CONFIDENTIAL_CLIENT_ID + CONFIDENTIAL_CLIENT_SECRET (client_secret_basic, for introspection),
// REDIRECT_URI, POST_LOGOUT_REDIRECT_URI, USER_EMAIL, USER_PASSWORD, API_AUDIENCE (the access
// tokens' `aud`, registered on both clients: the confidential one is the resource server that
// may introspect them), ORGANIZATION_ID (the id of organization `acme`, which the user belongs
// to; `globex` exists without them), OTHER_ORGANIZATION_ID (globex's id), INVOICES_API (an API
// resource whose permissions the user's roles in acme partly hold), RESOURCE_SERVER_URL (the
// svc-sdk sample resource server for that API), CHROMIUM_PATH (default /usr/bin/chromium).
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" on stderr otherwise.
import { createHash } from 'node:crypto';
import * as jose from 'jose';
import * as client from 'openid-client';
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { routeClientOrigin, runInteraction } from '../lib/hosted.mjs';

const insecure = { execute: [client.allowInsecureRequests] };
let closeBrowser = async () => {};

/** Expects `promise` to fail with the OAuth error `code` (a ResponseBodyError from the server). */
async function expectOAuthError(promise, code, what) {
  try {
    await promise;
  } catch (error) {
    const got = error?.error ?? error?.code;
    check(got === code, `${what}: expected OAuth error ${code}, got ${got} (${error?.message})`);
    return;
  }
  throw new CheckFailed(`${what}: expected OAuth error ${code}, but the request succeeded`);
}

/** at_hash per OpenID Connect Core 1.0 §3.1.3.6 for an RS256/ES256 token (SHA-256). */
function atHash(accessToken) {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/**
 * A code flow with PKCE (S256), state and, with `idToken`, a nonce, as `config`'s client in a
 * fresh tab of `context` (an earlier tab may still be settling on the client's unserved
 * callback): runInteraction answers the hosted pages (signing in with `login` when asked), then
 * openid-client redeems the code, checking state, nonce and iss. `params` join the
 * authorization request, `grant` the token request. Returns `{ tokens, pages }`.
 */
async function codeFlow(context, config, redirectUri, params, { login = {}, idToken = true, grant } = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = idToken ? client.randomNonce() : undefined;
  const page = await context.newPage();
  try {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...(nonce === undefined ? {} : { nonce }),
      ...params,
    });
    const flow = await runInteraction(context, page, url.href, redirectUri, login);
    const tokens = await client.authorizationCodeGrant(
      config,
      new URL(flow.url),
      { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: idToken },
      grant,
    );
    return { tokens, pages: flow.pages };
  } finally {
    await page.close();
  }
}

async function main(step) {
  const issuer = env('ISSUER');
  const clientId = env('CLIENT_ID');
  const confidentialId = env('CONFIDENTIAL_CLIENT_ID');
  const confidentialSecret = env('CONFIDENTIAL_CLIENT_SECRET');
  const redirectUri = env('REDIRECT_URI');
  const postLogoutUri = env('POST_LOGOUT_REDIRECT_URI');
  const email = env('USER_EMAIL');
  const password = env('USER_PASSWORD');
  const apiAudience = env('API_AUDIENCE');
  const scope = 'openid profile email offline_access';
  const checks = {};
  const passed = (name) => {
    checks[name] = true;
  };

  // ---- Discovery (openid-client validates issuer equality itself) ----
  step('discovery');
  const pub = await client.discovery(new URL(issuer), clientId, undefined, client.None(), insecure);
  const meta = pub.serverMetadata();
  checkEqual(meta.issuer, issuer, 'discovery issuer');
  for (const [key, path] of [
    ['authorization_endpoint', '/oauth/authorize'],
    ['token_endpoint', '/oauth/token'],
    ['userinfo_endpoint', '/userinfo'],
    ['revocation_endpoint', '/oauth/revoke'],
    ['introspection_endpoint', '/oauth/introspect'],
    ['end_session_endpoint', '/oauth/end-session'],
  ]) {
    checkEqual(meta[key], `${issuer}${path}`, `discovery ${key}`);
  }
  check(typeof meta.jwks_uri === 'string' && meta.jwks_uri.startsWith(issuer), `discovery jwks_uri: ${meta.jwks_uri}`);
  checkEqual(meta.authorization_response_iss_parameter_supported, true, 'authorization_response_iss_parameter_supported');
  check(meta.code_challenge_methods_supported?.includes('S256'), 'code_challenge_methods_supported has S256');
  passed('discovery');
  const conf = await client.discovery(
    new URL(issuer),
    confidentialId,
    undefined,
    client.ClientSecretBasic(confidentialSecret),
    insecure,
  );
  const jwks = jose.createRemoteJWKSet(new URL(meta.jwks_uri));

  // ---- Authorization code flow with PKCE in Chromium ----
  step('launch chromium');
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext();
  await routeClientOrigin(context, redirectUri);
  await routeClientOrigin(context, postLogoutUri);
  const page = await context.newPage();

  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const authorizeUrl = client.buildAuthorizationUrl(pub, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    prompt: 'consent',
  });
  step('authorize: sign-in and consent in Chromium');
  const started = Math.floor(Date.now() / 1000);
  const first = await runInteraction(context, page, authorizeUrl.href, redirectUri, { email, password });
  check(first.pages.includes('sign-in'), `the sign-in page was not shown (pages: ${first.pages})`);
  const callback = new URL(first.url);
  check(!callback.searchParams.has('error'), `authorization error: ${callback.search}`);
  checkEqual(callback.searchParams.get('iss'), issuer, 'RFC 9207 iss in the authorization response');
  checkEqual(callback.searchParams.get('state'), state, 'state in the authorization response');
  passed('authorize_pkce_s256');
  passed('authorization_response_iss');

  step('authorizationCodeGrant');
  const tokens = await client.authorizationCodeGrant(pub, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  checkEqual(tokens.token_type?.toLowerCase(), 'bearer', 'token_type');
  check(typeof tokens.access_token === 'string', 'access_token issued');
  check(typeof tokens.refresh_token === 'string', 'refresh_token issued (offline_access)');
  check(typeof tokens.id_token === 'string', 'id_token issued');
  const claims = tokens.claims();
  checkEqual(claims.nonce, nonce, 'openid-client: ID token nonce');
  passed('code_exchange');

  // ---- Independent JOSE checks with jose ----
  step('jose: ID token');
  const id = await jose.jwtVerify(tokens.id_token, jwks, {
    issuer,
    audience: clientId,
    algorithms: ['RS256'],
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
  });
  checkEqual(id.protectedHeader.alg, 'RS256', 'ID token alg (default RS256)');
  check(typeof id.protectedHeader.kid === 'string', 'ID token header has a kid');
  checkEqual(id.payload.nonce, nonce, 'jose: ID token nonce');
  checkEqual(id.payload.at_hash, atHash(tokens.access_token), 'ID token at_hash');
  check(typeof id.payload.sid === 'string' && id.payload.sid.length > 0, `ID token sid: ${id.payload.sid}`);
  check(
    Number.isInteger(id.payload.auth_time) &&
      id.payload.auth_time >= started - 60 &&
      id.payload.auth_time <= Math.floor(Date.now() / 1000) + 60,
    `ID token auth_time ${id.payload.auth_time} not within this sign-in (started ${started})`,
  );
  check(id.payload.exp > id.payload.iat, 'ID token exp after iat');
  passed('jose_id_token');

  step('jose: access token');
  const at = await jose.jwtVerify(tokens.access_token, jwks, {
    issuer,
    typ: 'at+jwt',
    audience: apiAudience,
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
  });
  checkEqual(at.protectedHeader.typ, 'at+jwt', 'access token typ');
  checkEqual(at.payload.client_id, clientId, 'access token client_id');
  check(String(at.payload.scope ?? '').split(' ').includes('openid'), `access token scope: ${at.payload.scope}`);
  passed('jose_access_token');

  // ---- UserInfo ----
  step('fetchUserInfo');
  const userinfo = await client.fetchUserInfo(pub, tokens.access_token, claims.sub);
  checkEqual(userinfo.sub, id.payload.sub, 'UserInfo sub equals the ID token sub');
  checkEqual(userinfo.email, email, 'UserInfo email (scope email)');
  passed('userinfo');

  // ---- Refresh: rotation, then reuse of the old token is refused ----
  step('refreshTokenGrant');
  const refreshed = await client.refreshTokenGrant(pub, tokens.refresh_token);
  check(typeof refreshed.access_token === 'string', 'refresh: new access token');
  check(typeof refreshed.refresh_token === 'string', 'refresh: a new refresh token (rotation)');
  check(refreshed.refresh_token !== tokens.refresh_token, 'refresh: the refresh token rotated');
  check(typeof refreshed.id_token === 'string', 'refresh: a new ID token (openid granted)');
  checkEqual(refreshed.claims().sub, claims.sub, 'refreshed ID token sub');
  await jose.jwtVerify(refreshed.access_token, jwks, { issuer, typ: 'at+jwt' });
  passed('refresh_rotates');
  step('reuse of the rotated refresh token');
  await expectOAuthError(client.refreshTokenGrant(pub, tokens.refresh_token), 'invalid_grant', 'reusing the old refresh token');
  passed('refresh_reuse_refused');
  // The contract: presenting a rotated token revokes the whole family.
  await expectOAuthError(
    client.refreshTokenGrant(pub, refreshed.refresh_token),
    'invalid_grant',
    'the newest refresh token after reuse was detected (family revoked)',
  );
  passed('refresh_family_revoked_on_reuse');

  // ---- A second authorization on the same browser session (SSO, no password) ----
  step('second authorize on the existing session');
  const verifier2 = client.randomPKCECodeVerifier();
  const state2 = client.randomState();
  const nonce2 = client.randomNonce();
  const second = await runInteraction(
    context,
    page,
    client.buildAuthorizationUrl(pub, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier2),
      code_challenge_method: 'S256',
      state: state2,
      nonce: nonce2,
    }).href,
    redirectUri,
    {},
  );
  check(!second.pages.includes('sign-in'), 'the browser session was not reused: the sign-in page was shown again');
  const tokens2 = await client.authorizationCodeGrant(pub, new URL(second.url), {
    pkceCodeVerifier: verifier2,
    expectedState: state2,
    expectedNonce: nonce2,
    idTokenExpected: true,
  });
  checkEqual(tokens2.claims().sub, claims.sub, 'same sub on the second sign-in');
  check(typeof tokens2.refresh_token === 'string', 'second flow: refresh token issued');
  passed('sso_session_reused');

  // ---- Pushed authorization request (RFC 9126) on the same session ----
  step('pushed authorization request');
  checkEqual(meta.pushed_authorization_request_endpoint, `${issuer}/oauth/par`, 'discovery pushed_authorization_request_endpoint');
  const parVerifier = client.randomPKCECodeVerifier();
  const parState = client.randomState();
  const parNonce = client.randomNonce();
  const parUrl = await client.buildAuthorizationUrlWithPAR(pub, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(parVerifier),
    code_challenge_method: 'S256',
    state: parState,
    nonce: parNonce,
  });
  const parParams = [...parUrl.searchParams.keys()].sort().join(',');
  checkEqual(parParams, 'client_id,request_uri', 'PAR: only client_id and request_uri in the authorization URL');
  check(
    parUrl.searchParams.get('request_uri').startsWith('urn:ietf:params:oauth:request_uri:'),
    `PAR request_uri: ${parUrl.searchParams.get('request_uri')}`,
  );
  const pushed = await runInteraction(context, page, parUrl.href, redirectUri, {});
  const parTokens = await client.authorizationCodeGrant(pub, new URL(pushed.url), {
    pkceCodeVerifier: parVerifier,
    expectedState: parState,
    expectedNonce: parNonce,
    idTokenExpected: true,
  });
  checkEqual(parTokens.claims().sub, claims.sub, 'PAR: same sub');
  passed('pushed_authorization_request');

  // ---- DPoP (RFC 9449) with openid-client's DPoP handle: a proof at PAR binds the code, the
  // tokens are bound to the key, UserInfo takes them with proofs, the refresh token follows the
  // key. The deployment requires server nonces: the handle learns them from use_dpop_nonce. ----
  step('DPoP: PAR, code, UserInfo and refresh with a DPoP handle');
  check(meta.dpop_signing_alg_values_supported?.includes('ES256'), `dpop_signing_alg_values_supported: ${meta.dpop_signing_alg_values_supported}`);
  const dpopKeys = await client.randomDPoPKeyPair('ES256');
  const DPoP = client.getDPoPHandle(pub, dpopKeys);
  const jkt = await jose.calculateJwkThumbprint(await jose.exportJWK(dpopKeys.publicKey));
  const dpopVerifier = client.randomPKCECodeVerifier();
  const dpopState = client.randomState();
  const dpopNonce = client.randomNonce();
  const dpopUrl = await client.buildAuthorizationUrlWithPAR(
    pub,
    {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(dpopVerifier),
      code_challenge_method: 'S256',
      state: dpopState,
      nonce: dpopNonce,
    },
    { DPoP },
  );
  const dpopDone = await runInteraction(context, page, dpopUrl.href, redirectUri, {});
  const dpopTokens = await client.authorizationCodeGrant(
    pub,
    new URL(dpopDone.url),
    { pkceCodeVerifier: dpopVerifier, expectedState: dpopState, expectedNonce: dpopNonce, idTokenExpected: true },
    undefined,
    { DPoP },
  );
  checkEqual(dpopTokens.token_type?.toLowerCase(), 'dpop', 'DPoP: token_type');
  const dpopAt = await jose.jwtVerify(dpopTokens.access_token, jwks, { issuer, typ: 'at+jwt' });
  checkEqual(dpopAt.payload.cnf?.jkt, jkt, 'DPoP: cnf.jkt is the thumbprint of the handle key');
  passed('dpop_code_exchange');
  const dpopInfo = await client.fetchUserInfo(pub, dpopTokens.access_token, claims.sub, { DPoP });
  checkEqual(dpopInfo.sub, claims.sub, 'DPoP: UserInfo sub');
  let bearerRefused = false;
  try {
    await client.fetchUserInfo(pub, dpopTokens.access_token, claims.sub);
  } catch {
    bearerRefused = true;
  }
  check(bearerRefused, 'DPoP: the bound access token was accepted as a bearer token');
  passed('dpop_userinfo');
  const otherDPoP = client.getDPoPHandle(pub, await client.randomDPoPKeyPair('ES256'));
  await expectOAuthError(
    client.refreshTokenGrant(pub, dpopTokens.refresh_token, undefined, { DPoP: otherDPoP }),
    'invalid_dpop_proof',
    'DPoP: refreshing with another key',
  );
  const dpopRefreshed = await client.refreshTokenGrant(pub, dpopTokens.refresh_token, undefined, { DPoP });
  checkEqual(dpopRefreshed.token_type?.toLowerCase(), 'dpop', 'DPoP: refreshed token_type');
  const refreshedAt = await jose.jwtVerify(dpopRefreshed.access_token, jwks, { issuer, typ: 'at+jwt' });
  checkEqual(refreshedAt.payload.cnf?.jkt, jkt, 'DPoP: the refreshed token keeps the key');
  passed('dpop_refresh_bound');

  // ---- Device authorization grant (RFC 8628), approved by the signed-in person ----
  step('device authorization grant');
  checkEqual(meta.device_authorization_endpoint, `${issuer}/oauth/device/code`, 'discovery device_authorization_endpoint');
  check(
    meta.grant_types_supported?.includes('urn:ietf:params:oauth:grant-type:device_code'),
    'grant_types_supported lists the device grant',
  );
  const device = await client.initiateDeviceAuthorization(pub, { scope });
  check(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/.test(device.user_code), `user_code: ${device.user_code}`);
  checkEqual(device.verification_uri, `${issuer}/oauth/device/verify`, 'verification_uri');
  // openid-client polls at the interval (and honours slow_down) while the person approves.
  const polling = client.pollDeviceAuthorizationGrant(pub, device);
  polling.catch(() => {});
  // A tab of its own (same browser, same session): the previous one may still be finishing
  // its redirect to the client.
  const devicePage = await context.newPage();
  await devicePage.goto(device.verification_uri_complete);
  checkEqual(await devicePage.locator('input[name="user_code"]').inputValue(), device.user_code, 'the code is filled in');
  await Promise.all([
    devicePage.waitForURL((url) => url.pathname === '/auth/consent'),
    devicePage.locator('form button[type="submit"]').first().click(),
  ]);
  const consentText = await devicePage.locator('body').innerText();
  check(consentText.includes(device.user_code), 'the consent page shows the device code again');
  const approved = await runInteraction(context, devicePage, null, `${issuer}/oauth/device/verify?result=approved`, {});
  check(approved.pages.includes('consent'), `the device consent was not shown (pages: ${approved.pages})`);
  const deviceTokens = await polling;
  await devicePage.close();
  checkEqual(deviceTokens.claims().sub, claims.sub, 'device grant: same sub');
  check(typeof deviceTokens.refresh_token === 'string', 'device grant: a refresh token for offline_access');
  const deviceId = await jose.jwtVerify(deviceTokens.id_token, jwks, { issuer, audience: clientId });
  checkEqual(deviceId.payload.sub, claims.sub, 'device grant: jose verifies the ID token');
  const deviceAccess = await jose.jwtVerify(deviceTokens.access_token, jwks, { issuer, audience: apiAudience });
  checkEqual(deviceAccess.payload.client_id, clientId, 'device grant: access token client_id');
  // The device code is spent: polling it again is refused.
  await expectOAuthError(
    client.pollDeviceAuthorizationGrant(pub, { ...device, interval: 1 }),
    'invalid_grant',
    'a redeemed device code',
  );
  passed('device_authorization_grant');

  // ---- CIBA, poll mode (confidential client), approved on the hosted page ----
  step('client-initiated backchannel authentication');
  checkEqual(meta.backchannel_authentication_endpoint, `${issuer}/bc-authorize`, 'discovery backchannel_authentication_endpoint');
  checkEqual(JSON.stringify(meta.backchannel_token_delivery_modes_supported), '["poll"]', 'poll mode only');
  const ciba = await client.initiateBackchannelAuthentication(conf, {
    scope: 'openid profile',
    login_hint: email,
    binding_message: 'W4SCT',
  });
  check(typeof ciba.auth_req_id === 'string' && ciba.auth_req_id.startsWith('ar_'), `auth_req_id: ${ciba.auth_req_id}`);
  const cibaPolling = client.pollBackchannelAuthenticationGrant(conf, ciba);
  cibaPolling.catch(() => {});
  const cibaPage = await context.newPage();
  await cibaPage.goto(`${issuer}/auth/ciba`);
  check((await cibaPage.locator('body').innerText()).includes('W4SCT'), 'the approval page shows the binding message');
  await Promise.all([
    cibaPage.waitForURL((url) => url.search.includes('result=approved')),
    cibaPage.locator('form button[name="decision"][value="approve"]').click(),
  ]);
  await cibaPage.close();
  const cibaTokens = await cibaPolling;
  checkEqual(cibaTokens.claims().sub, claims.sub, 'CIBA: same sub');
  const cibaId = await jose.jwtVerify(cibaTokens.id_token, jwks, { issuer, audience: confidentialId });
  checkEqual(cibaId.payload.sub, claims.sub, 'CIBA: jose verifies the ID token');
  await expectOAuthError(
    client.initiateBackchannelAuthentication(conf, { scope: 'openid', login_hint: email, id_token_hint: 'x' }),
    'invalid_request',
    'CIBA: id_token_hint is rejected',
  );
  passed('ciba_poll');

  // ---- CIBA approved by the person's own app with a token for them (ADR 0010) ----
  step('CIBA approved with a token for the person');
  const approver = new client.Configuration(meta, env('APPROVER_CLIENT_ID'), undefined, client.None());
  client.allowInsecureRequests(approver);
  const { tokens: approverTokens } = await codeFlow(
    context,
    approver,
    redirectUri,
    { scope: 'openid ciba:approve' },
    { login: { email, password }, idToken: false },
  );
  const approverAccess = await jose.jwtVerify(approverTokens.access_token, jwks, { issuer, audience: `${issuer}/api/v1` });
  check(approverAccess.payload.scope.split(' ').includes('ciba:approve'), `approver scope: ${approverAccess.payload.scope}`);
  checkEqual(approverAccess.payload.sid, cibaId.payload.sid, 'the approver token names the browser session (sid)');
  const byToken = await client.initiateBackchannelAuthentication(conf, {
    scope: 'openid',
    login_hint: email,
    binding_message: 'K7QX2',
  });
  const secondPolling = client.pollBackchannelAuthenticationGrant(conf, byToken);
  secondPolling.catch(() => {});
  const requestsUrl = `${issuer}/api/v1/identity/ciba/requests`;
  const pendingList = await client.fetchProtectedResource(approver, approverTokens.access_token, new URL(requestsUrl), 'GET');
  checkEqual(pendingList.status, 200, 'the person\'s app lists the pending requests');
  const waiting = (await pendingList.json()).requests.find((r) => r.binding_message === 'K7QX2');
  check(waiting !== undefined, 'the new request is listed for the person\'s app');
  const decided = await client.fetchProtectedResource(
    approver,
    approverTokens.access_token,
    new URL(`${requestsUrl}/${waiting.id}/approve`),
    'POST',
  );
  checkEqual(decided.status, 200, 'the person\'s app approves with its token');
  checkEqual((await decided.json()).status, 'approved', 'approved');
  const secondTokens = await secondPolling;
  const secondId = await jose.jwtVerify(secondTokens.id_token, jwks, { issuer, audience: confidentialId });
  checkEqual(secondId.payload.sub, claims.sub, 'CIBA by token: same sub');
  checkEqual(secondId.payload.sid, approverAccess.payload.sid, 'CIBA by token: the approval carries the token\'s session');
  passed('ciba_token_approval');

  // ---- Signing in to an organization (the `organization` authorization parameter) ----
  step('authorize in organization acme');
  const organizationId = env('ORGANIZATION_ID');
  const orgVerifier = client.randomPKCECodeVerifier();
  const orgState = client.randomState();
  const orgNonce = client.randomNonce();
  const inOrg = await runInteraction(
    context,
    page,
    client.buildAuthorizationUrl(pub, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(orgVerifier),
      code_challenge_method: 'S256',
      state: orgState,
      nonce: orgNonce,
      organization: 'acme',
    }).href,
    redirectUri,
    {},
  );
  const orgTokens = await client.authorizationCodeGrant(pub, new URL(inOrg.url), {
    pkceCodeVerifier: orgVerifier,
    expectedState: orgState,
    expectedNonce: orgNonce,
    idTokenExpected: true,
  });
  const orgAccess = await jose.jwtVerify(orgTokens.access_token, jwks, { issuer, typ: 'at+jwt', audience: apiAudience });
  checkEqual(orgAccess.payload.org_id, organizationId, 'access token org_id');
  checkEqual(orgAccess.payload.org, organizationId, 'access token org');
  checkEqual(orgAccess.payload.org_slug, 'acme', 'access token org_slug');
  checkEqual(orgTokens.claims().org_id, organizationId, 'ID token org_id');
  const orgRefreshed = await client.refreshTokenGrant(pub, orgTokens.refresh_token);
  const orgRefreshedAccess = jose.decodeJwt(orgRefreshed.access_token);
  checkEqual(orgRefreshedAccess.org_id, organizationId, 'refreshed access token org_id');
  check(jose.decodeJwt(tokens2.access_token).org_id === undefined, 'no org_id without the parameter');
  passed('organization_claims');

  step('authorize in organization globex (not a member)');
  const foreignState = client.randomState();
  const foreignVerifier = client.randomPKCECodeVerifier();
  const foreign = await runInteraction(
    context,
    page,
    client.buildAuthorizationUrl(pub, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(foreignVerifier),
      code_challenge_method: 'S256',
      state: foreignState,
      nonce: client.randomNonce(),
      organization: 'globex',
    }).href,
    redirectUri,
    {},
  );
  try {
    await client.authorizationCodeGrant(pub, new URL(foreign.url), {
      pkceCodeVerifier: foreignVerifier,
      expectedState: foreignState,
    });
    throw new CheckFailed('a code was issued for an organization the person is not in');
  } catch (error) {
    if (error instanceof CheckFailed) throw error;
    checkEqual(error?.error, 'access_denied', `openid-client's reading of the refusal (${error?.message})`);
  }
  passed('organization_not_a_member');

  // ---- An API's permissions through roles (RFC 8707 resource), enforced by svc-sdk ----
  step('authorize in acme for the invoices API');
  // codeFlow uses a fresh tab of the same browser session: the refusal above may still be
  // failing to load the (unserved) client in the old one, which would interrupt a navigation.
  const invoicesApi = env('INVOICES_API');
  const resourceServer = env('RESOURCE_SERVER_URL');
  const otherOrganizationId = env('OTHER_ORGANIZATION_ID');
  const { tokens: apiTokens } = await codeFlow(
    context,
    pub,
    redirectUri,
    { scope: `${scope} invoices:read invoices:write invoices:void`, organization: 'acme', resource: invoicesApi },
    { grant: { resource: invoicesApi } },
  );
  const apiClaims = jose.decodeJwt(apiTokens.access_token);
  checkEqual(apiClaims.aud, invoicesApi, 'invoices token aud');
  const apiAccess = await jose.jwtVerify(apiTokens.access_token, jwks, { issuer, typ: 'at+jwt', audience: invoicesApi });
  checkEqual(apiAccess.payload.org_id, organizationId, 'invoices token org_id');
  // The member role holds invoices:read and the accountant role invoices:write; nobody gave
  // this person invoices:void, so it is dropped, not refused.
  const granted = String(apiAccess.payload.scope).split(' ').sort().join(' ');
  checkEqual(granted, 'email invoices:read invoices:write offline_access openid profile', 'invoices token scope');
  checkEqual(apiTokens.scope?.split(' ').sort().join(' '), granted, 'token response scope');
  passed('resource_permissions_from_roles');

  step('call the svc-sdk sample resource server');
  const listed = await client.fetchProtectedResource(
    pub, apiTokens.access_token, new URL(`${resourceServer}/orgs/${organizationId}/invoices`), 'GET');
  checkEqual(listed.status, 200, 'GET invoices of acme');
  checkEqual((await listed.json()).organization, organizationId, 'the invoices of acme');
  const challenged = async (method, path, what) => {
    try {
      await client.fetchProtectedResource(pub, apiTokens.access_token, new URL(`${resourceServer}${path}`), method);
    } catch (error) {
      check(error?.response?.status === 403, `${what}: expected 403, got ${error?.response?.status} (${error?.message})`);
      return error.cause?.[0]?.parameters ?? {};
    }
    throw new CheckFailed(`${what}: the resource server accepted the token`);
  };
  const voided = await challenged('POST', `/orgs/${organizationId}/invoices/inv_1/void`, 'void without invoices:void');
  checkEqual(voided.error, 'insufficient_scope', 'void refused for the missing permission');
  checkEqual(voided.scope, 'invoices:void', 'the challenge names the permission');
  await challenged('GET', `/orgs/${otherOrganizationId}/invoices`, 'another organization');
  const apiRefreshed = await client.refreshTokenGrant(pub, apiTokens.refresh_token);
  const again = await client.fetchProtectedResource(
    pub, apiRefreshed.access_token, new URL(`${resourceServer}/orgs/${organizationId}/invoices`), 'GET');
  checkEqual(again.status, 200, 'GET invoices with the refreshed token');
  passed('resource_server_enforces_permissions');

  // ---- Introspection (confidential client) and revocation ----
  step('tokenIntrospection (active)');
  const live = await client.tokenIntrospection(conf, tokens2.access_token);
  checkEqual(live.active, true, 'introspection of a live access token');
  checkEqual(live.client_id, clientId, 'introspection client_id');
  checkEqual(live.aud, apiAudience, 'introspection aud');
  checkEqual(live.sub, claims.sub, 'introspection sub');
  passed('introspection_active');

  // ---- Token exchange (RFC 8693): a first-party service behind the API acts for the person ----
  step('genericGrantRequest: token exchange');
  const exchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange';
  const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
  check(meta.grant_types_supported?.includes(exchangeGrant), 'discovery lists the token exchange grant');
  const gatewayId = env('GATEWAY_CLIENT_ID');
  const gateway = await client.discovery(
    new URL(issuer),
    gatewayId,
    undefined,
    client.ClientSecretBasic(env('GATEWAY_CLIENT_SECRET')),
    insecure,
  );
  const subjectToken = tokens2.access_token;
  const subjectClaims = jose.decodeJwt(subjectToken);
  const exchanged = await client.genericGrantRequest(gateway, exchangeGrant, {
    subject_token: subjectToken,
    subject_token_type: accessTokenType,
  });
  checkEqual(exchanged.issued_token_type, accessTokenType, 'token exchange: issued_token_type');
  check(exchanged.refresh_token === undefined, 'token exchange: no refresh token');
  const ex = await jose.jwtVerify(exchanged.access_token, jwks, { issuer, audience: apiAudience, typ: 'at+jwt' });
  checkEqual(ex.payload.act?.sub, gatewayId, 'token exchange: act names the gateway');
  checkEqual(ex.payload.client_id, gatewayId, 'token exchange: issued to the gateway');
  checkEqual(ex.payload.subject_type, 'human', 'token exchange: still the person');
  check(ex.payload.exp <= subjectClaims.exp, 'token exchange: never outlives the subject token');
  passed('token_exchange_act');
  await expectOAuthError(
    client.genericGrantRequest(gateway, exchangeGrant, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      scope: `${subjectClaims.scope} admin:everything`,
    }),
    'invalid_scope',
    'token exchange: a wider scope',
  );
  await expectOAuthError(
    client.genericGrantRequest(gateway, exchangeGrant, { subject_token: 'garbage', subject_token_type: accessTokenType }),
    'invalid_request',
    'token exchange: a garbage subject token',
  );
  passed('token_exchange_never_widens');

  step('tokenRevocation (access token)');
  await client.tokenRevocation(pub, tokens2.access_token, { token_type_hint: 'access_token' });
  const dead = await client.tokenIntrospection(conf, tokens2.access_token);
  checkEqual(dead.active, false, 'introspection after revoking the access token');
  passed('revoked_access_token_inactive');

  step('tokenRevocation (refresh token)');
  await client.tokenRevocation(pub, tokens2.refresh_token, { token_type_hint: 'refresh_token' });
  await expectOAuthError(client.refreshTokenGrant(pub, tokens2.refresh_token), 'invalid_grant', 'refresh after revocation');
  passed('revoked_refresh_token_refused');

  // ---- RP-initiated logout, then prompt=none finds no session ----
  step('end session');
  const logoutState = client.randomState();
  const endSession = client.buildEndSessionUrl(pub, {
    id_token_hint: tokens2.id_token,
    post_logout_redirect_uri: postLogoutUri,
    state: logoutState,
  });
  const logout = await runInteraction(context, page, endSession.href, postLogoutUri, {});
  const landed = new URL(logout.url);
  checkEqual(`${landed.origin}${landed.pathname}`, postLogoutUri, 'post-logout redirect target');
  checkEqual(landed.searchParams.get('state'), logoutState, 'state on the post-logout redirect');
  passed('end_session');

  step('prompt=none after logout');
  const verifier3 = client.randomPKCECodeVerifier();
  const state3 = client.randomState();
  const silent = await runInteraction(
    context,
    page,
    client.buildAuthorizationUrl(pub, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier3),
      code_challenge_method: 'S256',
      state: state3,
      nonce: client.randomNonce(),
      prompt: 'none',
    }).href,
    redirectUri,
    {},
  );
  const silentUrl = new URL(silent.url);
  checkEqual(silentUrl.searchParams.get('error'), 'login_required', 'prompt=none after logout');
  checkEqual(silentUrl.searchParams.get('state'), state3, 'state on the error redirect');
  checkEqual(silentUrl.searchParams.get('iss'), issuer, 'iss on the error redirect');
  // openid-client's own processing of the error response (it validates iss and state first).
  try {
    await client.authorizationCodeGrant(pub, silentUrl, { pkceCodeVerifier: verifier3, expectedState: state3 });
    throw new CheckFailed('openid-client accepted an error response');
  } catch (error) {
    if (error instanceof CheckFailed) throw error;
    checkEqual(error?.error, 'login_required', `openid-client's reading of the error response (${error?.message})`);
  }
  passed('prompt_none_login_required_after_logout');

  // ---- Dynamic client registration (RFC 7591), a code flow as that client, RFC 7592 ----
  step('dynamicClientRegistration');
  check(
    meta.registration_endpoint === `${issuer}/oauth/register`,
    `discovery registration_endpoint: ${meta.registration_endpoint}`,
  );
  const dcr = await client.dynamicClientRegistration(
    new URL(issuer),
    {
      client_name: 'Interop DCR client (openid-client)',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid profile email',
    },
    undefined,
    insecure,
  );
  const registered = dcr.clientMetadata();
  check(typeof registered.client_secret === 'string', 'DCR: a client secret was issued');
  check(
    typeof registered.registration_access_token === 'string' && registered.registration_access_token.startsWith('rat_'),
    'DCR: a registration access token was issued',
  );
  checkEqual(registered.registration_client_uri, `${issuer}/oauth/register/${registered.client_id}`, 'DCR registration_client_uri');
  passed('dynamic_client_registration');

  step('code flow as the registered client');
  const dcrFlow = await codeFlow(context, dcr, redirectUri, { scope: 'openid profile' }, { login: { email, password } });
  check(dcrFlow.pages.includes('consent'), `a registered client is third-party: consent was not asked (pages: ${dcrFlow.pages})`);
  const dcrTokens = dcrFlow.tokens;
  checkEqual(dcrTokens.claims().aud, registered.client_id, 'ID token audience is the registered client');
  passed('registered_client_code_flow');

  step('RFC 7592 read and delete');
  const manage = (method) =>
    fetch(registered.registration_client_uri, {
      method,
      headers: { authorization: `Bearer ${registered.registration_access_token}` },
    });
  const read = await manage('GET');
  checkEqual(read.status, 200, 'RFC 7592 read');
  checkEqual((await read.json()).client_id, registered.client_id, 'RFC 7592 read client_id');
  checkEqual((await manage('DELETE')).status, 204, 'RFC 7592 delete');
  checkEqual((await manage('GET')).status, 401, 'RFC 7592 read after delete');
  passed('registration_read_and_deleted');

  // ---- Client ID metadata documents: the client is known by the URL of its document ----
  step('client ID metadata document: code flow and refresh');
  const documentClientId = env('DOCUMENT_CLIENT_ID');
  check(meta.client_id_metadata_document_supported === true, 'discovery client_id_metadata_document_supported');
  const byDocument = new client.Configuration(meta, documentClientId, undefined, client.None());
  client.allowInsecureRequests(byDocument);
  // openid-client itself requires the ID token's aud to hold the client_id (the URL).
  const documentFlow = await codeFlow(
    context,
    byDocument,
    redirectUri,
    { scope: 'openid profile offline_access' },
    { login: { email, password } },
  );
  check(documentFlow.pages.includes('consent'), `a document client is third-party: consent was not asked (pages: ${documentFlow.pages})`);
  const documentTokens = documentFlow.tokens;
  checkEqual(documentTokens.claims().aud, documentClientId, 'ID token audience is the document URL');
  const documentAccess = jose.decodeJwt(documentTokens.access_token);
  checkEqual(documentAccess.client_id, documentClientId, 'access token client_id is the document URL');
  check(typeof documentTokens.refresh_token === 'string', 'a refresh token for the document client');
  const documentRefreshed = await client.refreshTokenGrant(byDocument, documentTokens.refresh_token);
  check(documentRefreshed.refresh_token !== documentTokens.refresh_token, 'the document client\'s refresh token rotates');
  passed('client_id_metadata_document');

  return {
    issuer,
    checks,
    id_token_alg: id.protectedHeader.alg,
    access_token_alg: at.protectedHeader.alg,
    access_token_aud: at.payload.aud,
    exchanged_access_token: exchanged.access_token,
    hosted_pages: first.pages,
    end_session_pages: logout.pages,
  };
}

await runMain('openid-client', main, () => closeBrowser());

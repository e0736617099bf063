// Passkeys end to end in a real browser: Chromium's own WebAuthn client (navigator.credentials,
// the origin and RP ID checks, CBOR/COSE, the client data) talking to the DevTools virtual
// authenticator (lib/webauthn.mjs), svc's hosted pages and their inline glue script, and
// openid-client (a certified relying party) checking the ID token of the passkey sign-in.
// Nothing of svc's own WebAuthn code runs on the browser side, so this proves the glue and the
// server agree with a real WebAuthn client: the encodings of the options and the answers, the
// CSP that has to let the glue run and fetch its options, the ceremony cookie, and the RP ID
// (`localhost`: WebAuthn needs a secure context and a domain, so the browser reaches the service
// as http://localhost:PORT and the single-tenant issuer follows the Host).
//
// 1. Password sign-in, then /auth/account/passkeys: labels, the add form shown (JavaScript on),
//    the CSP allowing the inline glue by its hash (no 'unsafe-inline'), "Add a passkey" →
//    ?done=added, the name in the table, one resident credential for RP ID `localhost` on the
//    authenticator, the ceremony cookie HttpOnly and cleared after use.
// 2. Sign-out, then an authorization request with acr_values=urn:svc:aal2 (openid-client,
//    PKCE S256): the sign-in page's glue asks for a passkey at once (conditional mediation, the
//    address field's autofill) and the virtual authenticator answers with its only passkey, as a
//    person picking it would; consent; the code exchanged by openid-client: the ID token says
//    acr urn:svc:aal2, amr user + hwk|swk (never pwd).
// 3. The same with the "Sign in with a passkey" button: the authenticator does not answer by
//    itself while the page loads, so the autofill request stays pending (a person ignoring the
//    autofill); the click aborts it (AbortError) and asks modally. The sign-in page's labels,
//    CSP, `autocomplete="username webauthn"` and the interaction carried by the form; same sub,
//    the signature counter moved, "Last used" on the passkeys page.
// 4. The authenticator loses its credential: "Sign in with a passkey" fails in the browser
//    (NotAllowedError), the page shows its alert, nothing is posted, no session cookie.
// 5. JavaScript off: the passkey form stays hidden, the <noscript> hint shows, and the password
//    still signs in (acr urn:svc:aal1, amr pwd, same sub).
//
// Environment: ISSUER (http://localhost:PORT, the service's port), CLIENT_ID (a third-party
// public client: token_endpoint_auth_method none, consent shown), REDIRECT_URI, USER_EMAIL,
// USER_PASSWORD (a person without a passkey or second factor), CHROMIUM_PATH (default
// /usr/bin/chromium). The service runs with SVC_PASSKEY__ENABLED=true.
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" on stderr otherwise.
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import {
  alertText,
  checkLabels,
  describePage,
  routeClientOrigin,
  runInteraction,
  sessionCookie,
  watchClient,
} from '../lib/hosted.mjs';
import { VirtualAuthenticator, traceWebAuthn } from '../lib/webauthn.mjs';

const AAL1 = 'urn:svc:aal1';
const AAL2 = 'urn:svc:aal2';
const PASSKEY_NAME = 'Chromium virtual key';
/** How long a ceremony may take in the browser (it is instant with a virtual authenticator). */
const CEREMONY_TIMEOUT_MS = 20_000;

const insecure = { execute: [client.allowInsecureRequests] };
let closeBrowser = async () => {};

/** Records the HTML documents and the WebAuthn options answers the service sends `context`. */
function recordResponses(context, issuer) {
  const seen = { documents: [], options: [] };
  context.on('response', async (response) => {
    if (!response.url().startsWith(`${issuer}/`)) return;
    const request = response.request();
    const path = new URL(response.url()).pathname;
    if (request.resourceType() === 'document' && response.status() === 200) {
      seen.documents.push({ path, headers: response.headers() });
    } else if (path.endsWith('/options') && request.method() === 'POST') {
      const headers = await response.allHeaders().catch(() => ({}));
      seen.options.push({ path, status: response.status(), setCookie: headers['set-cookie'] ?? '' });
    }
  });
  return seen;
}

/**
 * The page's CSP (from its document response) allows each of its inline scripts by hash, and
 * never 'unsafe-inline'. Returns the script-src directive.
 */
async function checkScriptCsp(page, documents, path) {
  const doc = documents.findLast((d) => d.path === path);
  check(doc !== undefined, `no 200 document recorded for ${path}`);
  const csp = doc.headers['content-security-policy'] ?? '';
  check(!csp.includes('unsafe-inline'), `${path}: CSP allows 'unsafe-inline': ${csp}`);
  check(!csp.includes('unsafe-eval'), `${path}: CSP allows 'unsafe-eval': ${csp}`);
  const scriptSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src ')) ?? '';
  check(scriptSrc.includes("'sha256-"), `${path}: no script-src 'sha256-…' in the CSP: ${csp}`);
  const connectSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('connect-src ')) ?? '';
  check(/'self'/.test(connectSrc), `${path}: no connect-src 'self' for the options fetch: ${csp}`);
  const inline = await page.evaluate(() => [...document.querySelectorAll('script:not([src])')].map((s) => s.textContent));
  check(inline.length >= 1, `${path}: no inline script (the WebAuthn glue) on the page`);
  for (const text of inline) {
    const hash = `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
    check(scriptSrc.split(/\s+/).includes(hash), `${path}: inline script ${hash} not in ${scriptSrc}`);
  }
  return scriptSrc;
}

/** Every console line of `context` (CSP violations and script errors show up there). */
function recordConsole(context) {
  const lines = [];
  context.on('console', (message) => lines.push(`${message.type()}: ${message.text().trim()}`));
  context.on('weberror', (error) => lines.push(`pageerror: ${error.error().message}`));
  return lines;
}

/** The action that clicks the button named `name` (which must be there). */
function buttonClick(page, name) {
  return async () => {
    const button = page.getByRole('button', { name, exact: true });
    check((await button.count()) === 1, `no button "${name}" on ${await describePage(page)}`);
    await button.click();
  };
}

/**
 * Runs `action` (a click on a passkey form's button, or the navigation to a page whose glue
 * starts a ceremony by itself) and waits until the glue's ceremony ends one way or the other:
 * a navigation (the form was submitted; with `until`, one to a URL it accepts), the client's
 * redirect URI (`watch`), or the page's own error (`#webauthn-error` shown). Reports what
 * happened, the POSTs the page made, the WebAuthn calls and how long it took; a timeout fails
 * with the browser's side of the story.
 */
async function ceremony(page, action, where, { issuer, trace, consoleLines, watch = null, until = null }) {
  const started = Date.now();
  const posts = [];
  const onResponse = (response) => {
    const request = response.request();
    if (request.method() === 'POST' && response.url().startsWith(`${issuer}/`)) {
      posts.push(`POST ${new URL(response.url()).pathname} → ${response.status()}`);
    }
  };
  page.on('response', onResponse);
  const traceBefore = trace.length;
  const consoleBefore = consoleLines.length;
  const outcomes = [
    until
      ? page.waitForURL(until, { timeout: CEREMONY_TIMEOUT_MS }).then(() => ({ outcome: 'navigated', status: null }))
      : page
          .waitForNavigation({ timeout: CEREMONY_TIMEOUT_MS })
          .then((response) => ({ outcome: 'navigated', status: response?.status() ?? null })),
    page
      .locator('#webauthn-error')
      .waitFor({ state: 'visible', timeout: CEREMONY_TIMEOUT_MS })
      .then(() => ({ outcome: 'failed', status: null })),
  ];
  if (watch) outcomes.push(watch.promise.then(() => ({ outcome: 'client', status: null })));
  for (const o of outcomes) o.catch(() => {});
  await action();
  let result;
  try {
    result = await Promise.any(outcomes);
  } catch {
    throw new CheckFailed(
      `${where}: within ${CEREMONY_TIMEOUT_MS} ms neither a navigation nor the page's error; ` +
        `requests: [${posts.join(', ')}]; navigator.credentials: [${trace.slice(traceBefore).join(' | ')}]; ` +
        `console: [${consoleLines.slice(consoleBefore).join(' | ')}]; page: ${await describePage(page)}`,
    );
  } finally {
    page.off('response', onResponse);
  }
  if (result.outcome === 'navigated') await page.waitForLoadState('domcontentloaded').catch(() => {});
  return {
    ...result,
    posts,
    calls: trace.slice(traceBefore),
    console: consoleLines.slice(consoleBefore),
    ms: Date.now() - started,
  };
}

/** Waits (briefly) until the page's glue has made the WebAuthn call `line` (lib/webauthn.mjs). */
async function waitForCall(trace, from, line) {
  for (let waited = 0; !trace.slice(from).includes(line); waited += 50) {
    check(waited < CEREMONY_TIMEOUT_MS, `the page never made the call ${line}: [${trace.slice(from).join(' | ')}]`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Explains a ceremony that did not end as expected. */
function story(run) {
  return (
    `requests: [${run.posts.join(', ')}]; navigator.credentials: [${run.calls.join(' | ')}]; ` +
    `console: [${run.console.join(' | ')}]`
  );
}

/**
 * After a passkey sign-in `run` for an authorization request: the answer was accepted (303),
 * the consent page if any is answered, and the browser reaches the client. Returns the pages.
 */
async function passkeyToClient(context, page, watch, run, { issuer, redirectUri }, where) {
  check(run.outcome !== 'failed', `${where}: the passkey sign-in failed in the browser (${await alertText(page)}); ${story(run)}`);
  const posted = run.posts.find((p) => p.startsWith('POST /auth/passkey →'));
  check(posted === 'POST /auth/passkey → 303', `${where}: the passkey answer: ${posted ?? 'never posted'}; ${story(run)}`);
  let pages = [];
  if (watch.url === null) {
    const path = new URL(page.url()).pathname;
    check(
      path !== '/auth/passkey' && path !== '/auth/sign-in',
      `${where}: the passkey sign-in was refused: ${await describePage(page)} (alert "${await alertText(page)}"); ${story(run)}`,
    );
    pages = (await runInteraction(context, page, null, redirectUri)).pages;
  }
  watch.stop();
  check(watch.url !== null, `${where}: the browser never reached the client`);
  // The redirect to the (unserved) client ends in an error page: let that navigation finish
  // before the next one, which it would otherwise interrupt.
  await page
    .waitForURL((u) => !u.href.startsWith(`${issuer}/`), { timeout: 10_000, waitUntil: 'domcontentloaded' })
    .catch(() => {});
  check(!pages.includes('sign-in') && !pages.includes('second-factor'), `${where}: pages after the passkey: ${pages}`);
  const callback = new URL(watch.url);
  check(callback.searchParams.has('code'), `${where}: no code on the redirect: ${watch.url}`);
  const jar = await context.cookies(issuer);
  check(sessionCookie(jar) !== undefined, `${where}: no session cookie after the passkey sign-in: ${jar.map((c) => c.name)}`);
  return pages;
}

/** The ID token claims of a passkey sign-in: acr aal2, amr user + hwk|swk, never pwd. */
function passkeyClaims(claims, where) {
  check(typeof claims.sub === 'string' && claims.sub.length > 0, `${where}: ID token sub: ${claims.sub}`);
  checkEqual(claims.acr, AAL2, `${where}: ID token acr after a passkey sign-in`);
  const amr = claims.amr;
  check(Array.isArray(amr), `${where}: ID token amr is not an array: ${JSON.stringify(amr)}`);
  check(amr.includes('user'), `${where}: ID token amr without "user": ${JSON.stringify(amr)}`);
  check(amr.includes('hwk') || amr.includes('swk'), `${where}: ID token amr without "hwk"/"swk": ${JSON.stringify(amr)}`);
  check(!amr.includes('pwd'), `${where}: ID token amr says "pwd" for a passkey sign-in: ${JSON.stringify(amr)}`);
  check(Number.isInteger(claims.auth_time), `${where}: ID token auth_time: ${claims.auth_time}`);
  return claims;
}

/** Signs in with the password on the bare sign-in page (no authorization request). */
async function signInWithPassword(page, issuer, email, password) {
  await page.goto(`${issuer}/auth/sign-in`);
  const form = page.locator('form[method="post" i]', { has: page.locator('input[name="password"]') });
  await form.locator('input[name="email"]').fill(email);
  await form.locator('input[name="password"]').fill(password);
  await Promise.all([page.waitForNavigation({ timeout: 30_000 }), form.locator('button[type="submit"]').first().click()]);
  await page.waitForLoadState('domcontentloaded');
  checkEqual(new URL(page.url()).pathname, '/auth/account', `after the password (${await alertText(page)}) the browser is on`);
}

/** Signs out with the account's sign-out form; the session cookie is gone afterwards. */
async function signOut(context, page, issuer) {
  await page.goto(`${issuer}/auth/sign-out`);
  const button = page.locator('form[action="/auth/sign-out"] button[type="submit"]');
  check((await button.count()) === 1, `no sign-out form on ${await describePage(page)}`);
  await Promise.all([page.waitForNavigation({ timeout: 30_000 }), button.click()]);
  await page.waitForLoadState('domcontentloaded');
  checkEqual(new URL(page.url()).pathname, '/auth/sign-out', 'after signing out the browser is on');
  const jar = await context.cookies(issuer);
  check(sessionCookie(jar) === undefined, `a session cookie after signing out: ${jar.map((c) => c.name)}`);
}

/** An authorization request of openid-client (PKCE S256, state, nonce) and what checks its answer. */
async function authorization(rp, redirectUri, extra = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(rp, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return {
    url: url.href,
    exchange: async (callbackUrl) => {
      const callback = new URL(callbackUrl);
      check(!callback.searchParams.has('error'), `authorization error: ${callback.search}`);
      const tokens = await client.authorizationCodeGrant(rp, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      return tokens.claims();
    },
  };
}

async function main(step) {
  const issuer = env('ISSUER');
  const clientId = env('CLIENT_ID');
  const redirectUri = env('REDIRECT_URI');
  const email = env('USER_EMAIL');
  const password = env('USER_PASSWORD');
  const checks = {};
  const passed = (name) => {
    checks[name] = true;
  };
  checkEqual(new URL(issuer).hostname, 'localhost', 'the host of ISSUER (WebAuthn needs a domain RP ID)');

  // ---- Discovery at the localhost issuer ----
  step('discovery at the localhost issuer');
  const rp = await client.discovery(new URL(issuer), clientId, undefined, client.None(), insecure);
  const meta = rp.serverMetadata();
  checkEqual(meta.issuer, issuer, 'discovery issuer (derived from the Host)');
  check(meta.acr_values_supported?.includes(AAL2), `acr_values_supported: ${JSON.stringify(meta.acr_values_supported)}`);
  passed('discovery_localhost_issuer');

  step('launch chromium with a virtual authenticator');
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext();
  await routeClientOrigin(context, redirectUri);
  const seen = recordResponses(context, issuer);
  const consoleLines = recordConsole(context);
  const trace = await traceWebAuthn(context);
  const page = await context.newPage();
  const authenticator = await VirtualAuthenticator.attach(context, page);
  const io = { issuer, trace, consoleLines };

  // ---- Register a passkey from the account page ----
  step('sign in with the password');
  await signInWithPassword(page, issuer, email, password);

  step('passkeys page');
  const shown = await page.goto(`${issuer}/auth/account/passkeys`);
  checkEqual(shown?.status(), 200, 'GET /auth/account/passkeys');
  const labelled = await checkLabels(page, 'the passkeys page');
  check(labelled.includes('name'), `passkeys page inputs: ${labelled}`);
  checkEqual(await page.getByLabel('Passkey name', { exact: true }).getAttribute('id'), 'passkey-name', 'the id of the input labelled "Passkey name"');
  passed('passkeys_page_labels');
  const addForm = page.locator('form[data-webauthn="create"]');
  checkEqual(await addForm.count(), 1, 'forms data-webauthn="create" on the passkeys page');
  check(await addForm.isVisible(), `the add form is hidden with JavaScript on (glue blocked?): console ${consoleLines.join(' | ')}`);
  passed('add_form_shown_with_javascript');
  const passkeysScriptSrc = await checkScriptCsp(page, seen.documents, '/auth/account/passkeys');
  passed('csp_allows_glue_by_hash');

  step('add a passkey');
  await page.getByLabel('Passkey name', { exact: true }).fill(PASSKEY_NAME);
  const registration = await ceremony(page, buttonClick(page, 'Add a passkey'), 'Add a passkey', io);
  check(registration.outcome === 'navigated', `Add a passkey failed in the browser (${await alertText(page)}); ${story(registration)}`);
  const added = new URL(page.url());
  check(
    added.pathname === '/auth/account/passkeys' && added.searchParams.get('done') === 'added',
    `Add a passkey ended on ${await describePage(page)} (status ${registration.status}, alert "${await alertText(page)}"); ${story(registration)}`,
  );
  checkEqual(
    registration.posts.join(', '),
    'POST /auth/account/passkeys/options → 200, POST /auth/account/passkeys → 303',
    'the requests of a registration',
  );
  passed('passkey_registered');
  const names = await page.locator('table input[name="name"]').evaluateAll((inputs) => inputs.map((i) => i.value));
  checkEqual(JSON.stringify(names), JSON.stringify([PASSKEY_NAME]), 'the passkeys listed in the table');
  const row = page.locator('table tbody tr').first();
  const kind = (await row.locator('td').nth(1).innerText()).trim();
  const usedBefore = (await row.locator('td').nth(3).innerText()).trim();
  passed('passkey_listed');

  const held = await authenticator.credentials();
  checkEqual(held.length, 1, 'credentials on the virtual authenticator');
  checkEqual(held[0].rpId, 'localhost', 'the RP ID of the credential');
  checkEqual(held[0].isResidentCredential, true, 'a discoverable (resident) credential');
  check(typeof held[0].userHandle === 'string' && held[0].userHandle.length > 0, 'the credential has a user handle');
  passed('authenticator_holds_resident_credential');

  const registerOptions = seen.options.filter((o) => o.path === '/auth/account/passkeys/options');
  check(registerOptions.length >= 1, 'no options answer recorded for the registration');
  check(
    /(^|\n)svc_webauthn=wan_c_[^\n]*HttpOnly/i.test(registerOptions.at(-1).setCookie),
    `the ceremony cookie of the options answer: ${registerOptions.at(-1).setCookie}`,
  );
  const leftover = (await context.cookies(issuer)).filter((c) => c.name.endsWith('svc_webauthn'));
  checkEqual(leftover.length, 0, 'ceremony cookies left after the registration');
  passed('ceremony_cookie_httponly_single_use');

  // ---- Sign out, then the passkey offered in the address field's autofill ----
  step('sign out');
  await signOut(context, page, issuer);
  passed('signed_out');

  // Conditional mediation: the glue asks for a passkey as soon as the sign-in page loads, and
  // Chromium's virtual authenticator answers it with its only passkey, as a person picking it
  // from the autofill of the address field would: no click, no address, no password.
  step('authorization request (acr_values=urn:svc:aal2): passkey from the autofill');
  const counterBefore = held[0].signCount;
  const autofill = await authorization(rp, redirectUri, { acr_values: AAL2 });
  const autofillWatch = await watchClient(context, redirectUri);
  const autofillRun = await ceremony(page, () => page.goto(autofill.url, { waitUntil: 'commit' }), 'the autofill passkey sign-in', {
    ...io,
    watch: autofillWatch,
    until: (u) => u.pathname === '/auth/consent' || u.pathname === '/auth/passkey',
  });
  const autofillPages = await passkeyToClient(context, page, autofillWatch, autofillRun, { issuer, redirectUri }, 'autofill');
  check(
    autofillRun.calls.includes('get(conditional) → public-key'),
    `the autofill sign-in was not the conditional request: ${story(autofillRun)}`,
  );
  passed('passkey_autofill_sign_in');

  step('authorizationCodeGrant (openid-client), autofill');
  const autofillClaims = passkeyClaims(await autofill.exchange(autofillWatch.url), 'autofill');
  passed('id_token_aal2_autofill');

  // ---- The "Sign in with a passkey" button ----
  // The authenticator does not answer by itself while the page loads, so the autofill request
  // stays pending (a person ignoring the autofill); the click aborts it and asks modally.
  step('sign out, and a sign-in page whose autofill request stays pending');
  await signOut(context, page, issuer);
  await authenticator.setPresence(false);
  const buttonFlow = await authorization(rp, redirectUri, { acr_values: AAL2 });
  const buttonWatch = await watchClient(context, redirectUri);
  const calledBefore = trace.length;
  await page.goto(buttonFlow.url);
  await waitForCall(trace, calledBefore, 'get(conditional) called');
  await new Promise((resolve) => setTimeout(resolve, 300)); // the request reaches the authenticator
  const at = new URL(page.url());
  checkEqual(at.pathname, '/auth/sign-in', 'a signed-out authorization request sends the browser to');
  const interaction = at.searchParams.get('interaction');
  const getForm = page.locator('form[data-webauthn="get"]');
  checkEqual(await getForm.count(), 1, `forms data-webauthn="get" on the sign-in page ${await describePage(page)}`);
  check(
    await getForm.isVisible(),
    `the passkey form is hidden on the sign-in page with JavaScript on: ${await describePage(page)}; ` +
      `navigator.credentials: [${trace.join(' | ')}]; console: [${consoleLines.join(' | ')}]`,
  );
  checkEqual(
    await getForm.locator('input[name="interaction"]').getAttribute('value'),
    interaction,
    'the pending interaction carried by the passkey form',
  );
  checkEqual(
    await page.locator('input[name="email"]').getAttribute('autocomplete'),
    'username webauthn',
    'autocomplete of the email input',
  );
  const signInLabels = await checkLabels(page, 'the sign-in page');
  check(signInLabels.includes('email') && signInLabels.includes('password'), `sign-in page inputs: ${signInLabels}`);
  const signInScriptSrc = await checkScriptCsp(page, seen.documents, '/auth/sign-in');
  const conditional = await page.evaluate(async () =>
    typeof PublicKeyCredential.isConditionalMediationAvailable === 'function'
      ? PublicKeyCredential.isConditionalMediationAvailable()
      : false,
  );
  passed('sign_in_page_offers_passkey');

  step('sign in with the button');
  await authenticator.setPresence(true);
  const buttonRun = await ceremony(page, buttonClick(page, 'Sign in with a passkey'), 'Sign in with a passkey', {
    ...io,
    watch: buttonWatch,
  });
  const buttonPages = await passkeyToClient(context, page, buttonWatch, buttonRun, { issuer, redirectUri }, 'button');
  check(
    buttonRun.calls.includes('get(conditional) → AbortError: signal is aborted without reason') &&
      buttonRun.calls.includes('get(modal) → public-key'),
    `the button did not abort the pending autofill request and ask modally: ${story(buttonRun)}`,
  );
  passed('passkey_button_sign_in');

  step('authorizationCodeGrant (openid-client), button');
  const claims = passkeyClaims(await buttonFlow.exchange(buttonWatch.url), 'button');
  checkEqual(claims.sub, autofillClaims.sub, 'the same person signed in by both passkey sign-ins (sub)');
  passed('id_token_aal2');

  const counted = (await authenticator.credentials())[0];
  check(counted.signCount >= counterBefore + 2, `the signature counter after two sign-ins: ${counterBefore} → ${counted.signCount}`);
  const listed = await context.newPage();
  await listed.goto(`${issuer}/auth/account/passkeys`);
  const usedAfter = (await listed.locator('table tbody tr').first().locator('td').nth(3).innerText()).trim();
  check(usedAfter !== usedBefore, `"Last used" did not change after the sign-in: ${usedBefore} → ${usedAfter}`);
  await listed.close();
  passed('last_used_recorded');

  // ---- The authenticator no longer has the credential ----
  step('sign out again');
  await signOut(context, page, issuer);

  step('passkey sign-in without a credential on the authenticator');
  await authenticator.clear();
  checkEqual((await authenticator.credentials()).length, 0, 'credentials after WebAuthn.clearCredentials');
  await page.goto(`${issuer}/auth/sign-in`);
  const none = await ceremony(page, buttonClick(page, 'Sign in with a passkey'), 'Sign in with a passkey (no credential)', io);
  checkEqual(none.outcome, 'failed', `without a credential the ceremony (${story(none)})`);
  check(
    none.calls.some((c) => c.startsWith('get(modal) → NotAllowedError')),
    `without a credential the browser's answer: ${story(none)}`,
  );
  const errorText = (await page.locator('#webauthn-error').innerText()).trim();
  checkEqual(errorText, await page.locator('#webauthn-error').getAttribute('data-text'), 'the text of #webauthn-error');
  checkEqual(await page.locator('#webauthn-error').getAttribute('role'), 'alert', 'the role of #webauthn-error');
  check(!none.posts.some((p) => p.startsWith('POST /auth/passkey →')), `an answer was posted without a credential: ${none.posts}`);
  check(none.ms < CEREMONY_TIMEOUT_MS, `the failure took ${none.ms} ms`);
  const jar = await context.cookies(issuer);
  check(sessionCookie(jar) === undefined, `a session cookie after a failed passkey sign-in: ${jar.map((c) => c.name)}`);
  checkEqual(new URL(page.url()).pathname, '/auth/sign-in', 'after the failure the browser is on');
  passed('no_credential_error_alert');

  // ---- JavaScript off: no passkey form, the password still works ----
  step('sign-in page with JavaScript disabled');
  const nojs = await browser.newContext({ javaScriptEnabled: false });
  await routeClientOrigin(nojs, redirectUri);
  const plainPage = await nojs.newPage();
  const plain = await authorization(rp, redirectUri);
  await plainPage.goto(plain.url);
  checkEqual(new URL(plainPage.url()).pathname, '/auth/sign-in', 'JS off: authorize sends the browser to');
  checkEqual(await plainPage.locator('form[data-webauthn]').count(), 1, 'JS off: passkey forms in the page');
  check(!(await plainPage.locator('form[data-webauthn]').isVisible()), 'JS off: the passkey form is visible');
  // (Not getByText: Playwright's text matching skips <noscript> whatever the scripting mode.)
  const hint = plainPage.locator('noscript > p');
  checkEqual(await hint.count(), 1, 'JS off: hints in <noscript>');
  check(await hint.isVisible(), `JS off: the <noscript> hint is not shown: ${await describePage(plainPage)}`);
  const noscriptHint = (await hint.innerText()).trim();
  check(/JavaScript/.test(noscriptHint), `JS off: the <noscript> hint: ${JSON.stringify(noscriptHint)}`);
  passed('passkey_form_hidden_without_javascript');

  step('password sign-in with JavaScript disabled');
  const plainRun = await runInteraction(nojs, plainPage, null, redirectUri, { email, password });
  check(plainRun.pages[0] === 'sign-in', `JS off: pages ${plainRun.pages}`);
  const plainClaims = await plain.exchange(plainRun.url);
  checkEqual(plainClaims.sub, claims.sub, 'JS off: the password signs in the same person (sub)');
  checkEqual(plainClaims.acr, AAL1, 'JS off: ID token acr after a password');
  checkEqual(JSON.stringify(plainClaims.amr), JSON.stringify(['pwd']), 'JS off: ID token amr after a password');
  await nojs.close();
  passed('password_sign_in_without_javascript');

  const violations = consoleLines.filter((l) => /Content Security Policy|Refused to/i.test(l));
  checkEqual(violations.length, 0, `CSP violations in the console: ${violations.join(' | ')}`);
  passed('no_csp_violation');

  await authenticator.detach();
  return {
    issuer,
    checks,
    passkey: {
      acr: claims.acr,
      amr: claims.amr,
      autofill_acr: autofillClaims.acr,
      autofill_amr: autofillClaims.amr,
      kind,
      pages_after_autofill: autofillPages,
      pages_after_button: buttonPages,
    },
    password_without_js: { acr: plainClaims.acr, amr: plainClaims.amr },
    credential: {
      rp_id: held[0].rpId,
      resident: held[0].isResidentCredential,
      backup_eligible: held[0].backupEligibility ?? null,
      user_name: held[0].userName ?? null,
      sign_count: [counterBefore, counted.signCount],
    },
    conditional_mediation_available: conditional,
    script_src: { passkeys: passkeysScriptSrc, sign_in: signInScriptSrc },
    error_alert_text: errorText.slice(0, 200),
    noscript_hint: noscriptHint.slice(0, 200),
    webauthn_calls: trace,
    timings_ms: {
      register: registration.ms,
      autofill_sign_in: autofillRun.ms,
      button_sign_in: buttonRun.ms,
      no_credential_failure: none.ms,
    },
  };
}

await runMain('passkeys', main, () => closeBrowser());

// svc's hosted pages as a person's browser meets them, in Chromium: labels for every input,
// focus on the email field, an accessible error for a wrong password that never echoes it,
// anti-framing / referrer headers on every hosted page, no horizontal scroll at 375 px, the
// whole flow with JavaScript disabled, and an HttpOnly SameSite=Lax session cookie.
// Then the second factor (`[two_factor]` enabled on the service; last, since the person has an
// authenticator from then on): the two-factor account page, the setup page (labels, focus on the
// code, the QR code as an inline <svg> in a <figure role="img" aria-label>), a wrong first code
// (alert, aria-invalid), step-up of a session signed in before the enrolment for
// acr_values=urn:svc:aal2, the second-factor page after the password (challenge cookie only,
// label and focus, a wrong code → alert + aria-invalid), and enrolment plus a sign-in with a code
// with JavaScript disabled. The codes come from lib/totp.mjs (RFC 6238 on node:crypto).
//
// Environment: ISSUER, CLIENT_ID (a client whose authorize request shows the hosted pages; a
// third-party public client shows consent too), REDIRECT_URI, USER_EMAIL, USER_PASSWORD (a person
// without a second factor), CHROMIUM_PATH (default /usr/bin/chromium).
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" on stderr otherwise.
import { createHash, randomBytes } from 'node:crypto';
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { alertText, checkLabels, describePage, routeClientOrigin, runInteraction } from '../lib/hosted.mjs';
import { Authenticator } from '../lib/totp.mjs';

let closeBrowser = async () => {};

function authorizeUrl(issuer, clientId, redirectUri, extra = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${issuer}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid profile email',
    state: randomBytes(16).toString('base64url'),
    nonce: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return url.href;
}

/** Records every HTML document the server answers with 200 (the hosted pages). */
function recordHostedPages(context, issuer) {
  const pages = [];
  context.on('response', (response) => {
    const request = response.request();
    if (request.resourceType() === 'document' && response.url().startsWith(`${issuer}/`) && response.status() === 200) {
      pages.push({ url: response.url(), path: new URL(response.url()).pathname, headers: response.headers() });
    }
  });
  return pages;
}

function checkSecurityHeaders(pages) {
  check(pages.length > 0, 'no hosted page was recorded');
  for (const { path, headers } of pages) {
    const csp = headers['content-security-policy'];
    check(typeof csp === 'string', `${path}: no Content-Security-Policy header`);
    check(/frame-ancestors\s+'none'/.test(csp), `${path}: CSP without frame-ancestors 'none': ${csp}`);
    checkEqual(headers['x-frame-options']?.toUpperCase(), 'DENY', `${path}: X-Frame-Options`);
    checkEqual(headers['referrer-policy']?.toLowerCase(), 'no-referrer', `${path}: Referrer-Policy`);
  }
  return [...new Set(pages.map((p) => p.path))];
}

/** The page scrolls no wider than its viewport. */
async function checkNoHorizontalScroll(page, where) {
  const { scrollWidth, clientWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    innerWidth: window.innerWidth,
  }));
  check(
    scrollWidth <= clientWidth && scrollWidth <= innerWidth,
    `${where}: horizontal scroll at ${innerWidth}px (scrollWidth ${scrollWidth} > clientWidth ${clientWidth})`,
  );
  return scrollWidth;
}

/** The input `name` is focused, or has `autofocus` (focus is not reported in every mode). */
async function checkFocus(page, name, where) {
  const focus = await page.evaluate(
    (n) => ({
      active: document.activeElement?.getAttribute('name') ?? null,
      autofocus: document.querySelector(`input[name="${n}"]`)?.hasAttribute('autofocus') ?? false,
    }),
    name,
  );
  check(
    focus.active === name || focus.autofocus,
    `${where}: the ${name} input is neither focused nor autofocus: ${JSON.stringify(focus)}`,
  );
}

/** Clicks `target` (a submit button) and returns the answer of the document it led to. */
async function submitAndWait(page, target, where) {
  check((await target.count()) === 1, `${where}: no such button on ${await describePage(page)}`);
  const [response] = await Promise.all([page.waitForNavigation({ timeout: 30_000 }), target.click()]);
  await page.waitForLoadState('domcontentloaded');
  check(response !== null, `${where}: no navigation`);
  return response;
}

/** Signs in on the bare sign-in page (no authorization request); ends on `expected`. */
async function signInDirectly(page, issuer, email, password, expected) {
  await page.goto(`${issuer}/auth/sign-in`);
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(password);
  const response = await submitAndWait(page, page.locator('form button[type="submit"]').first(), 'sign-in');
  checkEqual(new URL(page.url()).pathname, expected, `after the password (${response.status()}) the browser is on`);
}

/** The key of the setup page: `<dt>Key</dt><dd>ABCD EFGH …</dd>`, spaces removed. */
async function setupKey(page) {
  const dd = page.locator('xpath=//dt[normalize-space()="Key"]/following-sibling::dd[1]');
  check((await dd.count()) === 1, `no <dt>Key</dt><dd> on the setup page: ${await describePage(page)}`);
  const key = (await dd.textContent()).replace(/\s+/g, '');
  check(/^[A-Z2-7]{16,}=*$/.test(key), `the key is not base32: ${JSON.stringify(key)}`);
  return key;
}

/** The code field of a page that was refused a code: an alert, aria-invalid, focus, empty. */
async function checkRefusedCode(page, response, where) {
  checkEqual(response.status(), 401, `${where}: status of a wrong code`);
  const alert = await alertText(page);
  check(alert.length > 0, `${where}: no role="alert" after a wrong code: ${await describePage(page)}`);
  const code = page.locator('input[name="code"]');
  checkEqual(await code.getAttribute('aria-invalid'), 'true', `${where}: aria-invalid on the code input`);
  checkEqual(await code.inputValue(), '', `${where}: the code field after a wrong code`);
  await checkFocus(page, 'code', `${where} after a wrong code`);
  return alert;
}

function sessionCookie(cookies) {
  return cookies.find((c) => c.name === 'svc_session' || c.name === '__Host-svc_session');
}

/** The second factor, last: from here on the person has an authenticator. */
async function secondFactorChecks(browser, step, passed, { issuer, clientId, redirectUri, email, password }) {
  const headers = [];

  // A browser signed in before the authenticator exists keeps an aal1 session (step-up below).
  step('a session from before the enrolment');
  const early = await browser.newContext();
  await routeClientOrigin(early, redirectUri);
  headers.push(recordHostedPages(early, issuer));
  const p0 = await early.newPage();
  await signInDirectly(p0, issuer, email, password, '/auth/account');

  // ---- JavaScript on, 375 px: the account page and enrolment ----
  step('two-factor account page');
  const account = await browser.newContext({ viewport: { width: 375, height: 812 } });
  headers.push(recordHostedPages(account, issuer));
  const page = await account.newPage();
  await signInDirectly(page, issuer, email, password, '/auth/account');
  const overview = await page.goto(`${issuer}/auth/account/two-factor`);
  checkEqual(overview?.status(), 200, 'GET /auth/account/two-factor');
  const setupButton = page.locator('form[method="post" i] button[name="action"][value="setup"]');
  checkEqual(await setupButton.count(), 1, 'the setup button (action=setup) on the two-factor page');
  await checkLabels(page, 'the two-factor page', { someInputs: false });
  await checkNoHorizontalScroll(page, 'two-factor page');
  passed('two_factor_page');

  step('authenticator setup page');
  const setup = await submitAndWait(page, setupButton, 'setup');
  checkEqual(setup.status(), 200, 'action=setup');
  const setupLabels = await checkLabels(page, 'the setup page');
  check(setupLabels.includes('code'), `setup page inputs: ${setupLabels}`);
  await checkFocus(page, 'code', 'setup page');
  checkEqual(
    await page.locator('input[name="code"]').getAttribute('autocomplete'),
    'one-time-code',
    'setup page: autocomplete of the code input',
  );
  const qr = await page.evaluate(() => {
    const figure = document.querySelector('figure');
    const svg = figure?.querySelector(':scope > svg');
    return figure
      ? { role: figure.getAttribute('role'), label: figure.getAttribute('aria-label'), svg: Boolean(svg), width: svg?.getBoundingClientRect().width ?? 0 }
      : null;
  });
  check(qr !== null, `no <figure> on the setup page: ${await describePage(page)}`);
  checkEqual(qr.role, 'img', 'the QR code figure role');
  check(typeof qr.label === 'string' && qr.label.trim().length > 0, `the QR code figure has no aria-label: ${JSON.stringify(qr)}`);
  check(qr.svg && qr.width > 0, `no visible inline <svg> in the QR code figure: ${JSON.stringify(qr)}`);
  // Chromium's accessibility tree: one image named by that label.
  checkEqual(await page.getByRole('img', { name: qr.label, exact: true }).count(), 1, 'images named by the QR label');
  const setupWidth = await checkNoHorizontalScroll(page, 'setup page');
  const key = await setupKey(page);
  const app = new Authenticator(key);
  passed('totp_setup_page_accessible');
  passed('qr_code_figure_img');

  step('wrong first code on the setup page');
  await page.locator('input[name="code"]').fill(app.wrongCode());
  const wrongSetup = await submitAndWait(page, page.locator('form button[name="action"][value="confirm"]'), 'confirm');
  const setupAlert = await checkRefusedCode(page, wrongSetup, 'setup page');
  checkEqual(await setupKey(page), key, 'the key shown again after a wrong code');
  passed('totp_setup_wrong_code_alert');

  step('confirm the authenticator');
  await page.locator('input[name="code"]').fill(await app.code());
  const confirmed = await submitAndWait(page, page.locator('form button[name="action"][value="confirm"]'), 'confirm');
  checkEqual(confirmed.status(), 200, 'action=confirm with the right code');
  const backupCodes = await page.locator('li code').allTextContents();
  checkEqual(backupCodes.length, 10, `backup codes shown (${await describePage(page)})`);
  await account.close();
  passed('totp_enrolled');

  // ---- Step-up of the aal1 session for acr_values=urn:svc:aal2, JavaScript on ----
  step('step-up of the earlier session (acr_values=urn:svc:aal2)');
  const stepUp = await runInteraction(
    early,
    p0,
    authorizeUrl(issuer, clientId, redirectUri, { acr_values: 'urn:svc:aal2' }),
    redirectUri,
    {
      secondFactor: async () => {
        const inputs = await checkLabels(p0, 'the step-up page');
        check(inputs.includes('code'), `step-up page inputs: ${inputs}`);
        await checkFocus(p0, 'code', 'step-up page');
        return app.code();
      },
    },
  );
  checkEqual(stepUp.pages[0], 'second-factor', `the step-up asks for a code first (pages ${stepUp.pages})`);
  check(!stepUp.pages.includes('sign-in'), `step-up asked for the password again (pages ${stepUp.pages})`);
  check(new URL(stepUp.url).searchParams.has('code'), `step-up: no code on the redirect: ${stepUp.url}`);
  await early.close();
  passed('step_up_flow');

  // ---- The second step of a sign-in, JavaScript on ----
  step('second-factor page after the password');
  const second = await browser.newContext({ viewport: { width: 375, height: 812 } });
  await routeClientOrigin(second, redirectUri);
  headers.push(recordHostedPages(second, issuer));
  const p2 = await second.newPage();
  await p2.goto(authorizeUrl(issuer, clientId, redirectUri));
  checkEqual(new URL(p2.url()).pathname, '/auth/sign-in', 'authorize sends a signed-out browser to');
  await p2.locator('input[name="email"]').fill(email);
  await p2.locator('input[name="password"]').fill(password);
  const challenge = await submitAndWait(p2, p2.locator('form button[type="submit"]').first(), 'sign-in');
  checkEqual(challenge.status(), 200, 'the second-factor page');
  const at = new URL(p2.url());
  checkEqual(at.pathname, '/auth/second-factor', 'after the password of a person with a factor the browser is on');
  check((at.searchParams.get('interaction') ?? '').length > 0, `the second-factor URL names the interaction: ${at}`);
  const jar = await second.cookies(issuer);
  check(sessionCookie(jar) === undefined, `a session cookie before the second factor: ${jar.map((c) => c.name)}`);
  const mfa = jar.find((c) => c.name === 'svc_mfa' || c.name === '__Host-svc_mfa');
  check(mfa !== undefined, `no challenge cookie after the password: ${jar.map((c) => c.name)}`);
  checkEqual(mfa.httpOnly, true, 'challenge cookie HttpOnly');
  const secondLabels = await checkLabels(p2, 'the second-factor page');
  check(secondLabels.includes('code'), `second-factor page inputs: ${secondLabels}`);
  await checkFocus(p2, 'code', 'second-factor page');
  checkEqual(
    await p2.locator('input[name="code"]').getAttribute('autocomplete'),
    'one-time-code',
    'second-factor page: autocomplete of the code input',
  );
  check(
    ((await p2.locator('form input[type="hidden"][name="interaction"]').getAttribute('value')) ?? '').length > 0,
    'the second-factor form carries the interaction',
  );
  const secondWidth = await checkNoHorizontalScroll(p2, 'second-factor page');
  passed('second_factor_page_accessible');

  step('wrong code on the second-factor page');
  await p2.locator('input[name="code"]').fill(app.wrongCode());
  const wrongCode = await submitAndWait(p2, p2.locator('form button[type="submit"]').first(), 'second factor');
  const secondAlert = await checkRefusedCode(p2, wrongCode, 'second-factor page');
  check(sessionCookie(await second.cookies(issuer)) === undefined, 'a session cookie after a wrong code');
  passed('second_factor_wrong_code_alert');

  step('right code, on to the client');
  const withCode = await runInteraction(second, p2, null, redirectUri, { secondFactor: () => app.code() });
  check(withCode.pages.includes('second-factor'), `pages: ${withCode.pages}`);
  check(new URL(withCode.url).searchParams.has('code'), `no code on the redirect: ${withCode.url}`);
  check(sessionCookie(await second.cookies(issuer)) !== undefined, 'no session cookie after the second factor');
  passed('second_factor_flow');

  // This aal2 session may remove the authenticator: JavaScript off enrols a new one.
  // (A new tab: the first may still be navigating to the client.)
  step('remove the authenticator (aal2 session)');
  const tab = await second.newPage();
  await tab.goto(`${issuer}/auth/account/two-factor`);
  await submitAndWait(tab, tab.locator('form button[name="action"][value="remove"]'), 'remove');
  checkEqual(new URL(tab.url()).searchParams.get('removed'), '1', `after removing: ${tab.url()}`);
  check((await tab.locator('button[name="action"][value="setup"]').count()) === 1, 'setup offered again after removal');
  await second.close();

  // ---- JavaScript off: enrolment and a sign-in with a code ----
  step('enrol and sign in with a code, JavaScript disabled');
  const nojs = await browser.newContext({ javaScriptEnabled: false });
  headers.push(recordHostedPages(nojs, issuer));
  const p3 = await nojs.newPage();
  await signInDirectly(p3, issuer, email, password, '/auth/account');
  await p3.goto(`${issuer}/auth/account/two-factor`);
  const plainSetup = await submitAndWait(p3, p3.locator('form button[name="action"][value="setup"]'), 'setup (JS off)');
  checkEqual(plainSetup.status(), 200, 'JS off: action=setup');
  check((await p3.locator('figure[role="img"] > svg').count()) === 1, 'JS off: the QR code');
  const plainApp = new Authenticator(await setupKey(p3));
  await p3.locator('input[name="code"]').fill(await plainApp.code());
  const plainConfirmed = await submitAndWait(p3, p3.locator('form button[name="action"][value="confirm"]'), 'confirm (JS off)');
  checkEqual(plainConfirmed.status(), 200, 'JS off: action=confirm');
  checkEqual(await p3.locator('li code').count(), 10, 'JS off: backup codes shown');
  await nojs.close();

  const nojsSignIn = await browser.newContext({ javaScriptEnabled: false });
  await routeClientOrigin(nojsSignIn, redirectUri);
  headers.push(recordHostedPages(nojsSignIn, issuer));
  const p4 = await nojsSignIn.newPage();
  const plain = await runInteraction(nojsSignIn, p4, authorizeUrl(issuer, clientId, redirectUri), redirectUri, {
    email,
    password,
    secondFactor: () => plainApp.code(),
  });
  check(
    plain.pages[0] === 'sign-in' && plain.pages[1] === 'second-factor',
    `JS off: pages of a sign-in with a code: ${plain.pages}`,
  );
  const plainRedirect = new URL(plain.url);
  check(plainRedirect.searchParams.has('code'), `JS off: no code on the redirect: ${plain.url}`);
  checkEqual(plainRedirect.searchParams.get('iss'), issuer, 'JS off: iss on the redirect');
  await nojsSignIn.close();
  passed('mfa_flow_without_javascript');

  const checkedPages = checkSecurityHeaders(headers.flat());
  for (const path of ['/auth/account/two-factor', '/auth/second-factor']) {
    check(checkedPages.includes(path), `${path} not among the pages whose headers were checked: ${checkedPages}`);
  }
  passed('two_factor_security_headers');
  return {
    hosted_pages_checked: checkedPages,
    scroll_width_375: { setup: setupWidth, second_factor: secondWidth },
    setup_alert_text: setupAlert.slice(0, 200),
    second_factor_alert_text: secondAlert.slice(0, 200),
    qr_label: qr.label,
    challenge_cookie: { name: mfa.name, httpOnly: mfa.httpOnly, sameSite: mfa.sameSite },
    pages_with_code_without_js: plain.pages,
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

  step('launch chromium');
  const { browser, close } = await launchChromium();
  closeBrowser = close;

  // ---- JavaScript on, a phone-sized viewport ----
  step('sign-in page (375px viewport)');
  const mobile = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: false });
  await routeClientOrigin(mobile, redirectUri);
  const hosted = recordHostedPages(mobile, issuer);
  const page = await mobile.newPage();
  const first = await page.goto(authorizeUrl(issuer, clientId, redirectUri));
  check(first !== null && first.status() === 200, `authorize did not end on a page: ${first?.status()} ${page.url()}`);
  checkEqual(new URL(page.url()).pathname, '/auth/sign-in', 'authorize sends a signed-out browser to');
  check(new URL(page.url()).searchParams.get('interaction')?.length > 0, 'the sign-in URL names the interaction');

  const labelled = await checkLabels(page, 'the sign-in page');
  check(labelled.includes('email') && labelled.includes('password'), `inputs checked: ${labelled}`);
  passed('labels_for_every_input');

  const focus = await page.evaluate(() => ({
    active: document.activeElement?.getAttribute('name') ?? null,
    autofocus: document.querySelector('input[name="email"]')?.hasAttribute('autofocus') ?? false,
  }));
  check(focus.active === 'email' || focus.autofocus, `the email input is neither focused nor autofocus: ${JSON.stringify(focus)}`);
  passed('email_focused');

  const signInWidth = await checkNoHorizontalScroll(page, 'sign-in page');
  passed('no_horizontal_scroll_375');

  step('wrong password');
  const wrong = `Wrong-${randomBytes(6).toString('hex')}!`;
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(wrong);
  await Promise.all([
    page.waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame() }),
    page.locator('form button[type="submit"]').first().click(),
  ]);
  await page.waitForLoadState('domcontentloaded');
  checkEqual(new URL(page.url()).pathname, '/auth/sign-in', 'after a wrong password the browser is on');
  const alert = await alertText(page);
  check(alert.length > 0, `no error in a role="alert" / aria-live element after a wrong password: ${await describePage(page)}`);
  const html = await page.content();
  check(!html.includes(wrong), 'the wrong password is echoed back in the page');
  checkEqual(await page.locator('input[name="password"]').inputValue(), '', 'the password field after an error');
  passed('wrong_password_alert');
  passed('password_not_echoed');

  step('sign in and consent (JavaScript on)');
  const signedIn = await runInteraction(mobile, page, authorizeUrl(issuer, clientId, redirectUri), redirectUri, {
    email,
    password,
  });
  check(new URL(signedIn.url).searchParams.has('code'), `no code on the redirect: ${signedIn.url}`);
  const cookies = await mobile.cookies(issuer);
  const session = cookies.find((c) => c.name === 'svc_session' || c.name === '__Host-svc_session');
  check(session !== undefined, `no session cookie after sign-in; cookies: ${cookies.map((c) => c.name)}`);
  checkEqual(session.httpOnly, true, 'session cookie HttpOnly');
  checkEqual(session.sameSite, 'Lax', 'session cookie SameSite');
  checkEqual(session.path, '/', 'session cookie Path');
  passed('session_cookie_httponly_samesite_lax');
  const pagesChecked = checkSecurityHeaders(hosted);
  passed('security_headers');

  // The consent page at 375px too (prompt=consent: an earlier Allow may be remembered).
  let consentWidth = null;
  {
    step('consent page (375px viewport)');
    const other = await browser.newContext({ viewport: { width: 375, height: 812 } });
    await routeClientOrigin(other, redirectUri);
    const otherHosted = recordHostedPages(other, issuer);
    const p = await other.newPage();
    await p.goto(authorizeUrl(issuer, clientId, redirectUri, { prompt: 'consent' }));
    await p.locator('input[name="email"]').fill(email);
    await p.locator('input[name="password"]').fill(password);
    await Promise.all([
      p.waitForURL((u) => u.pathname === '/auth/consent', { timeout: 30_000 }),
      p.locator('form button[type="submit"]').first().click(),
    ]).catch(async (error) => {
      throw new CheckFailed(`the consent page did not follow sign-in: ${error.message} at ${await describePage(p)}`);
    });
    consentWidth = await checkNoHorizontalScroll(p, 'consent page');
    check(
      (await p.locator('form button[name="decision"][value="allow"]').count()) === 1 &&
        (await p.locator('form button[name="decision"][value="deny"]').count()) === 1,
      `the consent page lacks Allow/Deny buttons: ${await describePage(p)}`,
    );
    checkSecurityHeaders(otherHosted);
    await other.close();
    passed('consent_page_375');
  }

  // ---- JavaScript off: the forms work on their own ----
  step('whole flow with JavaScript disabled');
  const nojs = await browser.newContext({ javaScriptEnabled: false });
  await routeClientOrigin(nojs, redirectUri);
  const nojsHosted = recordHostedPages(nojs, issuer);
  const nojsPage = await nojs.newPage();
  const plain = await runInteraction(nojs, nojsPage, authorizeUrl(issuer, clientId, redirectUri), redirectUri, {
    email,
    password,
  });
  check(plain.pages.includes('sign-in'), `JS off: no sign-in page (pages ${plain.pages})`);
  const plainRedirect = new URL(plain.url);
  check(plainRedirect.searchParams.has('code'), `JS off: no code on the redirect: ${plain.url}`);
  checkEqual(plainRedirect.searchParams.get('iss'), issuer, 'JS off: iss on the redirect');
  checkSecurityHeaders(nojsHosted);
  passed('flow_without_javascript');

  const twoFactor = await secondFactorChecks(browser, step, passed, { issuer, clientId, redirectUri, email, password });

  return {
    issuer,
    checks,
    labelled_inputs: labelled,
    alert_text: alert.slice(0, 200),
    hosted_pages_checked: pagesChecked,
    scroll_width_375: { sign_in: signInWidth, consent: consentWidth },
    session_cookie: { name: session.name, httpOnly: session.httpOnly, sameSite: session.sameSite, secure: session.secure },
    pages_without_js: plain.pages,
    two_factor: twoFactor,
  };
}

await runMain('browser', main, () => closeBrowser());

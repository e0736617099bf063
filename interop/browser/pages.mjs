// svc's hosted pages as a person's browser meets them, in Chromium: labels for every input,
// focus on the email field, an accessible error for a wrong password that never echoes it,
// anti-framing / referrer headers on every hosted page, no horizontal scroll at 375 px, the
// whole flow with JavaScript disabled, and an HttpOnly SameSite=Lax session cookie.
//
// Environment: ISSUER, CLIENT_ID (a client whose authorize request shows the hosted pages; a
// third-party public client shows consent too), REDIRECT_URI, USER_EMAIL, USER_PASSWORD,
// CHROMIUM_PATH (default /usr/bin/chromium).
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" on stderr otherwise.
import { createHash, randomBytes } from 'node:crypto';
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { alertText, describePage, routeClientOrigin, runInteraction } from '../lib/hosted.mjs';

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

/** Every visible form control has a <label for="its id">. Returns the names checked. */
async function checkLabels(page) {
  const result = await page.evaluate(() => {
    const controls = [...document.querySelectorAll('input, select, textarea')].filter(
      (el) => !['hidden', 'submit', 'button', 'image', 'reset'].includes((el.getAttribute('type') || '').toLowerCase()),
    );
    return controls.map((el) => ({
      name: el.getAttribute('name'),
      id: el.id,
      labelled: el.id !== '' && document.querySelector(`label[for="${CSS.escape(el.id)}"]`) !== null,
    }));
  });
  check(result.length > 0, 'the sign-in page has no visible inputs');
  const unlabelled = result.filter((c) => !c.labelled);
  check(unlabelled.length === 0, `inputs without <label for>: ${JSON.stringify(unlabelled)}`);
  return result.map((c) => c.name);
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

  const labelled = await checkLabels(page);
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

  return {
    issuer,
    checks,
    labelled_inputs: labelled,
    alert_text: alert.slice(0, 200),
    hosted_pages_checked: pagesChecked,
    scroll_width_375: { sign_in: signInWidth, consent: consentWidth },
    session_cookie: { name: session.name, httpOnly: session.httpOnly, sameSite: session.sameSite, secure: session.secure },
    pages_without_js: plain.pages,
  };
}

await runMain('browser', main, () => closeBrowser());

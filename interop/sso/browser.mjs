// Enterprise single sign-on in a real browser: Chromium (playwright-core) signs a person in to
// svc through their organization's own OpenID provider — node oidc-provider (sso/provider.mjs)
// or another svc deployment — using the provider's own pages, and checks what the browser sees.
//
// 1. svc's authorization request for a first-party application of the tenant (AUTHORIZE_URL,
//    on http://localhost:PORT) shows svc's sign-in page, which carries the "Sign in with SSO"
//    form (section.sso, #sso-email, a label for it).
// 2. The address is typed and submitted: svc answers a page that moves on to the provider by
//    meta refresh, with the attempt cookie svc_sso (HttpOnly, SameSite=Lax, host-only) set.
// 3. At the provider (UPSTREAM_ISSUER, http://127.0.0.1:PORT: another host than svc's, so the
//    two deployments' cookies never mix even when both are svc): its login page (oidc-provider's
//    /interaction/<uid> or svc's /auth/sign-in) with UPSTREAM_LOGIN / UPSTREAM_PASSWORD, its
//    consent page when it shows one.
// 4. The provider sends the browser to svc's /auth/sso/callback with code, state and RFC 9207
//    iss (= UPSTREAM_ISSUER); svc signs the person in, answers a page that moves on by itself
//    (a redirect there would still be the provider's form navigation, which its form-action
//    refuses beyond svc's origin), and continues the authorization request to the application's REDIRECT_URI (never served: seen as the browser's request and
//    answered by a route) with a code, the state and svc's own iss.
// 5. Cookies afterwards: svc_sso gone (cleared by the callback), svc_session set and HttpOnly.
// 6. Hostile: the callback URL again in the same browser (the attempt is spent and its cookie
//    gone) and in a fresh browser context (another browser, no cookie): 400 pages saying so,
//    no session in the fresh one, the first one's session untouched.
// 7. No Content-Security-Policy violation (nor any other console error) on svc's pages.
//
// Environment: SVC_URL (http://localhost:PORT), AUTHORIZE_URL, REDIRECT_URI, SSO_EMAIL,
// UPSTREAM_ISSUER, UPSTREAM_LOGIN, UPSTREAM_PASSWORD, CHROMIUM_PATH (default /usr/bin/chromium).
// Prints one JSON line on stdout ({"ok":true,…}); exits 1 with
// `interop check failed during "<step>": …` on stderr otherwise.
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import {
  act,
  alertText,
  checkLabels,
  describePage,
  routeClientOrigin,
  sessionCookie,
  submitConsent,
  submitSignIn,
  watchClient,
} from '../lib/hosted.mjs';

const svc = env('SVC_URL').replace(/\/$/, '');
const authorizeUrl = env('AUTHORIZE_URL');
const redirectUri = env('REDIRECT_URI');
const email = env('SSO_EMAIL');
const upstream = env('UPSTREAM_ISSUER').replace(/\/$/, '');
const upstreamLogin = env('UPSTREAM_LOGIN');
const upstreamPassword = env('UPSTREAM_PASSWORD');
const NAV_TIMEOUT_MS = 30_000;

let closeBrowser = async () => {};

/** The cookie of `cookies` named `name`. */
const named = (cookies, name) => cookies.find((c) => c.name === name || c.name === `__Host-${name}`);

/** Every Set-Cookie header of a response (Playwright joins them with newlines). */
async function setCookies(response) {
  const headers = await response.headersArray().catch(() => []);
  return headers.filter((h) => h.name.toLowerCase() === 'set-cookie').flatMap((h) => h.value.split('\n'));
}

/** Answers the provider's own pages until the browser leaves its origin. */
async function atProvider(page, watch, pages) {
  let outcome = 'page';
  for (let round = 0; outcome !== 'client' && new URL(page.url()).origin === upstream; round += 1) {
    check(round < 6, `the provider did not send the browser back after ${round} pages: ${await describePage(page)}`);
    const path = new URL(page.url()).pathname;
    if (path.startsWith('/interaction/')) {
      // oidc-provider's development interactions: a login form, then a consent form.
      const login = page.locator('form input[name="login"]');
      if ((await login.count()) === 1) {
        check(!pages.includes('provider-login'), `the provider refused the login: ${await describePage(page)}`);
        pages.push('provider-login');
        await login.fill(upstreamLogin);
        await page.locator('form input[name="password"]').fill(upstreamPassword);
        outcome = await act(page, watch, () => page.locator('form button[type="submit"]').click());
      } else if ((await page.locator('form input[name="prompt"][value="consent"]').count()) === 1) {
        check(!pages.includes('provider-consent'), `the provider asked for consent twice: ${await describePage(page)}`);
        pages.push('provider-consent');
        outcome = await act(page, watch, () => page.locator('form button[type="submit"]').click());
      } else {
        throw new CheckFailed(`unexpected oidc-provider page: ${await describePage(page)}`);
      }
    } else if (path === '/auth/sign-in') {
      // Another svc deployment: its hosted sign-in and consent pages.
      check(!pages.includes('provider-login'), `the provider refused the login: ${await alertText(page)}`);
      pages.push('provider-login');
      outcome = await submitSignIn(page, watch, { email: upstreamLogin, password: upstreamPassword });
    } else if (path === '/auth/consent') {
      pages.push('provider-consent');
      outcome = await submitConsent(page, watch);
    } else {
      throw new CheckFailed(`unexpected page at the provider: ${await describePage(page)}`);
    }
  }
  return outcome;
}

async function main(step) {
  const checks = {};
  const pages = [];
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext();
  await routeClientOrigin(context, redirectUri);
  // Nothing leaves the machine: oidc-provider's development pages link a web font.
  const external = [];
  await context.route(
    (url) => !['127.0.0.1', 'localhost'].includes(url.hostname),
    (route) => {
      external.push(route.request().url());
      return route.abort('blockedbyclient');
    },
  );
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push({ url: page.url(), text: message.text().trim() });
  });
  // What the browser is sent and answered, as it happens (redirect hops included).
  const seen = { start: null, callback: null, callbackSetCookies: null };
  context.on('response', async (response) => {
    const url = response.url();
    const request = response.request();
    if (url === `${svc}/auth/sso` && request.method() === 'POST') {
      seen.start = { status: response.status(), setCookies: await setCookies(response) };
    } else if (url.startsWith(`${svc}/auth/sso/callback?`) && seen.callback === null) {
      seen.callback = url;
      seen.callbackStatus = response.status();
      seen.callbackSetCookies = await setCookies(response);
    }
  });
  const watch = await watchClient(context, redirectUri);

  step('authorization request shows the sign-in page with the SSO form');
  await act(page, watch, () => page.goto(authorizeUrl, { timeout: NAV_TIMEOUT_MS }));
  checkEqual(new URL(page.url()).origin, svc, 'the sign-in page origin');
  checkEqual(new URL(page.url()).pathname, '/auth/sign-in', 'the page the authorization request shows');
  const section = page.locator('section.sso');
  check((await section.count()) === 1, `no section.sso on ${await describePage(page)}`);
  const ssoEmail = section.locator('#sso-email');
  check((await ssoEmail.count()) === 1, 'no #sso-email in section.sso');
  await checkLabels(page, 'the sign-in page');
  check(
    (await section.locator('form input[name="interaction"]').count()) === 1,
    'the SSO form does not carry the pending authorization request',
  );
  pages.push('sign-in');
  checks.sso_form_shown = true;

  step('"Sign in with SSO" moves on to the provider');
  await ssoEmail.fill(email);
  // The provider shows its login page, or (a person it already knows) sends the browser straight
  // back, in which case the chain ends at the application.
  const leftForProvider = page.waitForURL((url) => url.origin === upstream, { timeout: NAV_TIMEOUT_MS });
  leftForProvider.catch(() => {});
  await section.locator('button[type="submit"], button:not([type])').first().click();
  let outcome = await Promise.race([leftForProvider.then(() => 'page'), watch.promise.then(() => 'client')]);
  if (outcome === 'page') await page.waitForLoadState('domcontentloaded');
  check(seen.start !== null, 'the browser did not post the SSO form to /auth/sso');
  checkEqual(seen.start.status, 200, 'POST /auth/sso status (a page that moves on by itself)');
  const startCookie = seen.start.setCookies.find((c) => /^(__Host-)?svc_sso=sso_/.test(c));
  check(startCookie !== undefined, `POST /auth/sso set no svc_sso cookie: ${JSON.stringify(seen.start.setCookies)}`);
  const providerUrl = new URL(outcome === 'page' ? page.url() : upstream);
  pages.push('sso-start');
  check(/;\s*HttpOnly/i.test(startCookie), `svc_sso is not HttpOnly: ${startCookie}`);
  check(/;\s*SameSite=Lax/i.test(startCookie), `svc_sso is not SameSite=Lax: ${startCookie}`);
  check(!/;\s*Domain=/i.test(startCookie), `svc_sso is not host-only: ${startCookie}`);
  if (outcome === 'page') {
    // While the person is at the provider, the browser holds the attempt cookie, as sent.
    const jar = await context.cookies(svc);
    const ssoCookie = named(jar, 'svc_sso');
    check(ssoCookie !== undefined, `no svc_sso cookie in the browser for ${svc}: ${JSON.stringify(jar.map((c) => c.name))}`);
    check(ssoCookie.httpOnly, 'svc_sso is not HttpOnly in the browser');
    checkEqual(ssoCookie.sameSite, 'Lax', 'svc_sso SameSite in the browser');
    checkEqual(ssoCookie.domain, new URL(svc).hostname, 'svc_sso domain (host-only)');
    check(named(jar, 'svc_session') === undefined, 'a session exists before the provider answered');
  }
  checks.sso_cookie_httponly_lax = true;

  step('sign in at the provider');
  if (outcome === 'page') outcome = await atProvider(page, watch, pages);
  if (outcome === 'page' && new URL(page.url()).pathname === '/auth/sso/callback') {
    // svc's callback answers a page that moves on by itself (meta refresh) to the application.
    outcome = await Promise.race([
      watch.promise.then(() => 'client'),
      new Promise((resolve) => setTimeout(() => resolve('page'), NAV_TIMEOUT_MS)),
    ]);
  }
  check(
    outcome === 'client',
    `the browser did not reach the application after the provider: ${await describePage(page)} (${await alertText(page)})`,
  );
  checks.provider_sign_in = true;

  step('back at svc: the callback and the application');
  check(seen.callback !== null, 'the provider did not send the browser to svc /auth/sso/callback');
  const callback = new URL(seen.callback);
  check(callback.searchParams.get('code'), `the callback has no code: ${seen.callback}`);
  check(callback.searchParams.get('state'), `the callback has no state: ${seen.callback}`);
  checkEqual(callback.searchParams.get('iss'), upstream, 'the callback iss (RFC 9207)');
  // A page that moves on by itself (meta refresh), not a 303: a redirect would still belong to
  // the provider's sign-in form, whose form-action does not name the application's origin.
  checkEqual(seen.callbackStatus, 200, 'the callback status (a page that moves on by itself)');
  const cleared = (seen.callbackSetCookies ?? []).find((c) => /^(__Host-)?svc_sso=;/.test(c));
  check(cleared !== undefined, `the callback did not clear svc_sso: ${JSON.stringify(seen.callbackSetCookies)}`);
  const client = new URL(watch.url);
  const code = client.searchParams.get('code');
  check(code, `the application got no code: ${watch.url}`);
  checkEqual(client.searchParams.get('iss'), svc, 'the application redirect iss');
  checkEqual(client.searchParams.get('error'), null, 'the application redirect error');
  const after = await context.cookies(svc);
  check(named(after, 'svc_sso') === undefined, 'svc_sso is still in the browser after the callback');
  const session = sessionCookie(after);
  check(session !== undefined, `no session cookie after the callback: ${JSON.stringify(after.map((c) => c.name))}`);
  check(session.httpOnly, 'the session cookie is not HttpOnly');
  checks.sso_cookie_cleared = true;
  checks.session_cookie_set = true;
  checks.application_got_code = true;

  step('hostile: the callback again in the same browser');
  const replay = await page.goto(seen.callback, { timeout: NAV_TIMEOUT_MS });
  checkEqual(replay.status(), 400, 'replayed callback status');
  const replayAlert = await alertText(page);
  check(/another browser/i.test(replayAlert), `the replay page says: ${await describePage(page)}`);
  const kept = sessionCookie(await context.cookies(svc));
  checkEqual(kept?.value, session.value, 'the session cookie after the replay');
  checks.replay_refused = true;

  step('hostile: the callback in another browser');
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  const otherErrors = [];
  otherPage.on('console', (m) => m.type() === 'error' && otherErrors.push({ url: otherPage.url(), text: m.text() }));
  const stolen = await otherPage.goto(seen.callback, { timeout: NAV_TIMEOUT_MS });
  checkEqual(stolen.status(), 400, 'callback in another browser status');
  check(sessionCookie(await other.cookies(svc)) === undefined, 'another browser got a session from the callback');
  await other.close();
  checks.other_browser_refused = true;

  step('no CSP violation on svc pages');
  const all = [...consoleErrors, ...otherErrors];
  const csp = all.filter((e) => /Content[- ]Security[- ]Policy/i.test(e.text));
  check(csp.length === 0, `CSP violations: ${JSON.stringify(csp)}`);
  // The 400 pages of the hostile cases are logged by Chromium as failed loads; anything else
  // on svc's pages is unexpected.
  const unexpected = all.filter(
    (e) => e.url.startsWith(`${svc}/`) && !/status of 400/.test(e.text),
  );
  check(unexpected.length === 0, `console errors on svc pages: ${JSON.stringify(unexpected)}`);
  checks.no_csp_violation = true;

  await context.close();
  return {
    svc,
    upstream,
    pages,
    provider_authorize: `${providerUrl.origin}${providerUrl.pathname}`,
    callback: { iss: callback.searchParams.get('iss'), status: seen.callbackStatus },
    application: { code, state: client.searchParams.get('state'), iss: client.searchParams.get('iss') },
    cookies: {
      sso_set: startCookie.replace(/=sso_[^;]*/, '=<secret>'),
      sso_cleared: cleared,
      session: { name: session.name, httpOnly: session.httpOnly, sameSite: session.sameSite },
    },
    replay: { status: replay.status(), alert: replayAlert },
    external_requests_blocked: external,
    console_errors: all.map((e) => `${e.url}: ${e.text}`.slice(0, 300)),
    checks,
  };
}

await runMain('sso-browser', main, () => closeBrowser());

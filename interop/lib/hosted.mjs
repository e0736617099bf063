// Driving svc's hosted pages in Chromium: the sign-in form, the second-factor form, the consent
// form, and the final redirect to a client. No callback server: the redirect to the client is
// observed as the browser's request for it (Chromium follows a redirect chain without giving
// `route` handlers the later hops, so the `request` event is what sees them); a route on the
// client's origin answers anything the browser does load from there directly, so nothing ever
// leaves the machine.
import { CheckFailed, check } from './common.mjs';

const NAV_TIMEOUT_MS = 30_000;

/**
 * Watches `context` for a browser request whose URL starts with `prefix` (a client redirect URI).
 * `promise` resolves with that URL; `stop()` removes the listener.
 */
export async function watchClient(context, prefix) {
  const watch = { url: null, prefix };
  let resolve;
  watch.promise = new Promise((r) => {
    resolve = r;
  });
  const listener = (request) => {
    if (watch.url === null && request.url().startsWith(prefix)) {
      watch.url = request.url();
      resolve(watch.url);
    }
  };
  context.on('request', listener);
  watch.stop = () => context.off('request', listener);
  return watch;
}

/** Answers every request to the client's origin with a tiny page (no callback server). */
export async function routeClientOrigin(context, uri) {
  const origin = new URL(uri).origin;
  await context.route(`${origin}/**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>client</title><p>client</p>' }),
  );
}

const consoleErrors = new WeakMap();

/** The browser's console errors on `page` so far (CSP violations are reported there). */
function consoleOf(page) {
  if (!consoleErrors.has(page)) {
    const errors = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text().trim());
    });
    consoleErrors.set(page, errors);
  }
  return consoleErrors.get(page);
}

/**
 * Runs `action` (a navigation or a click that submits a form) and waits until either the main
 * frame has navigated to a new document or the client redirect was seen. Returns 'client' or 'page'.
 * A main-frame navigation that the browser refuses or aborts (for example a form submission
 * blocked by the page's Content-Security-Policy) fails at once, with the browser's console errors.
 */
export async function act(page, watch, action) {
  const errors = consoleOf(page);
  const errorsBefore = errors.length;
  const navigated = page
    .waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame(), timeout: NAV_TIMEOUT_MS })
    .then(() => 'page');
  navigated.catch(() => {});
  let onFailed;
  const failed = new Promise((resolve) => {
    onFailed = (request) => {
      if (
        request.isNavigationRequest() &&
        request.frame() === page.mainFrame() &&
        !request.url().startsWith(watch.prefix)
      ) {
        resolve(request);
      }
    };
    page.on('requestfailed', onFailed);
  });
  const acted = action().catch((error) => {
    // A navigation that ends on the client (not served) is expected to fail in goto().
    if (watch.url === null) throw error;
  });
  let outcome;
  try {
    outcome = await Promise.race([
      watch.promise.then(() => 'client'),
      Promise.all([navigated, acted]).then(() => 'page'),
      failed.then(async (request) => {
        await new Promise((r) => setTimeout(r, 300)); // let the console report why
        if (watch.url !== null) return 'client';
        const why = errors.slice(errorsBefore).join(' | ') || '(no console message)';
        throw new CheckFailed(
          `the browser did not complete the navigation ${request.method()} ${request.url()} ` +
            `(${request.failure()?.errorText}); browser console: ${why}`,
        );
      }),
    ]);
  } finally {
    page.off('requestfailed', onFailed);
  }
  if (outcome === 'page' && watch.url === null) {
    await page.waitForLoadState('domcontentloaded').catch(() => {});
  }
  await acted.catch(() => {});
  return watch.url !== null ? 'client' : outcome;
}

/** A short description of the page the browser shows (for failure messages). */
export async function describePage(page) {
  const url = page.url();
  let text = '';
  try {
    text = (await page.locator('body').innerText({ timeout: 2000 })).replace(/\s+/g, ' ').slice(0, 400);
  } catch {
    text = '(no body)';
  }
  return `${url} — "${text}"`;
}

/** Text of the page's alert region(s), if any (the sign-in error). */
export async function alertText(page) {
  const alerts = page.locator('[role="alert"], [aria-live]');
  const count = await alerts.count();
  const texts = [];
  for (let i = 0; i < count; i += 1) {
    const t = (await alerts.nth(i).innerText().catch(() => '')).trim();
    if (t) texts.push(t);
  }
  return texts.join(' | ');
}

/** Fills and submits the hosted sign-in form (contract: inputs `email`, `password`). */
export async function submitSignIn(page, watch, { email, password }) {
  const form = page.locator('form[method="post" i]', { has: page.locator('input[name="password"]') });
  check((await form.count()) >= 1, `no sign-in form with a password input on ${await describePage(page)}`);
  for (const hidden of ['csrf', 'interaction']) {
    check(
      (await form.first().locator(`input[name="${hidden}"]`).count()) === 1,
      `the sign-in form has no hidden input "${hidden}"`,
    );
  }
  await form.first().locator('input[name="email"]').fill(email);
  await form.first().locator('input[name="password"]').fill(password);
  return act(page, watch, () => form.first().locator('button[type="submit"], input[type="submit"]').first().click());
}

/** Clicks Allow (or Deny) on the hosted consent page. */
export async function submitConsent(page, watch, decision = 'allow') {
  const button = page.locator(`form button[name="decision"][value="${decision}"]`);
  check((await button.count()) === 1, `no consent button decision=${decision} on ${await describePage(page)}`);
  return act(page, watch, () => button.click());
}

/** Fills and submits the hosted second-factor form (contract: input `code`, hidden `csrf`). */
export async function submitSecondFactor(page, watch, code) {
  const form = page.locator('form[method="post" i]', { has: page.locator('input[name="code"]') });
  check((await form.count()) === 1, `no second-factor form with a code input on ${await describePage(page)}`);
  check((await form.locator('input[name="csrf"]').count()) === 1, 'the second-factor form has no hidden input "csrf"');
  await form.locator('input[name="code"]').fill(code);
  return act(page, watch, () => form.locator('button[type="submit"], input[type="submit"]').first().click());
}

/**
 * Navigates to `url` (an authorization or end-session request; `null`: carry on from the page
 * the browser shows) and answers the hosted pages until the browser is sent to a URL starting
 * with `clientPrefix`. `secondFactor` (optional) gives the code the second-factor page asks
 * for. Returns `{ url, pages }` where `pages` lists the hosted pages seen ('sign-in',
 * 'second-factor', 'consent', 'end-session').
 */
export async function runInteraction(
  context,
  page,
  url,
  clientPrefix,
  { email, password, consent = 'allow', secondFactor } = {},
) {
  const watch = await watchClient(context, clientPrefix);
  const pages = [];
  try {
    let outcome = url === null ? 'page' : await act(page, watch, () => page.goto(url, { timeout: NAV_TIMEOUT_MS }));
    for (let round = 0; outcome !== 'client'; round += 1) {
      check(round < 6, `the interaction did not reach the client after ${round} pages: ${await describePage(page)}`);
      const current = new URL(page.url());
      if (current.pathname === '/auth/sign-in') {
        if (pages.includes('sign-in')) {
          const alert = await alertText(page);
          throw new CheckFailed(`sign-in was refused for ${email}: ${alert || (await describePage(page))}`);
        }
        check(email !== undefined, `a sign-in page was shown where none was expected: ${await describePage(page)}`);
        pages.push('sign-in');
        outcome = await submitSignIn(page, watch, { email, password });
      } else if (current.pathname === '/auth/second-factor') {
        if (pages.includes('second-factor')) {
          const alert = await alertText(page);
          throw new CheckFailed(`the second factor was refused: ${alert || (await describePage(page))}`);
        }
        check(secondFactor !== undefined, `a second factor was asked for: ${await describePage(page)}`);
        pages.push('second-factor');
        outcome = await submitSecondFactor(page, watch, await secondFactor());
      } else if (current.pathname === '/auth/consent') {
        check(!pages.includes('consent'), `the consent page was shown twice: ${await describePage(page)}`);
        pages.push('consent');
        outcome = await submitConsent(page, watch, consent);
      } else if (current.pathname.startsWith('/oauth/end-session') && !pages.includes('end-session')) {
        // A logout confirmation page (OpenID RP-Initiated Logout 1.0 §2 lets the OP ask).
        pages.push('end-session');
        const submit = page.locator('form button[type="submit"], form input[type="submit"]');
        check((await submit.count()) >= 1, `end-session page without a form to confirm: ${await describePage(page)}`);
        const preferred = page.locator(
          'form button[type="submit"]:not([value="no"]):not([value="cancel"]):not([value="deny"])',
        );
        const target = (await preferred.count()) > 0 ? preferred.first() : submit.first();
        outcome = await act(page, watch, () => target.click());
      } else {
        throw new CheckFailed(`unexpected page in the interaction: ${await describePage(page)}`);
      }
    }
    return { url: watch.url, pages };
  } finally {
    watch.stop();
  }
}

/**
 * Every visible form control of `page` has a `<label for="its id">` (hidden inputs and buttons
 * aside). Returns the names checked.
 */
export async function checkLabels(page, where, { someInputs = true } = {}) {
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
  check(result.length > 0 || !someInputs, `${where} has no visible inputs`);
  const unlabelled = result.filter((c) => !c.labelled);
  check(unlabelled.length === 0, `${where}: inputs without <label for>: ${JSON.stringify(unlabelled)}`);
  return result.map((c) => c.name);
}

/** The session cookie among `cookies` (`svc_session`, or `__Host-svc_session` on https). */
export function sessionCookie(cookies) {
  return cookies.find((c) => c.name === 'svc_session' || c.name === '__Host-svc_session');
}

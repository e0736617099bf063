// A person's own API keys in Chromium (`/auth/account/api-keys`, issue 19 item 5), JavaScript
// off and a phone-sized viewport, as a person with a plain browser meets the page: signed in with
// the password, the account page links to it; every input has its <label for> (the permission
// checkboxes too), nothing scrolls sideways at 375 px; a key made with a name, one permission
// ticked and a lifetime is shown once in a labelled read-only field, on a no-store page; a second
// key is made and revoked with its row's button (the notice says so, the row says it ended).
// The keys are printed for the Rust side, which asks introspection what they grant.
//
// Environment: ISSUER (the tenant's origin), USER_EMAIL, USER_PASSWORD (a person whose role
// grants PERMISSION at the one API the tenant's policy names), PERMISSION, CHROMIUM_PATH
// (default /usr/bin/chromium). Prints one JSON line on stdout; exits 1 with
// "interop check failed: …" on stderr otherwise.
import { check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { alertText, checkLabels, describePage } from '../lib/hosted.mjs';

const PAGE = '/auth/account/api-keys';
let closeBrowser = async () => {};

/** Clicks `target` and returns the answer of the document it led to. */
async function submitAndWait(page, target, where) {
  check((await target.count()) === 1, `${where}: no such control on ${await describePage(page)}`);
  const [response] = await Promise.all([page.waitForNavigation({ timeout: 30_000 }), target.click()]);
  await page.waitForLoadState('domcontentloaded');
  check(response !== null, `${where}: no navigation`);
  return response;
}

async function noSidewaysScroll(page, where) {
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  check(widths.scroll <= widths.viewport, `${where} scrolls sideways at 375px: ${JSON.stringify(widths)}`);
}

/** Fills the first creation form (the tenant names one API) and submits it. */
async function createKey(page, name, permission, days) {
  const form = page.locator('form:has(input[name="resource"])').first();
  await form.locator('input[name="name"]').fill(name);
  await form.locator(`input[name="permission"][value="${permission}"]`).check();
  await form.locator('input[name="days"]').fill(String(days));
  return submitAndWait(page, form.locator('button[value="create"]'), `create ${name}`);
}

async function main(step) {
  const issuer = env('ISSUER');
  const email = env('USER_EMAIL');
  const password = env('USER_PASSWORD');
  const permission = env('PERMISSION');
  const checks = {};
  const passed = (name) => {
    checks[name] = true;
  };

  step('launch chromium');
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 812 } });
  const page = await context.newPage();

  step('sign in with the password');
  await page.goto(`${issuer}/auth/sign-in`);
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(password);
  await submitAndWait(page, page.locator('form button[type="submit"]').first(), 'sign-in');
  checkEqual(new URL(page.url()).pathname, '/auth/account', 'after the password the browser is on');

  step('the account page links to the API keys page');
  const shown = await submitAndWait(page, page.getByRole('link', { name: 'API keys' }), 'the account link');
  checkEqual(new URL(page.url()).pathname, PAGE, 'the link leads to');
  checkEqual(shown.status(), 200, 'the page');
  passed('account_page_links_to_keys');

  step('labels and layout of the page');
  const names = await checkLabels(page, 'the API keys page');
  check(names.includes('permission') && names.includes('days') && names.includes('name'), `inputs: ${names}`);
  await noSidewaysScroll(page, 'the API keys page');
  checkEqual(shown.headers()['cache-control'], 'no-store', 'Cache-Control of the page');
  passed('keys_page_labels_and_375px');

  step('create a key');
  const created = await createKey(page, 'Chromium script', permission, 14);
  checkEqual(created.status(), 200, 'the answer to the creation');
  checkEqual(created.headers()['cache-control'], 'no-store', 'Cache-Control of the new key');
  await checkLabels(page, 'the new key page');
  const kept = await page.locator('#new-key').inputValue();
  check(/^svck_[a-z2-7]{52}$/.test(kept), `the new key has not the key's shape: ${kept.slice(0, 8)}…`);
  check(await page.locator('#new-key').evaluate((el) => el.readOnly), 'the new key field is not read-only');
  await noSidewaysScroll(page, 'the new key page');
  passed('key_shown_once_labelled');

  step('the list shows it, never the key');
  await submitAndWait(page, page.getByRole('link', { name: 'Back to your API keys' }), 'back to the list');
  const listed = await page.content();
  check(listed.includes('Chromium script'), 'the new key is not listed');
  check(!listed.includes(kept), 'the list shows the key itself');
  passed('listed_without_secret');

  step('a permission the page did not offer is refused');
  const offered = await page.locator('input[name="permission"]').evaluateAll((els) => els.map((e) => e.value));
  checkEqual(JSON.stringify(offered), JSON.stringify([permission]), 'the permissions offered');
  passed('only_held_permissions_offered');

  step('create a second key and revoke it');
  await createKey(page, 'Doomed', permission, 1);
  const doomed = await page.locator('#new-key').inputValue();
  await submitAndWait(page, page.getByRole('link', { name: 'Back to your API keys' }), 'back to the list');
  const revoked = await submitAndWait(page, page.getByRole('button', { name: 'Revoke: Doomed' }), 'revoke');
  checkEqual(revoked.status(), 200, 'the list after revoking');
  checkEqual(new URL(page.url()).search, '?revoked=1', 'the query after revoking');
  const notice = (await page.locator('[role="status"]').first().textContent()).trim();
  check(notice.includes('revoked'), `no notice of the revocation: ${notice}`);
  const doomedRow = (await page.locator('tr', { hasText: 'Doomed' }).textContent()).trim();
  check(doomedRow.includes('Revoked or expired'), `the revoked row: ${doomedRow}`);
  check((await page.getByRole('button', { name: 'Revoke: Doomed' }).count()) === 0, 'a revoked key still has its button');
  check((await alertText(page)) === '', 'an alert on the list');
  passed('revoked_from_its_row');

  return { issuer, checks, kept_key: kept, revoked_key: doomed };
}

await runMain('api-keys', main, () => closeBrowser());

// The API reference as a reader meets it, in Chromium: the Swagger UI page at `/` renders the
// operations of `/openapi.json`, and everything it needs comes from the server itself (the UI is
// vendored into the binary): every request the page makes is recorded and any that goes to
// another origin fails the run, as does a console error (a Content-Security-Policy violation is
// reported there), an uncaught page error or a same-origin answer >= 400. A full-page screenshot
// is saved as the test artifact.
//
// Environment: BASE_URL (the service's origin, e.g. http://127.0.0.1:8080), SCREENSHOT (where the
// PNG goes), MIN_OPERATIONS (default 11: rendered operations needed), CHROMIUM_PATH (default
// /usr/bin/chromium).
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" on stderr otherwise.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { check, env, launchChromium, runMain } from '../lib/common.mjs';

let closeBrowser = async () => {};

async function main(step) {
  const base = new URL(env('BASE_URL'));
  const origin = base.origin;
  const screenshot = env('SCREENSHOT');
  const minOperations = Number(env('MIN_OPERATIONS', '11'));

  step('launch Chromium');
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });

  // Every request any page of the context makes, wherever it goes (service workers included).
  const requests = [];
  context.on('request', (request) => {
    requests.push({ url: request.url(), type: request.resourceType(), method: request.method() });
  });
  const failedResponses = [];
  context.on('response', (response) => {
    if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
  });
  const failedRequests = [];
  context.on('requestfailed', (request) => {
    failedRequests.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`);
  });

  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text().trim());
  });
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(String(error?.message ?? error)));

  step('open /');
  const response = await page.goto(`${origin}/`, { waitUntil: 'load', timeout: 30_000 });
  check(response !== null, 'no response for /');
  check(response.status() === 200, `/ answered ${response.status()}`);
  const headers = response.headers();
  const csp = headers['content-security-policy'] ?? '';
  check(/default-src\s+'none'/.test(csp), `/: CSP without default-src 'none': ${csp}`);
  check(/connect-src\s+'self'/.test(csp), `/: CSP without connect-src 'self': ${csp}`);

  step('wait for Swagger UI to render the operations');
  const deadline = Date.now() + 30_000;
  let operations = 0;
  for (;;) {
    operations = await page.locator('.opblock').count();
    if (operations >= minOperations || Date.now() > deadline) break;
    await page.waitForTimeout(250);
  }
  check(
    operations >= minOperations,
    `Swagger UI rendered ${operations} operations (.opblock), at least ${minOperations} expected; ` +
      `console errors: ${JSON.stringify(consoleErrors)}`,
  );
  const title = (await page.locator('.info .title').first().textContent({ timeout: 5_000 }))?.trim() ?? '';
  check(title.length > 0, 'Swagger UI shows no document title');
  const tags = await page.locator('.opblock-tag').count();
  const errorsShown = await page.locator('.errors-wrapper').count();
  check(errorsShown === 0, `Swagger UI shows ${errorsShown} error panel(s) about the document`);
  // Let late requests (fonts, images) happen before judging the list.
  await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => {});

  step('screenshot');
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  const screenshotBytes = statSync(screenshot).size;

  step('every request stayed on the server');
  // data: and blob: URLs never leave the page; anything else must be this origin.
  const network = requests.filter((r) => !/^(data|blob):/.test(r.url));
  const elsewhere = network.filter((r) => new URL(r.url).origin !== origin);
  check(elsewhere.length === 0, `requests left the server: ${JSON.stringify(elsewhere)}`);
  check(failedRequests.length === 0, `requests failed: ${JSON.stringify(failedRequests)}`);
  check(failedResponses.length === 0, `answers >= 400: ${JSON.stringify(failedResponses)}`);
  const cspViolations = consoleErrors.filter((m) => /Content Security Policy/i.test(m));
  check(cspViolations.length === 0, `CSP violations: ${JSON.stringify(cspViolations)}`);
  check(consoleErrors.length === 0, `console errors: ${JSON.stringify(consoleErrors)}`);
  check(pageErrors.length === 0, `uncaught page errors: ${JSON.stringify(pageErrors)}`);
  const paths = [...new Set(network.map((r) => new URL(r.url).pathname))].sort();
  check(paths.includes('/openapi.json'), `the page never fetched /openapi.json: ${JSON.stringify(paths)}`);

  return {
    origin,
    title,
    operations,
    tags,
    requests: network.length,
    paths,
    other_origins: elsewhere.length,
    csp_violations: cspViolations.length,
    console_errors: consoleErrors.length,
    screenshot,
    screenshot_bytes: screenshotBytes,
  };
}

await runMain('api-reference', main, () => closeBrowser());

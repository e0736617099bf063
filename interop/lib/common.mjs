// Helpers shared by the Node interop scripts: configuration from the environment, Chromium
// (Debian's, driven by playwright-core), checks that fail loudly, and the one-line JSON summary.
import { chromium } from 'playwright-core';

/** A failed interop check: the message says what was expected and what came back. */
export class CheckFailed extends Error {}

/** Fails with `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/** Fails unless `actual === expected`. */
export function checkEqual(actual, expected, what) {
  if (actual !== expected) {
    throw new CheckFailed(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

/** The environment variable `name`, or a clear failure when it is missing. */
export function env(name, fallback) {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') {
    throw new CheckFailed(`environment variable ${name} is required`);
  }
  return value;
}

/** The Chromium arguments every script uses (headless, no sandbox, no network side traffic). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * Launches Debian's Chromium through playwright-core. Playwright gives every launch a fresh
 * temporary profile of its own (and removes it on close), so no state leaks between runs.
 */
export async function launchChromium() {
  const executablePath = env('CHROMIUM_PATH', '/usr/bin/chromium');
  let browser;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 60_000,
    });
  } catch (error) {
    throw new CheckFailed(
      `could not launch Chromium at ${executablePath} (run: bash scripts/interop-setup.sh): ${error.message}`,
    );
  }
  const close = async () => {
    await browser.close().catch(() => {});
  };
  return { browser, close };
}

/**
 * Runs `main`, prints its result as ONE JSON line on stdout and exits 0; on any failure prints
 * `interop check failed: …` on stderr (and a JSON line with ok:false on stdout) and exits 1.
 * `cleanup` runs either way.
 */
export async function runMain(name, main, cleanup = async () => {}) {
  const started = Date.now();
  const progress = [];
  const step = (label) => {
    progress.push(label);
    process.stderr.write(`[${name}] ${label}\n`);
  };
  let code = 0;
  try {
    const summary = await main(step);
    process.stdout.write(
      `${JSON.stringify({ client: name, ok: true, ...summary, elapsed_ms: Date.now() - started })}\n`,
    );
  } catch (error) {
    code = 1;
    const last = progress.at(-1) ?? '(start)';
    const message = error instanceof CheckFailed ? error.message : (error?.stack ?? String(error));
    const detail = describeError(error);
    process.stderr.write(`interop check failed during "${last}": ${message}\n${detail}`);
    process.stdout.write(
      `${JSON.stringify({ client: name, ok: false, failed_step: last, error: String(error?.message ?? error), passed_steps: progress.slice(0, -1) })}\n`,
    );
  } finally {
    await cleanup().catch(() => {});
  }
  process.exit(code);
}

/** Extra detail of an openid-client / oauth4webapi error: the server's error and status. */
function describeError(error) {
  const parts = [];
  for (const key of ['code', 'error', 'error_description', 'status']) {
    if (error && error[key] !== undefined) parts.push(`${key}=${JSON.stringify(error[key])}`);
  }
  if (error?.cause && typeof error.cause === 'object') {
    try {
      parts.push(`cause=${JSON.stringify(error.cause)}`);
    } catch {
      parts.push(`cause=${String(error.cause)}`);
    }
  }
  return parts.length ? `  ${parts.join(' ')}\n` : '';
}

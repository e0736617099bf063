// Front-channel logout in Chromium (OpenID Connect Front-Channel Logout 1.0 §3): signs in
// through the hosted pages, asks to end the session (RP-initiated logout without a hint, so the
// OP asks to confirm), confirms, and checks that the browser itself loads the application's
// `frontchannel_logout_uri` in a frame — with `iss` and `sid` — under the page's
// Content-Security-Policy, then moves on to the registered post-logout URI without any script.
// Requests to the applications' origins are answered locally; nothing leaves the machine.
//
// Environment: AUTHORIZE_URL, END_SESSION_URL, EMAIL, PASSWORD, REDIRECT_URI, POST_LOGOUT_URI,
// FRONTCHANNEL_URI (the registered URI, without the added parameters), ISSUER,
// CHROMIUM_PATH (default /usr/bin/chromium).
import { check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { describePage, routeClientOrigin, runInteraction, watchClient } from '../lib/hosted.mjs';

const authorizeUrl = env('AUTHORIZE_URL');
const endSessionUrl = env('END_SESSION_URL');
const redirectUri = env('REDIRECT_URI');
const postLogoutUri = env('POST_LOGOUT_URI');
const frontchannelUri = env('FRONTCHANNEL_URI');
const issuer = env('ISSUER');
const credentials = { email: env('EMAIL'), password: env('PASSWORD') };

let chromium;
await runMain(
  'frontchannel-logout',
  async (step) => {
    chromium = await launchChromium();
    const context = await chromium.browser.newContext();
    await routeClientOrigin(context, redirectUri);
    await routeClientOrigin(context, frontchannelUri);
    const page = await context.newPage();
    const consoleErrors = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    const frames = [];
    context.on('request', (request) => {
      if (request.url().startsWith(frontchannelUri)) {
        frames.push({
          url: request.url(),
          in_frame: request.frame().parentFrame() !== null,
          at: Date.now(),
        });
      }
    });

    step('sign in');
    const signedIn = await runInteraction(context, page, authorizeUrl, redirectUri, credentials);
    check(new URL(signedIn.url).searchParams.get('code'), `no code: ${signedIn.url}`);

    step('ask to end the session');
    // A new tab of the same browser (same cookies): the first may still be settling on the
    // application's callback.
    const tab = await context.newPage();
    tab.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await tab.goto(endSessionUrl);
    const confirm = tab.locator('form button[type="submit"]');
    check((await confirm.count()) >= 1, `no confirmation form: ${await describePage(tab)}`);

    step('confirm, then wait for the front channel and the post-logout redirect');
    const onward = await watchClient(context, postLogoutUri);
    const confirmedAt = Date.now();
    await confirm.first().click();
    const timeout = new Promise((_, reject) =>
      setTimeout(() => reject(new Error('no post-logout redirect within 15 s')), 15_000),
    );
    const landed = await Promise.race([onward.promise, timeout]);
    const landedAt = Date.now();
    onward.stop();

    step('check what the browser did');
    checkEqual(frames.length, 1, 'front-channel requests');
    const frame = frames[0];
    check(frame.in_frame, `the logout URI was loaded outside a frame: ${frame.url}`);
    const url = new URL(frame.url);
    checkEqual(url.searchParams.get('iss'), issuer, 'iss');
    const sid = url.searchParams.get('sid') ?? '';
    check(sid.startsWith('ses_'), `sid: ${sid}`);
    check(frame.at <= landedAt, 'the frame loaded before the browser moved on');
    check(landed.startsWith(postLogoutUri), `landed on ${landed}`);
    checkEqual(new URL(landed).searchParams.get('state'), 'fc', 'state');
    const csp = consoleErrors.filter((e) => /Content.Security.Policy/i.test(e));
    checkEqual(csp.length, 0, `CSP violations: ${csp.join(' | ')}`);

    return {
      frame_url: frame.url,
      sid,
      landed,
      waited_ms: landedAt - confirmedAt,
      console_errors: consoleErrors,
      checks: { frame_loaded_in_frame: true, iss_and_sid: true, moved_on_without_script: true, no_csp_violation: true },
    };
  },
  async () => chromium?.close(),
);

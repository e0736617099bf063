// The React example (this directory, built by `vite build --mode development` before this test,
// so StrictMode's double effects run) in Chromium against a running svc; the journey and its
// assertions are test-support/spa.mjs's, plus <RequireAuth> here.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PASSWORD, skip } from "../../../test-support/e2e.mjs";
import { exampleJourney } from "../../../test-support/spa.mjs";

test("browser: the React example (@svc/react, Vite) signs in through svc", { skip, timeout: 120_000 }, () =>
  exampleJourney("react", new URL("../dist/", import.meta.url), async (tab, { origin, person, status, text }) => {
    // <RequireAuth> on a page of its own, signed out: straight to the sign-in, then back to that page.
    await Promise.all([tab.waitForURL(/\/auth\/sign-in/), tab.goto(`${origin}/app/private`)]);
    await tab.fill('input[name="email"]', person.email);
    await tab.fill('input[name="password"]', PASSWORD);
    await Promise.all([tab.waitForURL(/\/app\/callback/), tab.press('input[name="password"]', "Enter")]);
    await status("signed-in");
    await tab.waitForSelector("#private");
    assert.equal(await text("#private"), `Only for ${person.sub}`);
    assert.equal(new URL(tab.url()).pathname, "/app/private", "back on the page that asked, through returnTo");
  }),
);

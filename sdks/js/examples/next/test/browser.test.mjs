// The Next.js example (this directory, `next build` before this test) served by `next start`
// in Chromium against a running svc; the journey and its assertions are
// test-support/server-app.mjs's.
import { createRequire } from "node:module";
import { test } from "node:test";
import { skip } from "../../../test-support/e2e.mjs";
import { serve, serverAppJourney } from "../../../test-support/server-app.mjs";

const next = createRequire(import.meta.url).resolve("next/dist/bin/next");

test("browser: the Next.js example (@svc/next, next build) signs in through svc", { skip, timeout: 150_000 }, () =>
  serverAppJourney("next", (port, origin, settings) =>
    serve(origin, [next, "start", "-H", "127.0.0.1", "-p", String(port)], new URL("..", import.meta.url), { NEXT_TELEMETRY_DISABLED: "1", ...settings }),
  ),
);

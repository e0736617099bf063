// The SvelteKit example (this directory, `vite build` with adapter-node before this test) served
// by `node build` in Chromium against a running svc; the journey and its assertions are
// test-support/server-app.mjs's.
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { skip } from "../../../test-support/e2e.mjs";
import { serve, serverAppJourney } from "../../../test-support/server-app.mjs";

test("browser: the SvelteKit example (@svc/sveltekit, adapter-node) signs in through svc", { skip, timeout: 150_000 }, () =>
  serverAppJourney("sveltekit", (port, origin, settings) =>
    // adapter-node's server: HOST/PORT to listen on, ORIGIN for the URL SvelteKit sees.
    serve(origin, [fileURLToPath(new URL("../build/index.js", import.meta.url))], new URL("..", import.meta.url), { HOST: "127.0.0.1", PORT: String(port), ORIGIN: origin, ...settings }),
  ),
);

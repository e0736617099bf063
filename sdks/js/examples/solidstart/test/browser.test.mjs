// The SolidStart example (this directory, `vinxi build` with Nitro's node-server preset before
// this test) served by `node .output/server/index.mjs` in Chromium against a running svc; the
// journey and its assertions are test-support/server-app.mjs's.
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { skip } from "../../../test-support/e2e.mjs";
import { serve, serverAppJourney } from "../../../test-support/server-app.mjs";

test("browser: the SolidStart example (@svc/solidstart, vinxi node-server) signs in through svc", { skip, timeout: 150_000 }, () =>
  serverAppJourney("solidstart", (port, origin, settings) =>
    // Nitro's node server: HOST/PORT to listen on.
    serve(origin, [fileURLToPath(new URL("../.output/server/index.mjs", import.meta.url))], new URL("..", import.meta.url), { HOST: "127.0.0.1", PORT: String(port), ...settings }),
  ),
);

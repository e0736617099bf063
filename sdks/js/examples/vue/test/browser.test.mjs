// The Vue example (this directory, built by `vite build` before this test) in Chromium
// against a running svc; the journey and its assertions are test-support/spa.mjs's.
import { test } from "node:test";
import { skip } from "../../../test-support/e2e.mjs";
import { exampleJourney } from "../../../test-support/spa.mjs";

test("browser: the Vue example (@svc/vue, Vite) signs in through svc", { skip, timeout: 120_000 }, () =>
  exampleJourney("vue", new URL("../dist/", import.meta.url)),
);

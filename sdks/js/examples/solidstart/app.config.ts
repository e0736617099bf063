// SolidStart 1.x (vinxi): the request middleware of @svc/solidstart, and Nitro's node-server
// preset, whose .output/server/index.mjs is the production server the browser test runs.
import { defineConfig } from "@solidjs/start/config";

export default defineConfig({
  middleware: "./src/middleware.ts",
  server: { preset: "node-server" },
});

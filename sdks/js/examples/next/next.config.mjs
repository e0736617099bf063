// The example's Next configuration. The workspace root (sdks/js) is named so that Turbopack
// resolves the workspace's node_modules (and the linked @svc/* packages) without guessing.
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** @type {import("next").NextConfig} */
export default {
  reactStrictMode: true,
  poweredByHeader: false,
  turbopack: { root },
  outputFileTracingRoot: root,
  // `npm run lint` type-checks with tsc; doing it again inside `next build` only costs test time.
  typescript: { ignoreBuildErrors: true },
};

// `next build` of this example, once per `npm test`, offline (telemetry off; Next's SWC binary
// is the @next/swc-* optional dependency npm installed). It takes ~10 s, so it is not cached.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const next = createRequire(import.meta.url).resolve("next/dist/bin/next");
const started = Date.now();
const run = spawnSync(process.execPath, [next, "build"], {
  cwd: new URL("..", import.meta.url),
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  encoding: "utf8",
});
if (run.status !== 0) {
  process.stderr.write(`${run.stdout}\n${run.stderr}\n`);
  process.exit(run.status ?? 1);
}
console.log(`next build of examples/next: ${((Date.now() - started) / 1000).toFixed(1)} s`);

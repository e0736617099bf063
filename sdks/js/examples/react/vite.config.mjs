import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served under /app/ by the same-origin proxy of the browser test (and by any reverse proxy in
// front of svc in production: the token endpoint sends no CORS headers). The test builds with
// `--mode development` so React's development build runs StrictMode's double effects in the
// browser: the callback must still be completed exactly once.
export default defineConfig(({ mode }) => ({
  base: "/app/",
  plugins: [react()],
  define: mode === "development" ? { "process.env.NODE_ENV": JSON.stringify("development") } : {},
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, minify: mode !== "development" },
}));

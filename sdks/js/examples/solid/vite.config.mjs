import { defineConfig } from "vite";
import solid from "vite-plugin-solid";

// Served under /app/ by the same-origin proxy of the browser test (and by any reverse proxy in
// front of svc in production: the token endpoint sends no CORS headers).
export default defineConfig({
  base: "/app/",
  plugins: [solid()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vite";

// Served under /app/ by the same-origin proxy of the browser test (and by any reverse proxy in
// front of svc in production: the token endpoint sends no CORS headers).
export default defineConfig({
  base: "/app/",
  plugins: [svelte()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
});

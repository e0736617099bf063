// adapter-node: `vite build` writes a Node server to build/, which the test runs with `node build`.
import adapter from "@sveltejs/adapter-node";

/** @type {import("@sveltejs/kit").Config} */
export default {
  kit: { adapter: adapter({ out: "build" }) },
};

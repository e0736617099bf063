// A module resolve hook for test/request.test.mjs: `next/headers` and `next/navigation` resolve
// to the stand-ins next to this file, so requireAccessToken() runs in plain Node with a request
// context the test controls.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === "next/headers") return { url: new URL("./headers.mjs", import.meta.url).href, shortCircuit: true };
  if (specifier === "next/navigation") return { url: new URL("./navigation.mjs", import.meta.url).href, shortCircuit: true };
  return nextResolve(specifier, context);
}

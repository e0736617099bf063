// What the live tests of every package in the workspace share: the SVC_E2E_* environment (and
// the skip reason without it), provisioning through the management API, and a cookie-keeping
// fetch "browser" that walks the hosted sign-in form the way sdks/go/live_test.go does.
import assert from "node:assert/strict";

export const env = {
  issuer: process.env.SVC_E2E_ISSUER,
  tenantId: process.env.SVC_E2E_TENANT_ID,
  managementId: process.env.SVC_E2E_MANAGEMENT_ID,
  managementSecret: process.env.SVC_E2E_MANAGEMENT_SECRET,
};
const missing = Object.entries(env).filter(([, v]) => !v).map(([k]) => k);
export const skip = missing.length ? `SVC_E2E_* is not set (${missing.join(", ")}): the runtime's js_sdk test runs this against the service` : false;

export const REDIRECT = "http://127.0.0.1:65500/callback";
export const BYE = "http://127.0.0.1:65500/bye";
export const PASSWORD = "Analytical-Engine-1843!";
const HIDDEN_INPUT = /<input type="hidden" name="([^"]+)" value="([^"]*)"/g;

const unescapeHtml = (s) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e) =>
    e[0] === "#" ? String.fromCodePoint(e[1].toLowerCase() === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10))
    : { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }[e.toLowerCase()]);

/** A cookie-keeping browser for one origin that follows no redirects. */
export function browser(issuer) {
  const jar = new Map();
  const origin = new URL(issuer).origin;
  async function request(url, init = {}) {
    const headers = new Headers(init.headers);
    if (new URL(url).origin === origin && jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual", signal: AbortSignal.timeout(10_000) });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
      if (expired || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    const body = await response.text();
    const location = response.headers.get("location");
    return { status: response.status, body, location: location && new URL(location, url).toString() };
  }
  return { request, jar };
}

/** Follows the browser from authUrl through the hosted sign-in to the redirect URI. */
export async function signIn(b, issuer, authUrl, email) {
  let next = authUrl;
  for (let i = 0; i < 8; i++) {
    const page = await b.request(next);
    assert.equal(page.status, 303, `${next} answered ${page.status}: ${page.body.slice(0, 300)}`);
    let location = page.location;
    if (location.startsWith(REDIRECT)) return location;
    if (location.includes("/auth/sign-in?")) {
      const form = await hiddenFields(b, location);
      form.set("email", email);
      form.set("password", PASSWORD);
      const posted = await b.request(`${issuer}/auth/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form.toString(),
      });
      assert.equal(posted.status, 303, `the sign-in form answered ${posted.status}: ${posted.body.slice(0, 300)}`);
      location = posted.location;
    }
    next = location;
  }
  assert.fail("the sign-in did not come back to the application");
}

async function hiddenFields(b, pageUrl) {
  const page = await b.request(pageUrl);
  const form = page.body.split("</form>")[0];
  const fields = new URLSearchParams();
  for (const [, name, value] of form.matchAll(HIDDEN_INPUT)) fields.set(unescapeHtml(name), unescapeHtml(value));
  return fields;
}

/** A client_credentials token of the tenant's management application (client_secret_basic). */
export async function managementToken(issuer, scope) {
  const basic = Buffer.from(`${encodeURIComponent(env.managementId)}:${encodeURIComponent(env.managementSecret)}`).toString("base64");
  const response = await fetch(`${issuer}/oauth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", scope }).toString(),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.access_token;
}

export async function management(issuer, token, method, path, body) {
  const response = await fetch(`${issuer}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
    body: body && JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

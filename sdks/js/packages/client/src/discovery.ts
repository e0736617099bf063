// OpenID Connect Discovery 1.0 for one issuer: reading the document, refusing one that names
// another issuer (§4.3, the mix-up defence's first half) and the fields the flows rely on.

import { DiscoveryError, SvcError } from "./errors.js";
import { type FetchLike, defaultFetch, readJson, send } from "./http.js";

/** The discovery fields this package reads; the rest of the document is kept as is. */
export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
  revocation_endpoint?: string;
  pushed_authorization_request_endpoint?: string;
  code_challenge_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
  dpop_signing_alg_values_supported?: string[];
  [field: string]: unknown;
}

/** The issuer as svc writes it: no trailing slash is added or removed, the comparison is exact. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
}

/** Reads `{issuer}/.well-known/openid-configuration` and checks it describes exactly `issuer`. */
export async function discover(issuer: string, options: { fetch?: FetchLike } = {}): Promise<ServerMetadata> {
  let parsed: URL;
  try {
    parsed = new URL(issuer);
  } catch {
    throw new DiscoveryError("the issuer is not an absolute URL");
  }
  if (parsed.search || parsed.hash) throw new DiscoveryError("an issuer has no query or fragment");
  const fetchFn = options.fetch ?? defaultFetch();
  let response: Response;
  try {
    response = await send(fetchFn, discoveryUrl(issuer), { headers: { accept: "application/json" } });
  } catch (cause) {
    throw cause instanceof SvcError ? new DiscoveryError(cause.message, { cause }) : cause;
  }
  const body = await readJson(response);
  if (!response.ok || !body || typeof body !== "object") {
    throw new DiscoveryError(`the discovery document could not be read (HTTP ${response.status})`);
  }
  const metadata = body as ServerMetadata;
  if (metadata.issuer !== issuer) {
    throw new DiscoveryError("the discovery document names another issuer (OpenID Connect Discovery §4.3)");
  }
  for (const field of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
    if (typeof metadata[field] !== "string") throw new DiscoveryError(`the discovery document has no ${field}`);
  }
  const methods = metadata.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes("S256")) {
    throw new DiscoveryError("the server does not support PKCE S256");
  }
  return metadata;
}

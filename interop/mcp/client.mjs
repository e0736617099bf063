// The MCP TypeScript SDK (@modelcontextprotocol/sdk: Client, StreamableHTTPClientTransport and its
// own OAuth client) authorizing against svc for svc-sdk's sample MCP server
// (crates/sdk/examples/mcp_server.rs). Nothing here speaks OAuth itself: the SDK follows the
// server's 401 to its RFC 9728 metadata, finds svc there, reads svc's RFC 8414 metadata, registers
// a client (RFC 7591, the tenant's registration policy is open), sends the person through the
// hosted sign-in and consent pages (PKCE S256, RFC 8707 `resource`), redeems the code and retries.
// This script only plays the browser (Chromium) and the person, and watches what went over the
// wire. Then: the tools listed are those the person's roles grant (`tools:search`), a call of one
// works, a call of the other is refused (403 insufficient_scope) and the SDK's step-up
// re-authorization yields no more while the person lacks it; once an administrator grants it
// (GRANT_URL, a role PATCH with MANAGEMENT_TOKEN), the step-up yields a token for both tools.
//
// Environment: ISSUER, MCP_URL (the sample server's /mcp, also its RFC 8707 resource),
// REDIRECT_URI, USER_EMAIL, USER_PASSWORD, USER_ID, MANAGEMENT_TOKEN, GRANT_URL, GRANT_BODY (JSON),
// CHROMIUM_PATH; optional CLIENT_METADATA_URL: the https URL of a client ID metadata document
// (draft-ietf-oauth-client-id-metadata-document, the SDK's `clientMetadataUrl`), served by the
// test. With it the SDK must use that URL as its client_id instead of registering (the tenant's
// registration is closed then), and the token's client_id is the URL.
// Prints one JSON line on stdout; exits 1 with "interop check failed: …" otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import * as jose from 'jose';
import { CheckFailed, check, checkEqual, env, launchChromium, runMain } from '../lib/common.mjs';
import { routeClientOrigin, runInteraction } from '../lib/hosted.mjs';

let closeBrowser = async () => {};

/** An OAuthClientProvider that keeps everything in memory and plays the person in Chromium. */
class BrowserProvider {
  constructor({ context, page, redirectUri, email, password, metadataUrl }) {
    Object.assign(this, { context, page, redirectUri, email, password, metadataUrl });
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.discovery = undefined;
    this.interactions = [];
  }

  get redirectUrl() {
    return this.redirectUri;
  }

  /** The URL-based client_id (SEP-991); undefined: the SDK registers (RFC 7591) instead. */
  get clientMetadataUrl() {
    return this.metadataUrl;
  }

  get clientMetadata() {
    return {
      client_name: 'MCP interop client (@modelcontextprotocol/sdk)',
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this.expectedState = crypto.randomUUID();
    return this.expectedState;
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information) {
    this.client = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens) {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  saveDiscoveryState(state) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }

  /** The person follows `url` in Chromium; the code the client receives is kept for finishAuth. */
  async redirectToAuthorization(url) {
    const { url: landed, pages } = await runInteraction(this.context, this.page, url.href, this.redirectUri, {
      email: this.email,
      password: this.password,
    });
    const back = new URL(landed);
    const error = back.searchParams.get('error');
    if (error) throw new CheckFailed(`the authorization ended with ${error}: ${back.searchParams.get('error_description')}`);
    checkEqual(back.searchParams.get('state'), this.expectedState, 'state returned to the client');
    this.interactions.push({ request: Object.fromEntries(url.searchParams), pages, iss: back.searchParams.get('iss') });
    this.code = back.searchParams.get('code');
    check(this.code, `no code in the redirect ${landed}`);
  }
}

/** A fetch that records what the SDK sends to `origin` (method, path, form or JSON body). */
function recordingFetch(origin, log) {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin === origin) {
      let body = init.body;
      if (body instanceof URLSearchParams) body = Object.fromEntries(body);
      else if (typeof body === 'string' && body.startsWith('{')) body = JSON.parse(body);
      log.push({ method: init.method ?? 'GET', path: url.pathname, body });
    }
    return fetch(input, init);
  };
}

/** Runs `call`; when the SDK had to send the person to authorize, redeems the code and runs it again. */
async function withAuthorization(provider, transport, call) {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.code);
    return call();
  }
}

async function main(step) {
  const issuer = env('ISSUER');
  const mcpUrl = env('MCP_URL');
  const redirectUri = env('REDIRECT_URI');
  const userId = env('USER_ID');
  const metadataUrl = process.env.CLIENT_METADATA_URL || undefined;
  const svc = [];

  step('chromium');
  const { browser, close } = await launchChromium();
  closeBrowser = close;
  const context = await browser.newContext();
  await routeClientOrigin(context, redirectUri);
  const page = await context.newPage();
  const provider = new BrowserProvider({
    context,
    page,
    redirectUri,
    email: env('USER_EMAIL'),
    password: env('USER_PASSWORD'),
    metadataUrl,
  });
  const transportFetch = recordingFetch(new URL(issuer).origin, svc);
  const newTransport = () => new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: transportFetch });

  // ---- 401 → RFC 9728 → RFC 8414 → RFC 7591 → the person authorizes → code redeemed ----
  step('connect: discovery, registration, authorization');
  let transport = newTransport();
  const client = new Client({ name: 'svc-interop', version: '1.0.0' });
  try {
    await client.connect(transport);
    throw new CheckFailed('the MCP server accepted a connection without a token');
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  check(provider.code, 'the SDK did not send the person to authorize');
  await transport.finishAuth(provider.code);
  transport = newTransport();
  await client.connect(transport);
  checkEqual(client.getServerVersion()?.name, 'trips', 'MCP server name after initialize');

  const registration = svc.find((r) => r.method === 'POST' && r.path === '/oauth/register');
  if (metadataUrl) {
    check(!registration, 'the SDK registered although svc accepts its client ID metadata document');
    checkEqual(provider.client?.client_id, metadataUrl, 'the SDK uses its document URL as client_id');
  } else {
    check(registration, `the SDK did not register at svc's registration endpoint: ${JSON.stringify(svc)}`);
    checkEqual(registration.body.scope, 'tools:search tools:book', 'scope registered (from the RFC 9728 scopes_supported)');
    check(provider.client?.client_id?.startsWith('app_'), `registered client_id: ${provider.client?.client_id}`);
  }
  const [first] = provider.interactions;
  checkEqual(first.request.resource, mcpUrl, 'authorization request resource (RFC 8707)');
  checkEqual(first.request.code_challenge_method, 'S256', 'authorization request PKCE method');
  checkEqual(first.request.scope, 'tools:search tools:book', 'authorization request scope');
  checkEqual(first.iss, issuer, 'iss in the authorization response (RFC 9207)');
  check(first.pages.includes('sign-in') && first.pages.includes('consent'), `first interaction pages: ${first.pages}`);
  const redemption = svc.find((r) => r.path === '/oauth/token' && r.body?.grant_type === 'authorization_code');
  check(redemption, 'no code redemption at the token endpoint');
  checkEqual(redemption.body.resource, mcpUrl, 'code redemption resource (RFC 8707)');
  check(typeof redemption.body.code_verifier === 'string', 'code redemption without code_verifier');

  // The token the SDK holds, checked independently: svc's signature, audience, the tools granted.
  step('token verified with jose');
  const metadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
  const jwks = jose.createRemoteJWKSet(new URL(metadata.jwks_uri));
  const { payload: claims } = await jose.jwtVerify(provider.tokens().access_token, jwks, { issuer, audience: mcpUrl });
  // A registered (third-party) client sees the person under a pairwise identifier (OpenID
  // Connect Core §8.1), never the tenant's user id.
  check(typeof claims.sub === 'string' && claims.sub.length > 0, `token sub: ${claims.sub}`);
  check(claims.sub !== userId, 'a dynamically registered client was given the internal user id as sub');
  checkEqual(claims.client_id, provider.client.client_id, 'token client_id');
  checkEqual(claims.scope, 'tools:search', 'token scope (only what the person\'s roles grant)');

  step('tools/list and tools/call');
  const listed = (await client.listTools()).tools.map((t) => t.name);
  checkEqual(JSON.stringify(listed), JSON.stringify(['search']), 'tools listed');
  const searched = await client.callTool({ name: 'search', arguments: { to: 'Lisbon' } });
  checkEqual(searched.content?.[0]?.text, `search done for ${claims.sub}`, 'search result');

  // ---- A tool the person does not hold: 403 insufficient_scope, the SDK steps up, svc grants
  // nothing more, the second 403 ends it. ----
  step('step-up refused while the person lacks tools:book');
  const interactionsBefore = provider.interactions.length;
  let refusedStatus;
  try {
    await withAuthorization(provider, transport, () => client.callTool({ name: 'book', arguments: {} }));
  } catch (error) {
    refusedStatus = error?.code;
  }
  checkEqual(refusedStatus, 403, 'book without the permission, after the step-up');
  checkEqual(provider.interactions.length, interactionsBefore + 1, 'step-up authorizations');
  checkEqual(provider.interactions.at(-1).request.scope, 'tools:search tools:book', 'step-up scope');
  const { payload: after } = await jose.jwtVerify(provider.tokens().access_token, jwks, { issuer, audience: mcpUrl });
  checkEqual(after.scope, 'tools:search', 'scope after a step-up the person cannot have');

  step('an administrator grants tools:book; step-up');
  const granted = await fetch(env('GRANT_URL'), {
    method: 'PATCH',
    headers: { authorization: `Bearer ${env('MANAGEMENT_TOKEN')}`, 'content-type': 'application/json' },
    body: env('GRANT_BODY'),
  });
  checkEqual(granted.status, 200, 'granting tools:book');
  // A successful call first: the SDK only retries a step-up once per challenge it has not seen.
  await client.callTool({ name: 'search', arguments: {} });
  const booked = await withAuthorization(provider, transport, () => client.callTool({ name: 'book', arguments: {} }));
  checkEqual(booked.content?.[0]?.text, `book done for ${claims.sub}`, 'book result after the step-up');
  const { payload: upgraded } = await jose.jwtVerify(provider.tokens().access_token, jwks, { issuer, audience: mcpUrl });
  checkEqual(upgraded.scope, 'tools:book tools:search', 'scope after the step-up');
  checkEqual(upgraded.sub, claims.sub, 'sub after the step-up (stable for the client)');
  const relisted = (await client.listTools()).tools.map((t) => t.name);
  checkEqual(JSON.stringify(relisted), JSON.stringify(['search', 'book']), 'tools listed after the step-up');
  await client.close();

  return {
    issuer,
    resource: mcpUrl,
    client_id: provider.client.client_id,
    registered: Boolean(registration),
    sub: claims.sub,
    first_scope: claims.scope,
    step_up_scope: upgraded.scope,
    tools_before: listed,
    tools_after: relisted,
    refused_status: refusedStatus,
    interactions: provider.interactions.map((i) => i.pages),
    svc_requests: svc.map((r) => `${r.method} ${r.path}`),
  };
}

runMain('mcp-typescript-sdk', main, async () => closeBrowser());

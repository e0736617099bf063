// Peer for bench/run.sh: node-oidc-provider configured like svc's machine-access and sign-in surface.
//
// Client 1 (PEER_CLIENT_ID, client_secret_basic): client_credentials only; resource indicators give
// ES256-signed JWT access tokens for PEER_RESOURCE_JWT and opaque tokens for PEER_RESOURCE_OPAQUE
// (oidc-provider refuses to introspect JWT access tokens, so introspection is measured on opaque ones).
//
// Client 2 (PEER_CODE_CLIENT_ID, client_secret_basic): authorization_code + refresh_token, PKCE S256,
// redirect URI PEER_REDIRECT_URI (never fetched). Its access tokens are ES256 JWTs for the default
// resource PEER_RESOURCE_JWT (svc issues ES256 at+jwt), its ID tokens RS256 (svc's default) or PEER_ID_TOKEN_ALG, refresh
// tokens come with offline_access and rotate on every use (a rotated one is refused and revokes the grant).
//
// Sign-in is non-interactive: interactions.url points at /interaction/:uid, whose GET finishes the login
// prompt for one fixed account (PEER_ACCOUNT_ID) and the consent prompt by saving a Grant that covers
// what is missing, then redirects back (interactionFinished). A browser-like client just follows
// redirects: /auth → /interaction/… → /auth/… (resume) → … → redirect_uri?code=…; once the grant exists,
// /auth with the session cookie redirects straight to the redirect URI. devInteractions stay disabled.
//
// Default in-memory adapter, plain HTTP, bound to 127.0.0.1 only.
import { generateKeyPairSync, createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.PEER_PORT || 3000);
const issuer = `http://127.0.0.1:${port}`;
const clientId = process.env.PEER_CLIENT_ID || 'bench-client';
const clientSecret = process.env.PEER_CLIENT_SECRET || 'bench-secret-0123456789abcdef0123456789abcdef';
const codeClientId = process.env.PEER_CODE_CLIENT_ID || 'bench-code';
const codeClientSecret = process.env.PEER_CODE_CLIENT_SECRET || 'bench-code-secret-0123456789abcdef0123456789';
const redirectUri = process.env.PEER_REDIRECT_URI || 'http://127.0.0.1/cb';
const accountId = process.env.PEER_ACCOUNT_ID || 'bench-user';
const resourceJwt = process.env.PEER_RESOURCE_JWT || 'https://api.bench.example';
const resourceOpaque = process.env.PEER_RESOURCE_OPAQUE || 'urn:bench:opaque';
const idTokenAlg = process.env.PEER_ID_TOKEN_ALG || 'RS256';

// Signing keys generated at start (ephemeral, like svc in development mode): ES256 for access tokens,
// RSA-2048 for RS256 ID tokens (svc's default ID-token algorithm and key size).
function signingKey(privateKey, alg) {
  const jwk = privateKey.export({ format: 'jwk' });
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  const kid = createHash('sha256').update(JSON.stringify(members)).digest('base64url');
  return { ...jwk, alg, use: 'sig', kid };
}
const es256 = signingKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'ES256');
const rs256 = signingKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RS256');

const configuration = {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
    scope: 'api:read api:write',
  }, {
    client_id: codeClientId,
    client_secret: codeClientSecret,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: idTokenAlg,
    scope: 'openid offline_access email profile',
  }],
  jwks: { keys: [es256, rs256] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  scopes: ['openid', 'offline_access', 'api:read', 'api:write'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  enabledJWA: { idTokenSigningAlgValues: ['ES256', 'RS256'] },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
  findAccount: async (ctx, sub) => ({
    accountId: sub,
    claims: async () => ({ sub, email: `${sub}@bench.example`, email_verified: true, name: 'Bench User' }),
  }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resourceJwt,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => {
        if (resourceIndicator === resourceJwt) {
          return {
            scope: 'api:read api:write',
            audience: resourceJwt,
            accessTokenTTL: 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        }
        if (resourceIndicator === resourceOpaque) {
          return { scope: 'api:read api:write', audience: resourceOpaque, accessTokenTTL: 300, accessTokenFormat: 'opaque' };
        }
        throw new Provider.errors.InvalidTarget();
      },
    },
  },
};

const provider = new Provider(issuer, configuration);
provider.proxy = false;

// GET /interaction/:uid — finishes whatever prompt is pending, without a page.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    throw new Error(`unexpected prompt ${prompt.name}`);
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const app = provider.callback();
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      console.error('interaction failed:', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`interaction failed: ${err.message}`);
    });
    return;
  }
  app(req, res);
});
server.listen(port, '127.0.0.1', () => {
  console.log(`peer oidc-provider listening on ${issuer} pid=${process.pid}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

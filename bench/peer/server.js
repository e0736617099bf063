// Peer for bench/run.sh: node-oidc-provider configured like svc's machine-access surface.
// One confidential client (client_secret_basic) allowed client_credentials; resource indicators give
// ES256-signed JWT access tokens for PEER_RESOURCE_JWT and opaque tokens for PEER_RESOURCE_OPAQUE
// (oidc-provider refuses to introspect JWT access tokens, so introspection is measured on opaque ones);
// introspection enabled. Default in-memory adapter, plain HTTP, bound to 127.0.0.1 only.
import { generateKeyPairSync, createHash } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.PEER_PORT || 3000);
const issuer = `http://127.0.0.1:${port}`;
const clientId = process.env.PEER_CLIENT_ID || 'bench-client';
const clientSecret = process.env.PEER_CLIENT_SECRET || 'bench-secret-0123456789abcdef0123456789abcdef';
const resourceJwt = process.env.PEER_RESOURCE_JWT || 'https://api.bench.example';
const resourceOpaque = process.env.PEER_RESOURCE_OPAQUE || 'urn:bench:opaque';

// ES256 signing key generated at start (ephemeral, like svc in development mode).
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = privateKey.export({ format: 'jwk' });
const thumb = createHash('sha256')
  .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
  .digest('base64url');
const es256 = { ...jwk, alg: 'ES256', use: 'sig', kid: thumb };

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
  }],
  jwks: { keys: [es256] },
  scopes: ['api:read', 'api:write'],
  enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
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
const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`peer oidc-provider listening on ${issuer} pid=${process.pid}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

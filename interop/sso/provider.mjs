// An organization's own OpenID provider for the enterprise single sign-on interop test:
// node `oidc-provider` (panva's certified OpenID Provider, not written by us), on loopback, with
// one confidential web client (svc's connection) and one test account. svc discovers it, sends
// the browser to its authorization endpoint, redeems the code with client_secret_basic + PKCE,
// checks its ID token against its JWKS and, since oidc-provider keeps scope claims out of the ID
// token of the code flow (conformIdTokenClaims), reads the address from its UserInfo.
//
// What it is configured with (all on http://127.0.0.1, which oidc-provider serves as is: its
// cookies are only marked Secure on a secure request, and http redirect URIs are refused for web
// clients only together with the implicit grant):
// - issuer http://127.0.0.1:<port> (OP_PORT, default 0: a free port chosen by the system);
// - the client OP_CLIENT_ID / OP_CLIENT_SECRET, redirect URI OP_REDIRECT_URI (svc's
//   /auth/sso/callback), grant authorization_code, response type code, client_secret_basic,
//   RS256 ID tokens; PKCE required (S256 only, the default);
// - the account OP_ACCOUNT_ID (what its login page takes) with claims email = OP_EMAIL,
//   email_verified = true (OP_EMAIL_VERIFIED=false to say otherwise), name = OP_NAME;
//   any other login finds no account;
// - scopes openid email profile; RFC 9207 `iss` in authorization responses (always on in
//   oidc-provider 9, advertised as authorization_response_iss_parameter_supported);
// - the development interactions (its own login and consent pages) so a browser can sign in;
//   the password is not checked there (oidc-provider's dev login takes any), the login is.
// - a fresh RSA signing key and cookie key per run (nothing on disk).
//
// Prints ONE JSON line on stdout once listening ({"ready":true,"issuer":…,"port":…}), logs the
// provider's error events on stderr, and runs until killed (SIGTERM/SIGINT close it).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

function required(name) {
  const value = process.env[name];
  if (value === undefined || value === '') {
    process.stderr.write(`provider.mjs: environment variable ${name} is required\n`);
    process.exit(2);
  }
  return value;
}

const clientId = required('OP_CLIENT_ID');
const clientSecret = required('OP_CLIENT_SECRET');
const redirectUri = required('OP_REDIRECT_URI');
const accountId = required('OP_ACCOUNT_ID');
const email = required('OP_EMAIL');
const emailVerified = (process.env.OP_EMAIL_VERIFIED ?? 'true') !== 'false';
const name = process.env.OP_NAME || 'Interop Person';
const port = Number.parseInt(process.env.OP_PORT ?? '0', 10);

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: `interop-${randomBytes(4).toString('hex')}`,
  use: 'sig',
  alg: 'RS256',
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      application_type: 'web',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  },
  scopes: ['openid', 'email', 'profile'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
  },
  async findAccount(_ctx, id) {
    if (id !== accountId) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, email, email_verified: emailVerified, name };
      },
    };
  },
});

for (const event of ['server_error', 'authorization.error', 'grant.error', 'userinfo.error', 'jwks.error']) {
  provider.on(event, (...args) => {
    const error = args.find((a) => a instanceof Error);
    process.stderr.write(`provider.mjs: ${event}: ${error?.message ?? ''} ${error?.error_description ?? ''}\n`);
  });
}
for (const event of ['grant.success', 'authorization.success']) {
  provider.on(event, () => process.stderr.write(`provider.mjs: ${event}\n`));
}

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ ready: true, issuer, port: server.address().port, client_id: clientId })}\n`);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

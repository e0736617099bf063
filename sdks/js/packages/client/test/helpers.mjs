// Test keys and tokens: signing keys generated per run with WebCrypto, JWTs signed with them,
// and a fetch that serves a JWKS document (the key set endpoint, for unit tests only; the live
// test talks to a real svc).

const subtle = globalThis.crypto.subtle;

export const b64u = (data) =>
  Buffer.from(typeof data === "string" ? data : new Uint8Array(data)).toString("base64url");

const PARAMS = {
  RS256: {
    gen: { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    sign: { name: "RSASSA-PKCS1-v1_5" },
  },
  ES256: { gen: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } },
  EdDSA: { gen: { name: "Ed25519" }, sign: { name: "Ed25519" } },
};

/** A key pair for `alg`, with its public JWK (kid, alg, use). */
export async function makeKey(alg, kid = `${alg}-key`) {
  const pair = await subtle.generateKey(PARAMS[alg].gen, true, ["sign", "verify"]);
  const jwk = await subtle.exportKey("jwk", pair.publicKey);
  delete jwk.key_ops;
  delete jwk.ext;
  return { alg, kid, privateKey: pair.privateKey, jwk: { ...jwk, kid, alg, use: "sig" } };
}

/** A compact JWS of `claims` signed by `key`; `header` overrides header members. */
export async function sign(key, claims, header = {}) {
  const h = { alg: key.alg, kid: key.kid, typ: "JWT", ...header };
  const input = `${b64u(JSON.stringify(h))}.${b64u(JSON.stringify(claims))}`;
  const signature = await subtle.sign(PARAMS[key.alg].sign, key.privateKey, new TextEncoder().encode(input));
  return `${input}.${b64u(signature)}`;
}

/** A fetch answering `url` with the JWKS of `keys` and counting the calls. */
export function jwksFetch(keys) {
  const fn = async () => {
    fn.calls++;
    return new Response(JSON.stringify({ keys: keys.map((k) => k.jwk) }), { headers: { "content-type": "application/json" } });
  };
  fn.calls = 0;
  return fn;
}

export const ISSUER = "https://acme.id.example";
export const CLIENT_ID = "app_01jtestclient";

/** Claims a valid ID token for CLIENT_ID carries. */
export function idClaims(overrides = {}) {
  const now = Math.floor(Date.now() / 1000);
  return { iss: ISSUER, sub: "usr_1", aud: CLIENT_ID, exp: now + 300, iat: now, nonce: "n-1", ...overrides };
}

export const METADATA = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/oauth/authorize`,
  token_endpoint: `${ISSUER}/oauth/token`,
  jwks_uri: `${ISSUER}/.well-known/jwks.json`,
  userinfo_endpoint: `${ISSUER}/userinfo`,
  end_session_endpoint: `${ISSUER}/oauth/end-session`,
  revocation_endpoint: `${ISSUER}/oauth/revoke`,
  code_challenge_methods_supported: ["S256"],
  authorization_response_iss_parameter_supported: true,
};

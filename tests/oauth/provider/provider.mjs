// A real OpenID provider (oidc-provider, as pinned in package.json) for the
// gateway's OAuth tests, on 127.0.0.1 (a free port). It publishes OpenID
// Connect discovery and a JWKS (one RS256 key made at start) and issues
// RFC 9068 JWT access tokens by the client credentials grant, for the
// resource indicator RESOURCE only, each with a `tenant` claim of `acme`.
//
// Clients (client_secret_basic):
//   agent / agent-secret       every Pilotage scope; tokens of typ at+jwt
//   plain-jwt / plain-secret   the same scopes, but its tokens carry the
//                              header typ JWT, as an ID token or any other
//                              signed JWT of the issuer does
//
// Usage: node provider.mjs RESOURCE
// Prints `issuer <url>` once it answers; runs until killed.

import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const [resource] = process.argv.slice(2);
if (!resource) {
  console.error('usage: node provider.mjs RESOURCE');
  process.exit(2);
}

const SCOPES = ['learn', 'validate', 'execute', 'deploy', 'trace'].map((p) => `pilotage:${p}`);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'provider-rs-1', alg: 'RS256', use: 'sig' };

const client = (id, secret) => ({
  client_id: id,
  client_secret: secret,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope: SCOPES.join(' '),
  token_endpoint_auth_method: 'client_secret_basic',
});

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [client('agent', 'agent-secret'), client('plain-jwt', 'plain-secret')],
    jwks: { keys: [signingKey] },
    scopes: SCOPES,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: () => ({ tenant: 'acme' }),
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          if (token.clientId === 'plain-jwt') {
            jwt.header = { typ: 'JWT' };
          }
        },
      },
    },
  });
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
});

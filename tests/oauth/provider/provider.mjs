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
//   gateway / gateway-secret   the gateway as a client of an engine: scope
//                              engine:run, for ENGINE_RESOURCE, tokens that
//                              live ENGINE_TTL seconds (default 4)
//
// Usage: node provider.mjs RESOURCE [ENGINE_RESOURCE [ENGINE_TTL]]
// Prints `issuer <url>` once it answers, then `grant <client>` for every
// token it issues; runs until killed.

import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const [resource, engineResource, engineTtl] = process.argv.slice(2);
if (!resource) {
  console.error('usage: node provider.mjs RESOURCE');
  process.exit(2);
}

const SCOPES = ['learn', 'validate', 'execute', 'deploy', 'trace'].map((p) => `pilotage:${p}`);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'provider-rs-1', alg: 'RS256', use: 'sig' };

const ENGINE_SCOPE = 'engine:run';
const client = (id, secret, scope = SCOPES.join(' ')) => ({
  client_id: id,
  client_secret: secret,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope,
  token_endpoint_auth_method: 'client_secret_basic',
});

const server = createServer();
// ISSUER_PATH (e.g. /realms/acme) puts the issuer under a path, as Keycloak's
// realms are (Mistral's keycloak-oidc auth reads the realm from it).
const issuerPath = (process.env.ISSUER_PATH || '').replace(/\/$/, '');
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}${issuerPath}`;
  const provider = new Provider(issuer, {
    clients: [
      client('agent', 'agent-secret'),
      client('plain-jwt', 'plain-secret'),
      client('gateway', 'gateway-secret', ENGINE_SCOPE),
    ],
    jwks: { keys: [signingKey] },
    scopes: [...SCOPES, ENGINE_SCOPE],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (engineResource && indicator === engineResource) {
            return {
              scope: ENGINE_SCOPE,
              audience: engineResource,
              accessTokenTTL: Number(engineTtl || 4),
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: 'RS256' } },
            };
          }
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
  provider.on('grant.success', (ctx) => console.log(`grant ${ctx.oidc.client.clientId}`));
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (issuerPath && req.url.startsWith(issuerPath)) {
      // Mounted under the path: the provider reads its mount from originalUrl.
      req.originalUrl = req.url;
      req.url = req.url.slice(issuerPath.length) || '/';
    }
    callback(req, res);
  });
  console.log(`issuer ${issuer}`);
});

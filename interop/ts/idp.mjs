// A stand-in identity provider for the OAuth interop run: generates an
// Ed25519 signing key, serves its JWKS on 127.0.0.1 (a free port), and writes
// access tokens signed with it to OUT (JSON: {jwks, issuer, audience,
// tokens: {full, narrow, expired}}). Runs until killed.
//
// Usage: node idp.mjs OUT AUDIENCE
// Prints `jwks <url>` once the JWKS answers.

import { createServer } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';

const [out, audience] = process.argv.slice(2);
if (!out || !audience) {
  console.error('usage: node idp.mjs OUT AUDIENCE');
  process.exit(2);
}
const ISSUER = 'https://idp.interop.test';
const KID = 'interop-1';
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: KID, alg: 'EdDSA', use: 'sig' };

const b64url = (data) => Buffer.from(data).toString('base64url');

/** A compact JWS (EdDSA) over `claims`. */
function token(claims) {
  const header = b64url(JSON.stringify({ alg: 'EdDSA', typ: 'at+jwt', kid: KID }));
  const payload = b64url(JSON.stringify(claims));
  const signature = sign(null, Buffer.from(`${header}.${payload}`), privateKey);
  return `${header}.${payload}.${b64url(signature)}`;
}

const now = Math.floor(Date.now() / 1000);
const base = { iss: ISSUER, aud: audience, sub: 'interop-client', tenant: 'acme', iat: now, nbf: now };
const all = 'pilotage:learn pilotage:validate pilotage:execute pilotage:deploy pilotage:trace';

const server = createServer((req, res) => {
  if (req.url !== '/jwks') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ keys: [jwk] }));
});
server.listen(0, '127.0.0.1', () => {
  const jwks = `http://127.0.0.1:${server.address().port}/jwks`;
  writeFileSync(out, JSON.stringify({
    jwks,
    issuer: ISSUER,
    audience,
    tokens: {
      full: token({ ...base, exp: now + 3600, scope: all }),
      narrow: token({ ...base, exp: now + 3600, scope: 'pilotage:execute' }),
      expired: token({ ...base, exp: now - 600, scope: all }),
    },
  }));
  console.log(`jwks ${jwks}`);
});

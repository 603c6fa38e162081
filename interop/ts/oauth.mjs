// The gateway as an OAuth 2.1 resource server, seen by the official MCP
// TypeScript SDK (v1 package): the 401 challenge parsed by the SDK's own
// WWW-Authenticate reader, RFC 9728 metadata discovered and schema-checked by
// the SDK's discovery, 403 insufficient_scope and 401 invalid_token, then a
// client whose OAuthClientProvider holds a valid access token drives
// manifest → validate → execute (store: true) → trace fetch.
//
// Usage: node oauth.mjs URL IDP_JSON   (IDP_JSON as written by idp.mjs)
// Each step prints `SDK=<name> oauth step=<step> ok`; a failure prints
// `... FAILED: <why>` and the exit code is 1.

import { readFileSync } from 'node:fs';

const [url, idpFile] = process.argv.slice(2);
const idp = JSON.parse(readFileSync(idpFile, 'utf8'));
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } = await import(
  '@modelcontextprotocol/sdk/client/auth.js'
);
const pkg = JSON.parse(readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url)));
const SDK = `@modelcontextprotocol/sdk@${pkg.version}`;
const EXT = 'io.github.jafarsa0/pilotage';
const TIMEOUT_MS = 30_000;
const metadataUrl = (() => {
  const u = new URL(idp.audience);
  return `${u.origin}/.well-known/oauth-protected-resource${u.pathname}`;
})();

function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** An initialize POST with `token` (or none), as a bare fetch. */
function initialize(token) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  return fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'oauth-interop', version: '1' } } }),
  });
}

/**
 * The provider of a client that already holds its access token (as after an
 * authorization code flow); the flow itself belongs to the identity provider
 * and is never started here.
 */
function provider(accessToken) {
  return {
    get redirectUrl() { return 'http://127.0.0.1/unused'; },
    get clientMetadata() { return { redirect_uris: ['http://127.0.0.1/unused'], client_name: 'pilotage-interop' }; },
    clientInformation: () => ({ client_id: 'pilotage-interop' }),
    tokens: () => ({ access_token: accessToken, token_type: 'Bearer' }),
    saveTokens: () => {},
    redirectToAuthorization: () => { throw new Error('no interactive authorization in this run'); },
    saveCodeVerifier: () => {},
    codeVerifier: () => 'unused',
  };
}

let step = '';
const ok = () => console.log(`SDK=${SDK} oauth step=${step} ok`);
try {
  step = 'challenge_401';
  let res = await initialize(null);
  check(res.status === 401, `HTTP ${res.status} without a token`);
  let params = extractWWWAuthenticateParams(res);
  check(String(params.resourceMetadataUrl) === metadataUrl, `resource_metadata ${params.resourceMetadataUrl}`);
  check(params.scope === 'pilotage:learn pilotage:validate', `scope ${params.scope}`);
  const body = await res.json();
  check(body.jsonrpc === '2.0' && body.error, `not a JSON-RPC error: ${JSON.stringify(body)}`);
  ok();

  step = 'resource_metadata';
  const doc = await discoverOAuthProtectedResourceMetadata(url);
  check(doc.resource === idp.audience, `resource ${doc.resource}`);
  check(doc.authorization_servers?.includes(idp.issuer), `authorization_servers ${doc.authorization_servers}`);
  check(doc.scopes_supported?.includes('pilotage:execute'), `scopes_supported ${doc.scopes_supported}`);
  ok();

  step = 'insufficient_scope_403';
  res = await initialize(idp.tokens.narrow);
  check(res.status === 403, `HTTP ${res.status} for a token without learn/validate`);
  params = extractWWWAuthenticateParams(res);
  check(params.error === 'insufficient_scope', `error ${params.error}`);
  ok();

  step = 'expired_401';
  res = await initialize(idp.tokens.expired);
  check(res.status === 401, `HTTP ${res.status} for an expired token`);
  check(extractWWWAuthenticateParams(res).error === 'invalid_token', 'no invalid_token');
  ok();

  step = 'connect_with_token';
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider(idp.tokens.full) });
  const client = new Client({ name: 'pilotage-interop-oauth', version: '1' }, { capabilities: { extensions: { [EXT]: {} } } });
  await client.connect(transport, { timeout: TIMEOUT_MS });
  check(typeof transport.sessionId === 'string', 'no Mcp-Session-Id');
  ok();

  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
    check(!r.isError, `${name}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent;
  };
  step = 'manifest';
  const manifest = await call('pilotage_manifest', {});
  const lang = manifest.languages.find((l) => l.name === 'workflow/v1');
  check(lang?.loop?.execute && lang?.loop?.trace, `loop ${JSON.stringify(lang?.loop)}`);
  ok();

  step = 'validate';
  const program = {
    name: 'greet', input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    steps: [
      { id: 'get', kind: 'call', capability: 'crm.get_customer', with: { id: '$.input.id' } },
      { id: 'echo', kind: 'call', capability: 'util.echo', with: { value: '$.steps.get.output.name' } },
    ],
    output: { name: '$.steps.echo.output.value' },
  };
  const v = await call(lang.loop.validate, { workflow: program });
  check(v.valid === true, `valid ${v.valid}: ${JSON.stringify(v.diagnostics)}`);
  ok();

  step = 'execute';
  const run = await call(lang.loop.execute, { workflow: program, mode: 'immediate', input: { id: 'cus_1' },
    store: true, expected_catalog_version: v.catalog_version });
  check(run.outcome?.status === 'success', `status ${run.outcome?.status}`);
  ok();

  step = 'trace_fetch';
  const fetched = await call(lang.loop.trace, { run_id: run.run_id });
  check(fetched.run_id === run.run_id, 'another run came back');
  ok();

  await transport.terminateSession();
  await client.close();
} catch (e) {
  console.log(`SDK=${SDK} oauth step=${step} FAILED: ${e?.message ?? e}`);
  process.exit(1);
}

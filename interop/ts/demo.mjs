// The Pilotage loop of a new user, against the demo configuration
// (deploy/gateway.local.toml: anonymous access, auth.anonymous_scope =
// "tenant"), with both TypeScript SDK client packages on their default
// settings: no API key, no revision or negotiation mode chosen.
//   @modelcontextprotocol/sdk     (v1) initialize at its latest revision
//   @modelcontextprotocol/client  (v2) its default negotiation, and its auto
//                                 mode (2026-07-28: no initialize, no session)
// Steps: connect, tools/list, the manifest, validate, execute with store:
// true, and fetch the trace by run_id from a second, fresh client (a later
// request, found because every anonymous caller of the demo is one principal).
//
// Usage: node demo.mjs URL
// Each step prints `SDK=<name> revision=<negotiated> step=<step> ok`; a
// failure prints `... FAILED: <why>` and the exit code is 1.

import { readFileSync } from 'node:fs';

const LANG = 'workflow/v1';
const TIMEOUT_MS = 60_000;

function version(pkg) {
  const file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const SDKS = [
  {
    name: `@modelcontextprotocol/sdk@${version('@modelcontextprotocol/sdk')}`,
    async connect(url) {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const client = new Client({ name: 'pilotage-demo-ts-v1', version: '1' });
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        revision: transport.protocolVersion ?? 'default',
        listTools: () => client.listTools(undefined, { timeout: TIMEOUT_MS }),
        callTool: (params) => client.callTool(params, undefined, { timeout: TIMEOUT_MS }),
        close: () => client.close(),
      };
    },
  },
  v2(undefined),
  // Its auto mode probes server/discover and speaks 2026-07-28, without a session.
  v2({ mode: 'auto' }),
];

function v2(versionNegotiation) {
  const mode = versionNegotiation ? ` (${versionNegotiation.mode})` : '';
  return {
    name: `@modelcontextprotocol/client@${version('@modelcontextprotocol/client')}${mode}`,
    async connect(url) {
      const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const options = versionNegotiation ? { versionNegotiation } : {};
      const client = new Client({ name: 'pilotage-demo-ts-v2', version: '1' }, options);
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        revision: client.getNegotiatedProtocolVersion() ?? 'default',
        listTools: () => client.listTools(undefined, { timeout: TIMEOUT_MS }),
        callTool: (params) => client.callTool(params, { timeout: TIMEOUT_MS }),
        close: () => client.close(),
      };
    },
  };
}

const PROGRAM = {
  name: 'tier report',
  input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  steps: [
    { id: 'get', kind: 'call', capability: 'crm.get_customer', with: { id: '$.input.id' } },
    { id: 'echo', kind: 'call', capability: 'util.echo', with: { value: '$.steps.get.output.tier' } },
  ],
  output: { tier: '$.steps.echo.output.value' },
};

async function loop(sdk, url) {
  let step = 'connect';
  let revision = 'default';
  const ok = () => console.log(`SDK=${sdk.name} revision=${revision} step=${step} ok`);
  const opened = [];
  try {
    const conn = await sdk.connect(url);
    opened.push(conn);
    revision = conn.revision;
    ok();
    const call = async (c, name, args) => {
      const r = await c.callTool({ name, arguments: args });
      check(r.structuredContent && typeof r.structuredContent === 'object', `${name}: no structuredContent`);
      check(!r.isError, `${name}: isError: ${JSON.stringify(r.structuredContent)}`);
      return r.structuredContent;
    };

    step = 'list_tools';
    const { tools } = await conn.listTools();
    const names = new Set(tools.map((t) => t.name));
    check(names.has('pilotage_manifest'), 'no pilotage_manifest');
    ok();

    step = 'manifest';
    const manifest = await call(conn, 'pilotage_manifest', {});
    const lang = manifest.languages.find((l) => l.name === LANG);
    check(lang, `no ${LANG} in the manifest`);
    const { validate, execute, trace } = lang.loop;
    for (const n of [validate, execute, trace]) check(names.has(n), `manifest names ${n}, tools/list does not`);
    ok();

    step = 'validate';
    const verdict = await call(conn, validate, { workflow: PROGRAM });
    check(verdict.valid === true, `invalid: ${JSON.stringify(verdict.diagnostics)}`);
    ok();

    step = 'execute';
    const run = await call(conn, execute, {
      workflow: PROGRAM, mode: 'immediate', input: { id: 'cus_1' }, store: true,
      expected_catalog_version: verdict.catalog_version,
    });
    check(run.outcome?.status === 'success', `outcome ${JSON.stringify(run.outcome)}`);
    ok();

    step = 'trace_fetch';
    const later = await sdk.connect(url);
    opened.push(later);
    const fetched = await call(later, trace, { run_id: run.run_id });
    check(fetched.run_id === run.run_id, `fetched ${fetched.run_id}`);
    check(JSON.stringify(fetched.outcome) === JSON.stringify(run.outcome), 'the fetched outcome differs');
    ok();
    return true;
  } catch (e) {
    console.error(`SDK=${sdk.name} revision=${revision} step=${step} FAILED: ${e instanceof Error ? e.message : e}`);
    return false;
  } finally {
    for (const c of opened) await c.close().catch(() => {});
  }
}

async function main() {
  const url = process.argv[2];
  if (!url) {
    console.error('usage: node demo.mjs URL');
    process.exit(2);
  }
  let failed = 0;
  for (const sdk of SDKS) if (!(await loop(sdk, url))) failed += 1;
  console.log(`typescript demo: ${SDKS.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

await main();

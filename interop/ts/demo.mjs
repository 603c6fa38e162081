// The Pilotage loop of a new user, against the demo configuration
// (deploy/gateway.local.toml: anonymous access, auth.anonymous_scope =
// "session", and the API key demo-key), with both TypeScript SDK client
// packages on their default settings: no revision or negotiation mode chosen.
//   @modelcontextprotocol/sdk     (v1) initialize at its latest revision
//   @modelcontextprotocol/client  (v2) its default negotiation, and its auto
//                                 mode (2026-07-28: no initialize, no session)
// Without a key: connect, tools/list, the manifest, validate, a run, and
// store: true, which each anonymous session keeps as its own (fetched in the
// same session, `not_found` from a second, fresh client). A request without a
// session reads in its manifest what it gets (retention "none", no
// idempotency, no trace tool) and store: true is refused as `unsupported`,
// the message naming the key and no session (its revision may have none).
// With the demo key (`Authorization: Bearer demo-key`, set through the
// transport's requestInit headers): execute with store: true, and fetch the
// trace by run_id from a second, fresh client (a later request).
//
// Usage: node demo.mjs URL
// Each step prints `SDK=<name> revision=<negotiated> step=<step> ok`; a
// failure prints `... FAILED: <why>` and the exit code is 1.

import { readFileSync } from 'node:fs';

const LANG = 'workflow/v1';
const TIMEOUT_MS = 60_000;
/** The demo's API key: the principal that outlives one session or request. */
const DEMO_KEY = { headers: { Authorization: 'Bearer demo-key' } };

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
    async connect(url, requestInit) {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
      const client = new Client({ name: 'pilotage-demo-ts-v1', version: '1' });
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        revision: transport.protocolVersion ?? 'default',
        session: Boolean(transport.sessionId),
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
    async connect(url, requestInit) {
      const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
      const options = versionNegotiation ? { versionNegotiation } : {};
      const client = new Client({ name: 'pilotage-demo-ts-v2', version: '1' }, options);
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        revision: client.getNegotiatedProtocolVersion() ?? 'default',
        session: Boolean(transport.sessionId),
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

/** A tools/call answer that carries structuredContent; the whole result. */
async function answer(conn, name, args) {
  const r = await conn.callTool({ name, arguments: args });
  check(r.structuredContent && typeof r.structuredContent === 'object', `${name}: no structuredContent`);
  return r;
}

/** A tools/call that must succeed; its structuredContent. */
async function call(conn, name, args) {
  const r = await answer(conn, name, args);
  check(!r.isError, `${name}: isError: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent;
}

/** A tools/call that must be the request error `kind`; its error object. */
async function refused(conn, name, args, kind) {
  const r = await answer(conn, name, args);
  const error = r.structuredContent.error;
  check(r.isError === true && error?.kind === kind, `${name}: expected ${kind}, got ${JSON.stringify(r.structuredContent)}`);
  return error;
}

async function loop(sdk, url) {
  let step = 'connect';
  let revision = 'default';
  const ok = () => console.log(`SDK=${sdk.name} revision=${revision} step=${step} ok`);
  const opened = [];
  const connect = async (requestInit) => {
    const conn = await sdk.connect(url, requestInit);
    opened.push(conn);
    return conn;
  };
  try {
    const conn = await connect(undefined);
    revision = conn.revision;
    ok();

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
    for (const n of [validate, execute, trace]) check(n === undefined || names.has(n), `manifest names ${n}, tools/list does not`);
    if (conn.session) {
      check(trace !== undefined, 'no trace tool in a session');
    } else {
      // What a caller no later request can be gets, declared.
      check(lang.retention === 'none', `retention ${lang.retention}`);
      check(lang.capabilities.execute.idempotency === false, 'idempotency declared');
      check(trace === undefined, `a trace tool (${trace}) for a caller nothing is kept for`);
    }
    ok();

    step = 'validate';
    const verdict = await call(conn, validate, { workflow: PROGRAM });
    check(verdict.valid === true, `invalid: ${JSON.stringify(verdict.diagnostics)}`);
    ok();

    // `mode` only where the caller's manifest declares both modes (Part III
    // 4.4): a caller without a session has "immediate".
    const runArgs = (store, execution = lang.execution) => ({
      workflow: PROGRAM, input: { id: 'cus_1' }, store,
      expected_catalog_version: verdict.catalog_version,
      ...(execution === 'both' ? { mode: 'immediate' } : {}),
    });

    step = 'execute';
    const plain = await call(conn, execute, runArgs(false));
    check(plain.outcome?.status === 'success', `outcome ${JSON.stringify(plain.outcome)}`);
    check(typeof plain.output?.tier === 'string', `output ${JSON.stringify(plain.output)}`);
    ok();

    if (conn.session) {
      // The session is the anonymous principal: what it stores is its own.
      step = 'store_in_session';
      const mine = await call(conn, execute, runArgs(true));
      const again = await call(conn, trace, { run_id: mine.run_id });
      check(again.run_id === mine.run_id, `fetched ${again.run_id}`);
      ok();

      step = 'store_is_private';
      const stranger = await connect(undefined);
      await refused(stranger, trace, { run_id: mine.run_id }, 'not_found');
      ok();
    } else {
      // No session, no key: no later request can be this caller.
      step = 'store_without_session';
      const error = await refused(conn, execute, runArgs(true), 'unsupported');
      check(error.message.includes('Authorization: Bearer'), `the refusal names no key: ${error.message}`);
      check(error.message.includes('retention "none"'), `the refusal names not what the manifest declared: ${error.message}`);
      for (const advice of ['initialize', 'Mcp-Session-Id']) {
        check(!error.message.includes(advice), `advice this revision cannot follow (${advice}): ${error.message}`);
      }
      ok();
    }

    step = 'execute_with_key';
    const keyed = await connect(DEMO_KEY);
    const keyedExecution = (await call(keyed, 'pilotage_manifest', {})).languages.find((l) => l.name === LANG).execution;
    const run = await call(keyed, execute, runArgs(true, keyedExecution));
    check(run.outcome?.status === 'success', `outcome ${JSON.stringify(run.outcome)}`);
    check(typeof run.run_id === 'string', `run_id ${run.run_id}`);
    ok();

    step = 'trace_fetch_with_key';
    const later = await connect(DEMO_KEY);
    const keyedLang = (await call(later, 'pilotage_manifest', {})).languages.find((l) => l.name === LANG);
    check(keyedLang.retention !== 'none', "a key's manifest declares no retention");
    const fetched = await call(later, keyedLang.loop.trace, { run_id: run.run_id });
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

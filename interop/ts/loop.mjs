// The Pilotage loop driven by the official MCP TypeScript SDK clients against
// a running gateway: handshake, tools/list (the SDK compiles every
// outputSchema), manifest, guide index and fetch, catalog list/get, validate an
// invalid then a valid program, execute with store: true, fetch the trace, a
// Pilotage request error and an unknown tool (a JSON-RPC error).
//
// Two packages of the TypeScript SDK are driven, each on every revision it can
// be made to speak among 2025-06-18, 2025-11-25 and 2026-07-28:
//   @modelcontextprotocol/sdk     (v1) Client.connect always offers its latest
//                                 revision (2025-11-25); there is no option to
//                                 offer another, so it runs 2025-11-25 only.
//   @modelcontextprotocol/client  (v2) `supportedProtocolVersions` picks the
//                                 revision offered in initialize;
//                                 `versionNegotiation: {mode: "auto"}` probes
//                                 server/discover (2026-07-28, no initialize).
//
// Usage: node loop.mjs URL [REVISION]
// Each step prints `SDK=<name> revision=<r> step=<step> ok`; a failure prints
// `SDK=<name> revision=<r> step=<step> FAILED: <why>` and the exit code is 1.

import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const EXT = 'io.github.jafarsa0/pilotage';
const LANG = 'workflow/v1';
const REVISIONS = ['2025-06-18', '2025-11-25', '2026-07-28'];
const TIMEOUT_MS = 30_000;

/** The installed version of a package (its exports hide package.json). */
function version(pkg) {
  const file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

/** A check that fails the current step with a message. */
function check(cond, message) {
  if (!cond) throw new Error(message);
}

/**
 * An API key principal (tests/fixtures/features.toml): the trace fetch door
 * needs a principal that outlives one request, and 2026-07-28 has no sessions.
 */
const AUTH = { headers: { Authorization: `Bearer ${process.env.PILOTAGE_INTEROP_BEARER ?? 'acme-ops-key'}` } };

/** One SDK package: how to connect at a revision, and its own error type. */
const SDKS = [
  {
    name: `@modelcontextprotocol/sdk@${version('@modelcontextprotocol/sdk')}`,
    revisions: ['2025-11-25'],
    async connect(url, revision) {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: AUTH });
      const client = new Client(
        { name: 'pilotage-interop-ts-v1', version: '1' },
        { capabilities: { extensions: { [EXT]: {} } } },
      );
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        client,
        transport,
        negotiated: transport.protocolVersion,
        // v1: callTool(params, resultSchema, options).
        callTool: (params) => client.callTool(params, undefined, { timeout: TIMEOUT_MS }),
        // v1's callTool validates structuredContent against the outputSchema
        // on isError results too, so nothing extra is needed.
        validateError: null,
        async close() {
          await transport.terminateSession();
          await client.close();
        },
      };
    },
    async isRpcError(e) {
      const { McpError } = await import('@modelcontextprotocol/sdk/types.js');
      return e instanceof McpError;
    },
  },
  {
    name: `@modelcontextprotocol/client@${version('@modelcontextprotocol/client')}`,
    revisions: ['2025-06-18', '2025-11-25', '2026-07-28'],
    async connect(url, revision) {
      const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
      const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/client/validators/ajv');
      const validator = new AjvJsonSchemaValidator();
      const options = {
        capabilities: { extensions: { [EXT]: {} } },
        jsonSchemaValidator: validator,
        // Only the revision under test: no silent fallback to another one.
        supportedProtocolVersions: [revision],
      };
      if (revision >= '2026-07-28') options.versionNegotiation = { mode: 'auto' };
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: AUTH });
      const client = new Client({ name: 'pilotage-interop-ts-v2', version: '1' }, options);
      await client.connect(transport, { timeout: TIMEOUT_MS });
      return {
        client,
        transport,
        negotiated: client.getNegotiatedProtocolVersion(),
        // v2: callTool(params, options).
        callTool: (params) => client.callTool(params, { timeout: TIMEOUT_MS }),
        // v2's callTool skips validation when isError is true; run the SDK's
        // own validator (the one the client uses) on request-error results.
        validateError(tool, structured) {
          const result = validator.getValidator(tool.outputSchema)(structured);
          check(result.valid, `outputSchema rejects the request error: ${result.errorMessage}`);
        },
        async close() {
          if (transport.sessionId) await transport.terminateSession();
          await client.close();
        },
      };
    },
    async isRpcError(e) {
      const { ProtocolError } = await import('@modelcontextprotocol/client');
      return e instanceof ProtocolError;
    },
  },
];

/** The program of the loop: bill gold customers; `amount` decides validity. */
function program(amount) {
  return {
    name: 'invoice gold customers',
    steps: [
      { id: 'find', kind: 'call', capability: 'crm.find_customer', with: { query: 'a' } },
      {
        id: 'each', kind: 'for_each', items: '$.steps.find.output.matches', as: 'c',
        do: [{
          id: 'gold', kind: 'branch', when: { op: 'eq', left: '$.item.tier', right: 'gold' },
          then: [{
            id: 'bill', kind: 'call', capability: 'billing.create_invoice',
            with: { customer_id: '$.item.id', amount_cents: amount },
          }],
        }],
      },
    ],
    output: { billed: '$.steps.each.output' },
  };
}

/** Runs the loop for one SDK at one revision; returns false on a failure. */
async function loop(sdk, url, revision) {
  let step = 'initialize';
  const ok = () => console.log(`SDK=${sdk.name} revision=${revision} step=${step} ok`);
  let conn;
  try {
    const modern = revision >= '2026-07-28';
    step = modern ? 'discover' : 'initialize';
    conn = await sdk.connect(url, revision);
    const { client, transport } = conn;
    check(conn.negotiated === revision, `negotiated ${conn.negotiated}, expected ${revision}`);
    check(client.getServerCapabilities()?.extensions?.[EXT], `no ${EXT} in the server capabilities`);
    check(/pilotage_manifest/.test(client.getInstructions() ?? ''), 'instructions do not name pilotage_manifest');
    if (modern) {
      check(transport.sessionId === undefined, 'a session id on a stateless revision');
    } else {
      check(typeof transport.sessionId === 'string', 'initialize issued no Mcp-Session-Id');
    }
    ok();

    step = 'list_tools';
    const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const t of tools) check(t.outputSchema, `${t.name} has no outputSchema`);
    check(byName.has('pilotage_manifest'), 'no pilotage_manifest');
    ok();

    const call = async (name, args) => {
      const r = await conn.callTool({ name, arguments: args });
      check(r.structuredContent && typeof r.structuredContent === 'object', `${name}: no structuredContent`);
      return r;
    };
    const success = async (name, args) => {
      const r = await call(name, args);
      check(!r.isError, `${name}: isError: ${JSON.stringify(r.structuredContent)}`);
      return r.structuredContent;
    };

    step = 'manifest';
    const manifest = await success('pilotage_manifest', {});
    check(manifest.pilotage === '1.1', `pilotage ${manifest.pilotage}`);
    const lang = manifest.languages.find((l) => l.name === LANG);
    check(lang, `no ${LANG} in the manifest`);
    const { validate, execute, trace } = lang.loop;
    for (const n of [lang.guides, lang.catalog, validate, execute, trace]) {
      check(byName.has(n), `manifest names ${n}, tools/list does not`);
    }
    ok();

    step = 'guide_index';
    const index = await success(lang.guides, { language: LANG });
    const core = index.guides.find((g) => g.level === 'core');
    check(core, 'no core guide in the index');
    ok();

    step = 'guide_fetch';
    const guide = await success(lang.guides, { language: LANG, id: core.id });
    check(/for_each/.test(guide.guide.body) && /branch/.test(guide.guide.body), 'core guide body');
    ok();

    step = 'catalog_list';
    const list = await success(lang.catalog, { language: LANG, verb: 'list', q: 'invoice' });
    check(list.items.some((e) => e.id === 'billing.create_invoice'), 'billing.create_invoice not listed');
    ok();

    step = 'catalog_get';
    const entry = await success(lang.catalog, { language: LANG, verb: 'get', id: 'billing.create_invoice' });
    check(entry.entry.risk === 'write', `risk ${entry.entry.risk}`);
    ok();

    step = 'validate_invalid';
    const bad = await success(validate, { workflow: program('1000') });
    check(bad.valid === false, 'a wrong-typed amount validated');
    check(bad.diagnostics[0]?.code === 'type_mismatch', `code ${bad.diagnostics[0]?.code}`);
    check(bad.diagnostics[0]?.path === '/steps/1/do/0/then/0/with/amount_cents', `path ${bad.diagnostics[0]?.path}`);
    ok();

    step = 'validate_valid';
    const good = await success(validate, { workflow: program(1000) });
    check(good.valid === true, `invalid: ${JSON.stringify(good.diagnostics)}`);
    check(good.plan?.max_risk === 'write', `max_risk ${good.plan?.max_risk}`);
    ok();

    step = 'execute';
    const run = await success(execute, {
      workflow: program(1000), mode: 'immediate', store: true, trace_level: 'full',
      expected_catalog_version: good.catalog_version,
    });
    check(run.outcome?.status === 'success', `outcome ${JSON.stringify(run.outcome)}`);
    check(run.trace.steps.some((s) => s.id.startsWith('bill#')), 'no bill# step in the trace');
    ok();

    step = 'trace_fetch';
    const fetched = await success(trace, { run_id: run.run_id });
    check(isDeepStrictEqual(fetched, run), 'the fetched trace differs from the run answer');
    ok();

    step = 'request_error';
    const missing = await call(lang.catalog, { language: LANG, verb: 'get', id: 'no.such.capability' });
    check(missing.isError === true, 'unknown catalog id: isError is not true');
    check(missing.structuredContent.error?.kind === 'not_found', `kind ${missing.structuredContent.error?.kind}`);
    if (conn.validateError) conn.validateError(byName.get(lang.catalog), missing.structuredContent);
    ok();

    step = 'unknown_tool';
    let thrown;
    try {
      await conn.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      thrown = e;
    }
    check(thrown && (await sdk.isRpcError(thrown)), `expected the SDK's protocol error, got ${thrown}`);
    check(thrown.code === -32602, `code ${thrown.code}`);
    ok();

    step = 'close';
    await conn.close();
    conn = undefined;
    ok();
    return true;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    console.error(`SDK=${sdk.name} revision=${revision} step=${step} FAILED: ${why}`);
    return false;
  } finally {
    if (conn) await conn.client.close().catch(() => {});
  }
}

async function main() {
  const [url, only] = process.argv.slice(2);
  if (!url) {
    console.error('usage: node loop.mjs URL [REVISION]');
    process.exit(2);
  }
  if (only && !REVISIONS.includes(only)) {
    console.error(`unknown revision ${only}; one of ${REVISIONS.join(', ')}`);
    process.exit(2);
  }
  let failed = 0;
  let ran = 0;
  for (const sdk of SDKS) {
    for (const revision of REVISIONS) {
      if (only && revision !== only) continue;
      if (!sdk.revisions.includes(revision)) {
        console.log(`SDK=${sdk.name} revision=${revision} skipped: the SDK cannot offer this revision`);
        continue;
      }
      ran += 1;
      if (!(await loop(sdk, url, revision))) failed += 1;
    }
  }
  console.log(`typescript: ${ran - failed} passed, ${failed} failed`);
  // Nothing run is a failure unless a revision no package speaks was asked for.
  process.exit(failed === 0 && (ran > 0 || only) ? 0 : 1);
}

await main();

// The Pilotage loop driven by the MCP Inspector CLI, as a user runs it:
// `mcp-inspector --cli URL --method ...`, one process (one MCP connection,
// revision 2025-11-25, so one session) per step, arguments passed with
// `--tool-arg key=value`. The Inspector turns each value into the JSON type
// the tool's inputSchema names, so the program travels as an object only
// because the schema types it.
//
// Steps: tools/list, the manifest tool, validate an invalid then a valid
// program, execute with store=true (answered with the run_id and the full
// trace), and fetch the trace by run_id from the next process. This Inspector
// (0.15.0) has no option to send a header, so it cannot present the demo key;
// under the demo's auth.anonymous_scope = "session" each process is a new
// anonymous principal, and the fetch from the next process is `not_found`,
// the same answer as for a run that never existed (checked). Fetching a
// stored run later takes the key (Authorization: Bearer demo-key): the
// TypeScript and Python demo loops do that.
//
// Usage: node loop.mjs URL
// Each step prints `SDK=<name> revision=default step=<step> ok`; a failure
// prints `... FAILED: <why>` and the exit code is 1.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TIMEOUT_MS = 60_000;
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const CLI = here('./node_modules/@modelcontextprotocol/inspector/cli/build/cli.js');
const VERSION = JSON.parse(
  readFileSync(here('./node_modules/@modelcontextprotocol/inspector/package.json'), 'utf8'),
).version;
const SDK = `@modelcontextprotocol/inspector@${VERSION}`;

function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** Runs the Inspector CLI once and parses the JSON it prints. */
function inspector(url, args) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, '--cli', url, '--transport', 'http', ...args],
      { timeout: TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`inspector ${args.join(' ')}: ${stderr.trim() || error.message}`));
          return;
        }
        try {
          resolve(JSON.parse(stdout));
        } catch (e) {
          reject(new Error(`inspector printed no JSON (${e.message}): ${stdout.slice(0, 400)}`));
        }
      },
    );
  });
}

/** tools/call with `--tool-arg key=value` pairs (objects as JSON text); the whole result. */
async function answer(url, name, args) {
  const pairs = Object.entries(args).flatMap(([k, v]) => [
    '--tool-arg',
    `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`,
  ]);
  const r = await inspector(url, ['--method', 'tools/call', '--tool-name', name, ...pairs]);
  check(r.structuredContent && typeof r.structuredContent === 'object', `${name}: no structuredContent`);
  return r;
}

/** A tools/call that must succeed; its structuredContent. */
async function callTool(url, name, args) {
  const r = await answer(url, name, args);
  check(r.isError !== true, `${name}: isError: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent;
}

const program = (amount) => ({
  name: 'tier report',
  input: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  steps: [
    { id: 'get', kind: 'call', capability: 'crm.get_customer', with: { id: '$.input.id' } },
    { id: 'echo', kind: 'call', capability: 'util.echo', with: { value: amount } },
  ],
  output: { tier: '$.steps.get.output.tier', echoed: '$.steps.echo.output.value' },
});

async function main() {
  const url = process.argv[2];
  if (!url) {
    console.error('usage: node loop.mjs URL');
    process.exit(2);
  }
  let step = 'list_tools';
  const ok = () => console.log(`SDK=${SDK} revision=default step=${step} ok`);
  try {
    const { tools } = await inspector(url, ['--method', 'tools/list']);
    const byName = new Map(tools.map((t) => [t.name, t]));
    check(byName.has('pilotage_manifest'), 'no pilotage_manifest in tools/list');
    ok();

    step = 'manifest';
    const manifest = await callTool(url, 'pilotage_manifest', {});
    check(manifest.pilotage === '1.1', `pilotage ${manifest.pilotage}`);
    const lang = manifest.languages.find((l) => l.name === 'workflow/v1');
    check(lang, 'no workflow/v1 in the manifest');
    const { validate, execute, trace } = lang.loop;
    for (const n of [validate, execute, trace]) check(byName.has(n), `manifest names ${n}, tools/list does not`);
    const argument = byName.get(validate)._meta?.['io.github.jafarsa0/pilotage']?.argument;
    check(argument === 'workflow', `program argument ${argument}`);
    ok();

    step = 'validate_invalid';
    const bad = await callTool(url, validate, {
      [argument]: { steps: [{ id: 'x', kind: 'call', capability: 'crm.no_such_thing', with: {} }] },
    });
    check(bad.valid === false, 'an unknown capability validated');
    check(bad.diagnostics[0]?.path === '/steps/0/capability', `path ${bad.diagnostics[0]?.path}`);
    ok();

    step = 'validate_valid';
    const good = await callTool(url, validate, { [argument]: program('hello') });
    check(good.valid === true, `invalid: ${JSON.stringify(good.diagnostics)}`);
    ok();

    step = 'execute';
    const run = await callTool(url, execute, {
      [argument]: program('hello'),
      mode: 'immediate',
      input: { id: 'cus_1' },
      store: 'true',
      trace_level: 'full',
      expected_catalog_version: good.catalog_version,
    });
    check(run.outcome?.status === 'success', `outcome ${JSON.stringify(run.outcome)}`);
    check(run.output?.echoed === 'hello', `output ${JSON.stringify(run.output)}`);
    check(typeof run.run_id === 'string', `run_id ${run.run_id}`);
    check(run.trace?.steps?.length === 2, `trace ${JSON.stringify(run.trace)}`);
    ok();

    // The next process is a new session, so a new anonymous principal: the
    // run is not its own, and it cannot tell that run from one never made.
    step = 'trace_fetch_is_private';
    const fetched = await answer(url, trace, { run_id: run.run_id });
    const never = await answer(url, trace, { run_id: 'run_00000000000000000000000000000000' });
    check(
      fetched.isError === true && fetched.structuredContent.error?.kind === 'not_found',
      `another session fetched the run: ${JSON.stringify(fetched.structuredContent)}`,
    );
    check(
      JSON.stringify(fetched.structuredContent) === JSON.stringify(never.structuredContent),
      `the answer differs from a never-made run's: ${JSON.stringify(fetched.structuredContent)} vs ${JSON.stringify(never.structuredContent)}`,
    );
    ok();
    console.log('inspector: 1 passed, 0 failed');
  } catch (e) {
    console.error(`SDK=${SDK} revision=default step=${step} FAILED: ${e instanceof Error ? e.message : e}`);
    console.log('inspector: 0 passed, 1 failed');
    process.exit(1);
  }
}

await main();

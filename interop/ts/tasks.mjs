// A long run held by an MCP task, driven by the official TypeScript SDK (v1
// package, revision 2025-11-25): `client.experimental.tasks.callToolStream`
// with a task, which creates the task, polls it and reads its result. In the
// multi-instance stage the URL is nginx over three gateways sharing Redis,
// so the polls land on other instances than the one that started the run.
//
// Usage: node tasks.mjs URL API_KEY
// Each step prints `SDK=<name> step=<step> ok`; a failure prints `FAILED`
// and the exit code is 1.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, key] = process.argv.slice(2);
const version = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;
const SDK = `@modelcontextprotocol/sdk@${version}`;
const TIMEOUT_MS = 60_000;

function check(cond, message) {
  if (!cond) throw new Error(message);
}

function program(marker) {
  const steps = [0, 1, 2].map((i) => ({
    id: `nap${i}`, kind: 'call', capability: 'util.sleep', with: { ms: 1500 },
  }));
  steps.push({ id: 'echo', kind: 'call', capability: 'util.echo', with: { value: marker } });
  return { steps, output: { said: '$.steps.echo.output.value' } };
}

async function run() {
  const client = new Client({ name: 'pilotage-tasks-ts', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  check(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'no task-augmented tools/call capability');
  const tools = await client.listTools();
  const run = tools.tools.find((t) => t.name === 'run_workflow');
  check(run?.execution?.taskSupport === 'optional', `run_workflow taskSupport: ${JSON.stringify(run?.execution)}`);
  console.log(`SDK=${SDK} step=capabilities ok`);
  const stream = client.experimental.tasks.callToolStream(
    { name: 'run_workflow', arguments: { mode: 'immediate', workflow: program('typescript'), store: true } },
    undefined,
    { task: { ttl: 600_000 }, timeout: TIMEOUT_MS },
  );
  let created = null;
  let statuses = 0;
  let result = null;
  for await (const message of stream) {
    if (message.type === 'taskCreated') created = message.task.taskId;
    else if (message.type === 'taskStatus') statuses += 1;
    else if (message.type === 'result') result = message.result;
    else if (message.type === 'error') throw message.error;
  }
  check(created, 'no task was created');
  console.log(`SDK=${SDK} step=taskCreated ok (${created}, ${statuses} status update(s))`);
  check(result?.structuredContent?.output?.said === 'typescript', `result ${JSON.stringify(result)}`);
  check(result?._meta?.['io.modelcontextprotocol/related-task']?.taskId === created, `related task ${JSON.stringify(result?._meta)}`);
  console.log(`SDK=${SDK} step=result ok`);
  await client.close();
}

const timer = setTimeout(() => {
  console.log(`SDK=${SDK} FAILED: no end within ${TIMEOUT_MS} ms`);
  process.exit(1);
}, TIMEOUT_MS + 5_000);
run()
  .then(() => clearTimeout(timer))
  .catch((e) => {
    console.log(`SDK=${SDK} FAILED: ${e?.stack ?? e}`);
    process.exit(1);
  });

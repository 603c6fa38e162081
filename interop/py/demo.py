"""The Pilotage loop of a new user, against the demo configuration
(deploy/gateway.local.toml: anonymous access, auth.anonymous_scope = "tenant"),
with two Python clients on their default settings: no API key, no mode, no
revision chosen, so each negotiates what it prefers (2026-07-28, without a
session, for both at the versions pinned in requirements.txt).

  mcp      `mcp.Client(url)`        (the official Python SDK)
  fastmcp  `fastmcp.Client(url)`

Steps: connect (discover or initialize), tools/list, the manifest, validate,
execute with store: true, fetch the trace by run_id (a later request: it is
found because every anonymous caller of the demo is one principal).

Usage: python demo.py URL
Each step prints `SDK=<name> revision=<negotiated> step=<step> ok`; a failure
prints `... FAILED: <why>` and the exit code is 1.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from typing import Any, Awaitable, Callable

import fastmcp
import mcp

TIMEOUT_S = 60.0
LANG = "workflow/v1"


class StepFailed(Exception):
    pass


def check(cond: Any, message: str) -> None:
    if not cond:
        raise StepFailed(message)


PROGRAM = {
    "name": "tier report",
    "input": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    "steps": [
        {"id": "get", "kind": "call", "capability": "crm.get_customer", "with": {"id": "$.input.id"}},
        {"id": "echo", "kind": "call", "capability": "util.echo", "with": {"value": "$.steps.get.output.tier"}},
    ],
    "output": {"tier": "$.steps.echo.output.value"},
}


class Progress:
    def __init__(self, sdk: str) -> None:
        self.sdk, self.revision, self.step = sdk, "default", "connect"

    def ok(self) -> None:
        print(f"SDK={self.sdk} revision={self.revision} step={self.step} ok", flush=True)


async def the_loop(p: Progress, tool_names: list[str], call: Callable[[str, dict], Awaitable[dict]]) -> None:
    """discover → validate → execute (store: true) → fetch, through `call`."""
    p.step = "list_tools"
    check("pilotage_manifest" in tool_names, "no pilotage_manifest in tools/list")
    p.ok()

    p.step = "manifest"
    manifest = await call("pilotage_manifest", {})
    lang = next((entry for entry in manifest["languages"] if entry["name"] == LANG), None)
    check(lang, f"no {LANG} in the manifest")
    validate, execute, trace = lang["loop"]["validate"], lang["loop"]["execute"], lang["loop"]["trace"]
    for name in (validate, execute, trace):
        check(name in tool_names, f"manifest names {name}, tools/list does not")
    p.ok()

    p.step = "validate"
    verdict = await call(validate, {"workflow": PROGRAM})
    check(verdict["valid"] is True, f"invalid: {verdict['diagnostics']}")
    p.ok()

    p.step = "execute"
    run = await call(
        execute,
        {
            "workflow": PROGRAM,
            "mode": "immediate",
            "input": {"id": "cus_1"},
            "store": True,
            "expected_catalog_version": verdict["catalog_version"],
        },
    )
    check(run["outcome"]["status"] == "success", f"outcome {run['outcome']}")
    p.ok()

    p.step = "trace_fetch"
    fetched = await call(trace, {"run_id": run["run_id"]})
    check(fetched["run_id"] == run["run_id"], f"fetched {fetched}")
    check(fetched["outcome"] == run["outcome"], "the fetched outcome differs from the run answer")
    p.ok()


async def with_mcp(url: str, p: Progress) -> None:
    async with mcp.Client(url, read_timeout_seconds=TIMEOUT_S) as client:
        p.revision = str(client.protocol_version)
        p.ok()
        tools = [t.name for t in (await client.list_tools()).tools]

        async def call(name: str, args: dict) -> dict:
            r = await client.call_tool(name, args)
            check(not r.is_error, f"{name}: isError: {r.structured_content}")
            check(isinstance(r.structured_content, dict), f"{name}: no structuredContent")
            return r.structured_content

        await the_loop(p, tools, call)


async def with_fastmcp(url: str, p: Progress) -> None:
    async with fastmcp.Client(url, timeout=TIMEOUT_S) as client:
        p.revision = str(getattr(client, "protocol_version", None) or "default")
        p.ok()
        tools = [t.name for t in await client.list_tools()]

        async def call(name: str, args: dict) -> dict:
            r = await client.call_tool(name, args)
            check(not r.is_error, f"{name}: isError: {r.structured_content}")
            check(isinstance(r.structured_content, dict), f"{name}: no structuredContent")
            return r.structured_content

        await the_loop(p, tools, call)


async def run(sdk: str, body: Callable[[str, Progress], Awaitable[None]], url: str) -> bool:
    p = Progress(sdk)
    try:
        async with asyncio.timeout(10 * TIMEOUT_S):
            await body(url, p)
        return True
    except Exception as e:
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        print(f"SDK={sdk} revision={p.revision} step={p.step} FAILED: {e or type(e).__name__}", file=sys.stderr, flush=True)
        return False


async def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python demo.py URL", file=sys.stderr)
        return 2
    url = argv[1]
    clients = [
        (f"mcp@{importlib.metadata.version('mcp')}", with_mcp),
        (f"fastmcp@{importlib.metadata.version('fastmcp')}", with_fastmcp),
    ]
    failed = 0
    for sdk, body in clients:
        if not await run(sdk, body, url):
            failed += 1
    print(f"python demo: {len(clients) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))

"""The Pilotage loop of a new user, against the demo configuration
(deploy/gateway.local.toml: anonymous access, auth.anonymous_scope = "session",
and the API key demo-key), with two Python clients on their default settings:
no mode, no revision chosen, so each negotiates what it prefers (2026-07-28,
without a session, for both at the versions pinned in requirements.txt).

  mcp      `mcp.Client(url)`; with the key, `mcp.Client(streamable_http_client(
           url, http_client=httpx2.AsyncClient(headers=...)))`
  fastmcp  `fastmcp.Client(url)`; with the key,
           `fastmcp.Client(StreamableHttpTransport(url, headers=...))`

Without a key: connect (discover or initialize), tools/list, the manifest,
validate, a run, and store: true. A request without a session reads in its
manifest what it gets (retention "none", no idempotency, no trace tool) and
store: true is refused as `unsupported`, the message naming the key and no
session (its revision may have none); a client that did open a session keeps
its run as that session's own: fetched in the session, `not_found` from a
second client. With the demo key (`Authorization: Bearer demo-key`): execute
with store: true, then fetch the trace by run_id from a second, fresh client (a
later request).

Usage: python demo.py URL
Each step prints `SDK=<name> revision=<negotiated> step=<step> ok`; a failure
prints `... FAILED: <why>` and the exit code is 1.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
import sys
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import fastmcp
import httpx2
import mcp
from fastmcp.client.transports import StreamableHttpTransport
from mcp.client.streamable_http import streamable_http_client

TIMEOUT_S = 60.0
LANG = "workflow/v1"
# The demo's API key: the principal that outlives one session or request.
DEMO_KEY = {"Authorization": "Bearer demo-key"}
# The first revision without sessions.
SESSIONLESS_FROM = "2026-07-28"


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


# One tools/call: its isError flag and structuredContent.
Call = Callable[[str, dict], Awaitable[tuple[bool, dict]]]


class Connection:
    """One connected client, as the loop sees it."""

    def __init__(self, revision: str, tool_names: list[str], call: Call) -> None:
        self.revision, self.tool_names, self._call = revision, tool_names, call

    @property
    def sessionless(self) -> bool:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.revision)) and self.revision >= SESSIONLESS_FROM

    async def success(self, name: str, args: dict) -> dict:
        is_error, structured = await self._call(name, args)
        check(not is_error, f"{name}: isError: {structured}")
        return structured

    async def refused(self, name: str, args: dict, kind: str) -> dict:
        is_error, structured = await self._call(name, args)
        error = structured.get("error") or {}
        check(is_error and error.get("kind") == kind, f"{name}: expected {kind}, got {structured}")
        return error


# Opens a connection to URL, with the demo key or without one.
Connect = Callable[[str, bool], AbstractAsyncContextManager[Connection]]


async def the_loop(p: Progress, url: str, connect: Connect) -> None:
    """discover → validate → run without a key, store: true as each caller may,
    then execute (store: true) → fetch from a later client with the key."""
    async with connect(url, False) as conn:
        p.revision = conn.revision
        p.ok()

        p.step = "list_tools"
        check("pilotage_manifest" in conn.tool_names, "no pilotage_manifest in tools/list")
        p.ok()

        p.step = "manifest"
        manifest = await conn.success("pilotage_manifest", {})
        lang = next((entry for entry in manifest["languages"] if entry["name"] == LANG), None)
        check(lang, f"no {LANG} in the manifest")
        validate, execute = lang["loop"]["validate"], lang["loop"]["execute"]
        trace = lang["loop"].get("trace")
        for name in (validate, execute, trace):
            check(name is None or name in conn.tool_names, f"manifest names {name}, tools/list does not")
        if conn.sessionless:
            # What a caller no later request can be gets, declared.
            check(lang["retention"] == "none", f"retention {lang['retention']}")
            check(lang["capabilities"]["execute"]["idempotency"] is False, "idempotency declared")
            check(trace is None, f"a trace tool ({trace}) for a caller nothing is kept for")
        else:
            check(trace is not None, "no trace tool in a session")
        p.ok()

        p.step = "validate"
        verdict = await conn.success(validate, {"workflow": PROGRAM})
        check(verdict["valid"] is True, f"invalid: {verdict['diagnostics']}")
        p.ok()

        def run_args(store: bool, execution: str = lang["execution"]) -> dict:
            # `mode` only where the caller's manifest declares both modes
            # (Part III 4.4): a caller without a session has "immediate".
            args = {
                "workflow": PROGRAM,
                "input": {"id": "cus_1"},
                "store": store,
                "expected_catalog_version": verdict["catalog_version"],
            }
            if execution == "both":
                args["mode"] = "immediate"
            return args

        p.step = "execute"
        plain = await conn.success(execute, run_args(False))
        check(plain["outcome"]["status"] == "success", f"outcome {plain['outcome']}")
        check(isinstance(plain["output"].get("tier"), str), f"output {plain['output']}")
        p.ok()

        if conn.sessionless:
            # No session, no key: no later request can be this caller.
            p.step = "store_without_session"
            error = await conn.refused(execute, run_args(True), "unsupported")
            message = error.get("message", "")
            check("Authorization: Bearer" in message, f"the refusal names no key: {error}")
            check('retention "none"' in message, f"the refusal names not what the manifest declared: {error}")
            for advice in ("initialize", "Mcp-Session-Id"):
                check(advice not in message, f"advice this revision cannot follow ({advice}): {error}")
            p.ok()
        else:
            # The session is the anonymous principal: what it stores is its own.
            p.step = "store_in_session"
            mine = await conn.success(execute, run_args(True))
            again = await conn.success(trace, {"run_id": mine["run_id"]})
            check(again["run_id"] == mine["run_id"], f"fetched {again}")
            p.ok()

            p.step = "store_is_private"
            async with connect(url, False) as stranger:
                await stranger.refused(trace, {"run_id": mine["run_id"]}, "not_found")
            p.ok()

    p.step = "execute_with_key"
    async with connect(url, True) as keyed:
        mine = await keyed.success("pilotage_manifest", {})
        keyed_lang = next(entry for entry in mine["languages"] if entry["name"] == LANG)
        run = await keyed.success(execute, run_args(True, keyed_lang["execution"]))
        check(run["outcome"]["status"] == "success", f"outcome {run['outcome']}")
        check(isinstance(run.get("run_id"), str), f"run_id {run.get('run_id')}")
    p.ok()

    p.step = "trace_fetch_with_key"
    async with connect(url, True) as later:
        manifest = await later.success("pilotage_manifest", {})
        lang = next(entry for entry in manifest["languages"] if entry["name"] == LANG)
        check(lang["retention"] != "none", "a key's manifest declares no retention")
        fetched = await later.success(lang["loop"]["trace"], {"run_id": run["run_id"]})
        check(fetched["run_id"] == run["run_id"], f"fetched {fetched}")
        check(fetched["outcome"] == run["outcome"], "the fetched outcome differs from the run answer")
    p.ok()


def structured(name: str, content: Any) -> dict:
    check(isinstance(content, dict), f"{name}: no structuredContent")
    return content


@asynccontextmanager
async def with_mcp(url: str, keyed: bool) -> AsyncIterator[Connection]:
    if keyed:
        async with httpx2.AsyncClient(headers=DEMO_KEY, timeout=httpx2.Timeout(30, read=300)) as http:
            async with mcp.Client(streamable_http_client(url, http_client=http), read_timeout_seconds=TIMEOUT_S) as c:
                yield await mcp_connection(c)
    else:
        async with mcp.Client(url, read_timeout_seconds=TIMEOUT_S) as c:
            yield await mcp_connection(c)


async def mcp_connection(client: mcp.Client) -> Connection:
    tools = [t.name for t in (await client.list_tools()).tools]

    async def call(name: str, args: dict) -> tuple[bool, dict]:
        r = await client.call_tool(name, args)
        return bool(r.is_error), structured(name, r.structured_content)

    return Connection(str(client.protocol_version), tools, call)


@asynccontextmanager
async def with_fastmcp(url: str, keyed: bool) -> AsyncIterator[Connection]:
    server: Any = StreamableHttpTransport(url, headers=DEMO_KEY) if keyed else url
    async with fastmcp.Client(server, timeout=TIMEOUT_S) as client:
        tools = [t.name for t in await client.list_tools()]

        async def call(name: str, args: dict) -> tuple[bool, dict]:
            # raise_on_error=False: a request error is an answer to check.
            r = await client.call_tool(name, args, raise_on_error=False)
            return bool(r.is_error), structured(name, r.structured_content)

        yield Connection(str(getattr(client, "protocol_version", None) or "default"), tools, call)


async def run(sdk: str, connect: Connect, url: str) -> bool:
    p = Progress(sdk)
    try:
        async with asyncio.timeout(10 * TIMEOUT_S):
            await the_loop(p, url, connect)
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
    for sdk, connect in clients:
        if not await run(sdk, connect, url):
            failed += 1
    print(f"python demo: {len(clients) - failed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))

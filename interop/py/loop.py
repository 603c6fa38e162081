"""The Pilotage loop driven by the official MCP Python SDK (`mcp`) client.

Against a running gateway: handshake, tools/list (the SDK caches every
outputSchema), manifest, guide index and fetch, catalog list/get, validate an
invalid then a valid program, execute with store: true, fetch the trace, a
Pilotage request error and an unknown tool (a JSON-RPC error). Every tool call
goes through `Client.call_tool`, which validates structuredContent against the
tool's outputSchema; a request-error result (isError: true), which the SDK
does not validate by itself, is passed to the session's own
`validate_tool_result`.

Revisions: the SDK's initialize handshake always offers its latest handshake
revision (2025-11-25; there is no option to offer another), and
`mode="auto"` probes server/discover for 2026-07-28. So it runs 2025-11-25
(`mode="legacy"`) and 2026-07-28 (`mode="auto"`, asserted to negotiate
2026-07-28); 2025-06-18 is reported as skipped.

Usage: python loop.py URL [REVISION]
Each step prints `SDK=<name> revision=<r> step=<step> ok`; a failure prints
`SDK=<name> revision=<r> step=<step> FAILED: <why>` and the exit code is 1.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

EXT = "io.github.jafarsa0/pilotage"
LANG = "workflow/v1"
REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
SDK = f"mcp@{importlib.metadata.version('mcp')}"
# How the SDK is made to speak each revision it can (see the module docstring).
MODES = {"2025-11-25": "legacy", "2026-07-28": "auto"}
TIMEOUT_S = 30.0


class StepFailed(Exception):
    pass


def check(cond: Any, message: str) -> None:
    if not cond:
        raise StepFailed(message)


def program(amount: Any) -> dict[str, Any]:
    """Bill gold customers; `amount` decides whether the program is valid."""
    return {
        "name": "invoice gold customers",
        "steps": [
            {"id": "find", "kind": "call", "capability": "crm.find_customer", "with": {"query": "a"}},
            {
                "id": "each",
                "kind": "for_each",
                "items": "$.steps.find.output.matches",
                "as": "c",
                "do": [
                    {
                        "id": "gold",
                        "kind": "branch",
                        "when": {"op": "eq", "left": "$.item.tier", "right": "gold"},
                        "then": [
                            {
                                "id": "bill",
                                "kind": "call",
                                "capability": "billing.create_invoice",
                                "with": {"customer_id": "$.item.id", "amount_cents": amount},
                            }
                        ],
                    }
                ],
            },
        ],
        "output": {"billed": "$.steps.each.output"},
    }


class Progress:
    """The step a loop is at, for the failure line."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.step = "discover" if revision >= "2026-07-28" else "initialize"

    def ok(self) -> None:
        print(f"SDK={SDK} revision={self.revision} step={self.step} ok", flush=True)


# An API key principal (tests/fixtures/features.toml): the trace fetch door
# needs a principal that outlives one request, and 2026-07-28 has no sessions.
AUTH = {"Authorization": "Bearer acme-ops-key"}


async def steps(url: str, revision: str, p: Progress) -> None:
    async with httpx2.AsyncClient(headers=AUTH, timeout=httpx2.Timeout(30, read=300)) as http:
        await run_steps(url, revision, p, http)


async def run_steps(url: str, revision: str, p: Progress, http: httpx2.AsyncClient) -> None:
    client = Client(
        streamable_http_client(url, http_client=http),
        mode=MODES[revision],
        extensions=[advertise(EXT, {})],
        client_info=Implementation(name="pilotage-interop-py", version="1"),
        read_timeout_seconds=TIMEOUT_S,
    )
    async with client:
        check(client.protocol_version == revision, f"negotiated {client.protocol_version}, expected {revision}")
        extensions = client.server_capabilities.extensions or {}
        check(EXT in extensions, f"no {EXT} in the server capabilities")
        check("pilotage_manifest" in (client.instructions or ""), "instructions do not name pilotage_manifest")
        p.ok()

        p.step = "list_tools"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name, tool in tools.items():
            check(tool.output_schema, f"{name} has no outputSchema")
        check("pilotage_manifest" in tools, "no pilotage_manifest")
        p.ok()

        async def call(name: str, args: dict[str, Any]) -> Any:
            r = await client.call_tool(name, args)
            check(isinstance(r.structured_content, dict), f"{name}: no structuredContent")
            return r

        async def success(name: str, args: dict[str, Any]) -> dict[str, Any]:
            r = await call(name, args)
            check(not r.is_error, f"{name}: isError: {r.structured_content}")
            return r.structured_content

        p.step = "manifest"
        manifest = await success("pilotage_manifest", {})
        check(manifest["pilotage"] == "1.1", f"pilotage {manifest['pilotage']}")
        lang = next((entry for entry in manifest["languages"] if entry["name"] == LANG), None)
        check(lang, f"no {LANG} in the manifest")
        validate, execute, trace = lang["loop"]["validate"], lang["loop"]["execute"], lang["loop"]["trace"]
        for name in (lang["guides"], lang["catalog"], validate, execute, trace):
            check(name in tools, f"manifest names {name}, tools/list does not")
        p.ok()

        p.step = "guide_index"
        index = await success(lang["guides"], {"language": LANG})
        core = next((g for g in index["guides"] if g.get("level") == "core"), None)
        check(core, "no core guide in the index")
        p.ok()

        p.step = "guide_fetch"
        guide = await success(lang["guides"], {"language": LANG, "id": core["id"]})
        body = guide["guide"]["body"]
        check("for_each" in body and "branch" in body, "core guide body")
        p.ok()

        p.step = "catalog_list"
        found = await success(lang["catalog"], {"language": LANG, "verb": "list", "q": "invoice"})
        check(any(e["id"] == "billing.create_invoice" for e in found["items"]), "billing.create_invoice not listed")
        p.ok()

        p.step = "catalog_get"
        entry = await success(lang["catalog"], {"language": LANG, "verb": "get", "id": "billing.create_invoice"})
        check(entry["entry"]["risk"] == "write", f"risk {entry['entry']['risk']}")
        p.ok()

        p.step = "validate_invalid"
        bad = await success(validate, {"workflow": program("1000")})
        check(bad["valid"] is False, "a wrong-typed amount validated")
        first = bad["diagnostics"][0] if bad["diagnostics"] else {}
        check(first.get("code") == "type_mismatch", f"code {first.get('code')}")
        check(first.get("path") == "/steps/1/do/0/then/0/with/amount_cents", f"path {first.get('path')}")
        p.ok()

        p.step = "validate_valid"
        good = await success(validate, {"workflow": program(1000)})
        check(good["valid"] is True, f"invalid: {good['diagnostics']}")
        check(good["plan"]["max_risk"] == "write", f"max_risk {good['plan']['max_risk']}")
        p.ok()

        p.step = "execute"
        run = await success(
            execute,
            {
                "workflow": program(1000),
                "mode": "immediate",
                "store": True,
                "trace_level": "full",
                "expected_catalog_version": good["catalog_version"],
            },
        )
        check(run["outcome"]["status"] == "success", f"outcome {run['outcome']}")
        check(any(s["id"].startswith("bill#") for s in run["trace"]["steps"]), "no bill# step in the trace")
        p.ok()

        p.step = "trace_fetch"
        fetched = await success(trace, {"run_id": run["run_id"]})
        check(fetched == run, "the fetched trace differs from the run answer")
        p.ok()

        p.step = "request_error"
        missing = await call(lang["catalog"], {"language": LANG, "verb": "get", "id": "no.such.capability"})
        check(missing.is_error is True, "unknown catalog id: isError is not true")
        kind = missing.structured_content.get("error", {}).get("kind")
        check(kind == "not_found", f"kind {kind}")
        try:
            await client.session.validate_tool_result(lang["catalog"], missing)
        except RuntimeError as e:
            raise StepFailed(f"outputSchema rejects the request error: {e}") from e
        p.ok()

        p.step = "unknown_tool"
        try:
            await client.call_tool("no_such_tool", {})
        except MCPError as e:
            check(e.code == -32602, f"code {e.code}")
        else:
            raise StepFailed("an unknown tool raised no MCPError")
        p.ok()

        p.step = "close"
    p.ok()


async def loop(url: str, revision: str) -> bool:
    """Runs the loop for one revision; a failure names SDK, revision and step."""
    p = Progress(revision)
    try:
        async with asyncio.timeout(10 * TIMEOUT_S):
            await steps(url, revision, p)
        return True
    except Exception as e:
        # anyio wraps a failure raised inside the client's task group.
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        why = str(e) or type(e).__name__
        print(f"SDK={SDK} revision={revision} step={p.step} FAILED: {why}", file=sys.stderr, flush=True)
        return False


async def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python loop.py URL [REVISION]", file=sys.stderr)
        return 2
    url, only = argv[1], (argv[2] if len(argv) > 2 else None)
    if only is not None and only not in REVISIONS:
        print(f"unknown revision {only}; one of {', '.join(REVISIONS)}", file=sys.stderr)
        return 2
    ran = failed = 0
    for revision in REVISIONS:
        if only is not None and revision != only:
            continue
        if revision not in MODES:
            print(f"SDK={SDK} revision={revision} skipped: the SDK cannot offer this revision", flush=True)
            continue
        ran += 1
        if not await loop(url, revision):
            failed += 1
    print(f"python: {ran - failed} passed, {failed} failed", flush=True)
    # Nothing run is a failure unless a revision this SDK cannot speak was asked for.
    return 0 if failed == 0 and (ran > 0 or only is not None) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))

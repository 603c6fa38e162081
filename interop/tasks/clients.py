"""A long run held by an MCP task, driven by SDK clients nobody here wrote.

Against a gateway URL (in the multi-instance stage: nginx round robin over
three gateways sharing Redis, so the polls land on other instances than the
one that started the run), with an API key:

- the MCP Python SDK 1.x: `session.experimental.call_tool_as_task`, then
  `poll_task` until the task ends and `get_task_result` (revision
  2025-11-25, its default);
- fastmcp 3.x: `client.call_tool(..., task=True)`, then the task's
  `result()`.

Each runs a program of naps (longer than one request should wait), checks
the result is the run's output, and prints `SDK=<name> step=<step> ok`; a
failure prints `FAILED` and the exit code is 1.

Usage: python clients.py URL API_KEY
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys
from typing import Any

TIMEOUT_S = 60.0


def program(marker: str) -> dict[str, Any]:
    steps = [
        {"id": f"nap{i}", "kind": "call", "capability": "util.sleep", "with": {"ms": 1500}}
        for i in range(3)
    ]
    steps.append({"id": "echo", "kind": "call", "capability": "util.echo", "with": {"value": marker}})
    return {"steps": steps, "output": {"said": "$.steps.echo.output.value"}}


def arguments(marker: str) -> dict[str, Any]:
    return {"mode": "immediate", "workflow": program(marker), "store": True, "trace_level": "full"}


def check(cond: Any, message: str) -> None:
    if not cond:
        raise AssertionError(message)


async def python_sdk(url: str, key: str) -> None:
    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamablehttp_client

    sdk = f"mcp@{importlib.metadata.version('mcp')}"
    headers = {"Authorization": f"Bearer {key}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.capabilities.tasks is not None, f"no tasks capability in {init}")
            print(f"SDK={sdk} step=initialize ok", flush=True)
            created = await session.experimental.call_tool_as_task(
                "run_workflow", arguments("python"), ttl=600_000
            )
            task_id = created.task.taskId
            check(created.task.status == "working", f"a new task is working: {created}")
            print(f"SDK={sdk} step=call_tool_as_task ok ({task_id})", flush=True)
            last = None
            async for status in session.experimental.poll_task(task_id):
                last = status
            check(last is not None and last.status == "completed", f"ended as {last}")
            print(f"SDK={sdk} step=poll_task ok", flush=True)
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
            structured = result.structuredContent or {}
            check(structured.get("output") == {"said": "python"}, f"result {result}")
            check(structured.get("outcome", {}).get("status") == "success", f"result {result}")
            print(f"SDK={sdk} step=get_task_result ok", flush=True)


async def fastmcp_client(url: str, key: str) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    sdk = f"fastmcp@{importlib.metadata.version('fastmcp')}"
    transport = StreamableHttpTransport(url, headers={"Authorization": f"Bearer {key}"})
    async with Client(transport) as client:
        task = await client.call_tool("run_workflow", arguments("fastmcp"), task=True, ttl=600_000)
        check(not task.returned_immediately, "a long run is answered as a task")
        print(f"SDK={sdk} step=call_tool(task=True) ok ({task.task_id})", flush=True)
        result = await task.result()
        structured = result.structured_content or {}
        check(structured.get("output") == {"said": "fastmcp"}, f"result {result}")
        print(f"SDK={sdk} step=result ok", flush=True)


async def main(url: str, key: str) -> int:
    failed = 0
    for name, client in (("mcp", python_sdk), ("fastmcp", fastmcp_client)):
        try:
            await asyncio.wait_for(client(url, key), TIMEOUT_S)
        except Exception as e:  # every failure is reported, then the next client runs
            print(f"SDK={name} FAILED: {type(e).__name__}: {e}", flush=True)
            failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))

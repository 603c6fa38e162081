"""A gateway killed in the middle of a task, behind a load balancer.

Creates a task (revision 2025-11-25, raw JSON-RPC) for a long run through
the load balancer, finds the instance running it (its /metrics
`pilotage_runs_in_flight`), kills that instance (SIGKILL), then polls
`tasks/get` through the load balancer: one of the other instances takes the
task over once its lease lapses and ends it without running the program a
second time (the run that started on the dead instance has an unknown
outcome, so the task is `failed` saying so). The engine's run count for the
tenant rises by at most one.

Usage: python takeover.py LB_URL ENGINE_URL API_KEY PID:PORT PID:PORT ...
Prints `takeover step=<step> ok`; a failure prints `FAILED` and exits 1.
Standard library only; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request


def post(url: str, key: str, method: str, params: dict) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "authorization": f"Bearer {key}",
    })
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def runs_in_flight(port: str) -> float:
    try:
        metrics = get(f"http://127.0.0.1:{port}/metrics")
    except OSError:
        return 0.0
    for line in metrics.splitlines():
        if line.startswith("pilotage_runs_in_flight "):
            return float(line.split()[1])
    return 0.0


def engine_runs(engine: str) -> int:
    return int(json.loads(get(f"{engine}/admin/state?tenant=acme"))["runs"])


def main(lb: str, engine: str, key: str, gateways: list[str]) -> None:
    steps = [{"id": f"nap{i}", "kind": "call", "capability": "util.sleep", "with": {"ms": 1500}} for i in range(3)]
    program = {"steps": steps}
    # A run an earlier check left in flight (its client stopped polling
    # before the run ended) would be taken for this task's: wait until no
    # instance runs anything, then every run in flight is this task's.
    deadline = time.monotonic() + 30
    while any(runs_in_flight(entry.split(":")[1]) > 0 for entry in gateways):
        if time.monotonic() > deadline:
            raise AssertionError("runs were still in flight 30 s before the check")
        time.sleep(0.1)
    runs_before = engine_runs(engine)
    created = post(lb, key, "tools/call", {
        "name": "run_workflow",
        "arguments": {"mode": "immediate", "workflow": program},
        "task": {"ttl": 600_000},
    })
    task_id = created["result"]["task"]["taskId"]
    print(f"takeover step=create ok ({task_id})", flush=True)
    holder = None
    deadline = time.monotonic() + 20
    while holder is None:
        for entry in gateways:
            pid, port = entry.split(":")
            if runs_in_flight(port) >= 1:
                holder = (int(pid), port)
        if time.monotonic() > deadline:
            raise AssertionError("no instance ran the task's run within 20 s")
        time.sleep(0.05)
    os.kill(holder[0], signal.SIGKILL)
    print(f"takeover step=kill ok (the instance on port {holder[1]})", flush=True)
    deadline = time.monotonic() + 90
    while True:
        try:
            answer = post(lb, key, "tasks/get", {"taskId": task_id})
        except urllib.error.HTTPError as e:
            # A poll the load balancer had already sent to the killed
            # instance comes back 502 (nginx does not resend a POST); a
            # client polls again.
            if e.code not in (502, 503, 504) or time.monotonic() > deadline:
                raise
            time.sleep(0.3)
            continue
        task = answer.get("result", {})
        if task.get("status") not in (None, "working"):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"the task is still working 90 s after the kill: {answer}")
        time.sleep(0.3)
    if task.get("status") != "failed" or "not be executed twice" not in task.get("statusMessage", ""):
        raise AssertionError(f"the taken-over task: {task}")
    print(f"takeover step=ended by another instance ok ({task['statusMessage']})", flush=True)
    time.sleep(6)
    ran = engine_runs(engine) - runs_before
    if ran > 1:
        raise AssertionError(f"the program ran {ran} times")
    print(f"takeover step=run at most once ok ({ran} run)", flush=True)


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
    except Exception as e:  # reported as the stage's failure
        print(f"takeover FAILED: {type(e).__name__}: {e}", flush=True)
        sys.exit(1)

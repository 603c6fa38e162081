#!/usr/bin/env python3
"""Breaks down the gateway profiles scripts/profile recorded.

For every `<row>-<connections>.data` in the directory given, reads each
sample's call stack (`perf script`) and charges the sample to the innermost
frame that belongs to a stage of serving a request (first matching pattern
of STAGES, frames read from the leaf outwards): JSON, allocation and copies
count for the stage that asked for them. Prints a markdown table: each
stage's share of the gateway's samples and, with the CPU time per request
the benchmark measured in the same window (results*.json), its µs per
request.
"""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

# (stage, pattern on a frame's symbol). For each frame, leaf first, the
# first stage whose pattern matches takes the sample.
STAGES = [
    ("request log line, request id, spans", r"request_log::|TraceContext::from_headers|RandomId|tracing_subscriber|tracing_core|tracing::span|tower_http::request_id"),
    ("metrics (prometheus)", r"prometheus::|metrics::"),
    ("rate limits and budgets", r"limits::|mcp::budget::"),
    ("argument schema check (jsonschema)", r"jsonschema::"),
    ("bounds check of the program", r"check_bounds|steps::bounds"),
    ("verdict cache (key, lookup)", r"verdict::cache_key|VerdictCache|validate::validate"),
    ("catalog view (engine revalidation, programs)", r"catalog::CatalogService|catalog::compose|list_programs"),
    ("store calls (Redis)", r"store::redis|redis::|store::memory|metrics::store"),
    ("engine calls and trace mapping", r"engines::|reqwest::|hyper_util::client|execute::run|languages::.*trace"),
    ("execute steps (request, claim, record)", r"execute::"),
    ("tool answer (result, plan, envelope)", r"validate::response|mcp::tools::|mcp::direct::answer|envelope|tool_call::"),
    ("tools/call handler (dispatch, span)", r"PilotageServer|mcp::server::|panic_guard"),
    ("JSON-RPC read by the front (lift, method, message)", r"mcp::arguments::|mcp::carrier::|mcp::direct::direct_call"),
    ("JSON-RPC message types (rmcp's, read and written)", r"rmcp::model"),
    ("rmcp per-request service (peer, loop, tasks, channels)", r"rmcp::"),
    ("front: auth, session, headers", r"mcp::layer::|mcp::origin::|auth::|app::mcp_route|app::drain"),
    ("HTTP server (hyper, axum, tower)", r"hyper::|axum::|tower::|hyper_util::server"),
    ("async runtime (tokio)", r"tokio::"),
]
OTHER = "kernel, allocator, unattributed"


def samples(data: Path):
    """Yields each sample's frames (symbol names), leaf first."""
    out = subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "ip,sym", "--no-inline"],
        capture_output=True, text=True, check=True,
    ).stdout
    frames = []
    for line in out.splitlines():
        line = line.strip()
        if not line:
            if frames:
                yield frames
            frames = []
            continue
        parts = line.split(None, 1)
        frames.append(parts[1] if len(parts) > 1 else "")
    if frames:
        yield frames


def stage_of(frames) -> str:
    for frame in frames:
        for stage, pattern in STAGES:
            if re.search(pattern, frame):
                return stage
    return OTHER


def shares(data: Path) -> dict[str, float]:
    counts = Counter(stage_of(f) for f in samples(data))
    total = sum(counts.values()) or 1
    return {stage: 100.0 * n / total for stage, n in counts.items()}


def gateway_cpu(rows: list, row: str, conns: int):
    for r in rows:
        if r["scenario"] == row and r["connections"] == conns:
            cpu = r["gateway"]["cpu_us_per_request"]
            return next((v for k, v in cpu.items() if k.startswith("gateway")), None)
    return None


def main() -> None:
    directory = Path(sys.argv[1])
    rows = []
    for f in sorted(directory.glob("results*.json")):
        rows += json.loads(f.read_text()).get("rows", [])
    columns = []
    for data in sorted(directory.glob("*.data")):
        row, conns = data.stem.rsplit("-", 1)
        columns.append((row, int(conns), shares(data)))
    if not columns:
        sys.exit(f"no profiles in {directory}")
    print("| stage | " + " | ".join(f"{r} ({c} conns)" for r, c, _ in columns) + " |")
    print("|---|" + "--:|" * len(columns))
    for stage in [s for s, _ in STAGES] + [OTHER]:
        cells = []
        for row, conns, share in columns:
            pct = share.get(stage, 0.0)
            cpu = gateway_cpu(rows, row, conns)
            cells.append(f"{pct * cpu / 100:.0f} µs ({pct:.0f} %)" if cpu else f"{pct:.0f} %")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    totals = []
    for row, conns, _ in columns:
        cpu = gateway_cpu(rows, row, conns)
        totals.append(f"**{cpu:.0f} µs**" if cpu else "–")
    print("| gateway CPU per request | " + " | ".join(totals) + " |")


if __name__ == "__main__":
    main()

"""Raw HTTP against /mcp, as curl or a hand-written client sends it (Python's
standard library only, so each header is exactly the one listed): every
Accept variant a client may send, and every malformed body, checking the HTTP
status, the content type and the JSON-RPC code and id of the answer.

Usage: python3 carrier.py URL
Each case prints `SDK=raw-http case=<case> ok`; a failure prints
`... FAILED: <why>` and the exit code is 1.
"""

from __future__ import annotations

import http.client
import json
import sys
import urllib.parse
from typing import Any

TIMEOUT_S = 30
JSON = {"Content-Type": "application/json"}
REVISION = {"MCP-Protocol-Version": "2025-11-25"}


def send(url: str, method: str, headers: dict[str, str], body: bytes) -> tuple[int, str | None, Any]:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT_S)
    try:
        conn.request(method, u.path, body=body if body or method == "POST" else None, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        ctype = resp.getheader("Content-Type")
        if not raw:
            return resp.status, ctype, None
        if ctype != "application/json":
            raise AssertionError(f"HTTP {resp.status} with Content-Type {ctype!r}: {raw[:200]!r}")
        return resp.status, ctype, json.loads(raw)
    finally:
        conn.close()


def message(id_: Any, method: str, params: dict | None = None) -> bytes:
    m: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m).encode()


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-http", "version": "1"},
}

# (case, Accept header or None for none at all)
ACCEPTED = [
    ("no Accept", None),
    ("Accept */* (curl's default)", "*/*"),
    ("Accept application/*", "application/*"),
    ("Accept application/json", "application/json"),
    ("Accept application/json, text/event-stream", "application/json, text/event-stream"),
    ("Accept text/event-stream, application/json", "text/event-stream, application/json"),
]
REFUSED = [
    ("Accept text/event-stream only", "text/event-stream"),
    ("Accept text/html", "text/html"),
    ("Accept application/json;q=0", "application/json;q=0"),
]
# (case, body, JSON-RPC code, id expected back)
MALFORMED = [
    ("not JSON", b"{ not json", -32700, None),
    ('"params": 60001', b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":60001}', -32600, 1),
    ('"id": null', b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None),
    ("id 1.5", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, None),
    ("id 18446744073709551616", b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/list"}', -32600, None),
    ('"method": null', b'{"jsonrpc":"2.0","id":2,"method":null}', -32600, 2),
    ("duplicate jsonrpc key", b'{"jsonrpc":"2.0","jsonrpc":"2.0","id":3,"method":"tools/list"}', -32600, 3),
]


def expect_fault(got: tuple[int, str | None, Any], status: int, code: int, id_: Any) -> None:
    st, ctype, body = got
    assert st == status, f"HTTP {st}, expected {status}: {body}"
    assert ctype == "application/json", f"Content-Type {ctype!r}"
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0", f"not a JSON-RPC message: {body}"
    assert body.get("error", {}).get("code") == code, f"code {body.get('error')}, expected {code}"
    assert body.get("id") == id_, f"id {body.get('id')!r}, expected {id_!r}"


def cases(url: str):
    for i, (case, accept) in enumerate(ACCEPTED):
        headers = dict(JSON)
        if accept is not None:
            headers["Accept"] = accept

        def accepted(headers=headers, i=i):
            st, ctype, body = send(url, "POST", headers, message(i, "initialize", INITIALIZE))
            assert st == 200, f"initialize: HTTP {st}: {body}"
            assert ctype == "application/json", f"Content-Type {ctype!r}"
            assert body["id"] == i and "capabilities" in body["result"], body
            st, ctype, body = send(url, "POST", {**headers, **REVISION}, message(100 + i, "tools/list"))
            assert st == 200, f"tools/list: HTTP {st}: {body}"
            assert any(t["name"] == "pilotage_manifest" for t in body["result"]["tools"]), body

        yield case, accepted
    for case, accept in REFUSED:
        yield case, lambda accept=accept: expect_fault(
            send(url, "POST", {**JSON, **REVISION, "Accept": accept}, message(7, "tools/list")), 406, -32600, 7
        )
    for case, body, code, id_ in MALFORMED:
        yield case, lambda body=body, code=code, id_=id_: expect_fault(
            send(url, "POST", {**JSON, **REVISION, "Accept": "application/json"}, body), 400, code, id_
        )
    yield "no Content-Type", lambda: expect_fault(
        send(url, "POST", {**REVISION, "Accept": "application/json"}, message(8, "tools/list")), 415, -32600, 8
    )
    yield "MCP-Protocol-Version: bogus", lambda: expect_fault(
        send(url, "POST", {**JSON, "MCP-Protocol-Version": "bogus"}, message(9, "tools/list")), 400, -32600, 9
    )
    yield "unknown Mcp-Session-Id", lambda: expect_fault(
        send(url, "POST", {**JSON, **REVISION, "Mcp-Session-Id": "nope"}, message(10, "tools/list")), 404, -32001, 10
    )
    yield "GET /mcp", lambda: expect_fault(send(url, "GET", {"Accept": "text/event-stream"}, b""), 405, -32600, None)
    big = b'{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
    yield "body over the transport limit", lambda: expect_fault(
        send(url, "POST", {**JSON, **REVISION}, big), 413, -32600, None
    )


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python3 carrier.py URL", file=sys.stderr)
        return 2
    passed = failed = 0
    for case, run in cases(argv[1]):
        try:
            run()
            print(f"SDK=raw-http case={case} ok", flush=True)
            passed += 1
        except Exception as e:
            print(f"SDK=raw-http case={case} FAILED: {e or type(e).__name__}", file=sys.stderr, flush=True)
            failed += 1
    print(f"raw http: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

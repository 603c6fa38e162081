"""Measures n8n's own reaction to a workflow: shared by scripts/n8n-corpus and
scripts/n8n-mutate.

run_case creates the workflow through the public API with the owner's key,
tries to activate it (a workflow started by a Manual Trigger on a twin whose
trigger is a Webhook of the same name), runs it (a manual run through the REST
API with the owner's login, or a call of its webhook once activated), waits
for the stored execution, then deletes the workflow. A case with
`run = false` is created and activated but never run.
"""
import http.cookiejar
import http.server
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

REPO = pathlib.Path(__file__).resolve().parent.parent
HOME = pathlib.Path(os.environ.get("PILOTAGE_N8N_HOME", REPO / "target" / "n8n"))
RUN_WAIT_S = 30
ECHO_PLACEHOLDER = "http://127.0.0.1:1/"
TRIGGER_TYPES = ("manualTrigger", "scheduleTrigger", "webhook")


def base_url():
    out = subprocess.run([str(REPO / "scripts" / "n8n"), "url"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("n8n is not running (scripts/n8n start)")
    return out.stdout.strip()


class N8n:
    """The public API with the owner's key, and the REST API with its login."""

    def __init__(self, url):
        self.url = url
        self.key = (HOME / "api-key").read_text().strip()
        self.cookies = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        owner = json.loads((HOME / "owner.json").read_text())
        status, body = self.rest("POST", "/rest/login",
                                 {"emailOrLdapLoginId": owner["email"], "password": owner["password"]})
        if status != 200:
            sys.exit(f"owner login failed: {status} {body}")

    def _send(self, opener, method, path, body, headers):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **headers})
        try:
            with opener.open(req, timeout=30) as resp:
                raw = resp.read()
                status = resp.status
        except urllib.error.HTTPError as err:
            raw, status = err.read(), err.code
        except (TimeoutError, urllib.error.URLError) as err:
            if not isinstance(getattr(err, "reason", err), TimeoutError):
                raise
            return 0, "no answer within 30 s"
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def api(self, method, path, body=None):
        return self._send(urllib.request.build_opener(), method, "/api/v1" + path, body,
                          {"X-N8N-API-KEY": self.key})

    def rest(self, method, path, body=None):
        return self._send(self.cookies, method, path, body, {"browser-id": "pilotage-corpus"})

    def plain(self, method, path):
        return self._send(urllib.request.build_opener(), method, path, None, {})


def one_line(text, limit=220):
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_of(body):
    if isinstance(body, dict):
        return body.get("message") or body.get("error") or json.dumps(body)
    return body or ""


def start_echo():
    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            payload = json.dumps({"echo": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def trigger_of(doc):
    nodes = doc.get("nodes") if isinstance(doc.get("nodes"), list) else []
    for node in nodes:
        if str(node.get("type", "")).rsplit(".", 1)[-1] in TRIGGER_TYPES:
            return node
    return nodes[0] if nodes else None


def wait_execution(n8n, execution_id):
    """The stored execution once it has stopped; a run still going at the bound is stopped."""
    deadline = time.monotonic() + RUN_WAIT_S
    while True:
        status, body = n8n.api("GET", f"/executions/{execution_id}?includeData=true")
        if status == 200 and body.get("stoppedAt") and body.get("status") not in ("new", "running"):
            return body
        if time.monotonic() > deadline:
            n8n.rest("POST", f"/rest/executions/{execution_id}/stop")
            return {"status": "still running (stopped after %d s)" % RUN_WAIT_S}
        time.sleep(0.3)


def latest_execution(n8n, workflow_id, before):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        status, body = n8n.api("GET", f"/executions?workflowId={workflow_id}&limit=5")
        ids = [e["id"] for e in (body or {}).get("data", [])] if status == 200 else []
        fresh = [i for i in ids if i not in before]
        if fresh:
            return fresh[0]
        time.sleep(0.2)
    return None


def describe_execution(execution):
    status = execution.get("status", "?")
    result = (execution.get("data") or {}).get("resultData") or {}
    error = result.get("error")
    if error:
        where = (error.get("node") or {}).get("name") if isinstance(error.get("node"), dict) else None
        return f"{status}: {error.get('name', 'error')}" + (f" in {where}" if where else "") + \
            f": {message_of(error)}"
    failed = [(name, run["error"]) for name, runs in (result.get("runData") or {}).items()
              for run in runs if run.get("error")]
    if failed:
        return f"{status}: {failed[0][0]}: {message_of(failed[0][1])}"
    return status


def run_case(n8n, case, doc):
    reaction = {}
    status, body = n8n.api("POST", "/workflows", {k: doc[k] for k in ("name", "nodes", "connections", "settings") if k in doc})
    if status not in (200, 201):
        reaction["n8n_create"] = f"{status} {message_of(body)}"
        return reaction
    reaction["n8n_create"] = f"{status}"
    workflow_id = body["id"]
    try:
        twin = webhook_twin(doc)
        if twin is None:
            status, body = n8n.api("POST", f"/workflows/{workflow_id}/activate")
        else:
            status, body = activate_twin(n8n, twin)
        activated = twin is None and status == 200
        reaction["n8n_activate"] = f"{status}" if status == 200 else f"{status} {message_of(body)}"
        if not case.get("run", True):
            reaction["n8n_run"] = "not run (it would never end)"
            return reaction
        trigger = trigger_of(doc)
        before = set()
        s, listing = n8n.api("GET", f"/executions?workflowId={workflow_id}&limit=50")
        if s == 200:
            before = {e["id"] for e in listing.get("data", [])}
        if trigger and str(trigger.get("type", "")).endswith(".webhook"):
            if not activated:
                reaction["n8n_run"] = "not run (a webhook runs only once activated)"
                return reaction
            parameters = trigger.get("parameters") or {}
            path = parameters.get("path", "")
            deadline = time.monotonic() + 5
            while True:
                s, answer = n8n.plain(parameters.get("httpMethod", "GET"), f"/webhook/{path}?q=corpus")
                if s != 404 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            execution_id = latest_execution(n8n, workflow_id, before)
            if execution_id is None:
                reaction["n8n_run"] = f"webhook answered {s} {one_line(message_of(answer), 120)}, no execution stored"
                return reaction
        else:
            body = {"triggerToStartFrom": {"name": trigger["name"]}} if trigger and trigger.get("name") else {}
            s, answer = n8n.rest("POST", f"/rest/workflows/{workflow_id}/run", body)
            execution_id = ((answer or {}).get("data") or {}).get("executionId") if isinstance(answer, dict) else None
            if s != 200 or not execution_id:
                reaction["n8n_run"] = f"refused {s} {message_of(answer)}"
                return reaction
        reaction["n8n_run"] = describe_execution(wait_execution(n8n, execution_id))
        return reaction
    finally:
        cleanup(n8n, workflow_id)


def webhook_twin(doc):
    """The workflow with its Manual Trigger made a Webhook of the same name, or None.

    n8n refuses to activate a workflow whose only trigger is a Manual Trigger
    before it looks at anything else; the twin lets activation's own checks
    (configuration issues, unknown types) speak for every case."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        return None
    manual = [i for i, n in enumerate(nodes) if isinstance(n, dict) and str(n.get("type", "")).endswith(".manualTrigger")]
    if not manual:
        return None
    twin = json.loads(json.dumps(doc))
    for i in manual:
        twin["nodes"][i].update(type="n8n-nodes-base.webhook", typeVersion=2, webhookId=f"corpus-twin-{i}-{time.monotonic_ns()}",
                                parameters={"path": f"corpus-twin-{time.monotonic_ns()}", "httpMethod": "GET",
                                            "responseMode": "onReceived", "options": {}})
    twin["name"] = str(doc.get("name", "")) + " (webhook twin)"
    return twin


def activate_twin(n8n, twin):
    status, body = n8n.api("POST", "/workflows", {k: twin[k] for k in ("name", "nodes", "connections", "settings") if k in twin})
    if status not in (200, 201):
        return status, body
    try:
        return n8n.api("POST", f"/workflows/{body['id']}/activate")
    finally:
        cleanup(n8n, body["id"])


def cleanup(n8n, workflow_id):
    n8n.api("POST", f"/workflows/{workflow_id}/deactivate")
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        status, _ = n8n.api("DELETE", f"/workflows/{workflow_id}")
        if status in (200, 404):
            return
        time.sleep(1)
    print(f"  (workflow {workflow_id} left behind: delete kept answering {status})", file=sys.stderr)


def caught_at(reaction):
    if not reaction.get("n8n_create", "").startswith(("200", "201")):
        return "create"
    if not reaction.get("n8n_activate", "200").startswith("200"):
        return "activate"
    run = reaction.get("n8n_run", "")
    if run.startswith("not run"):
        return "not run"
    return "silent" if run == "success" else "run"


def resolves(doc, pointer):
    node = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return False
    return True

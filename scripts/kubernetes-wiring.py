#!/usr/bin/env python3
"""What the Kubernetes schemas cannot see in deploy/kubernetes/: that the
manifests refer to each other correctly and keep the gateway's contract.

- kustomization.yaml lists every manifest of the folder, and only those;
  every object lives in the kustomization's namespace;
- every selector (Service, PodDisruptionBudget, NetworkPolicy and its pod
  peers) picks the pods of some workload; every Service port, Ingress
  backend and HorizontalPodAutoscaler target exists; the autoscaled
  Deployment leaves `replicas` to the autoscaler;
- every container has resource requests and limits, requests within limits;
- the gateway: liveness on /healthz, readiness on /readyz, a preStop pause,
  and terminationGracePeriodSeconds covering preStop + drain_ms +
  drain_timeout_ms of the gateway.toml its ConfigMap carries; every
  PILOTAGE_*_FILE and PILOTAGE_CONFIG path is a file a volume provides.

Usage: kubernetes-wiring.py DIR OUT_TOML
Writes the ConfigMap's gateway.toml to OUT_TOML (for check-config) and
prints one line per problem; exits 1 on any.
"""

import pathlib
import re
import sys

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

GATEWAY = "pilotage-gateway"
# The gateway's defaults (src/config): [server] drain_ms, drain_timeout_ms.
DEFAULT_DRAIN_MS = 5000
DEFAULT_DRAIN_TIMEOUT_MS = 32000

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def load(folder):
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    listed = kustomization.get("resources", [])
    present = sorted(
        p.name for p in folder.glob("*.yaml") if p.name != "kustomization.yaml"
    )
    for name in sorted(set(present) - set(listed)):
        problem(name, "not listed in kustomization.yaml resources (it would never be applied)")
    objects = []
    for name in listed:
        path = folder / name
        if not path.is_file():
            problem("kustomization.yaml", f"lists {name}, which does not exist")
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                objects.append((name, doc))
    return kustomization.get("namespace"), objects


def ident(obj):
    return f"{obj['kind']}/{obj['metadata']['name']}"


def pod_templates(objects):
    """(workload, pod template) of every Deployment and StatefulSet."""
    return [
        (obj, obj["spec"]["template"])
        for _, obj in objects
        if obj["kind"] in ("Deployment", "StatefulSet")
    ]


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def check_namespaces(namespace, objects):
    for file, obj in objects:
        meta = obj["metadata"]
        if obj["kind"] == "Namespace":
            if meta["name"] != namespace:
                problem(file, f"Namespace {meta['name']} is not the kustomization's {namespace}")
        elif meta.get("namespace") != namespace:
            problem(file, f"{ident(obj)} is in namespace {meta.get('namespace')}, not {namespace}")


def check_selectors(objects):
    templates = pod_templates(objects)

    def picks_pods(file, obj, selector, what):
        if not any(matches(selector, t["metadata"]["labels"]) for _, t in templates):
            problem(file, f"{ident(obj)}: {what} {selector} selects no pod of any workload")

    for workload, template in templates:
        selector = workload["spec"]["selector"]["matchLabels"]
        if not matches(selector, template["metadata"]["labels"]):
            problem(ident(workload), f"selector {selector} does not match its own pod labels")
    for file, obj in objects:
        kind = obj["kind"]
        if kind == "Service":
            picks_pods(file, obj, obj["spec"]["selector"], "selector")
        elif kind == "PodDisruptionBudget":
            picks_pods(file, obj, obj["spec"]["selector"]["matchLabels"], "selector")
        elif kind == "NetworkPolicy":
            spec = obj["spec"]
            if spec["podSelector"]:
                picks_pods(file, obj, spec["podSelector"]["matchLabels"], "podSelector")
            rules = [r.get("from", []) for r in spec.get("ingress", [])]
            rules += [r.get("to", []) for r in spec.get("egress", [])]
            for peers in rules:
                for peer in peers:
                    # A peer in this namespace (no namespaceSelector) is one of ours.
                    if "podSelector" in peer and "namespaceSelector" not in peer:
                        picks_pods(file, obj, peer["podSelector"]["matchLabels"], "peer")


def container_ports(template):
    return {
        p["name"]: p["containerPort"]
        for c in template["spec"]["containers"]
        for p in c.get("ports", [])
        if "name" in p
    }


def check_references(objects):
    templates = pod_templates(objects)
    services = {o["metadata"]["name"]: o for _, o in objects if o["kind"] == "Service"}
    workloads = {ident(w): w for w, _ in templates}
    for name, service in services.items():
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            for _, template in templates:
                if not matches(service["spec"]["selector"], template["metadata"]["labels"]):
                    continue
                ports = container_ports(template)
                if target not in ports and target not in ports.values():
                    problem(ident(service), f"targetPort {target} is no container port of its pods")
    for file, obj in objects:
        if obj["kind"] == "Ingress":
            for rule in obj["spec"]["rules"]:
                for path in rule["http"]["paths"]:
                    backend = path["backend"]["service"]
                    service = services.get(backend["name"])
                    if service is None:
                        problem(file, f"{ident(obj)}: backend Service {backend['name']} does not exist")
                        continue
                    names = {p.get("name") for p in service["spec"]["ports"]}
                    numbers = {p["port"] for p in service["spec"]["ports"]}
                    port = backend["port"]
                    if port.get("name") not in names and port.get("number") not in numbers:
                        problem(file, f"{ident(obj)}: Service {backend['name']} has no port {port}")
        elif obj["kind"] == "HorizontalPodAutoscaler":
            target = obj["spec"]["scaleTargetRef"]
            workload = workloads.get(f"{target['kind']}/{target['name']}")
            if workload is None:
                problem(file, f"{ident(obj)}: scale target {target['kind']}/{target['name']} does not exist")
            elif "replicas" in workload["spec"]:
                problem(ident(workload), "sets replicas, which the HorizontalPodAutoscaler owns (a re-apply would reset it)")


QUANTITY = re.compile(r"^([0-9]+(\.[0-9]+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")
SCALE = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
         "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(where, text):
    found = QUANTITY.match(str(text))
    if not found:
        problem(where, f"{text!r} is not a Kubernetes quantity")
        return None
    return float(found.group(1)) * SCALE[found.group(3)]


def check_resources(objects):
    for workload, template in pod_templates(objects):
        for container in template["spec"]["containers"]:
            where = f"{ident(workload)} container {container['name']}"
            resources = container.get("resources", {})
            for part in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(part, {}):
                        problem(where, f"no {part}.{resource}")
            for resource in ("cpu", "memory"):
                request = resources.get("requests", {}).get(resource)
                limit = resources.get("limits", {}).get(resource)
                if request is None or limit is None:
                    continue
                low, high = quantity(where, request), quantity(where, limit)
                if low is not None and high is not None and low > high:
                    problem(where, f"requests.{resource} {request} above limits.{resource} {limit}")


def gateway_toml(objects, deployment):
    """The gateway.toml of the ConfigMap mounted at PILOTAGE_CONFIG's folder."""
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"].rstrip("/"): volumes.get(m["name"], {}) for m in container.get("volumeMounts", [])}
    config_maps = {o["metadata"]["name"]: o for _, o in objects if o["kind"] == "ConfigMap"}
    text = None
    for var, path in env.items():
        if not (var == "PILOTAGE_CONFIG" or var.endswith("_FILE")) or not path:
            continue
        folder, _, file = path.rpartition("/")
        volume = mounts.get(folder)
        if volume is None:
            problem(ident(deployment), f"{var}={path}: no volume is mounted at {folder}")
        elif "configMap" in volume:
            config_map = config_maps.get(volume["configMap"]["name"])
            if config_map is None or file not in config_map.get("data", {}):
                problem(ident(deployment), f"{var}={path}: ConfigMap {volume['configMap']['name']} has no key {file}")
            elif var == "PILOTAGE_CONFIG":
                text = config_map["data"][file]
        elif "secret" in volume:
            items = {i["path"]: i["key"] for i in volume["secret"].get("items", [])}
            if items and file not in items:
                problem(ident(deployment), f"{var}={path}: Secret volume {volume['name']} has no item {file}")
    if text is None:
        problem(ident(deployment), "PILOTAGE_CONFIG names no gateway.toml of a mounted ConfigMap")
    return text


def seconds_of_pre_stop(deployment, container):
    hook = container.get("lifecycle", {}).get("preStop")
    if not hook:
        problem(ident(deployment), "the gateway has no preStop hook")
        return 0
    if "sleep" in hook:
        return int(hook["sleep"]["seconds"])
    command = hook.get("exec", {}).get("command", [])
    if len(command) == 2 and command[0] == "sleep" and command[1].isdigit():
        return int(command[1])
    problem(ident(deployment), f"preStop {hook} is not a plain pause (sleep N)")
    return 0


def check_gateway(objects, out_toml):
    deployments = [o for _, o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == GATEWAY]
    if not deployments:
        problem("kustomization.yaml", f"no Deployment {GATEWAY}")
        return
    deployment = deployments[0]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        got = container.get(probe, {}).get("httpGet", {}).get("path")
        if got != path:
            problem(ident(deployment), f"{probe} is on {got}, not {path}")
    text = gateway_toml(objects, deployment)
    if text is None:
        return
    pathlib.Path(out_toml).write_text(text)
    server = tomllib.loads(text).get("server", {})
    drain_ms = server.get("drain_ms", DEFAULT_DRAIN_MS)
    drain_timeout_ms = server.get("drain_timeout_ms", DEFAULT_DRAIN_TIMEOUT_MS)
    pre_stop = seconds_of_pre_stop(deployment, container)
    needed = pre_stop + (drain_ms + drain_timeout_ms) / 1000
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if grace <= needed:
        problem(
            ident(deployment),
            f"terminationGracePeriodSeconds {grace} does not cover preStop {pre_stop} s + "
            f"drain_ms {drain_ms} + drain_timeout_ms {drain_timeout_ms} = {needed:g} s: "
            "the pod would be killed mid-drain",
        )


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    folder = pathlib.Path(sys.argv[1])
    namespace, objects = load(folder)
    check_namespaces(namespace, objects)
    check_selectors(objects)
    check_references(objects)
    check_resources(objects)
    check_gateway(objects, sys.argv[2])
    for line in problems:
        print(f"check-kubernetes: {line}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

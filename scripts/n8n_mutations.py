"""The mutations of scripts/n8n-mutate: the node descriptions n8n serves, how
n8n shows a parameter (displayOptions), JSON Pointers, the connections as a
graph, and the Builder that makes every candidate mutation of one seed
workflow."""
import copy
import json
import math
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parent.parent
MUTATIONS = REPO / "tests" / "n8n" / "mutations"
SUPPLEMENT = MUTATIONS / "node-types.json"
NODE_TYPES = REPO / "tests" / "n8n" / "node-types.json"

SKIPPED_TYPES = {"notice", "hidden", "button", "credentials", "credentialsSelect", "callout", "curlImport"}
WRONG_VALUE = {  # a value of another JSON type than the property's
    "string": 42, "number": "forty-two", "boolean": "yes", "multiOptions": "update", "collection": "none",
    "fixedCollection": "none", "json": {"not": "a string"}, "dateTime": 20261201, "assignmentCollection": "none",
    "filter": "none", "options": 3, "color": 5,
}


# ---------------------------------------------------------------- the catalog

class Catalog:
    """The node descriptions n8n serves: tests/n8n/node-types.json, then the
    supplement's descriptions and facts (all versions of a type, maxNodes,
    credentials) for the types the seeds use."""

    def __init__(self):
        self.entries = json.loads(NODE_TYPES.read_text())
        supplement = json.loads(SUPPLEMENT.read_text()) if SUPPLEMENT.exists() else {}
        self.entries += supplement.get("descriptions", [])
        self.facts = supplement.get("types", {})

    def describe(self, node_type, version):
        for entry in self.entries:
            versions = entry["version"] if isinstance(entry["version"], list) else [entry["version"]]
            if entry["name"] == node_type and version in versions:
                merged = dict(entry)
                for extra in self.facts.get(node_type, {}).get("entries", []):
                    if version in extra["version"]:
                        merged.update({k: v for k, v in extra.items() if k != "version"})
                return merged
        return None

    def versions(self, node_type):
        known = self.facts.get(node_type, {}).get("versions")
        if known:
            return sorted(known)
        found = set()
        for entry in self.entries:
            if entry["name"] == node_type:
                found |= set(entry["version"] if isinstance(entry["version"], list) else [entry["version"]])
        return sorted(found)


# ------------------------------------------------------- displayOptions logic

def condition_holds(actual, wanted):
    if isinstance(wanted, dict) and "_cnd" in wanted:
        (op, value), = wanted["_cnd"].items()
        try:
            if op == "eq":
                return actual == value
            if op == "not":
                return actual != value
            if op == "gte":
                return actual >= value
            if op == "lte":
                return actual <= value
            if op == "gt":
                return actual > value
            if op == "lt":
                return actual < value
            if op == "between":
                return value["from"] <= actual <= value["to"]
            if op == "startsWith":
                return str(actual).startswith(value)
            if op == "endsWith":
                return str(actual).endswith(value)
            if op == "includes":
                return value in str(actual)
            if op == "regex":
                return re.search(value, str(actual)) is not None
            if op == "exists":
                return actual is not None
        except TypeError:
            return False
        return False
    return actual == wanted


def matches(actual, allowed):
    values = actual if isinstance(actual, list) else [actual]
    return any(condition_holds(a, w) for a in values for w in allowed)


def lookup(key, scope, root):
    if key.startswith("/"):
        value = root
        for part in key[1:].split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value
    return scope.get(key)


def shown(prop, scope, root, version):
    options = prop.get("displayOptions") or {}
    for key, allowed in (options.get("show") or {}).items():
        actual = version if key == "@version" else lookup(key, scope, root)
        if actual is None or not matches(actual, allowed):
            return False
    for key, allowed in (options.get("hide") or {}).items():
        actual = version if key == "@version" else lookup(key, scope, root)
        if actual is not None and matches(actual, allowed):
            return False
    return True


def effective(props, values, root, version, fill):
    """The values n8n sees: those given, plus the defaults of shown properties
    (for a node's parameters and a fixedCollection's entries, not for a
    collection's options)."""
    result = dict(values)
    if fill:
        for _ in range(3):
            for prop in props:
                if prop["name"] not in result and prop["type"] not in SKIPPED_TYPES and "default" in prop \
                        and shown(prop, result, root if root is not None else result, version):
                    result[prop["name"]] = prop["default"]
    return result


def shown_props(props, values, root, version):
    """The property each name resolves to under these values (the first shown variant)."""
    chosen = {}
    for prop in props:
        if prop["name"] not in chosen and shown(prop, values, root, version):
            chosen[prop["name"]] = prop
    return chosen


def scopes(desc, node, index):
    """Every parameter level of a node: (pointer, properties shown, all
    properties, the values given, the effective values)."""
    version = node.get("typeVersion")
    params = node.get("parameters") or {}
    props = desc.get("properties", [])
    root = effective(props, params, None, version, True)
    out = []

    def visit(pointer, props, values, fill):
        eff = effective(props, values, root, version, fill) if pointer != f"/nodes/{index}/parameters" else root
        chosen = shown_props(props, eff, root, version)
        out.append((pointer, chosen, props, values, eff))
        for name, prop in chosen.items():
            value = values.get(name)
            if prop["type"] == "collection" and isinstance(value, dict):
                visit(f"{pointer}/{escape(name)}", prop.get("options") or [], value, False)
            elif prop["type"] == "fixedCollection" and isinstance(value, dict):
                multiple = (prop.get("typeOptions") or {}).get("multipleValues")
                for group in prop.get("options") or []:
                    entry = value.get(group.get("name"))
                    if multiple and isinstance(entry, list):
                        for j, item in enumerate(entry):
                            if isinstance(item, dict):
                                visit(f"{pointer}/{escape(name)}/{escape(group['name'])}/{j}",
                                      group.get("values") or [], item, True)
                    elif isinstance(entry, dict):
                        visit(f"{pointer}/{escape(name)}/{escape(group['name'])}", group.get("values") or [],
                              entry, True)

    visit(f"/nodes/{index}/parameters", props, params, True)
    return out


# ------------------------------------------------------------ JSON pointers

def escape(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def tokens(pointer):
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def get_at(doc, pointer):
    for token in tokens(pointer):
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def set_at(doc, pointer, value):
    parts = tokens(pointer)
    parent = get_at(doc, "/" + "/".join(escape(p) for p in parts[:-1])) if len(parts) > 1 else doc
    if isinstance(parent, list):
        parent[int(parts[-1])] = value
    else:
        parent[parts[-1]] = value


def delete_at(doc, pointer):
    parts = tokens(pointer)
    parent = get_at(doc, "/" + "/".join(escape(p) for p in parts[:-1])) if len(parts) > 1 else doc
    if isinstance(parent, list):
        del parent[int(parts[-1])]
    else:
        del parent[parts[-1]]


def string_leaves(value, pointer):
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from string_leaves(inner, f"{pointer}/{escape(key)}")
    elif isinstance(value, list):
        for j, inner in enumerate(value):
            yield from string_leaves(inner, f"{pointer}/{j}")


# -------------------------------------------------------------- the graph

def edges(doc):
    names = {n.get("name") for n in doc.get("nodes", []) if isinstance(n, dict)}
    out = []
    for source, kinds in (doc.get("connections") or {}).items():
        for kind, outputs in (kinds or {}).items() if isinstance(kinds, dict) else []:
            for o, targets in enumerate(outputs or []):
                for k, target in enumerate(targets or []):
                    if isinstance(target, dict) and source in names and target.get("node") in names:
                        out.append((source, o, k, target["node"], target.get("index"), kind))
    return out


def cycle_nodes(doc):
    """The nodes that lie on a cycle of the connections."""
    graph = {}
    for source, _, _, target, _, _ in edges(doc):
        graph.setdefault(source, set()).add(target)

    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in graph.get(node, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    return {n for n in graph if reaches(n, n)}


def downstream(doc, name):
    graph = {}
    for source, _, _, target, _, _ in edges(doc):
        graph.setdefault(source, set()).add(target)
    seen, todo = set(), [name]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen and nxt != name:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def output_count(desc, node):
    """How many main outputs a node has, or None when it cannot be told here."""
    outputs = desc.get("outputs")
    params = node.get("parameters") or {}
    if isinstance(outputs, list):
        return sum(1 for o in outputs if o == "main" or (isinstance(o, dict) and o.get("type") == "main"))
    short = node["type"].rsplit(".", 1)[-1]
    if short == "switch" and params.get("mode", "rules") == "rules":
        extra = 1 if (params.get("options") or {}).get("fallbackOutput") == "extra" else 0
        return len((params.get("rules") or {}).get("values") or []) + extra
    if short == "merge":
        return 1
    if short == "evaluation":
        return 2 if params.get("operation") == "checkIfEvaluating" else 1
    if short == "respondToWebhook":
        version = node["typeVersion"]
        return 2 if version == 1.3 or (version >= 1.4 and params.get("enableResponseOutput")) else 1
    return None


def input_count(desc, node):
    inputs = desc.get("inputs")
    if isinstance(inputs, list):
        return sum(1 for i in inputs if i == "main" or (isinstance(i, dict) and i.get("type") == "main"))
    if node["type"].endswith(".merge"):
        return int((node.get("parameters") or {}).get("numberInputs", 2))
    return None


# ------------------------------------------------------------- mutations

def typo(name):
    """A misspelling: the second and third letters swapped (or a letter doubled)."""
    if len(name) >= 3 and name[1] != name[2]:
        return name[0] + name[2] + name[1] + name[3:]
    return name + name[-1]


def capitalised(value):
    if isinstance(value, str) and value and value[0].islower():
        return value[0].upper() + value[1:]
    return (str(value) + "X") if value not in ("", None) else "unknownValue"


def other_value(prop):
    """A valid value different from the property's default, for a property set where it is not shown."""
    default = prop.get("default")
    if prop["type"] == "options":
        values = [o.get("value") for o in prop.get("options") or [] if o.get("value") != default]
        return values[0] if values else None
    if prop["type"] == "boolean":
        return not default
    if prop["type"] == "number":
        return (default if isinstance(default, (int, float)) else 0) + 1
    if prop["type"] == "string":
        return "set where not shown"
    return None


class Pointer(str):
    """Where a change put what it added, when only the change knows it."""


class Builder:
    """Collects the candidate mutations of one seed."""

    def __init__(self, seed_name, seed, catalog):
        self.seed_name, self.seed, self.catalog = seed_name, seed, catalog
        self.found = []
        self.names = [n["name"] for n in seed["nodes"]]
        self.seed_cycles = cycle_nodes(seed)

    def add(self, kind, where, what, change):
        doc = copy.deepcopy(self.seed)
        extra = change(doc)
        if isinstance(extra, Pointer):  # known only once the change is made
            where = str(extra)
        if doc == self.seed:
            return
        self.found.append({"kind": kind, "where": where, "what": what, "workflow": doc})

    def node_label(self, i):
        return f"{self.names[i]} ({self.seed['nodes'][i]['type'].rsplit('.', 1)[-1]})"

    def build(self):
        for i, node in enumerate(self.seed["nodes"]):
            desc = self.catalog.describe(node["type"], node["typeVersion"])
            if desc is None:
                raise SystemExit(f"{self.seed_name}: no description of {node['type']} {node['typeVersion']}")
            self.parameters(i, node, desc)
            self.expressions(i, node, desc)
            self.code(i, node)
            self.node_level(i, node, desc)
        self.connections()
        self.workflow_level()
        return self.found

    # -- parameters, from the description
    def parameters(self, i, node, desc):
        label = self.node_label(i)
        schedule = "schedule" in (desc.get("group") or [])
        for pointer, chosen, props, values, eff in scopes(desc, node, i):
            for name, prop in chosen.items():
                kind_of = prop["type"]
                if kind_of in SKIPPED_TYPES:
                    continue
                here = f"{pointer}/{escape(name)}"
                present = name in values
                value = values.get(name)
                if prop.get("required") and present:
                    self.add("required-dropped", pointer, f"{label}: required parameter {name} left out",
                             lambda d, h=here: delete_at(d, h))
                    if kind_of == "string" and value not in ("", None):
                        self.add("required-emptied", here, f"{label}: required parameter {name} empty",
                                 lambda d, h=here: set_at(d, h, ""))
                bounds = prop.get("typeOptions") or {}
                if kind_of == "number" and "minValue" in bounds:
                    low = bounds["minValue"] - 1
                    self.add("below-minimum", here, f"{label}: {name} = {low}, below its minimum {bounds['minValue']}",
                             lambda d, h=here, v=low: set_at(d, h, v))
                if kind_of == "number" and "maxValue" in bounds:
                    high = bounds["maxValue"] + 1
                    self.add("above-maximum", here, f"{label}: {name} = {high}, above its maximum {bounds['maxValue']}",
                             lambda d, h=here, v=high: set_at(d, h, v))
                if present and kind_of in WRONG_VALUE and not (schedule and kind_of == "number"):
                    # (a timer given a number that is not one would fire every millisecond once activated)
                    wrong = WRONG_VALUE[kind_of]
                    if type(wrong) is not type(value):
                        self.add("wrong-type", here, f"{label}: {name} ({kind_of}) given {json.dumps(wrong)}",
                                 lambda d, h=here, v=wrong: set_at(d, h, v))
                if kind_of in ("options", "multiOptions") and (present or pointer.endswith("/parameters")):
                    current = value if present else eff.get(name)
                    known = {o.get("value") for o in prop.get("options") or []}
                    if kind_of == "multiOptions":
                        bad = list(current or []) + [capitalised((current or [None])[0] or "unknown")]
                    else:
                        bad = capitalised(current)
                        while bad in known:
                            bad += "X"
                    self.add("unknown-option", here, f"{label}: {name} = {json.dumps(bad)}, not one of its options",
                             lambda d, h=here, v=bad: set_at(d, h, v))
                if present:
                    wrong_name = typo(name)
                    if wrong_name not in values and not any(p["name"] == wrong_name for p in props):
                        self.add("misspelled-parameter", f"{pointer}/{escape(wrong_name)}",
                                 f"{label}: {name} spelled {wrong_name}",
                                 lambda d, p=pointer, a=name, b=wrong_name: rename_key(get_at(d, p), a, b))
            # one unknown parameter per level: a misspelling of a shown property not given
            for name, prop in chosen.items():
                if name in values or prop["type"] in SKIPPED_TYPES:
                    continue
                wrong_name = typo(name)
                if wrong_name in values or any(p["name"] == wrong_name for p in props):
                    continue
                value = prop.get("default", "")
                self.add("unknown-parameter", f"{pointer}/{escape(wrong_name)}",
                         f"{label}: unknown parameter {wrong_name} (a misspelt {name})",
                         lambda d, p=pointer, k=wrong_name, v=value: get_at(d, p).__setitem__(k, v))
                break
            # a property n8n defines but does not show under the values given
            shown_names = set(chosen)
            for prop in props:
                name = prop["name"]
                if name in shown_names or name in values or prop["type"] in SKIPPED_TYPES:
                    continue
                value = other_value(prop)
                if value is None:
                    continue
                self.add("parameter-not-shown", f"{pointer}/{escape(name)}",
                         f"{label}: {name} given, but not shown under the other values",
                         lambda d, p=pointer, k=name, v=value: get_at(d, p).__setitem__(k, v))
                shown_names.add(name)
                break

    # -- expressions in any string parameter
    def expressions(self, i, node, desc):
        label = self.node_label(i)
        choices = option_names(desc.get("properties", []))  # a value picked from a list is no place for text
        leaves = [(p, v) for p, v in string_leaves(node.get("parameters") or {}, f"/nodes/{i}/parameters")
                  if not p.endswith(("/jsCode", "/functionCode", "/workflowJson", "/id", "/content"))
                  and not set(t for t in tokens(p)[-2:] if not t.isdigit()) & choices]
        exprs = [(p, v) for p, v in leaves if v.startswith("=") and "{{" in v]
        plain = [(p, v) for p, v in leaves if not v.startswith("=")]
        for here, value in exprs:
            body = value[1:].strip()
            inner = re.search(r"\{\{(.*?)\}\}", body, re.S).group(1).strip()
            self.add("expression-syntax", here, f"{label}: expression {inner}. (a dangling dot)",
                     lambda d, h=here, v=value, x=inner: set_at(d, h, v.replace(x, x + ".", 1)))
            self.add("expression-unclosed", here, f"{label}: expression without its closing braces",
                     lambda d, h=here, v=value: set_at(d, h, v[::-1].replace("}}", "", 1)[::-1]))
            self.add("expression-unknown-function", here,
                     f"{label}: {inner}.noSuchFunction(), a function that does not exist",
                     lambda d, h=here, v=value, x=inner: set_at(d, h, v.replace(x, x + ".noSuchFunction()", 1)))
        for here, value in (exprs or plain)[:1]:
            reference = "={{ $('Nowhere').item.json.value }}"
            self.add("expression-unknown-node", here,
                     f"{label}: expression reads the node Nowhere, which does not exist",
                     lambda d, h=here: set_at(d, h, reference))
            later = sorted(downstream(self.seed, node["name"]))
            if later:
                reference = "={{ $('%s').item.json.value }}" % later[0]
                self.add("expression-downstream-node", here,
                         f"{label}: expression reads {later[0]}, which runs only after it",
                         lambda d, h=here, r=reference: set_at(d, h, r))
            if not exprs:
                self.add("expression-syntax", here, f"{label}: expression $json.a. (a dangling dot)",
                         lambda d, h=here: set_at(d, h, "={{ $json.a. }}"))

    # -- JavaScript in Code and Function nodes
    def code(self, i, node):
        label = self.node_label(i)
        for key in ("jsCode", "functionCode"):
            source = (node.get("parameters") or {}).get(key)
            if not isinstance(source, str):
                continue
            here = f"/nodes/{i}/parameters/{key}"
            self.add("code-syntax", here, f"{label}: JavaScript with an unbalanced brace",
                     lambda d, h=here, s=source: set_at(d, h, s + "\n}"))
            self.add("code-unknown-identifier", here, f"{label}: JavaScript reads a variable never declared",
                     lambda d, h=here, s=source: set_at(d, h, "const extra = notDeclaredAnywhere + 1;\n" + s))
            self.add("code-bad-return", here, f"{label}: JavaScript returns a number instead of items",
                     lambda d, h=here: set_at(d, h, "return 42;"))
            self.add("code-unknown-node", here, f"{label}: JavaScript reads the node Nowhere, which does not exist",
                     lambda d, h=here, s=source: set_at(d, h, "const other = $('Nowhere').first().json;\n" + s))

    # -- the node itself: type, version, credentials, duplicates
    def node_level(self, i, node, desc):
        label = self.node_label(i)
        base = f"/nodes/{i}"
        versions = self.catalog.versions(node["type"])
        current = node["typeVersion"]
        too_high = math.floor(max(versions)) + 1 if versions else 99
        self.add("type-version-too-high", f"{base}/typeVersion", f"{label}: typeVersion {too_high}, newer than any",
                 lambda d: set_at(d, f"{base}/typeVersion", too_high))
        between = [round((a + b) / 2, 3) for a, b in zip(versions, versions[1:])]
        between = [v for v in between if v not in versions]
        if between:
            pick = min(between, key=lambda v: abs(v - current))
            self.add("type-version-between", f"{base}/typeVersion",
                     f"{label}: typeVersion {pick}, between two that exist",
                     lambda d, v=pick: set_at(d, f"{base}/typeVersion", v))
        if versions and min(versions) > 0:
            self.add("type-version-below", f"{base}/typeVersion", f"{label}: typeVersion 0, older than any",
                     lambda d: set_at(d, f"{base}/typeVersion", 0))
        self.add("type-version-string", f"{base}/typeVersion",
                 f"{label}: typeVersion given as the string \"{current}\"",
                 lambda d: set_at(d, f"{base}/typeVersion", str(current)))
        package, short = node["type"].rsplit(".", 1)
        self.add("node-type-typo", f"{base}/type", f"{label}: type {package}.{typo(short)}, a misspelling",
                 lambda d: set_at(d, f"{base}/type", f"{package}.{typo(short)}"))
        self.add("node-type-unknown-package", f"{base}/type",
                 f"{label}: type from the package n8n-nodes-extra, not installed",
                 lambda d: set_at(d, f"{base}/type", f"n8n-nodes-extra.{short}"))
        self.add("credential-type-unknown", f"{base}/credentials/{short}NoSuchApi",
                 f"{label}: credential of the type {short}NoSuchApi, which does not exist",
                 lambda d: d["nodes"][i].setdefault("credentials", {}).__setitem__(
                     f"{short}NoSuchApi", {"id": "1", "name": "missing"}))
        # credentials the description asks for under some parameter values
        for cred in desc.get("credentials") or []:
            wanted = {k: v[0] for k, v in ((cred.get("displayOptions") or {}).get("show") or {}).items()
                      if not k.startswith("@") and isinstance(v, list) and v and not isinstance(v[0], dict)}
            params = node.get("parameters") or {}
            if not cred.get("required") or not wanted or any(  # operation and resource choose what the node does
                    k in ("operation", "resource") and k in params and params[k] != v for k, v in wanted.items()):
                continue

            def ask(d, wanted=wanted):
                d["nodes"][i]["parameters"].update(wanted)
            setting = ", ".join(f"{k} = {json.dumps(v)}" for k, v in wanted.items())
            self.add("credential-missing", base, f"{label}: {setting} needs a {cred['name']} credential, none given",
                     ask)
            self.add("credential-not-found", f"{base}/credentials/{cred['name']}",
                     f"{label}: {setting} with a {cred['name']} credential that does not exist",
                     lambda d, a=ask, c=cred["name"]: (a(d), d["nodes"][i].setdefault("credentials", {}).__setitem__(
                         c, {"id": "pilotage-missing", "name": "missing"})))
        if desc.get("maxNodes") == 1:
            self.add("duplicate-trigger", f"/nodes/{len(self.names)}",
                     f"{label}: a second {short}, where n8n allows one", lambda d: duplicate(d, i, True))
        params = node.get("parameters") or {}
        if "path" in params or "path" in (params.get("options") or {}):
            self.add("webhook-conflict", f"/nodes/{len(self.names)}",
                     f"{label}: a second node on the same webhook path and method", lambda d: duplicate(d, i, False))
        for field in ("name", "type", "typeVersion", "position", "parameters"):
            self.add("node-field-dropped", base, f"{label}: {field} left out",
                     lambda d, f=field: d["nodes"][i].__delitem__(f))
        if i > 0:
            self.add("duplicate-node-name", f"{base}/name", f"{label}: named {self.names[0]}, as another node is",
                     lambda d: set_at(d, f"{base}/name", self.names[0]))
            self.add("duplicate-node-id", f"{base}/id", f"{label}: the id of {self.names[0]}",
                     lambda d: set_at(d, f"{base}/id", d["nodes"][0]["id"]))

    # -- connections
    def connections(self):
        seed = self.seed
        by_name = {n["name"]: (j, n) for j, n in enumerate(seed["nodes"])}
        for source, o, k, target, index, kind in edges(seed):
            here = f"/connections/{escape(source)}/{escape(kind)}/{o}/{k}"
            ghost = target + "1" if target + "1" not in by_name else target + " (old)"
            self.add("connection-missing-target", f"{here}/node", f"{source} -> {ghost}, a node that does not exist",
                     lambda d, h=f"{here}/node", g=ghost: set_at(d, h, g))
            self.add("connection-index-not-number", f"{here}/index", f"{source} -> {target} at input \"{index}\"",
                     lambda d, h=f"{here}/index", v=str(index): set_at(d, h, v))
            j, target_node = by_name[target]
            inputs = input_count(self.catalog.describe(target_node["type"], target_node["typeVersion"]), target_node)
            if inputs is not None:
                self.add("connection-input-out-of-range", f"{here}/index",
                         f"{source} -> {target} at input {inputs}, which it lacks ({inputs} inputs)",
                         lambda d, h=f"{here}/index", v=inputs: set_at(d, h, v))
            self.add("node-disconnected", f"/connections/{escape(source)}/{escape(kind)}/{o}",
                     f"{target} no longer connected from {source}",
                     lambda d, h=here: delete_at(d, h))
        for source in seed.get("connections", {}):
            j, node = by_name[source]
            ghost = source + "1" if source + "1" not in by_name else source + " (old)"
            self.add("connection-missing-source", f"/connections/{escape(ghost)}",
                     f"connections from {ghost}, a node that does not exist",
                     lambda d, a=source, b=ghost: rename_key(d["connections"], a, b))
            self.add("connection-bad-type", f"/connections/{escape(source)}/mian",
                     f"connections of {source} under the type mian",
                     lambda d, a=source: rename_key(d["connections"][a], "main", "mian"))
            outputs = output_count(self.catalog.describe(node["type"], node["typeVersion"]), node)
            given = seed["connections"][source].get("main") or []
            if outputs is not None and given:
                last = len(given) - 1

                def widen(d, a=source, n=outputs, last=last):
                    lists = d["connections"][a]["main"]
                    moved = lists[last]
                    lists[last] = []
                    while len(lists) < n:
                        lists.append([])
                    lists.append(moved)
                self.add("connection-output-out-of-range", f"/connections/{escape(source)}/main/{outputs}",
                         f"{source} connected from output {outputs}, which it lacks ({outputs} outputs)", widen)
        # a cycle: the last node of the chain back to the first that has an input
        chain = [name for name in self.names if any(t == name for _, _, _, t, _, _ in edges(seed))]
        tails = [name for name in self.names if name not in seed.get("connections", {}) and name in chain]
        if chain and tails:
            first = chain[0]
            for tail in tails[:2]:
                if tail == first:
                    continue
                self.add("connection-cycle", f"/connections/{escape(tail)}/main/0/0",
                         f"{tail} -> {first}: a cycle without an exit",
                         lambda d, a=tail, b=first: d["connections"].setdefault(a, {}).setdefault("main", [[]])[0]
                         .insert(0, {"node": b, "type": "main", "index": 0}))
            self.add("connection-self-loop", f"/connections/{escape(first)}/main/0/0", f"{first} -> {first}",
                     lambda d, a=first: d["connections"].setdefault(a, {}).setdefault("main", [[]])[0]
                     .insert(0, {"node": a, "type": "main", "index": 0}))

    def workflow_level(self):
        settings = [("executionOrder", "v9"), ("timezone", "Mars/Olympus_Mons"),
                    ("saveDataErrorExecution", "sometimes"), ("executionTimeout", "soon"),
                    ("callerPolicy", "everybody")]
        for key, value in settings:
            self.add("settings-unknown-value", f"/settings/{key}", f"settings.{key} = {json.dumps(value)}",
                     lambda d, k=key, v=value: d.setdefault("settings", {}).__setitem__(k, v))


def option_names(props):
    names = set()
    for prop in props:
        if prop.get("type") in ("options", "multiOptions"):
            names.add(prop["name"])
        elif prop.get("type") == "collection":
            names |= option_names(prop.get("options") or [])
        elif prop.get("type") == "fixedCollection":
            for group in prop.get("options") or []:
                names |= option_names(group.get("values") or [])
    return names


def rename_key(mapping, old, new):
    items = list(mapping.items())
    mapping.clear()
    for key, value in items:
        mapping[new if key == old else key] = value


def duplicate(doc, i, fresh_path):
    """A copy of node i (another name and id, same connections); with
    fresh_path false a webhook keeps its path and method."""
    node = copy.deepcopy(doc["nodes"][i])
    node["name"] = node["name"] + " 2"
    node["id"] = node["id"][:-4] + "dup0"
    node["position"] = [node["position"][0], node["position"][1] + 400]
    if "webhookId" in node:
        node["webhookId"] = node["webhookId"][:-4] + "dup0"
    if fresh_path and "path" in node.get("parameters", {}):
        node["parameters"]["path"] += "-2"
    doc["nodes"].append(node)
    if doc["nodes"][i]["name"] in doc.get("connections", {}):
        doc["connections"][node["name"]] = copy.deepcopy(doc["connections"][doc["nodes"][i]["name"]])
    return Pointer(f"/nodes/{len(doc['nodes']) - 1}")

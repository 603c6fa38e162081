//! The configuration reference and what an operator's tools read: the JSON
//! Schema of `gateway.toml` (committed as `docs/gateway.schema.json`, printed
//! by `config-schema`, every key described, true to the shipped files), the
//! README's configuration table against it, and the real `serve` binary
//! exporting spans with the standard `OTEL_*` variables alone, its run
//! lines naming the run.

mod common;

use common::{Engine, repo_path, valid_program};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Upper bound of every wait in this file.
const BOUND: Duration = Duration::from_secs(30);
const REGENERATE: &str =
    "cargo run --bin pilotage-gateway -- config-schema > docs/gateway.schema.json";

fn printed_schema() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .arg("config-schema")
        .env("RUST_LOG", "error")
        .output()
        .expect("run config-schema");
    assert!(out.status.success(), "config-schema failed: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 schema")
}

fn schema() -> Value {
    serde_json::from_str(&printed_schema()).expect("config-schema prints JSON")
}

#[test]
fn the_committed_schema_is_what_config_schema_prints() {
    let committed = std::fs::read_to_string(repo_path("docs/gateway.schema.json"))
        .unwrap_or_else(|e| panic!("docs/gateway.schema.json: {e}; create it with: {REGENERATE}"));
    assert!(
        committed == printed_schema(),
        "docs/gateway.schema.json is out of date with the configuration types; regenerate it with:\n  {REGENERATE}"
    );
}

/// The definition a property points to (`$ref`, or `allOf`/`anyOf` around
/// one, as schemars writes a described or optional reference).
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    if let Some(r) = node.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        return resolve(root, &root["definitions"][name]);
    }
    for combinator in ["allOf", "anyOf"] {
        if let Some(parts) = node.get(combinator).and_then(Value::as_array) {
            let refs: Vec<&Value> = parts.iter().filter(|p| p.get("$ref").is_some()).collect();
            if refs.len() == 1 {
                return resolve(root, refs[0]);
            }
        }
    }
    if let Some(items) = node.get("items").filter(|i| i.is_object()) {
        let inner = resolve(root, items);
        if inner.get("properties").is_some() {
            return inner;
        }
    }
    node
}

/// Subtrees with a reference of their own: the REST mapping
/// (docs/adapting.md), the Mistral settings (docs/mistral.md), a context
/// schema (any JSON Schema), and `[engines.NAME]` (the keys of `[engine]`).
const OWN_REFERENCE: [&str; 4] = [
    "engine.mapping",
    "engine.mistral",
    "language.context_schema",
    "engines",
];

/// Every key path of the schema (`server.listen`, `auth.key.name`), and
/// which of them are leaves (no keys below them).
fn key_paths(root: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut all, mut leaves) = (BTreeSet::new(), BTreeSet::new());
    let mut pending = vec![(String::new(), root)];
    // Bounded: the configuration is a tree a few levels deep.
    for _ in 0..10_000 {
        let Some((prefix, node)) = pending.pop() else {
            return (all, leaves);
        };
        let node = resolve(root, node);
        let Some(props) = node.get("properties").and_then(Value::as_object) else {
            leaves.insert(prefix);
            continue;
        };
        for (key, sub) in props {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            all.insert(path.clone());
            if OWN_REFERENCE.contains(&path.as_str()) {
                leaves.insert(path);
            } else {
                pending.push((path, sub));
            }
        }
    }
    panic!("the schema is deeper than any configuration")
}

#[test]
fn every_key_of_the_schema_has_a_description() {
    let root = schema();
    let mut undescribed = Vec::new();
    let mut definitions: Vec<(&str, &Value)> = vec![("(root)", &root)];
    for (name, def) in root["definitions"].as_object().expect("definitions") {
        definitions.push((name, def));
    }
    for (name, def) in definitions {
        for (key, prop) in def
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let described = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty());
            if !described {
                undescribed.push(format!("{name}.{key}"));
            }
        }
    }
    assert!(
        undescribed.is_empty(),
        "keys without a doc comment (it becomes the schema's description): {undescribed:?}"
    );
}

fn toml_as_json(path: &str) -> Value {
    let text = std::fs::read_to_string(repo_path(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::to_value(table).expect("TOML as JSON")
}

#[test]
fn the_shipped_configurations_pass_the_schema_and_a_misspelled_key_does_not() {
    let validator = jsonschema::validator_for(&schema()).expect("the schema compiles");
    let mut checked = 0;
    for dir in ["deploy", "tests/fixtures"] {
        for entry in std::fs::read_dir(repo_path(dir)).expect("read dir") {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.extension().is_none_or(|e| e != "toml") || name.starts_with('.') {
                continue;
            }
            let rel = format!("{dir}/{name}");
            let doc = toml_as_json(&rel);
            // Only gateway configurations (other TOML files live there too).
            if doc.get("engine").is_none() {
                continue;
            }
            let errors: Vec<String> = validator
                .iter_errors(&doc)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{rel}: {errors:?}");
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} configurations found");
    let mut typo = toml_as_json("deploy/gateway.local.toml");
    typo["server"]["listne"] = json!("127.0.0.1:8080");
    assert!(
        !validator.is_valid(&typo),
        "a misspelled key passed the schema"
    );
    let mut engine_typo = toml_as_json("deploy/gateway.local.toml");
    engine_typo["engine"]["retires"] = json!(3);
    assert!(
        !validator.is_valid(&engine_typo),
        "a misspelled engine key passed the schema"
    );
    let mut wrong_type = toml_as_json("deploy/gateway.local.toml");
    wrong_type["engine"]["timeout_ms"] = json!("fast");
    assert!(!validator.is_valid(&wrong_type), "a string timeout passed");
}

/// The README's configuration section.
fn readme_configuration() -> String {
    let readme = std::fs::read_to_string(repo_path("README.md")).expect("README.md");
    let start = readme
        .find("\n## Configuration\n")
        .expect("a Configuration section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_string()
}

/// `a.{b,c}` → `a.b`, `a.c`.
fn expand(token: &str) -> Vec<String> {
    match (token.find('{'), token.find('}')) {
        (Some(open), Some(close)) if open < close => token[open + 1..close]
            .split(',')
            .map(|part| format!("{}{}{}", &token[..open], part.trim(), &token[close + 1..]))
            .collect(),
        _ => vec![token.to_string()],
    }
}

/// `[engines.NAME]` has the keys of `[engine]`.
fn unalias(path: &str) -> String {
    match path.strip_prefix("engines.NAME") {
        Some(rest) => format!("engine{rest}"),
        None => path.to_string(),
    }
}

/// The keys the README's configuration table names: the first cell's code
/// spans, read as a user reads them. `[table]` or `[[table]]` sets the
/// table of the bare keys after it (in that row and the rows below), a
/// table named last in its row stands for all its keys, `x.*` for every key
/// below `x`, and a dotted path whose first part is a top-level table is
/// absolute.
fn readme_keys(tops: &BTreeSet<String>) -> BTreeSet<String> {
    let key_like = regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_.{},*]*$").expect("regex");
    let mut out = BTreeSet::new();
    let mut section = String::new();
    for line in readme_configuration().lines() {
        let Some(first_cell) = line.strip_prefix("| ").and_then(|l| l.split(" |").next()) else {
            continue;
        };
        let tokens: Vec<&str> = first_cell.split('`').skip(1).step_by(2).collect();
        let mut table_last = None;
        for token in tokens {
            if token.starts_with('[') {
                section = unalias(token.trim_matches(|c| c == '[' || c == ']'));
                table_last = Some(section.clone());
                continue;
            }
            if !key_like.is_match(token) {
                continue;
            }
            table_last = None;
            for key in expand(token) {
                let key = key.trim_end_matches(".*");
                let first = key.split('.').next().unwrap_or_default();
                let absolute = key.contains('.') && tops.contains(first);
                let path = if absolute || section.is_empty() {
                    unalias(key)
                } else {
                    format!("{section}.{key}")
                };
                out.insert(path);
            }
        }
        if let Some(table) = table_last {
            out.insert(table);
        }
    }
    out
}

#[test]
fn the_readme_table_names_every_key_and_only_keys_that_exist() {
    let root = schema();
    let (all, leaves) = key_paths(&root);
    let tops: BTreeSet<String> = all.iter().filter(|p| !p.contains('.')).cloned().collect();
    let named = readme_keys(&tops);
    assert!(named.len() > 40, "the README table was not read: {named:?}");
    let unknown: Vec<&String> = named.iter().filter(|k| !all.contains(*k)).collect();
    assert!(
        unknown.is_empty(),
        "README.md names configuration keys the schema does not have: {unknown:?}"
    );
    let covered = |leaf: &str| {
        named
            .iter()
            .any(|k| leaf == k || leaf.starts_with(&format!("{k}.")))
    };
    let missing: Vec<&String> = leaves
        .iter()
        .filter(|l| *l != "engines" && !covered(l))
        .collect();
    assert!(
        missing.is_empty(),
        "keys of the schema the README configuration table does not name: {missing:?}"
    );
}

/// Every `PILOTAGE_*` variable the gateway reads (outside unit tests).
fn variables_read() -> BTreeSet<String> {
    let quoted = regex::Regex::new(r#""(PILOTAGE_[A-Z0-9_]*[A-Z0-9])""#).expect("regex");
    let mut out = BTreeSet::new();
    let mut dirs = vec![repo_path("src")];
    // Bounded: src/ is a few levels deep.
    for _ in 0..1_000 {
        let Some(dir) = dirs.pop() else { break };
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            out.extend(quoted.captures_iter(code).map(|c| c[1].to_string()));
        }
    }
    out
}

#[test]
fn the_readme_names_every_environment_variable_the_gateway_reads() {
    let section = readme_configuration();
    let read = variables_read();
    assert!(read.contains("PILOTAGE_CONFIG"), "{read:?}");
    let missing: Vec<&String> = read
        .iter()
        .filter(|v| !section.contains(v.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "variables the README's Configuration section does not name: {missing:?}"
    );
    for standard in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_SERVICE_NAME",
        "OTEL_TRACES_SAMPLER",
    ] {
        assert!(
            section.contains(standard),
            "{standard} is not in the README"
        );
    }
}

/// A tiny OTLP/HTTP receiver on `/v1/traces`: every JSON body it was sent.
async fn otlp_receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    kept.lock().unwrap().push(v);
                }
                ([("content-type", "application/json")], "{}")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, got)
}

/// `serve` with the conformance configuration (which sets no `[telemetry]`)
/// and `env`; stderr kept line by line; stopped on drop.
struct Served {
    child: Child,
    base: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(engine: &Engine, env: &[(&str, &str)]) -> Served {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"));
        command
            .args(["serve", "--config"])
            .arg(repo_path("tests/fixtures/features.toml"))
            .env("PILOTAGE_ENGINE_URL", &engine.url)
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_REDIS_URL", "")
            .env("RUST_LOG", "info")
            .env_remove("PILOTAGE_OTLP_TRACES_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start pilotage-gateway");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                kept.lock().unwrap().push(line);
            }
        });
        let mut served = Served {
            child,
            base: String::new(),
            lines,
        };
        let deadline = Instant::now() + BOUND;
        while served.base.is_empty() {
            assert!(
                Instant::now() < deadline,
                "no listening line: {:?}",
                served.json_lines()
            );
            if let Some(address) = served
                .json_lines()
                .iter()
                .find(|l| l["message"] == "pilotage-gateway listening")
                .and_then(|l| l["address"].as_str().map(str::to_string))
            {
                served.base = format!("http://{address}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        served
    }

    fn json_lines(&self) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// SIGTERM, then waits for the exit (the exporter flushes at exit).
    async fn stop(&mut self) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + BOUND;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the gateway did not exit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Every exported span with its resource's `service.name`.
fn exported_spans(exports: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for e in exports {
        for rs in e["resourceSpans"].as_array().into_iter().flatten() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "service.name")
                .and_then(|a| a["value"]["stringValue"].as_str())
                .unwrap_or_default()
                .to_string();
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for s in ss["spans"].as_array().into_iter().flatten() {
                    out.push((service.clone(), s.clone()));
                }
            }
        }
    }
    out
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a str> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)?["value"]["stringValue"]
        .as_str()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_otel_variables_alone_export_spans_and_the_run_is_named_in_its_lines() {
    let (collector, exports) = otlp_receiver().await;
    let engine = Engine::spawn(&[]);
    let mut served = Served::start(
        &engine,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
            ("OTEL_SERVICE_NAME", "observability-test"),
            ("OTEL_TRACES_SAMPLER", "always_on"),
        ],
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow", "arguments": {"workflow": valid_program(), "input": {"id": "cus_1"}}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/mcp", served.base))
        .header("accept", "application/json, text/event-stream")
        .header("x-request-id", "obs-run")
        .json(&call)
        .send()
        .await
        .expect("POST /mcp")
        .json()
        .await
        .expect("JSON answer");
    let run_id = answer["result"]["structuredContent"]["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no run_id in {answer}"))
        .to_string();
    served.stop().await;
    let request_line = served
        .json_lines()
        .into_iter()
        .find(|l| {
            l["message"] == "request"
                && l["spans"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|s| s["request_id"] == "obs-run")
        })
        .unwrap_or_else(|| panic!("no request line: {:?}", served.json_lines()));
    assert_eq!(request_line["run_id"], run_id.as_str(), "{request_line}");
    let spans = exported_spans(&exports.lock().unwrap());
    assert!(!spans.is_empty(), "nothing exported to {collector}");
    assert!(
        spans
            .iter()
            .all(|(service, _)| service == "observability-test"),
        "service.name not from OTEL_SERVICE_NAME: {:?}",
        spans.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    let execute = spans
        .iter()
        .find(|(_, s)| s["name"] == "execute")
        .unwrap_or_else(|| panic!("no execute span: {spans:?}"));
    assert_eq!(attribute(&execute.1, "run_id"), Some(run_id.as_str()));
    drop(served);
    drop(engine);
}

/// `OTEL_TRACES_SAMPLER` reaches the SDK: `always_off` exports nothing, where
/// the same set-up with `always_on` (above) exports every span.
#[tokio::test(flavor = "multi_thread")]
async fn the_standard_sampler_variable_is_honoured() {
    let (collector, exports) = otlp_receiver().await;
    let engine = Engine::spawn(&[]);
    let mut served = Served::start(
        &engine,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
            ("OTEL_TRACES_SAMPLER", "always_off"),
        ],
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "pilotage_manifest", "arguments": {}}});
    let status = reqwest::Client::new()
        .post(format!("{}/mcp", served.base))
        .header("accept", "application/json, text/event-stream")
        .json(&call)
        .send()
        .await
        .expect("POST /mcp")
        .status();
    assert_eq!(status, 200);
    served.stop().await;
    let spans = exported_spans(&exports.lock().unwrap());
    assert!(spans.is_empty(), "always_off exported {spans:?}");
}

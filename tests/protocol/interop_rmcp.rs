//! The Pilotage loop driven by rmcp's own MCP client (Streamable HTTP) on
//! every protocol revision the gateway serves: handshake (initialize, or
//! `server/discover` on 2026-07-28), tools/list, manifest, guide index and
//! fetch, catalog list/get, validate an invalid then a valid program, execute
//! with `store: true`, fetch the trace, a Pilotage request error, and an
//! unknown tool (a JSON-RPC `-32602`).
//!
//! rmcp's client deserializes every answer into its typed model but does not
//! check `structuredContent` against a tool's `outputSchema`; the loop does
//! that with the schema the client received in tools/list (request-error
//! results included), and against the official Pilotage schema when present.
//!
//! A failure names the SDK, the revision and the step. The TypeScript and
//! Python SDK clients run the same loop in `scripts/interop`.

use crate::common::{LANG, TestEnv, assert_shape};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, Tool,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const EXT: &str = "io.github.jafarsa0/pilotage";
const SDK: &str = "rmcp@3.11.0";
/// The bound of one whole loop (every request is local and small).
const LOOP_TIMEOUT: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_runs_the_loop_on_2025_06_18() {
    run_loop(ProtocolVersion::V_2025_06_18).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_runs_the_loop_on_2025_11_25() {
    run_loop(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_runs_the_loop_on_2026_07_28() {
    run_loop(ProtocolVersion::V_2026_07_28).await;
}

/// Where the loop is, for the failure message.
#[derive(Clone)]
struct Progress {
    revision: String,
    step: Arc<Mutex<&'static str>>,
}

impl Progress {
    fn at(&self, step: &'static str) {
        *self.step.lock().unwrap() = step;
    }

    fn step(&self) -> &'static str {
        *self.step.lock().unwrap()
    }

    fn ok(&self) {
        println!(
            "SDK={SDK} revision={} step={} ok",
            self.revision,
            self.step()
        );
    }

    #[track_caller]
    fn fail(&self, why: impl std::fmt::Display) -> ! {
        panic!(
            "SDK={SDK} revision={} step={} FAILED: {why}",
            self.revision,
            self.step()
        )
    }

    #[track_caller]
    fn check(&self, cond: bool, why: impl FnOnce() -> String) {
        if !cond {
            self.fail(why());
        }
    }
}

async fn run_loop(revision: ProtocolVersion) {
    let env = TestEnv::start().await;
    let progress = Progress {
        revision: revision.to_string(),
        step: Arc::new(Mutex::new("initialize")),
    };
    let result = tokio::time::timeout(LOOP_TIMEOUT, the_loop(&env, revision, &progress)).await;
    if result.is_err() {
        progress.fail(format!("no answer within {LOOP_TIMEOUT:?}"));
    }
}

/// The client as rmcp builds it: the revision is the one its `ClientConfig`
/// offers in initialize, or the one it prefers in `server/discover`.
async fn connect(
    url: &str,
    revision: &ProtocolVersion,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some([(EXT.to_string(), Map::new())].into_iter().collect());
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("pilotage-interop-rmcp", "1"),
    )
    .with_protocol_version(revision.clone());
    let transport = StreamableHttpClientTransport::from_config(
        // An API key principal: the fetch door needs a principal that outlives
        // one request, and 2026-07-28 has no sessions.
        StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .auth_header(crate::common::ACME_OPS),
    );
    let started = if revision.has_initialize() {
        config.serve(transport).await
    } else {
        config
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![revision.clone()],
                },
            )
            .await
    };
    started.map_err(|e| e.to_string())
}

/// The program of the loop: bill gold customers; `amount` decides validity.
fn program(amount: Value) -> Value {
    json!({"name": "invoice gold customers", "steps": [
        {"id": "find", "kind": "call", "capability": "crm.find_customer", "with": {"query": "a"}},
        {"id": "each", "kind": "for_each", "items": "$.steps.find.output.matches", "as": "c", "do": [
            {"id": "gold", "kind": "branch", "when": {"op": "eq", "left": "$.item.tier", "right": "gold"},
             "then": [{"id": "bill", "kind": "call", "capability": "billing.create_invoice",
                       "with": {"customer_id": "$.item.id", "amount_cents": amount}}]}]}
    ], "output": {"billed": "$.steps.each.output"}})
}

/// The official `$defs` shape of a tool's answers.
fn official_shape(tool: &str) -> &'static str {
    match tool {
        "pilotage_manifest" => "ManifestToolOutput",
        "pilotage_get_guide" => "GetGuideToolOutput",
        "pilotage_catalog" => "CatalogToolOutput",
        t if t.starts_with("validate_") => "ValidateToolOutput",
        t if t.starts_with("run_") => "ExecuteToolOutput",
        _ => "TraceToolOutput",
    }
}

struct Session<'a> {
    client: RunningService<RoleClient, ClientConfig>,
    tools: HashMap<String, Tool>,
    modern: bool,
    p: &'a Progress,
}

impl Session<'_> {
    /// tools/call; structuredContent checked against the listed outputSchema
    /// (on request errors too) and the official shape.
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else {
            self.p.fail("arguments must be an object")
        };
        let result = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .unwrap_or_else(|e| self.p.fail(format!("{tool}: {e}")));
        self.p
            .check(!self.modern || result.result_type.is_some(), || {
                format!("{tool}: tools/call result has no resultType")
            });
        let Some(structured) = result.structured_content.as_ref().filter(|s| s.is_object()) else {
            self.p.fail(format!("{tool}: no structuredContent"))
        };
        let schema = self.tools[tool]
            .output_schema
            .as_ref()
            .unwrap_or_else(|| self.p.fail(format!("{tool}: no outputSchema")));
        let validator = jsonschema::validator_for(&Value::Object((**schema).clone()))
            .unwrap_or_else(|e| {
                self.p
                    .fail(format!("{tool}: outputSchema does not compile: {e}"))
            });
        if let Some(e) = validator.iter_errors(structured).next() {
            self.p.fail(format!(
                "{tool}: structuredContent does not match the outputSchema: {e} at '{}'",
                e.instance_path()
            ));
        }
        assert_shape(structured, official_shape(tool));
        result
    }

    /// A successful call's structuredContent.
    async fn success(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args).await;
        let structured = r.structured_content.clone().unwrap_or_default();
        self.p.check(r.is_error != Some(true), || {
            format!("{tool}: isError: {structured}")
        });
        structured
    }
}

async fn the_loop(env: &TestEnv, revision: ProtocolVersion, p: &Progress) {
    let modern = !revision.has_initialize();
    p.at(if modern { "discover" } else { "initialize" });
    let client = connect(&env.url, &revision)
        .await
        .unwrap_or_else(|e| p.fail(e));
    let info = client
        .peer_info()
        .unwrap_or_else(|| p.fail("no server info after the handshake"));
    p.check(info.protocol_version == revision, || {
        format!("negotiated {}", info.protocol_version)
    });
    p.check(
        info.capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(EXT)),
        || format!("no {EXT} in the server capabilities"),
    );
    p.check(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("pilotage_manifest")),
        || "instructions do not name pilotage_manifest".into(),
    );
    let meta = info
        .meta
        .as_ref()
        .and_then(|m| m.get(EXT))
        .cloned()
        .unwrap_or_else(|| p.fail(format!("no _meta[{EXT}] in the handshake result")));
    assert_shape(&meta, "InitializeMetaValue");
    p.ok();

    p.at("list_tools");
    let listed = client.list_tools(None).await.unwrap_or_else(|e| p.fail(e));
    p.check(listed.next_cursor.is_none(), || {
        "tools/list is paginated; one page expected".into()
    });
    // 2026-07-28: "Servers implementing this protocol version MUST include"
    // resultType; rmcp's client tolerates its absence, the other SDKs do not.
    p.check(!modern || listed.result_type.is_some(), || {
        "tools/list result has no resultType".into()
    });
    let tools: HashMap<String, Tool> = listed
        .tools
        .into_iter()
        .map(|t| (t.name.to_string(), t))
        .collect();
    for (name, tool) in &tools {
        let schema = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| p.fail(format!("{name}: no outputSchema")));
        if let Err(e) = jsonschema::validator_for(&Value::Object((**schema).clone())) {
            p.fail(format!("{name}: outputSchema does not compile: {e}"));
        }
    }
    p.check(tools.contains_key("pilotage_manifest"), || {
        "no pilotage_manifest".into()
    });
    let s = Session {
        client,
        tools,
        modern,
        p,
    };
    p.ok();

    p.at("manifest");
    let manifest = s.success("pilotage_manifest", json!({})).await;
    p.check(manifest["pilotage"] == "1.1", || {
        format!("pilotage {}", manifest["pilotage"])
    });
    p.check(manifest == meta["manifest"], || {
        "the manifest differs from the handshake _meta manifest".into()
    });
    let lang = manifest["languages"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["name"] == LANG))
        .cloned()
        .unwrap_or_else(|| p.fail(format!("no {LANG} in the manifest")));
    let name = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let (guides, catalog) = (name(&lang["guides"]), name(&lang["catalog"]));
    let (validate, execute, trace) = (
        name(&lang["loop"]["validate"]),
        name(&lang["loop"]["execute"]),
        name(&lang["loop"]["trace"]),
    );
    for t in [&guides, &catalog, &validate, &execute, &trace] {
        p.check(s.tools.contains_key(t), || {
            format!("manifest names {t}, tools/list does not")
        });
    }
    p.ok();

    p.at("guide_index");
    let index = s.success(&guides, json!({"language": LANG})).await;
    let core = index["guides"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["level"] == "core"))
        .cloned()
        .unwrap_or_else(|| p.fail("no core guide in the index"));
    p.ok();

    p.at("guide_fetch");
    let guide = s
        .success(&guides, json!({"language": LANG, "id": core["id"]}))
        .await;
    let body = guide["guide"]["body"].as_str().unwrap_or_default();
    p.check(body.contains("for_each") && body.contains("branch"), || {
        "core guide body".into()
    });
    p.ok();

    p.at("catalog_list");
    let found = s
        .success(
            &catalog,
            json!({"language": LANG, "verb": "list", "q": "invoice"}),
        )
        .await;
    p.check(
        found["items"]
            .as_array()
            .is_some_and(|i| i.iter().any(|e| e["id"] == "billing.create_invoice")),
        || format!("billing.create_invoice not listed: {found}"),
    );
    p.ok();

    p.at("catalog_get");
    let entry = s
        .success(
            &catalog,
            json!({"language": LANG, "verb": "get", "id": "billing.create_invoice"}),
        )
        .await;
    p.check(entry["entry"]["risk"] == "write", || {
        format!("risk {}", entry["entry"]["risk"])
    });
    p.ok();

    p.at("validate_invalid");
    let bad = s
        .success(&validate, json!({"workflow": program(json!("1000"))}))
        .await;
    p.check(bad["valid"] == false, || {
        "a wrong-typed amount validated".into()
    });
    let d = &bad["diagnostics"][0];
    p.check(d["code"] == "type_mismatch", || {
        format!("code {}", d["code"])
    });
    p.check(
        d["path"] == "/steps/1/do/0/then/0/with/amount_cents",
        || format!("path {}", d["path"]),
    );
    p.ok();

    p.at("validate_valid");
    let good = s
        .success(&validate, json!({"workflow": program(json!(1000))}))
        .await;
    p.check(good["valid"] == true, || format!("invalid: {good}"));
    p.check(good["plan"]["max_risk"] == "write", || {
        format!("max_risk {}", good["plan"]["max_risk"])
    });
    p.ok();

    p.at("execute");
    let run = s
        .success(
            &execute,
            json!({"workflow": program(json!(1000)), "mode": "immediate", "store": true,
                "trace_level": "full", "expected_catalog_version": good["catalog_version"]}),
        )
        .await;
    p.check(run["outcome"]["status"] == "success", || {
        format!("outcome {}", run["outcome"])
    });
    p.check(
        run["trace"]["steps"].as_array().is_some_and(|steps| {
            steps
                .iter()
                .any(|st| st["id"].as_str().is_some_and(|id| id.starts_with("bill#")))
        }),
        || "no bill# step in the trace".into(),
    );
    p.ok();

    p.at("trace_fetch");
    let fetched = s.success(&trace, json!({"run_id": run["run_id"]})).await;
    assert_shape(&fetched, "TraceFetchResponse");
    p.check(fetched == run, || {
        "the fetched trace differs from the run answer".into()
    });
    p.ok();

    p.at("request_error");
    let missing = s
        .call(
            &catalog,
            json!({"language": LANG, "verb": "get", "id": "no.such.capability"}),
        )
        .await;
    p.check(missing.is_error == Some(true), || {
        "unknown catalog id: isError is not true".into()
    });
    let kind = missing
        .structured_content
        .as_ref()
        .map(|s| s["error"]["kind"].clone())
        .unwrap_or_default();
    p.check(kind == "not_found", || format!("kind {kind}"));
    p.ok();

    p.at("unknown_tool");
    let err = s
        .client
        .call_tool(CallToolRequestParams::new("no_such_tool").with_arguments(Map::new()))
        .await;
    match err {
        Err(ServiceError::McpError(e)) => {
            p.check(e.code.0 == -32602, || format!("code {}", e.code.0));
        }
        other => p.fail(format!("expected a JSON-RPC error, got {other:?}")),
    }
    p.ok();

    p.at("close");
    s.client
        .cancel()
        .await
        .unwrap_or_else(|e| p.fail(format!("{e:?}")));
    p.ok();
}

//! A client that builds every call from `tools/list` alone, as an LLM tool
//! call or a generated form would: required members from `inputSchema`, an
//! `enum` member gets its first value, the program and its input come from
//! the core guide's example, and the tokens an answer hands back
//! (`catalog_version`, `run_id`) are passed on as the descriptions say. It
//! must get through validate → run → trace with no call refused.

mod common;

use common::{Mcp, TestEnv};
use serde_json::{Map, Value, json};

/// The tools as listed, by name.
struct Listed(Vec<Value>);

impl Listed {
    fn named(&self, name: &str) -> &Value {
        self.0
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed"))
    }

    /// The loop tool of `stage` (validate, execute, trace) for `language`,
    /// found by the program declaration and the title.
    fn loop_tool(&self, language: &str, title_starts: &str) -> &Value {
        self.0
            .iter()
            .find(|t| {
                t["title"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(title_starts) && s.contains(language))
            })
            .unwrap_or_else(|| panic!("{title_starts} tool for {language}"))
    }
}

/// The arguments a schema-driven client sends: every required member (from
/// `known` when it has the value, else an enum's first value), plus every
/// member of `known` the schema lists.
fn build(tool: &Value, known: &Map<String, Value>) -> Value {
    let schema = &tool["inputSchema"];
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut args = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        let member = &props[name];
        let value = known
            .get(name)
            .cloned()
            .or_else(|| member["enum"].get(0).cloned())
            .unwrap_or_else(|| panic!("{}: no value for required {name}", tool["name"]));
        args.insert(name.to_string(), value);
    }
    for (name, value) in known {
        if props.contains_key(name) {
            args.insert(name.clone(), value.clone());
        }
    }
    Value::Object(args)
}

/// The body of the fenced block whose info string is `info` in `text`.
fn fenced(text: &str, info: &str) -> Value {
    let start = text
        .find(&format!("```{info}\n"))
        .unwrap_or_else(|| panic!("a ```{info} block"))
        + info.len()
        + 4;
    let end = start + text[start..].find("```").expect("closed block");
    serde_json::from_str(&text[start..end]).expect("the example is JSON")
}

/// Calls `tool` with `args`; a refusal of any kind fails the test.
async fn accepted(c: &Mcp, tool: &Value, args: Value) -> Value {
    let name = tool["name"].as_str().unwrap();
    let r = c.call(name, args.clone()).await;
    assert!(!r.is_error, "{name} refused {args}: {}", r.structured);
    r.structured
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_reads_only_the_schemas_completes_the_loop_first_try() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    let tools = Listed(c.list_tools().await);

    let manifest = accepted(&c, tools.named("pilotage_manifest"), json!({})).await;
    let guide_tool = tools.named("pilotage_get_guide");
    let first_language = guide_tool["inputSchema"]["properties"]["language"]["enum"][0]
        .as_str()
        .expect("the languages are listed")
        .to_string();
    assert!(
        manifest["languages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == first_language.as_str()),
        "{manifest}"
    );
    let mut known = Map::new();
    let index = accepted(&c, guide_tool, build(guide_tool, &known)).await;
    let core = index["guides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["level"] == "core")
        .expect("a core guide")["id"]
        .clone();
    known.insert("id".into(), core);
    let guide = accepted(&c, guide_tool, build(guide_tool, &known)).await;
    let body = guide["guide"]["body"].as_str().unwrap();
    let (program, input) = (fenced(body, "json workflow"), fenced(body, "json input"));

    let validate = tools.loop_tool(&first_language, "Validate");
    let argument = validate["_meta"]["io.github.jafarsa0/pilotage"]["argument"]
        .as_str()
        .unwrap()
        .to_string();
    let mut known = Map::new();
    known.insert(argument.clone(), program);
    let verdict = accepted(&c, validate, build(validate, &known)).await;
    assert_eq!(verdict["valid"], true, "{verdict}");

    let execute = tools.loop_tool(&first_language, "Execute");
    known.insert("input".into(), input);
    known.insert("store".into(), json!(true));
    known.insert(
        "expected_catalog_version".into(),
        verdict["catalog_version"].clone(),
    );
    let run = accepted(&c, execute, build(execute, &known)).await;
    assert_eq!(run["outcome"]["status"], "success", "{run}");

    let trace = tools.loop_tool(&first_language, "Fetch");
    let mut known = Map::new();
    known.insert("run_id".into(), run["run_id"].clone());
    let fetched = accepted(&c, trace, build(trace, &known)).await;
    assert_eq!(fetched["run_id"], run["run_id"], "{fetched}");
    assert_eq!(fetched["outcome"], run["outcome"]);
}

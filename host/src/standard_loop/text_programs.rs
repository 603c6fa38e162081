//! Programs of text Languages: a Language whose program argument is typed
//! `"string"` (mistral/v2's YAML, for one) gets the program file's text as
//! a string, exactly as written; a JSON Language keeps getting the parsed
//! JSON value; a file that is not JSON, offered only to JSON Languages, is
//! refused before anything is validated, saying so.

use super::*;
use crate::fake::{self, FakeServer, ok, outcome, with_guides};
use crate::gate::{Approval, ApprovalRequest, Approver};
use crate::report::Recorder;
use serde_json::json;

struct Grant;

impl Approver for Grant {
    fn approve(&mut self, _r: &ApprovalRequest<'_>) -> Approval {
        Approval::Granted("test".into())
    }
}

const YAML: &str =
    "version: '2.0'\n\nhello:\n  tasks:\n    say:\n      action: std.echo output=hi\n";

/// A server whose only Language takes its program as a value of `kind`.
fn typed_server(kind: &str) -> FakeServer {
    let mut server = FakeServer::new(
        fake::language(false),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => {
                ok(json!({"valid": true, "diagnostics": [], "catalog_version": "cv_1"}))
            }
            _ => ok(outcome(true, "success")),
        }),
    );
    for tool in &mut server.tools {
        if let Some(workflow) = tool.pointer_mut("/inputSchema/properties/workflow") {
            *workflow = json!({"type": kind});
        }
    }
    server
}

/// A server whose only Language takes its program as a string, like the
/// gateway's mistral/v2 tools.
fn text_language_server() -> FakeServer {
    typed_server("string")
}

/// What `pilotage run FILE` builds from a file's text.
fn from_file(text: &str) -> RunSpec {
    let program = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()));
    RunSpec {
        program_text: Some(text.to_string()),
        ..RunSpec::new(program)
    }
}

async fn run_spec(server: &FakeServer, spec: RunSpec) -> (Exit, Recorder) {
    let mut rec = Recorder::default();
    let exit = run(server, None, &spec, &mut Grant, &mut rec).await;
    (exit, rec)
}

#[tokio::test]
async fn a_yaml_program_is_sent_as_its_text() {
    let server = text_language_server();
    let (exit, rec) = run_spec(&server, from_file(YAML)).await;
    assert_eq!(exit, Exit::Success, "{:?}", rec.lines);
    let validates = server.calls_to("validate_workflow");
    let executes = server.calls_to("run_workflow");
    assert_eq!(validates.len(), 1);
    assert_eq!(validates[0]["workflow"], json!(YAML));
    assert_eq!(executes.len(), 1);
    assert_eq!(executes[0]["workflow"], json!(YAML), "byte for byte");
}

#[tokio::test]
async fn a_json_file_goes_as_text_to_a_language_taking_strings() {
    // JSON is also YAML: the file's text is what a string Language gets.
    let text = "{\"version\": \"2.0\"}\n";
    let server = text_language_server();
    let (exit, rec) = run_spec(&server, from_file(text)).await;
    assert_eq!(exit, Exit::Success, "{:?}", rec.lines);
    assert_eq!(
        server.calls_to("validate_workflow")[0]["workflow"],
        json!(text)
    );
}

#[tokio::test]
async fn a_json_language_keeps_getting_the_json_value() {
    let text = "{\"steps\": []}";
    let server = FakeServer::new(
        fake::language(false),
        with_guides(|tool, _args, _n| match tool {
            "validate_workflow" => {
                ok(json!({"valid": true, "diagnostics": [], "catalog_version": "cv_1"}))
            }
            _ => ok(outcome(true, "success")),
        }),
    );
    let (exit, rec) = run_spec(&server, from_file(text)).await;
    assert_eq!(exit, Exit::Success, "{:?}", rec.lines);
    assert_eq!(
        server.calls_to("validate_workflow")[0]["workflow"],
        json!({"steps": []})
    );
}

#[tokio::test]
async fn a_text_file_for_json_languages_only_is_refused_saying_it_is_not_json() {
    let server = typed_server("object");
    let (exit, rec) = run_spec(&server, from_file(YAML)).await;
    assert_eq!(exit, Exit::Failure);
    let failed = rec
        .lines
        .iter()
        .find(|l| l.starts_with("failed discover"))
        .expect("a discover failure");
    assert!(failed.contains("the program file is not JSON"), "{failed}");
    assert!(server.calls_to("validate_workflow").is_empty());
}

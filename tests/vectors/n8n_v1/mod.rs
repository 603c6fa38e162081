//! The official conformance vectors bound to `n8n/v1` programs (n8n
//! workflow documents): one test per vector that applies to the language's
//! declared capabilities, each through the HTTP endpoint of a gateway in
//! front of a real n8n; those whose body every engine-bound language shares
//! through [`VectorLanguage`] (discover, learn, request shapes, a good
//! program, stored runs), the rest in this folder. The vectors that do not
//! apply, and why, are listed in `docs/conformance.md` ("n8n/v1").
//!
//! "No side effects" is checked on n8n itself: the workflows a run of the
//! gateway creates (`pilotage-<digest>`) that the tenant's n8n user still
//! has, and the executions it can see, are unchanged. A run deletes what it
//! created, so a run leaves nothing either: what these tests observe is
//! that nothing is *left*.

use crate::binding::VectorLanguage;
use crate::common::answers::{codes, error_kind, status};
use crate::common::guides::closed_codes;
use crate::common::n8n_gateway::{
    Caller, EXECUTE, N8N, N8nEnv, TRACE, VALIDATE, chain, greet_program, manual_trigger, node, run,
    say_program, set_node, validate, workflow,
};
use crate::common::{Mcp, assert_shape, ports::free_port};
use serde_json::{Value, json};

mod catalog;
mod execute;
mod trace;
mod validate;

/// An If on `$json.amount > 100`: `Big` on its true arm, `Small` on its
/// false arm; the amount comes from the input.
fn route_program() -> Value {
    let trigger = node(
        "Start",
        "executeWorkflowTrigger",
        1.1,
        0,
        json!({"inputSource": "workflowInputs",
               "workflowInputs": {"values": [{"name": "amount", "type": "number"}]}}),
    );
    let check = node(
        "Large?",
        "if",
        2.2,
        240,
        json!({"conditions": {
            "options": {"caseSensitive": true, "leftValue": "", "typeValidation": "strict", "version": 2},
            "conditions": [{"id": "c1", "leftValue": "={{ $json.amount }}",
                            "operator": {"type": "number", "operation": "gt"}, "rightValue": 100}],
            "combinator": "and"}, "options": {}}),
    );
    let mut connections = chain(&["Start", "Large?"]);
    connections["Large?"] = json!({"main": [
        [{"node": "Big", "type": "main", "index": 0}],
        [{"node": "Small", "type": "main", "index": 0}]]});
    workflow(
        "route",
        vec![
            trigger,
            check,
            set_node("Big", 480, &[("route", "review")]),
            set_node("Small", 720, &[("route", "auto")]),
        ],
        connections,
    )
}

/// A Set that succeeds, then a Code node that throws: `partial`.
fn second_fails_program() -> Value {
    workflow(
        "second_fails",
        vec![
            manual_trigger(),
            set_node("Write", 240, &[("written", "yes")]),
            node(
                "Boom",
                "code",
                2.0,
                480,
                json!({"jsCode": "throw new Error('card declined');"}),
            ),
        ],
        chain(&["Start", "Write", "Boom"]),
    )
}

/// A Code node that throws as the first node after the trigger: `error`.
fn first_fails_program() -> Value {
    workflow(
        "first_fails",
        vec![
            manual_trigger(),
            node(
                "Boom",
                "code",
                2.0,
                240,
                json!({"jsCode": "throw new Error('card declined');"}),
            ),
        ],
        chain(&["Start", "Boom"]),
    )
}

async fn catalog(c: &Mcp, args: Value) -> crate::common::CallResult {
    let mut args = args;
    args["language"] = json!(N8N);
    c.call("pilotage_catalog", args).await
}

async fn catalog_version(c: &Mcp) -> String {
    catalog(c, json!({"verb": "list"})).await.structured["catalog_version"]
        .as_str()
        .expect("catalog_version")
        .to_string()
}

/// What n8n shows of a tenant's user: the gateway's workflows it still has
/// and the number of executions it can see.
async fn observable(n: &N8nEnv, caller: &Caller) -> (Vec<String>, usize) {
    (
        n.n8n.gateway_workflows(&caller.n8n_key).await,
        n.n8n.executions(&caller.n8n_key).await.len(),
    )
}

impl VectorLanguage for N8nEnv {
    const NAME: &'static str = N8N;
    const VALIDATE: &'static str = VALIDATE;
    const EXECUTE: &'static str = EXECUTE;
    const TRACE: &'static str = TRACE;
    const EXAMPLE_GUIDE: (&'static str, &'static str) = ("examples", "```json workflow");
    const TRACE_IDS_MARK: &'static str = "the node's name";

    async fn start() -> Self {
        N8nEnv::start().await
    }

    async fn anonymous(&self) -> Mcp {
        self.anonymous_session().await
    }

    async fn caller_a(&self) -> Mcp {
        self.session(&self.a).await
    }

    async fn caller_b(&self) -> Mcp {
        self.session(&self.b).await
    }

    fn program(&self) -> Value {
        greet_program()
    }
}

crate::engine_language_vectors!(N8nEnv);

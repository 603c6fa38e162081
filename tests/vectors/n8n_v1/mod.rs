//! The official conformance vectors bound to `n8n/v1` programs (n8n
//! workflow documents), through the HTTP endpoint of a gateway in front of
//! a real n8n: this language's table for the shared bodies of `binding`
//! (its programs, where its JSON Pointer diagnostics point, what n8n shows
//! of a tenant's user), and the vector only some languages can run: a
//! program with warnings only ([`Warnings`]). The vectors that do not
//! apply, and why, are listed in `docs/conformance.md` ("n8n/v1").
//!
//! "No side effects" is checked on n8n itself: the workflows a run of the
//! gateway creates (`pilotage-<digest>`) that the tenant's n8n user still
//! has, and the executions it can see, are unchanged. A run deletes what it
//! created, so a run leaves nothing either: what these tests observe is
//! that nothing is *left*.

use crate::binding::{Place, VectorLanguage, Warnings, catalog_version};
use crate::common::Mcp;
use crate::common::n8n_gateway::{
    N8nEnv, chain, greet_program, manual_trigger, node, say_program, set_node, workflow,
};
use serde_json::{Value, json};

/// A Code node named `Boom` at `x` that throws.
fn boom(x: i64) -> Value {
    node(
        "Boom",
        "code",
        2.0,
        x,
        json!({"jsCode": "throw new Error('card declined');"}),
    )
}

impl VectorLanguage for N8nEnv {
    const EXAMPLE_GUIDE: (&'static str, &'static str) = ("examples", "```json workflow");
    const TRACE_IDS_MARK: &'static str = "the node's name";
    const UNKNOWN_ENTRY: &'static str = "n8n-nodes-base.noSuchNode";
    // A search narrows n8n's several hundred node types to less than a
    // page: Loop Over Items (splitInBatches) and Split Out.
    const PAGED_SEARCH: (Option<&'static str>, u64) = (Some("n8n-nodes-base.split"), 50);
    // Tenants of one n8n see the same node types.
    const SHARED_ENTRY: Option<&'static str> = Some("n8n-nodes-base.set");
    const NO_SUCH_CAPABILITY: &'static str = "n8n-nodes-base.nope";
    const MISSPELT_CAPABILITY: &'static str = "n8n-nodes-base.sett";
    const CAPABILITY_PLACE: Place = Place::Pointer("/nodes/1/type");
    const RESERVED_NAMES: [&'static str; 2] = ["Gre#et", "Gre/et"];
    const NAME_PLACE: Place = Place::Pointer("/nodes/1/name");
    const FAILED_STEP: (usize, &'static str) = (1, "Boom");
    const PARTIAL_STEPS: &'static [&'static str] = &["Start", "Write", "Boom"];
    const ROUTE_ARMS: (&'static str, &'static str) = ("Big", "Small");
    const ROUTE_BECAUSE: Option<&'static str> = None;
    // The branch is the If node, a step with its items.
    const BARE_BRANCH: bool = false;
    // n8n/v1 validates natively: every finding of the adapter and every
    // refusal of n8n's it can meet has a rule, so no program reaches the
    // catch-all; the rule file keeps an unmatched message as it.
    const RULES: &'static str = "classifiers/n8n-v1.toml";

    fn program(&self) -> Value {
        greet_program()
    }

    fn greeting(&self, name: &str) -> Value {
        json!([{"greeting": format!("hello {name}")}])
    }

    fn greeting_step(&self, _name: &str) -> Value {
        json!({"id": "Greet", "calls": "n8n-nodes-base.set"})
    }

    fn calling(&self, capability: &str) -> Value {
        let mut program = greet_program();
        program["nodes"][1]["type"] = json!(capability);
        program
    }

    fn renamed(&self, name: &str) -> Value {
        let mut program = greet_program();
        program["nodes"][1]["name"] = json!(name);
        program["connections"] = chain(&["Start", name]);
        program
    }

    fn wrong_input(&self) -> Value {
        // The Execute Workflow Trigger's `name` is a string.
        json!({"name": 5})
    }

    fn failing(&self) -> Value {
        workflow(
            "first_fails",
            vec![manual_trigger(), boom(240)],
            chain(&["Start", "Boom"]),
        )
    }

    fn second_fails(&self) -> Value {
        workflow(
            "second_fails",
            vec![
                manual_trigger(),
                set_node("Write", 240, &[("written", "yes")]),
                boom(480),
            ],
            chain(&["Start", "Write", "Boom"]),
        )
    }

    fn malformed(&self) -> Value {
        let mut broken = greet_program();
        broken["connections"]["Start"]["main"][0][0]["node"] = json!("Nowhere");
        broken
    }

    /// An If on `$json.amount > 100`: `Big` on its true arm, `Small` on
    /// its false arm.
    fn route(&self) -> Value {
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

    fn too_many_steps(&self) -> Value {
        let mut nodes = vec![manual_trigger()];
        let mut names = vec!["Start".to_string()];
        for i in 0..100 {
            let name = format!("N{i}");
            nodes.push(node(&name, "noOp", 1.0, 240 * (i + 1), json!({})));
            names.push(name);
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        workflow("many", nodes, chain(&names))
    }

    fn too_large(&self) -> Value {
        let mut big = say_program("hi");
        big["nodes"][1]["notes"] = json!("x".repeat(270_000));
        big
    }

    fn unclassified(&self) -> Option<Value> {
        None
    }

    async fn observe(&self) -> Value {
        let key = &self.a.n8n_key;
        json!([
            self.n8n.gateway_workflows(key).await,
            self.n8n.executions(key).await.len()
        ])
    }

    async fn check_ran(&self, _runs: usize) {
        // Nothing of the runs is left in n8n.
        assert!(self.n8n.gateway_workflows(&self.a.n8n_key).await.is_empty());
    }

    async fn stale_catalog_version(&self, c: &Mcp) -> String {
        // n8n's node types do not change under a test: a version that was
        // never current.
        let current = catalog_version::<Self>(c).await;
        format!("{current}-before")
    }
}

impl Warnings for N8nEnv {
    fn warnings_only(&self) -> Value {
        // A node nothing connects never runs: a warning, not an error.
        let mut program = say_program("hi");
        program["nodes"]
            .as_array_mut()
            .unwrap()
            .push(node("Orphan", "noOp", 1.0, 480, json!({})));
        program
    }
}

crate::engine_language_vectors!(N8nEnv; pil_validate_warnings_only_g);

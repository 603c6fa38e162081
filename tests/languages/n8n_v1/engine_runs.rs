//! `n8n/v1`'s table for the engine-run tests: its programs, and what n8n
//! shows of a tenant's user behind the gateway's back. A run deletes what
//! it created in n8n, so n8n's own lists cannot count runs: the workflows
//! call a [`Hook`] of the test with an HTTP Request node, and what ran is
//! counted there, from outside n8n and the gateway.

use super::N8nV1;
use super::hook::Hook;
use crate::common::CallResult;
use crate::common::engine_env::ids_of;
use crate::common::n8n_gateway::{
    Caller, N8nEnv, chain, manual_trigger, node, run, set_node, workflow,
};
use crate::suite::engine_runs::{EngineRuns, Tenant};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::time::Duration;

/// An HTTP Request node calling `url` with `method`.
pub(super) fn call(name: &str, x: i64, method: &str, url: &str) -> Value {
    node(
        name,
        "httpRequest",
        4.2,
        x,
        json!({"method": method, "url": url, "options": {}}),
    )
}

/// Start → each of `calls` in turn.
pub(super) fn calls(name: &str, calls: Vec<Value>) -> Value {
    let names: Vec<String> = std::iter::once("Start".to_string())
        .chain(
            calls
                .iter()
                .map(|n| n["name"].as_str().unwrap().to_string()),
        )
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut nodes = vec![manual_trigger()];
    nodes.extend(calls);
    workflow(name, nodes, chain(&names))
}

impl N8nV1 {
    /// The gateway caller `who`.
    fn caller(&self, who: Tenant) -> &Caller {
        match who {
            Tenant::A => &self.n.a,
            Tenant::B => &self.n.b,
        }
    }

    /// The workflows of `who`'s n8n user that call `hook`: this test's,
    /// whoever else uses the same n8n users meanwhile.
    async fn calling(&self, who: Tenant, hook: &Hook) -> Vec<Value> {
        self.n
            .n8n
            .workflows(&self.caller(who).n8n_key)
            .await
            .into_iter()
            .filter(|w| w["nodes"].to_string().contains(&hook.base))
            .collect()
    }
}

impl EngineRuns for N8nV1 {
    type Env = N8nEnv;
    type Witness = Hook;
    const DEADLINE_MS: u64 = 5000;
    const LATE_CODE: &'static str = "malformed_expression";
    const LATE_STEPS: &'static [&'static str] = &["Start", "Write", "Check"];
    const SLOW_STEPS: (&'static str, &'static str) = ("Start", "After");

    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        N8nV1 {
            n: N8nEnv::start_with(tweak).await,
        }
    }

    fn env(&self) -> &N8nEnv {
        &self.n
    }

    fn greeting(&self, name: &str) -> Value {
        json!([{"greeting": format!("hello {name}")}])
    }

    fn deployed_input(&self) -> Value {
        // The input its Execute Workflow Trigger declares.
        json!({"properties": {"name": {"type": "string"}}})
    }

    async fn witness(&self) -> Hook {
        Hook::start().await
    }

    async fn count(&self, hook: &Hook) -> usize {
        hook.paths().len()
    }

    fn counted(&self, hook: &Hook) -> (Value, [Value; 2], Value) {
        (
            calls("once", vec![call("Call", 240, "GET", &hook.url("/once"))]),
            [json!({"n": 1}), json!({"n": 2})],
            json!([{"ok": true}]),
        )
    }

    fn late_mistake(&self, hook: &Hook, fixed: bool) -> Value {
        // A POST, then a Code node whose JavaScript does not parse: n8n would
        // make the POST and fail only at the Code node.
        let js = if fixed {
            "return $input.all();"
        } else {
            "return [;"
        };
        calls(
            "late",
            vec![
                call("Write", 240, "POST", &hook.url("/write")),
                node("Check", "code", 2.0, 480, json!({"jsCode": js})),
            ],
        )
    }

    async fn engine_takes(&self, program: &Value) {
        // Created through n8n's own API, then deleted.
        let key = &self.n.a.n8n_key;
        let (status, created) = self.n.n8n.create_workflow(program, key).await;
        assert_eq!(status, 200, "n8n accepts the workflow: {created}");
        let id = created["id"].as_str().expect("the created workflow's id");
        let path = format!("/workflows/{id}");
        assert_eq!(self.n.n8n.delete(&path, key).await, 200);
    }

    fn check_late(&self, d: &Value) {
        assert_eq!(d["path"], "/nodes/2/parameters/jsCode", "{d}");
    }

    fn slow(&self, hook: &Hook) -> Value {
        // The first call is held by the hook past the deadline.
        calls(
            "slow",
            vec![
                call("Hold", 240, "GET", &hook.url("/hold")),
                call("After", 480, "GET", &hook.url("/after")),
            ],
        )
    }

    fn long(&self) -> Value {
        // A Wait node past the 5 s deadline, then a Set.
        let mut wait = node(
            "Pause",
            "wait",
            1.1,
            240,
            json!({"amount": 8, "unit": "seconds"}),
        );
        wait["webhookId"] = json!("6c1ef8b7-9763-52c1-9d32-cbf80df02b66");
        let nodes = vec![
            manual_trigger(),
            wait,
            set_node("Done", 480, &[("said", "awake")]),
        ];
        workflow("long", nodes, chain(&["Start", "Pause", "Done"]))
    }

    async fn while_slow(&self, hook: &Hook) {
        assert_eq!(hook.next().await, "/hold");
        // While the hook holds it, the workflow is in the caller's n8n
        // project, under the gateway's name.
        let ours = self.calling(Tenant::A, hook).await;
        assert_eq!(ours.len(), 1, "{ours:?}");
        assert!(
            ours[0]["name"].as_str().unwrap().starts_with("pilotage-"),
            "{ours:?}"
        );
        let query = format!(
            "/executions?status=running&workflowId={}",
            ours[0]["id"].as_str().unwrap()
        );
        let (status, live) = self.n.n8n.get(&query, &self.n.a.n8n_key).await;
        assert_eq!(status, 200, "{live}");
        assert_eq!(live["data"].as_array().map(Vec::len), Some(1), "{live}");
        assert_eq!(live["data"][0]["finished"], false, "{live}");
    }

    async fn check_stopped(&self, hook: &Hook) {
        // Answered now, the held call leads nowhere: After never starts.
        hook.release();
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert_eq!(hook.paths(), ["/hold"], "nothing after the stop");
    }

    async fn run_as(&self, who: Tenant, store: bool) -> CallResult {
        let other = match who {
            Tenant::A => Tenant::B,
            Tenant::B => Tenant::A,
        };
        let b_before = self.footprint(Tenant::B).await;
        // The run waits in the hook while the test looks into n8n.
        let hook = Hook::start().await;
        let held = calls(
            &format!("{who:?}"),
            vec![call("Hold", 240, "GET", &hook.url("/hold"))],
        );
        let running = {
            let c = self.n.session(self.caller(who)).await;
            tokio::spawn(async move { run(&c, &held, json!({"store": store})).await })
        };
        assert_eq!(hook.next().await, "/hold");
        let mine = self.calling(who, &hook).await;
        assert_eq!(mine.len(), 1, "{mine:?}");
        assert!(self.calling(other, &hook).await.is_empty());
        if who == Tenant::A {
            // a's user has it; b's user does not read it either.
            let path = format!("/workflows/{}", mine[0]["id"].as_str().unwrap());
            assert_eq!(self.n.n8n.get(&path, &self.n.a.n8n_key).await.0, 200);
            let (status, body) = self.n.n8n.get(&path, &self.n.b.n8n_key).await;
            assert!(
                status == 403 || status == 404,
                "b reads a's workflow: {status} {body}"
            );
            assert_eq!(self.footprint(Tenant::B).await, b_before);
        }
        hook.release();
        running.await.expect("the run task")
    }

    async fn footprint(&self, who: Tenant) -> Value {
        let key = &self.caller(who).n8n_key;
        json!([
            ids_of(&self.n.n8n.workflows(key).await),
            ids_of(&self.n.n8n.executions(key).await)
        ])
    }

    async fn check_left(&self, who: Tenant, before: &Value, _runs: usize) {
        assert_eq!(
            &self.footprint(who).await,
            before,
            "nothing left in {who:?}'s n8n project"
        );
    }
}

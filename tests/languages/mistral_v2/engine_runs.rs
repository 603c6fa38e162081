//! `mistral/v2`'s table for the engine-run tests: its programs, and what
//! Mistral shows of a tenant's project behind the gateway's back (its
//! executions and workflows, a cancelled execution's tasks). Mistral keeps
//! every execution, so its own lists count the runs.

use super::MistralV2;
use crate::common::engine_env::{EngineEnv, ids_of};
use crate::common::mistral::{MistralEnv, greet_program, write_then};
use crate::common::{CallResult, engine_env};
use crate::suite::LoopLanguage;
use crate::suite::engine_runs::{EngineRuns, Tenant};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::time::Duration;

/// `first`, then a sleep far past the deadline, then `after`.
const SLOW: &str = "version: '2.0'
slow:
  tasks:
    first:
      action: std.echo output='before'
      on-success:
        - nap
    nap:
      action: std.sleep seconds=60
      on-complete:
        - after
    after:
      action: std.noop
";

/// Past the 3 s deadline by a few seconds, then done.
const LONG: &str = "version: '2.0'
long:
  tasks:
    nap:
      action: std.sleep seconds=6
      on-success:
        - done
    done:
      action: std.echo output='awake'
";

impl MistralV2 {
    /// The Mistral project of `who`.
    fn project(&self, who: Tenant) -> &str {
        match who {
            Tenant::A => &self.m.a.tenant,
            Tenant::B => &self.m.b.tenant,
        }
    }

    /// The executions of `who`'s project.
    async fn executions(&self, who: Tenant) -> Vec<Value> {
        self.m.mistral.executions(self.project(who)).await
    }
}

impl EngineRuns for MistralV2 {
    type Env = MistralEnv;
    /// Mistral's own list of executions counts the runs.
    type Witness = ();
    const DEADLINE_MS: u64 = 3000;
    const LATE_CODE: &'static str = "unknown_capability";
    // The transition taken (`on-success`) is an entry of its own.
    const LATE_STEPS: &'static [&'static str] = &["write", "write.next", "next"];
    const SLOW_STEPS: (&'static str, &'static str) = ("first", "after");

    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self {
        MistralV2 {
            m: MistralEnv::start_with(tweak).await,
        }
    }

    fn env(&self) -> &MistralEnv {
        &self.m
    }

    fn greeting(&self, name: &str) -> Value {
        json!({"greeting": format!("hello {name}")})
    }

    fn deployed_input(&self) -> Value {
        json!({"required": ["name"]})
    }

    async fn witness(&self) {}

    async fn count(&self, _: &()) -> usize {
        self.executions(Tenant::A).await.len()
    }

    fn counted(&self, _: &()) -> (Value, [Value; 2], Value) {
        (
            json!(greet_program()),
            [json!({"name": "once"}), json!({"name": "twice"})],
            self.greeting("once"),
        )
    }

    fn late_mistake(&self, _: &(), fixed: bool) -> Value {
        // A misspelled action after a write: Mistral's validator lets it
        // through and would fail only after `write` ran.
        let action = if fixed { "std.echo" } else { "std.ecko" };
        json!(write_then("late", "next", &format!("{action} output=1")))
    }

    async fn engine_takes(&self, program: &Value) {
        let direct = reqwest::Client::new()
            .post(format!("{}/workflows/validate", self.m.mistral.base))
            .header("X-Project-Id", &self.m.a.tenant)
            .header("Content-Type", "text/plain")
            .body(program.as_str().expect("YAML text").to_string())
            .send()
            .await
            .expect("Mistral validate")
            .json::<Value>()
            .await
            .expect("JSON");
        assert_eq!(direct["valid"], true, "{direct}");
    }

    fn check_late(&self, d: &Value) {
        assert!(d["message"].as_str().unwrap().contains("std.ecko"), "{d}");
        assert!(
            d["hint"].as_str().unwrap_or("").contains("std.echo"),
            "close match: {d}"
        );
        // The task `next` starts on line 8 of the text.
        assert_eq!(d["path"]["start"]["line"], 8, "{d}");
    }

    fn slow(&self, _: &()) -> Value {
        json!(SLOW)
    }

    async fn while_slow(&self, _: &()) {
        // The execution exists and runs (a cold Mistral takes seconds to
        // get there).
        let until = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let executions = self.executions(Tenant::A).await;
            if executions.iter().any(|e| e["state"] == "RUNNING") {
                return;
            }
            assert!(
                std::time::Instant::now() < until,
                "no running execution: {executions:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn long(&self) -> Value {
        json!(LONG)
    }

    async fn check_stopped(&self, _: &()) {
        // Mistral's execution is cancelled (the cancel is synchronous in
        // Mistral).
        let executions = self.executions(Tenant::A).await;
        assert_eq!(executions.len(), 1, "{executions:?}");
        assert_eq!(executions[0]["state"], "CANCELLED", "{executions:?}");
        // Still cancelled a moment later: `after` never started.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let id = executions[0]["id"].as_str().unwrap();
        let (_, tasks) = self
            .m
            .mistral
            .get(&format!("/executions/{id}/tasks"), &self.m.a.tenant)
            .await;
        let names: Vec<&str> = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(!names.contains(&"after"), "{names:?}");
    }

    async fn run_as(&self, who: Tenant, store: bool) -> CallResult {
        let c = match who {
            Tenant::A => self.m.caller_a().await,
            Tenant::B => self.m.caller_b().await,
        };
        let input = json!({"name": format!("{who:?}")});
        let r = engine_env::execute(
            &c,
            Self::EXECUTE,
            json!(greet_program()),
            json!({"input": input, "store": store}),
        )
        .await;
        // The run is in `who`'s project, none in the anonymous callers'.
        let mine = self.executions(who).await;
        assert_eq!(mine.len(), 1, "{mine:?}");
        assert_eq!(mine[0]["project_id"], self.project(who));
        assert!(
            self.m
                .mistral
                .executions(&self.m.anonymous)
                .await
                .is_empty()
        );
        r
    }

    async fn footprint(&self, who: Tenant) -> Value {
        let project = self.project(who);
        json!({"executions": ids_of(&self.m.mistral.executions(project).await),
               "workflows": ids_of(&self.m.mistral.workflows(project).await)})
    }

    async fn check_left(&self, who: Tenant, before: &Value, runs: usize) {
        let after = self.footprint(who).await;
        if runs == 0 {
            assert_eq!(&after, before, "nothing started or created in Mistral");
        } else {
            let executions = |f: &Value| f["executions"].as_array().map_or(0, Vec::len);
            assert_eq!(
                executions(&after),
                executions(before) + runs,
                "{runs} execution(s) in {who:?}'s Mistral project"
            );
        }
    }
}

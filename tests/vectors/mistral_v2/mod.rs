//! The official conformance vectors bound to `mistral/v2` programs, through
//! the HTTP endpoint of a gateway in front of the real Mistral: this
//! language's table for the shared bodies of `binding` (its programs, where
//! its text-range diagnostics point, what Mistral shows of a tenant's
//! project), and the vectors only some engines can run: an ad-hoc action
//! of one project ([`TenantEntries`]) and `with-items` loops ([`Loops`]).
//! The vectors that do not apply, and why, are listed in
//! `docs/conformance.md` ("mistral/v2").

use crate::binding::{EntryChange, Loops, Place, TenantEntries, VectorLanguage, catalog_version};
use crate::common::Mcp;
use crate::common::mistral::{MistralEnv, greet_program, write_then};
use serde_json::{Value, json};

/// Conditional transitions: `big` or `small` runs, never both.
const ROUTE: &str = "version: '2.0'
route:
  input:
    - amount
  output:
    route: <% $.route %>
  tasks:
    check:
      action: std.echo output=<% $.amount %>
      publish:
        size: <% task().result %>
      on-success:
        - big: <% $.size > 100 %>
        - small: <% $.size <= 100 %>
    big:
      action: std.echo output='review'
      publish:
        route: <% task().result %>
    small:
      action: std.echo output='auto'
      publish:
        route: <% task().result %>
";

/// with-items over an empty list: zero iterations.
const NO_ITEMS: &str = "version: '2.0'
no_items:
  input:
    - names: []
  tasks:
    each:
      with-items: n in <% $.names %>
      action: std.echo output=<% $.n %>
";

/// Every task has an inbound transition: a message no rule classifies.
const CYCLE: &str = "version: '2.0'
cycle:
  tasks:
    a:
      action: std.noop
      on-success:
        - b
    b:
      action: std.noop
      on-success:
        - a
";

/// The ad-hoc action `shout` of one project: a catalog entry only that
/// tenant sees. `mark` adds a parameter `mark`, optional with that default
/// or, when empty, required; `None` leaves it out.
fn shout_action(mark: Option<&str>) -> String {
    let (output, extra) = match mark {
        None => ("<% $.text %>", String::new()),
        Some("") => ("<% $.text %><% $.mark %>", "    - mark\n".to_string()),
        Some(mark) => ("<% $.text %>", format!("    - mark: \"{mark}\"\n")),
    };
    format!(
        "version: '2.0'\nshout:\n  base: std.echo\n  base-input:\n    output: {output}\n  input:\n    - text\n{extra}"
    )
}

impl VectorLanguage for MistralEnv {
    const EXAMPLE_GUIDE: (&'static str, &'static str) = ("transitions", "```yaml workflow");
    const TRACE_IDS_MARK: &'static str = "#n";
    const UNKNOWN_ENTRY: &'static str = "no-such-entry";
    const PAGED_SEARCH: (Option<&'static str>, u64) = (None, 100);
    const NO_SUCH_CAPABILITY: &'static str = "std.nope";
    const MISSPELT_CAPABILITY: &'static str = "std.ehco";
    // The task `hello`, from its name on line 8.
    const CAPABILITY_PLACE: Place = Place::Range {
        line: 8,
        column: 5,
        min_end_line: Some(9),
    };
    const RESERVED_NAMES: [&'static str; 2] = ["hel#lo", "hel/lo"];
    const NAME_PLACE: Place = Place::Range {
        line: 8,
        column: 5,
        min_end_line: None,
    };
    const FAILED_STEP: (usize, &'static str) = (0, "boom");
    // The transition taken (`on-success`) is an entry of its own.
    const PARTIAL_STEPS: &'static [&'static str] = &["write", "write.next", "boom"];
    const ROUTE_ARMS: (&'static str, &'static str) = ("big", "small");
    const ROUTE_BECAUSE: Option<&'static str> = Some("$.size");
    const BARE_BRANCH: bool = true;
    const RULES: &'static str = "classifiers/mistral-v2.toml";

    fn program(&self) -> Value {
        json!(greet_program())
    }

    fn greeting(&self, name: &str) -> Value {
        json!({"greeting": format!("hello {name}")})
    }

    fn greeting_step(&self, name: &str) -> Value {
        json!({"id": "hello", "calls": "std.echo",
               "input": {"output": format!("hello {name}")}})
    }

    fn calling(&self, capability: &str) -> Value {
        json!(greet_program().replace("std.echo", capability))
    }

    fn renamed(&self, name: &str) -> Value {
        json!(greet_program().replace("hello:", &format!("{name}:")))
    }

    fn wrong_input(&self) -> Value {
        // The workflow's input list: `name` missing.
        json!({})
    }

    fn failing(&self) -> Value {
        json!(
            "version: '2.0'\nfails:\n  tasks:\n    boom:\n      action: std.fail error_data='card declined'\n"
        )
    }

    fn second_fails(&self) -> Value {
        json!(write_then(
            "second_fails",
            "boom",
            "std.fail error_data='card declined'"
        ))
    }

    fn malformed(&self) -> Value {
        json!("not: [yaml")
    }

    fn route(&self) -> Value {
        json!(ROUTE)
    }

    fn too_many_steps(&self) -> Value {
        let tasks: String = (0..101)
            .map(|i| format!("    t{i}:\n      action: std.noop\n"))
            .collect();
        json!(format!("version: '2.0'\nmany:\n  tasks:\n{tasks}"))
    }

    fn too_large(&self) -> Value {
        json!(format!("{}# {}\n", greet_program(), "x".repeat(70_000)))
    }

    fn unclassified(&self) -> Option<Value> {
        Some(json!(CYCLE))
    }

    async fn observe(&self) -> Value {
        let project = &self.a.tenant;
        json!([
            self.mistral.executions(project).await,
            self.mistral.workflows(project).await
        ])
    }

    async fn check_ran(&self, runs: usize) {
        assert_eq!(self.mistral.executions(&self.a.tenant).await.len(), runs);
    }

    async fn stale_catalog_version(&self, c: &Mcp) -> String {
        self.put_entry(EntryChange::Added).await;
        let stale = catalog_version::<Self>(c).await;
        self.put_entry(EntryChange::OptionalParameter).await;
        stale
    }

    async fn check_untouched(&self) {
        // Discovery changed nothing in Mistral.
        assert!(self.mistral.executions(&self.anonymous).await.is_empty());
    }

    async fn finish(&self) {
        self.clean().await;
    }
}

impl TenantEntries for MistralEnv {
    const ENTRY: &'static str = "shout";

    async fn put_entry(&self, change: EntryChange) {
        let (action, update) = match change {
            EntryChange::Added => (shout_action(None), false),
            EntryChange::OptionalParameter => (shout_action(Some("!")), true),
            EntryChange::RequiredParameter => (shout_action(Some("")), true),
        };
        self.mistral
            .put_action(&self.a.tenant, &action, update)
            .await;
    }

    fn calling_entry(&self, id: &str) -> Value {
        json!(format!(
            "version: '2.0'\nloud:\n  tasks:\n    say:\n      action: {id} text='hey'\n"
        ))
    }
}

impl Loops for MistralEnv {
    fn empty_loop(&self) -> (Value, &'static str) {
        (json!(NO_ITEMS), "each")
    }
}

crate::engine_language_vectors!(MistralEnv;
    pil_catalog_version_bumps_g, pil_authz_invisible_entry_b,
    pil_execute_promotion_drift_b, pil_trace_zero_iteration_loop_g);

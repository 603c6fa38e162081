//! The official conformance vectors bound to `mistral/v2` programs: one test
//! per vector that applies to the language's declared capabilities, each
//! through the HTTP endpoint of a gateway in front of the real Mistral; those
//! whose body every engine-bound language shares through
//! [`VectorLanguage`] (discover, learn, request shapes, a good program,
//! stored runs), the rest in this folder. The vectors that do not apply, and
//! why, are listed in `docs/conformance.md` ("mistral/v2").

use crate::binding::VectorLanguage;
use crate::common::answers::{codes, error_kind, status};
use crate::common::guides::closed_codes;
use crate::common::mistral::{
    EXECUTE, MISTRAL, Mistral, MistralEnv, TRACE, VALIDATE, echo_program, greet_program, run,
    validate,
};
use crate::common::{Mcp, assert_shape, ports::free_port};
use serde_json::{Value, json};

mod catalog;
mod execute;
mod trace;
mod validate;

/// A valid program whose second task fails: `partial`.
const SECOND_FAILS: &str = "version: '2.0'
second_fails:
  tasks:
    write:
      action: std.echo output='written'
      on-success:
        - boom
    boom:
      action: std.fail error_data='card declined'
";

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

/// An ad-hoc action of one project: a catalog entry only that tenant sees.
/// A non-empty `mark` adds an optional parameter of that default, which
/// changes the entry's input schema.
fn shout_action(mark: &str) -> String {
    let extra = if mark.is_empty() {
        String::new()
    } else {
        format!("    - mark: \"{mark}\"\n")
    };
    format!(
        "version: '2.0'\nshout:\n  base: std.echo\n  base-input:\n    output: <% $.text %>\n  input:\n    - text\n{extra}"
    )
}

async fn catalog(c: &Mcp, args: Value) -> crate::common::CallResult {
    let mut args = args;
    args["language"] = json!(MISTRAL);
    c.call("pilotage_catalog", args).await
}

async fn catalog_version(c: &Mcp) -> String {
    catalog(c, json!({"verb": "list"})).await.structured["catalog_version"]
        .as_str()
        .expect("catalog_version")
        .to_string()
}

/// Everything Mistral shows of a project: its executions and workflows.
async fn observable(m: &Mistral, project: &str) -> (Vec<Value>, Vec<Value>) {
    (m.executions(project).await, m.workflows(project).await)
}

impl VectorLanguage for MistralEnv {
    const NAME: &'static str = MISTRAL;
    const VALIDATE: &'static str = VALIDATE;
    const EXECUTE: &'static str = EXECUTE;
    const TRACE: &'static str = TRACE;
    const EXAMPLE_GUIDE: (&'static str, &'static str) = ("transitions", "```yaml workflow");
    const TRACE_IDS_MARK: &'static str = "#n";

    async fn start() -> Self {
        MistralEnv::start().await
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
        json!(greet_program())
    }

    async fn check_untouched(&self) {
        // Discovery changed nothing in Mistral.
        assert!(self.mistral.executions(&self.anonymous).await.is_empty());
    }

    async fn finish(&self) {
        self.clean().await;
    }
}

crate::engine_language_vectors!(MistralEnv);

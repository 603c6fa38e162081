//! [`MistralV2`]: the `mistral/v2` implementation of the Language trait, a
//! thin seam over this folder's reader, bounds, checks, plan and trace.
//! Every method reads the program text again: parsing is cheap next to a
//! Mistral call, and the trait hands over only the program value.

use super::workflow::{self, Document, Workflow};
use super::{bounds, checks, input, plan, trace};
use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::config::language::Bounds;
use crate::engines::profile::EngineProfile;
use crate::languages::steps::{self, Ancestors, RunEnd, StepInfo, StepKind};
use crate::languages::{Language, binding};
use crate::pilotage::text_range::TextRange;
use crate::pilotage::{RequestError, RiskHints};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// `mistral/v2`: a program is one Mistral v2 workflow document as YAML
/// text; locators are text ranges.
pub struct MistralV2;

/// The document in `program`, when it is text the gateway can parse.
fn document(program: &Value) -> Option<Document> {
    workflow::read(program.as_str()?)
}

/// The program's workflow: the first of the document (a second one is an
/// `invalid_structure` finding).
fn the_workflow(program: &Value) -> Option<Workflow> {
    document(program)?.workflows.into_iter().next()
}

impl Language for MistralV2 {
    fn kind(&self) -> &'static str {
        "mistral/v2"
    }

    fn program_json_type(&self) -> &'static str {
        "string"
    }

    fn locator(&self) -> &'static str {
        "text-range"
    }

    fn root_locator(&self, program: &Value) -> String {
        TextRange::whole(program.as_str().unwrap_or("")).encode()
    }

    fn check_bounds(&self, program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
        bounds::check(program, bounds)
    }

    fn structure_problem(&self, program: &Value) -> Option<Diagnostic> {
        // Everything else about the text (YAML errors included) is
        // Mistral's to report, with its own positions.
        (!program.is_string()).then(|| {
            binding::binding_root(
                "invalid_structure",
                "a mistral/v2 program is the YAML text of one workflow document, as a string"
                    .into(),
            )
        })
    }

    fn steps(&self, program: &Value) -> Vec<StepInfo> {
        let Some(wf) = the_workflow(program) else {
            return Vec::new();
        };
        let no_ancestors: Ancestors = Arc::new([]);
        wf.tasks
            .iter()
            .map(|t| {
                let capability = plan::capability(t).map(str::to_string);
                StepInfo {
                    id: Some(t.name.clone()),
                    kind: if capability.is_some() {
                        StepKind::Call
                    } else {
                        StepKind::Other
                    },
                    pointer: t.range.encode(),
                    capability,
                    arm: None,
                    in_loop: None,
                    ancestors: no_ancestors.clone(),
                }
            })
            .collect()
    }

    fn native_checks(
        &self,
        program: &Value,
        _steps: &[StepInfo],
        catalog: &CatalogView,
    ) -> Vec<Diagnostic> {
        let Some(text) = program.as_str() else {
            return Vec::new();
        };
        match workflow::read(text) {
            Some(doc) => checks::all(&doc, catalog),
            None => checks::unreadable(text).into_iter().collect(),
        }
    }

    fn unknown_capability(&self, step: &StepInfo, name: &str, visible: &[String]) -> Diagnostic {
        checks::unknown_capability(step, name, visible)
    }

    fn step_locators(&self, steps: &[StepInfo]) -> HashMap<String, String> {
        steps::locators(steps)
    }

    fn plan(
        &self,
        program: &Value,
        _steps: &[StepInfo],
        risk_of: steps::plan::RiskOf<'_>,
    ) -> Value {
        match the_workflow(program) {
            Some(wf) => plan::derive(&wf, risk_of),
            None => plan::derive(&empty_workflow(), risk_of),
        }
    }

    fn plan_max_hints(&self, plan: &Value) -> RiskHints {
        steps::plan::max_hints(plan)
    }

    fn trace(
        &self,
        program: &Value,
        events: &[Value],
        _mapping: &EngineProfile,
        _steps: &[StepInfo],
        end: RunEnd,
    ) -> Vec<Value> {
        trace::map_events(the_workflow(program).as_ref(), events, end)
    }

    fn summarize(&self, steps: &[Value]) -> Vec<Value> {
        steps::summary::summarize(steps)
    }

    fn input_schema(&self, program: &Value) -> Option<Value> {
        the_workflow(program).map(|wf| input::schema(&wf))
    }

    fn program_name(&self, program: &Value) -> Option<String> {
        the_workflow(program).map(|wf| wf.name)
    }
}

/// A workflow with no tasks (the plan of a program with none).
fn empty_workflow() -> Workflow {
    let at = TextRange::whole("");
    Workflow {
        name: String::new(),
        name_range: at,
        range: at,
        kind: "direct".into(),
        kind_range: None,
        inputs: Vec::new(),
        vars: Vec::new(),
        output_scalars: Vec::new(),
        tasks: Vec::new(),
        duplicate_tasks: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::SHAPES;
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_locators_and_names_come_from_the_text() {
        let l = MistralV2;
        let p = json!(SHAPES);
        let steps = l.steps(&p);
        let rows: Vec<_> = steps
            .iter()
            .map(|s| {
                (
                    s.id.clone().unwrap(),
                    s.kind,
                    s.capability.clone(),
                    s.pointer.clone(),
                )
            })
            .collect();
        assert_eq!(
            rows[0],
            (
                "start".into(),
                StepKind::Call,
                Some("std.echo".into()),
                "@4:5-10:25".into()
            )
        );
        assert_eq!(
            rows[3],
            (
                "cleanup".into(),
                StepKind::Call,
                Some("sub".into()),
                "@18:5-19:19".into()
            )
        );
        assert_eq!(l.step_locators(&steps)["each"], "@11:5-14:24");
        assert_eq!(l.program_name(&p).as_deref(), Some("wf"));
        assert_eq!(l.root_locator(&p), TextRange::whole(SHAPES).encode());
        assert_eq!(l.input_schema(&p).unwrap()["required"], json!([]));
        assert_eq!(l.locator(), "text-range");
        assert_eq!(l.program_json_type(), "string");
    }

    #[test]
    fn only_a_non_string_is_a_structure_problem_and_bad_yaml_has_no_steps() {
        let l = MistralV2;
        assert!(l.structure_problem(&json!({"version": "2.0"})).is_some());
        assert!(l.structure_problem(&json!("wf: [")).is_none());
        assert!(l.steps(&json!("wf: [")).is_empty());
        assert!(l.steps(&json!({"steps": []})).is_empty());
        assert_eq!(l.input_schema(&json!("wf: [")), None);
        let plan = l.plan(&json!("wf: ["), &[], &|_, _| None);
        assert_eq!(plan["steps"], json!([]));
        assert_eq!(plan["max_risk"], "safe");
        let task = "version: '2.0'\nwf:\n  tasks:\n    t:\n      description: nothing to call\n";
        assert_eq!(l.steps(&json!(task))[0].kind, StepKind::Other);
    }
}

#[cfg(test)]
mod robustness {
    use super::super::fixtures::SHAPES;
    use super::*;
    use serde_json::json;

    /// Mutations of a real document (cut short, characters swapped for
    /// YAML's and Mistral's special ones) never panic or hang any reader.
    #[test]
    fn damaged_documents_never_panic() {
        let specials = [
            "", ":", "-", "[", "]", "{", "}", "'", "\"", "#", "*a", "&a", "<<", "\t", "\u{3000}",
            "é", "=", "<%", "%>", "{{", "\n", "  ", "|", ">", "!!str ", "?", ",", "$.", "_.",
        ];
        let chars: Vec<(usize, char)> = SHAPES.char_indices().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let l = MistralV2;
        for _ in 0..1500 {
            let (at, _) = chars[(next() % chars.len() as u64) as usize];
            let special = specials[(next() % specials.len() as u64) as usize];
            let keep = at + 1 + (next() % 3) as usize;
            let tail = SHAPES.get(keep.min(SHAPES.len())..).unwrap_or("");
            let text = if next() % 4 == 0 {
                SHAPES[..at].to_string()
            } else {
                format!("{}{special}{tail}", &SHAPES[..at])
            };
            let p = json!(text);
            let steps = l.steps(&p);
            let plan = l.plan(&p, &steps, &|_, _| None);
            let events: Vec<Value> = steps
                .iter()
                .map(|s| json!({"task": s.id, "state": "SUCCESS", "triggered_by": [{"task": "start", "event": "on-success"}], "actions": [{"name": "x", "state": "ERROR"}]}))
                .collect();
            let _ = l.trace(
                &p,
                &events,
                &EngineProfile::default(),
                &steps,
                RunEnd::Failed,
            );
            let _ = l.input_schema(&p);
            let _ = l.check_bounds(
                &p,
                &Bounds {
                    max_depth: 64,
                    max_steps: 100,
                    max_program_bytes: 1 << 20,
                    max_id_bytes: 256,
                },
            );
            if let Some(doc) = workflow::read(&text)
                && let Some(wf) = doc.workflows.first()
            {
                let _ = checks::structure(&doc);
                let _ = checks::undefined_variables(wf);
                let _ = checks::unknown_tasks(wf);
                let _ = checks::dropped_parameters(wf);
                let _ = checks::action_inputs(wf, &|_| {
                    Some(json!({"required": ["a"], "properties": {}}))
                });
            } else {
                let _ = checks::unreadable(&text);
            }
            assert!(plan["steps"].is_array());
        }
    }

    #[test]
    fn odd_whitespace_in_an_action_line_is_read_in_whole_characters() {
        let text = "version: '2.0'\nwf:\n  tasks:\n    t:\n      action: \"std.echo \u{3000}output=\u{3000} é=1 \u{3000}\"\n";
        let doc = workflow::read(text).unwrap();
        let action = doc.workflows[0].tasks[0].action.clone().unwrap();
        assert_eq!(action.name, "std.echo");
        let names: Vec<_> = action.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["output", "é"]);
    }
}

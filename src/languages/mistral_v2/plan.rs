//! Static plan derivation (Part II §5.6) for a direct workflow, and the
//! generated construct ids and arm labels the trace shares with it.
//!
//! - Every task is a step (`calls` = its action or sub-workflow).
//! - The transitions of a task `T` are a branch construct `T.next`, placed
//!   right after the task; its arms are labelled by transition: `on-success`,
//!   `on-error`, `on-complete` for the unconditional targets of each kind,
//!   and `on-success -> X` (likewise for the other kinds) for a target `X`
//!   guarded by a condition. Engine commands (`fail`, `succeed`, ...) are no
//!   steps, so they add no arm steps.
//! - A `with-items` task `T` is a loop construct `T.items` whose body is the
//!   task (`loop: T.items`); the loop step carries the task's arm.
//! - A task targeted by transitions carries `arm` (on its loop step when it
//!   has one). A task reachable through several transitions (a `join`, or
//!   targeted by several tasks) appears once per incoming arm, so that
//!   whichever transition runs it, the plan has it under that arm.
//! - Risk is aggregated from hints as for every language; an unknown risk
//!   counts as destructive.

use super::workflow::{Task, Transition, Workflow};
use crate::languages::steps::plan::{PlanBuilder, RiskOf};
use serde_json::Value;
use std::collections::HashMap;

/// The branch construct of a task's transitions.
pub fn branch_id(task: &str) -> String {
    format!("{task}.next")
}

/// The loop construct of a `with-items` task.
pub fn loop_id(task: &str) -> String {
    format!("{task}.items")
}

/// The arm label of one transition.
pub fn arm_label(t: &Transition) -> String {
    match t.condition {
        None => t.on.key().to_string(),
        Some(_) => format!("{} -> {}", t.on.key(), t.target),
    }
}

/// The label of a branch decision when no transition was taken (an arm
/// with no steps).
pub const NO_TRANSITION: &str = "none";

/// The transitions of `task` that lead to a task of `wf`.
pub fn task_transitions<'a>(
    wf: &'a Workflow,
    task: &'a Task,
) -> impl Iterator<Item = &'a Transition> {
    task.transitions
        .iter()
        .filter(|t| !t.command && wf.tasks.iter().any(|x| x.name == t.target))
}

/// Task name → the (branch id, arm label) pairs that lead to it, in
/// document order without repeats.
pub fn placements(wf: &Workflow) -> HashMap<&str, Vec<(String, String)>> {
    let mut out: HashMap<&str, Vec<(String, String)>> = HashMap::new();
    for task in &wf.tasks {
        for t in task_transitions(wf, task) {
            let p = (branch_id(&task.name), arm_label(t));
            let list = out.entry(t.target.as_str()).or_default();
            if !list.contains(&p) {
                list.push(p);
            }
        }
    }
    out
}

/// The capability a task calls: its action or sub-workflow.
pub fn capability(task: &Task) -> Option<&str> {
    task.action
        .as_ref()
        .map(|a| a.name.as_str())
        .or_else(|| task.workflow.as_ref().map(|w| w.value.as_str()))
}

/// Builds the plan; `risk_of` gives a visible capability's risk.
pub fn derive(wf: &Workflow, risk_of: RiskOf) -> Value {
    let placements = placements(wf);
    let mut plan = PlanBuilder::new(risk_of, wf.tasks.len());
    for task in &wf.tasks {
        let arms: Vec<Option<(&str, &str)>> = match placements.get(task.name.as_str()) {
            Some(list) => list
                .iter()
                .map(|(branch, label)| Some((branch.as_str(), label.as_str())))
                .collect(),
            None => vec![None],
        };
        let branches = task_transitions(wf, task).next().is_some();
        for arm in arms {
            if task.with_items.is_some() {
                let l = loop_id(&task.name);
                plan.step(l.clone(), None, arm, None);
                plan.step(task.name.clone(), capability(task), None, Some(&l));
            } else {
                plan.step(task.name.clone(), capability(task), arm, None);
            }
            if branches {
                plan.step(branch_id(&task.name), None, arm, None);
            }
        }
    }
    plan.finish()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::SHAPES;
    use super::super::workflow::read;
    use super::*;
    use crate::languages::steps::plan::max_hints;
    use crate::pilotage::RiskHints;

    fn risks(cap: &str) -> Option<(String, RiskHints)> {
        match cap {
            "std.echo" | "std.noop" => Some(("safe".into(), RiskHints::SAFE)),
            "std.http" => Some((
                "external".into(),
                RiskHints {
                    read_only: false,
                    destructive: false,
                    open_world: true,
                },
            )),
            _ => None,
        }
    }

    fn rows(plan: &Value) -> Vec<String> {
        plan["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let mut row = s["id"].as_str().unwrap().to_string();
                if let Some(c) = s.get("calls") {
                    row += &format!(" calls {}", c.as_str().unwrap());
                }
                if let Some(a) = s.get("arm") {
                    row += &format!(
                        " arm {}/{}",
                        a["branch"].as_str().unwrap(),
                        a["label"].as_str().unwrap()
                    );
                }
                if let Some(l) = s.get("loop") {
                    row += &format!(" loop {}", l.as_str().unwrap());
                }
                row
            })
            .collect()
    }

    #[test]
    fn tasks_transitions_loops_and_joins() {
        let wf = &read(SHAPES).unwrap().workflows[0];
        let plan = derive(wf, &|cap, _| risks(cap));
        assert_eq!(
            rows(&plan),
            [
                "start calls std.echo",
                "start.next",
                "each.items arm start.next/on-success -> each",
                "each calls std.http loop each.items",
                "each.next arm start.next/on-success -> each",
                "done calls std.noop arm start.next/on-complete",
                "done calls std.noop arm each.next/on-success",
                "cleanup calls sub arm start.next/on-error",
            ]
        );
        // `sub` has no known risk: fail closed.
        assert_eq!(plan["max_risk"], "destructive");
        assert_eq!(plan["steps"][1].get("calls"), None);
    }

    #[test]
    fn a_plan_of_safe_tasks_is_safe() {
        let wf = &read("version: '2.0'\nwf:\n  tasks:\n    a:\n      action: std.echo output=1\n      on-success: b\n    b: {action: std.noop}\n").unwrap().workflows[0];
        let plan = derive(wf, &|cap, _| risks(cap));
        assert_eq!(
            rows(&plan),
            [
                "a calls std.echo",
                "a.next",
                "b calls std.noop arm a.next/on-success"
            ]
        );
        assert_eq!(plan["max_risk"], "safe");
        assert_eq!(max_hints(&plan), RiskHints::SAFE);
    }
}

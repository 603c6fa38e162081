//! Task names and transitions: names reserved for trace identity or taken
//! by generated construct ids, duplicated task keys, and transitions to
//! tasks that do not exist.

use super::super::workflow::Workflow;
use super::error;
use crate::classify::Diagnostic;
use std::collections::{HashMap, HashSet};

/// `#` and `/` are reserved for trace identity (Part II §3.4).
pub fn reserved_names(wf: &Workflow) -> Vec<Diagnostic> {
    wf.tasks
        .iter()
        .filter(|t| t.name.contains(['#', '/']))
        .map(|t| {
            error(
                "reserved_character",
                t.key_range,
                format!(
                    "task name '{}' contains a reserved character ('#' and '/' are reserved for trace identity)",
                    t.name
                ),
                Some(format!("rename the task, e.g. '{}'", t.name.replace(['#', '/'], "_"))),
            )
        })
        .collect()
}

/// A task named like a construct id the plan and trace generate for
/// another task (`T.next`, `T.items`): the two would be indistinguishable.
pub fn generated_id_clashes(wf: &Workflow) -> Vec<Diagnostic> {
    let mut generated: HashMap<String, &str> = HashMap::new();
    for t in &wf.tasks {
        if super::super::plan::task_transitions(wf, t).next().is_some() {
            generated.insert(super::super::plan::branch_id(&t.name), &t.name);
        }
        if t.with_items.is_some() {
            generated.insert(super::super::plan::loop_id(&t.name), &t.name);
        }
    }
    wf.tasks
        .iter()
        .filter_map(|t| {
            let owner = generated.get(&t.name)?;
            Some(error(
                "reserved_id",
                t.key_range,
                format!(
                    "task name '{}' is the id the plan and trace give to a construct of task '{owner}'",
                    t.name
                ),
                Some(format!("rename the task, e.g. '{}'", t.name.replace('.', "_"))),
            ))
        })
        .collect()
}

/// A task key defined twice: YAML keeps the last definition silently.
pub fn duplicate_tasks(wf: &Workflow) -> Vec<Diagnostic> {
    wf.duplicate_tasks
        .iter()
        .map(|(name, at)| {
            let later = wf.tasks.iter().find(|t| &t.name == name);
            error(
                "duplicate_task",
                *at,
                format!(
                    "task '{name}' is defined more than once; only the last definition{} would run",
                    later.map_or(String::new(), |t| format!(
                        " (line {})",
                        t.key_range.start.line
                    ))
                ),
                Some("give each task a name of its own".into()),
            )
        })
        .collect()
}

/// A transition to a name that is neither a task nor an engine command.
pub fn unknown_tasks(wf: &Workflow) -> Vec<Diagnostic> {
    let names: Vec<String> = wf.tasks.iter().map(|t| t.name.clone()).collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for task in &wf.tasks {
        for t in &task.transitions {
            if t.command || names.contains(&t.target) || !seen.insert(t.target_range.encode()) {
                continue;
            }
            let close = crate::classify::close_matches(&t.target, &names);
            out.push(error(
                "unknown_task",
                t.target_range,
                format!(
                    "{} of task '{}' names '{}', which is no task of workflow '{}'",
                    t.on.key(),
                    task.name,
                    t.target,
                    wf.name
                ),
                Some(if close.is_empty() {
                    "name a task of this workflow, or an engine command (fail, succeed, pause, noop)"
                        .into()
                } else {
                    format!("close match: {}", close.join(", "))
                }),
            ));
        }
    }
    out
}

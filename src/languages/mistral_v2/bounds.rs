//! Validation bounds (Part II §10.1) of a `mistral/v2` program, checked
//! before anything is built per task: the text's size first, then one pass
//! over the YAML parser's events that only counts (nesting depth, tasks,
//! the longest workflow or task name). Mistral itself has no limits and its
//! validation time grows with the task count, so these apply before it is
//! asked.

use crate::config::language::Bounds;
use crate::languages::steps::bounds::{program_size, too_large};
use crate::pilotage::RequestError;
use serde_json::Value;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// What the bounds look at.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub depth: usize,
    pub tasks: usize,
    /// Bytes of the longest workflow or task name.
    pub longest_name: usize,
}

/// `bounds_exceeded` past any bound. A value that is not a string is only
/// measured by size (it is refused as a structure problem afterwards).
pub fn check(program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
    let Some(text) = program.as_str() else {
        return program_size(program, bounds.max_program_bytes);
    };
    if text.len() > bounds.max_program_bytes {
        return Err(too_large(text.len(), bounds.max_program_bytes));
    }
    let found = shape(text);
    if found.depth > bounds.max_depth {
        return Err(RequestError::bounds(format!(
            "program nesting depth {} exceeds the bound of {}",
            found.depth, bounds.max_depth
        )));
    }
    if found.tasks > bounds.max_steps {
        return Err(RequestError::bounds(format!(
            "program has {} tasks; the bound is {}",
            found.tasks, bounds.max_steps
        )));
    }
    if found.longest_name > bounds.max_id_bytes {
        return Err(RequestError::bounds(format!(
            "a workflow or task name is {} bytes long; the bound is {} bytes",
            found.longest_name, bounds.max_id_bytes
        )));
    }
    Ok(())
}

/// Measures `text` in one pass over the parser's events, holding one small
/// frame per open collection. Text the parser rejects is measured up to
/// where it stopped (Mistral reports the error itself).
pub fn shape(text: &str) -> Shape {
    let mut counter = Counter::default();
    let _ = Parser::new_from_str(text).load(&mut counter, false);
    counter.shape
}

/// Where a collection sits in a Mistral document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The document's top mapping: keys are workflow names.
    Root,
    /// A workflow's body: its `tasks` key holds the task mapping.
    Workflow,
    /// `tasks:`: keys are task names.
    Tasks,
    Other,
}

struct Frame {
    role: Role,
    is_map: bool,
    /// In a mapping: whether the next scalar or collection is a key.
    expect_key: bool,
    /// The key whose value comes next.
    key: Option<String>,
}

#[derive(Default)]
struct Counter {
    stack: Vec<Frame>,
    shape: Shape,
}

impl Counter {
    /// The role of a collection opened at the current position.
    fn child_role(&self) -> Role {
        match self.stack.last() {
            None => Role::Root,
            Some(f) if !f.is_map || f.expect_key => Role::Other,
            Some(f) => match (f.role, f.key.as_deref()) {
                (Role::Root, Some(k)) if k != "version" => Role::Workflow,
                (Role::Workflow, Some("tasks")) => Role::Tasks,
                _ => Role::Other,
            },
        }
    }

    /// A value (scalar or collection) ends in the top frame.
    fn value_done(&mut self) {
        if let Some(f) = self.stack.last_mut()
            && f.is_map
        {
            f.expect_key = !f.expect_key;
            if f.expect_key {
                f.key = None;
            }
        }
    }
}

impl MarkedEventReceiver for Counter {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        match ev {
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let role = self.child_role();
                let is_map = matches!(ev, Event::MappingStart(..));
                self.stack.push(Frame {
                    role,
                    is_map,
                    expect_key: true,
                    key: None,
                });
                self.shape.depth = self.shape.depth.max(self.stack.len());
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                self.value_done();
            }
            Event::Scalar(value, ..) => {
                if let Some(f) = self.stack.last_mut()
                    && f.is_map
                    && f.expect_key
                {
                    let named = match f.role {
                        Role::Root => value != "version",
                        Role::Tasks => {
                            self.shape.tasks += 1;
                            true
                        }
                        _ => false,
                    };
                    if named {
                        self.shape.longest_name = self.shape.longest_name.max(value.len());
                    }
                    f.key = Some(value);
                    f.expect_key = false;
                    return;
                }
                self.value_done();
            }
            Event::Alias(_) => self.value_done(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b(max_depth: usize, max_steps: usize, bytes: usize, id: usize) -> Bounds {
        Bounds {
            max_depth,
            max_steps,
            max_program_bytes: bytes,
            max_id_bytes: id,
        }
    }

    const DOC: &str = "version: '2.0'\nlong_workflow:\n  input: [a]\n  tasks:\n    t1:\n      action: std.noop\n      on-success: [t2]\n    task_two:\n      input: {x: {y: 1}}\n";

    #[test]
    fn measures_depth_tasks_and_names_without_building_anything() {
        assert_eq!(
            shape(DOC),
            Shape {
                depth: 6,
                tasks: 2,
                longest_name: 13
            }
        );
        // Keys deeper down are not tasks; `version` is not a workflow name.
        assert_eq!(
            shape("version: '2.0000000000000'\nw:\n  tasks: {}\n").longest_name,
            1
        );
    }

    #[test]
    fn each_bound_answers_bounds_exceeded() {
        let program = json!(DOC);
        assert!(check(&program, &b(6, 2, 1000, 13)).is_ok());
        let cases = [
            (b(5, 2, 1000, 13), "nesting depth 6"),
            (b(6, 1, 1000, 13), "2 tasks"),
            (b(6, 2, 1000, 12), "13 bytes long"),
            (b(6, 2, 50, 13), "exceeds the bound of 50 bytes"),
        ];
        for (bounds, says) in cases {
            let e = check(&program, &bounds).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
        }
        // A value that is not text is measured by its JSON size only.
        assert!(check(&json!({"x": "y".repeat(100)}), &b(5, 2, 50, 13)).is_err());
        assert!(check(&json!({"x": 1}), &b(5, 2, 50, 13)).is_ok());
    }

    #[test]
    fn unparsable_text_is_measured_up_to_the_error() {
        assert_eq!(shape("w:\n  tasks:\n    a: 1\n    b: [").tasks, 2);
    }
}

//! The values a running step can read: the run input, the context, the outputs of
//! steps that ran, and the items of the loops it is in.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::language::condition::Cond;
use crate::language::expr::{Expr, Root, walk};
use crate::language::program::Template;

/// One active loop iteration.
pub struct Frame {
    pub as_name: String,
    pub item: Value,
    /// 1-based.
    pub index: usize,
}

/// Everything expressions resolve against.
pub struct Values<'a> {
    pub input: &'a Value,
    pub context: Option<&'a Map<String, Value>>,
    pub outputs: HashMap<String, Value>,
    pub frames: Vec<Frame>,
}

impl Values<'_> {
    /// Resolves one expression. Anything absent (a member that does not exist, a
    /// step whose branch arm did not run) is null, never an error.
    pub fn lookup(&self, expr: &Expr) -> Value {
        let base = match &expr.root {
            Root::Input => Some(self.input),
            Root::Context(key) => self.context.and_then(|c| c.get(key)),
            Root::Step(id) => self.outputs.get(id),
            Root::Item => self.frames.last().map(|f| &f.item),
            Root::Var(name) => self
                .frames
                .iter()
                .rev()
                .find(|f| &f.as_name == name)
                .map(|f| &f.item),
        };
        base.and_then(|v| walk(v, &expr.path))
            .cloned()
            .unwrap_or(Value::Null)
    }

    pub fn resolve(&self, template: &Template) -> Value {
        template.resolve(&mut |e| self.lookup(e))
    }

    pub fn eval(&self, cond: &Cond) -> bool {
        cond.eval(&mut |e| self.lookup(e))
    }

    /// The counters of the enclosing loops, outermost first.
    pub fn iter(&self) -> Vec<usize> {
        self.frames.iter().map(|f| f.index).collect()
    }
}

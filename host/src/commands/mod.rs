//! The read-only commands besides `run`: `trace`, `guides`, `catalog`. Each
//! discovers, picks a Language that declares what it needs, makes its
//! calls, and hands back both renderings; `app.rs` prints the one asked for.

pub mod catalog;
pub mod guides;
pub mod trace;

use crate::report::Exit;
use serde_json::Value;

/// What a command produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub json: Value,
    pub exit: Exit,
}

/// A command that stopped without a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    pub stage: &'static str,
    pub message: String,
}

impl Stopped {
    pub fn new(stage: &'static str, e: impl ToString) -> Stopped {
        Stopped {
            stage,
            message: e.to_string(),
        }
    }
}

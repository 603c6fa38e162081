//! The Pilotage tools. One file per tool, each with the same three moves:
//! read the arguments, handle, and answer with `structuredContent` plus a
//! short text summary (Part III §6). Request errors become `isError: true`
//! results; invalid programs and failed runs are ordinary results (§7.1).

pub mod approvals;
pub mod catalog;
pub mod catalog_pages;
pub mod execute;
pub mod get_guide;
pub mod manifest;
pub mod trace;
pub mod validate;

use super::answer::{Answer, Rendered};
use crate::pilotage::RequestError;
use rmcp::model::{CallToolResult, ContentBlock, ResultType};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a tool answers: a Pilotage value, or a request error.
pub type ToolResult = Result<Reply, RequestError>;

/// A successful tool answer.
pub struct Reply {
    pub structured: Structured,
    pub summary: String,
}

/// A reply's structured content: its own, or one shared with other answers.
pub enum Structured {
    Own(Value),
    Shared(Arc<Rendered>),
}

impl Reply {
    pub fn new(structured: Value, summary: impl Into<String>) -> Self {
        Self {
            structured: Structured::Own(structured),
            summary: summary.into(),
        }
    }

    pub fn shared(structured: Arc<Rendered>, summary: impl Into<String>) -> Self {
        Self {
            structured: Structured::Shared(structured),
            summary: summary.into(),
        }
    }
}

/// `CallToolResult` with structuredContent always and a one-line summary.
/// The value is moved into the result (or shared), never copied.
pub fn envelope(result: ToolResult) -> Answer {
    let (structured, summary, is_error) = match result {
        Ok(Reply {
            structured,
            summary,
        }) => (structured, summary, false),
        Err(e) => (Structured::Own(e.to_structured()), e.to_string(), true),
    };
    let mut out = CallToolResult::success(vec![ContentBlock::text(summary)]);
    out.is_error = Some(is_error);
    // Required on 2026-07-28; rmcp removes it for older revisions.
    out.result_type = Some(ResultType::COMPLETE);
    match structured {
        Structured::Own(value) => {
            out.structured_content = Some(value);
            out.into()
        }
        Structured::Shared(shared) => Answer {
            result: out,
            shared: Some(shared),
        },
    }
}

/// The arguments of a call, with helpers that read reserved members.
pub struct Args(pub Map<String, Value>);

impl Args {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
    /// Members outside `allowed` (for request-error routing of inapplicable
    /// members).
    pub fn unexpected(&self, allowed: &[&str]) -> Vec<String> {
        self.0
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .cloned()
            .collect()
    }
}

/// Invalid-request error listing members that do not apply.
pub fn inapplicable(members: &[String], context: &str) -> RequestError {
    RequestError::invalid(format!(
        "{} not applicable {context}: remove {}",
        if members.len() == 1 {
            "member is"
        } else {
            "members are"
        },
        members
            .iter()
            .map(|m| format!("'{m}'"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

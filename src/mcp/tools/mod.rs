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
use super::arguments::Received;
use super::call_request::CallRequest;
use crate::pilotage::RequestError;
use rmcp::model::{CallToolResult, ContentBlock, ResultType};
use serde_json::value::RawValue;
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

/// The arguments of a call (a JSON object), with helpers that read reserved
/// members, and the text they were read from when the front lifted them.
pub struct Args {
    members: Value,
    received: Option<Received>,
}

impl Args {
    pub fn new(members: Map<String, Value>, received: Option<Received>) -> Self {
        Self {
            members: Value::Object(members),
            received,
        }
    }
    /// The arguments as one JSON object (for their schema).
    pub fn as_value(&self) -> &Value {
        &self.members
    }
    pub fn str(&self, key: &str) -> Option<&str> {
        self.members.get(key).and_then(Value::as_str)
    }
    pub fn has(&self, key: &str) -> bool {
        self.members.get(key).is_some()
    }
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.members.get(key)
    }
    /// The arguments as one JSON object's members.
    pub fn into_members(self) -> Map<String, Value> {
        match self.members {
            Value::Object(members) => members,
            _ => Map::new(),
        }
    }
    /// Member `key`, moved out (a large program is not copied).
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.members.as_object_mut()?.remove(key)
    }
    /// The text member `key` arrived as, when the front lifted the arguments
    /// and the member is there once.
    pub fn received(&self, key: &str) -> Option<&RawValue> {
        self.received.as_ref()?.member(key)
    }
    /// Members outside `allowed` (for request-error routing of inapplicable
    /// members).
    pub fn unexpected(&self, allowed: &[&str]) -> Vec<String> {
        self.members
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter(|k| !allowed.contains(&k.as_str()))
            .cloned()
            .collect()
    }
}

/// A call's arguments as the handler gets them: read into a tree, or a
/// plain call's, still the text they arrived in (read when needed).
pub enum CallArguments {
    Read(Args),
    Unread(Received),
}

impl CallArguments {
    /// What the front lifted out of the call (read or not), else what rmcp
    /// read (`from_rmcp`).
    pub fn of(call: &mut CallRequest<'_>, from_rmcp: Option<Map<String, Value>>) -> Self {
        match (call.arguments.take(), call.received.take()) {
            (Some(read), received) => Self::Read(Args::new(read, received)),
            (None, Some(text)) => Self::Unread(text),
            (None, None) => Self::Read(Args::new(from_rmcp.unwrap_or_default(), None)),
        }
    }

    /// The arguments read (`-32700` for text that cannot be).
    pub fn read(self) -> Result<Args, rmcp::ErrorData> {
        match self {
            Self::Read(args) => Ok(args),
            Self::Unread(text) => Ok(Args::new(text.read()?, Some(text))),
        }
    }

    /// The `language` member, when it is a string.
    pub fn language(&self) -> Option<String> {
        match self {
            Self::Read(args) => args.str("language").map(str::to_string),
            Self::Unread(text) => serde_json::from_str(text.member("language")?.get()).ok(),
        }
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

//! A tool call's answer on its way to the caller: rmcp's `CallToolResult`,
//! whose structured content may instead be [`Rendered`], one value shared by
//! every answer that carries it (the manifest of a permission set, a catalog
//! page while its `catalog_version` holds).
//!
//! A shared value is kept both as a tree (for rmcp's answers and for the
//! readers of an answer: outcome, metrics, the request log) and as its JSON
//! text, which the front's direct path writes as it is, so a repeated answer
//! is neither copied nor serialised again per call.

use rmcp::model::CallToolResult;
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;

/// Structured content written once, as a tree and as JSON text.
#[derive(Debug)]
pub struct Rendered {
    pub tree: Value,
    pub text: Box<RawValue>,
}

impl Rendered {
    pub fn new(tree: Value) -> Arc<Self> {
        // A tree always serialises; `null` would only stand in for a bug.
        let text = serde_json::value::to_raw_value(&tree)
            .unwrap_or_else(|_| serde_json::value::to_raw_value(&Value::Null).expect("null"));
        Arc::new(Self { tree, text })
    }

    /// Estimated heap bytes (the caches' weigher).
    pub fn weight(&self) -> u64 {
        crate::weigh::json(&self.tree) + crate::weigh::text(self.text.get())
    }
}

/// What `tools/call` answers: rmcp's result, and the shared structured
/// content that stands for its `structured_content` when there is one.
pub struct Answer {
    pub result: CallToolResult,
    pub shared: Option<Arc<Rendered>>,
}

impl From<CallToolResult> for Answer {
    fn from(result: CallToolResult) -> Self {
        Self {
            result,
            shared: None,
        }
    }
}

impl Answer {
    /// The structured content, shared or the result's own.
    pub fn structured(&self) -> Option<&Value> {
        match &self.shared {
            Some(shared) => Some(&shared.tree),
            None => self.result.structured_content.as_ref(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.result.is_error == Some(true)
    }

    /// rmcp's result with its own copy of any shared content.
    pub fn into_result(self) -> CallToolResult {
        let mut result = self.result;
        if let Some(shared) = self.shared {
            result.structured_content = Some(shared.tree.clone());
        }
        result
    }
}

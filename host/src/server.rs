//! The seam between the Client loop and the wire: what the loop needs from a
//! connected Pilotage server. `connect.rs` implements it over rmcp's MCP
//! client; unit tests implement it with scripted answers, so the loop's
//! policy (gate, drift recovery, error routing) is tested without a network.

use serde_json::{Map, Value};
use std::future::Future;
use std::time::Duration;

/// One `tools/call` answer, reduced to the machine contract (Part III §6):
/// `structuredContent` and `isError`. The human `content` is never parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    pub structured: Option<Value>,
    pub is_error: bool,
}

/// Everything that is not a Pilotage value: no answer, a JSON-RPC error
/// (the carrier channel), a timeout. Program findings and Run outcomes never
/// travel here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    /// A sentence naming the URL and what to fix.
    #[error("{0}")]
    Connection(String),
    #[error("the server answered with a JSON-RPC error {code}: {message}")]
    Carrier { code: i32, message: String },
    #[error("no answer within {secs} s ({what})")]
    Timeout { what: String, secs: u64 },
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

/// A connected server.
///
/// The futures are not required to be `Send`: the Host drives one loop on
/// one task, and fakes in tests stay simple.
pub trait PilotageServer {
    /// Identity of the server for guide caching: its endpoint URL.
    fn identity(&self) -> &str;

    /// The Pilotage entry of the initialize result's `_meta`, if any
    /// (Part III §3.2 accelerator).
    fn initialize_meta(&self) -> Option<&Value>;

    /// Whether the server declared the extension in its capabilities.
    fn declared_extension(&self) -> bool;

    /// True once after the server sent `notifications/tools/list_changed`:
    /// the Host then repeats discovery (Part III §3.3, §10.2 item 3).
    fn take_tools_changed(&self) -> bool {
        false
    }

    /// Every tool of `tools/list` (all pages), as JSON.
    fn list_tools(&self) -> impl Future<Output = Result<Vec<Value>, TransportError>>;

    /// One `tools/call`, bounded by `timeout`.
    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> impl Future<Output = Result<ToolAnswer, TransportError>>;
}

/// The bounds of one interaction.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// Discovery, guides, catalog, validate and trace fetch.
    pub call: Duration,
    /// Execute: set above the server's execution bound (Part IV §8), so a
    /// slow but healthy run is not cut off.
    pub execute: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            call: Duration::from_secs(30),
            execute: Duration::from_secs(120),
        }
    }
}

/// A failed call that produced no Pilotage value: the transport failed, or
/// the server answered with a request error, or with something that is not
/// the operation's shape.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("request error {}: {}", request_kind(.0), .0.message)]
    Request(crate::values::RequestError),
    #[error("{tool} answered without the expected structuredContent ({what})")]
    Malformed { tool: String, what: String },
}

/// How a request error's kind is shown: the kind the Host acts on, and the
/// server's own word when it was not a known kind.
fn request_kind(e: &crate::values::RequestError) -> String {
    if e.kind_was_unknown() {
        format!(
            "{} (the server said {:?}, which is not a known kind)",
            e.kind.name(),
            e.reported
        )
    } else {
        e.kind.name().to_string()
    }
}

/// Calls a tool and returns its `structuredContent`, routing `isError`
/// answers to [`CallError::Request`] (Part III §7.1).
pub async fn call_structured<S: PilotageServer>(
    server: &S,
    tool: &str,
    arguments: Map<String, Value>,
    timeout: Duration,
) -> Result<Value, CallError> {
    let answer = server.call_tool(tool, arguments, timeout).await?;
    if answer.is_error {
        return Err(CallError::Request(crate::values::RequestError::parse(
            answer.structured.as_ref(),
        )));
    }
    match answer.structured {
        Some(v @ Value::Object(_)) => Ok(v),
        _ => Err(CallError::Malformed {
            tool: tool.to_string(),
            what: "no structuredContent object".into(),
        }),
    }
}

/// Builds a JSON object from pairs (arguments of a tool call).
pub fn args<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

//! The MCP binding (Part III): rmcp's Streamable HTTP server in stateless
//! mode with JSON responses, our front for parse errors and signed sessions,
//! and the Pilotage tools.

pub mod answer;
pub mod arguments;
pub mod budget;
pub mod call_request;
pub mod carrier;
pub mod direct;
pub mod layer;
pub mod origin;
mod panic_guard;
pub mod protected_resource;
mod refusal;
pub mod retry_after;
pub mod server;
pub mod session;
pub mod tasks;
pub mod tool_list;
pub mod tools;

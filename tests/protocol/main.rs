//! Transport, carrier and discovery through the real endpoint: what an MCP
//! client sees of `/mcp` whatever the language or engine behind it.

#[path = "../common/mod.rs"]
mod common;

mod anonymous_scope;
mod capabilities;
mod carrier_faults;
mod interop_rmcp;
mod tool_schemas;
mod transport;

//! Runs that outlive their request (MCP Tasks), through the real endpoint:
//! the 2025-11-25 form (`params.task`, `tasks/get|result|list|cancel`) and
//! the 2026-07-28 extension (a call answered as a task past the inline
//! bound, `tasks/get` with the result), against a real legacy engine whose
//! `util.sleep` makes runs long; cancels that reach the engine; tasks read
//! on another instance sharing Redis, and taken over from an instance that
//! was killed.

#[path = "../common/mod.rs"]
mod common;

mod approvals;
mod extension_form;
mod instances;
mod legacy_form;
mod rmcp_client;
mod wire;

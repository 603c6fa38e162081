//! `workflow/v1` as the gateway sees it: program structure, the gateway-native
//! checks that run before the engine is asked, plan derivation and trace mapping.

pub mod checks;
pub mod plan;
pub mod program;
pub mod trace;

/// The JSON type a program of this language travels as in a tool argument
/// (Part III §4.6 allows a broad type constraint): a `workflow/v1` program is
/// a JSON document, so `"object"`; a text language's program would be a
/// `"string"`. Clients that build arguments from the schema (the MCP
/// Inspector's `--tool-arg`) parse the value by this type.
pub const PROGRAM_JSON_TYPE: &str = "object";

//! `workflow/v1` as the gateway sees it: program structure, the gateway-native
//! checks that run before the engine is asked, plan derivation and trace
//! mapping, served through [`crate::languages::Language`] by [`WorkflowV1`].

pub mod checks;
mod language;
pub mod plan;
pub mod program;
pub mod trace;

pub use language::WorkflowV1;

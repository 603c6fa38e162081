//! `workflow/v1` as the gateway sees it: program structure, the gateway-native
//! checks that run before the engine is asked, plan derivation and trace mapping.

pub mod checks;
pub mod plan;
pub mod program;
pub mod trace;

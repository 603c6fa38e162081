//! The `workflow/v1` language, independent of any REST dialect: legacy locations,
//! expressions, conditions, value helpers, the small JSON Schema checker and the
//! compiled program the runner executes.

pub mod condition;
pub mod expr;
pub mod path;
pub mod program;
pub mod schema;
pub mod values;

//! `mistral/v2`: one OpenStack Mistral v2 workflow document as YAML text,
//! read with positions for locators, checked for what Mistral's validator
//! lets through, planned and traced; served through
//! [`crate::languages::Language`] by [`MistralV2`]. The design decisions are
//! in `docs/mistral-v2.md`.

pub mod bounds;
pub mod checks;
pub mod document;
pub mod expressions;
#[cfg(test)]
mod fixtures;
pub mod input;
mod language;
pub mod plan;
pub mod trace;
pub mod workflow;

pub use language::MistralV2;

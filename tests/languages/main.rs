//! The languages, each through the real endpoint in front of its real
//! engine: one suite (`suite`) run for every language, and in each
//! language's module what only that language checks; the shipped classifier
//! rules (`classify_rules`) and property tests of bad programs (`properties`).

#[path = "../common/mod.rs"]
mod common;

mod classify_rules;
mod mistral_v2;
mod n8n_v1;
mod properties;
mod suite;
mod workflow_v1;

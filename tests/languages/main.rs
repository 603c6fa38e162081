//! The languages, each through the real endpoint in front of its real
//! engine: one suite (`suite`) run for every language, and in each
//! language's module what only that language checks.

#[path = "../common/mod.rs"]
mod common;

mod mistral_v2;
mod suite;
mod workflow_v1;

//! The official conformance vectors (`vectors.json`), one test per
//! server-target vector id, for every language: `workflow_v1` drives the
//! real HTTP endpoint of a gateway built by `app::build` in front of a real
//! `legacy-engine` (or, in external mode, a whole deployment behind a load
//! balancer); `mistral_v2` binds the vectors that apply to `mistral/v2`
//! programs, in front of the real Mistral. `support` holds what both read;
//! `registry` checks every server vector has a test here and a row in
//! `docs/conformance.md`.

#[path = "../common/mod.rs"]
mod common;

mod mistral_v2;
mod registry;
mod support;
mod workflow_v1 {
    mod carrier;
    mod catalog;
    mod discover;
    mod execute;
    mod learn;
    mod trace;
    mod validate;
}

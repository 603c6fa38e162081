//! The official conformance vectors (`vectors.json`), one test per
//! server-target vector id, for every language: `workflow_v1` drives the
//! real HTTP endpoint of a gateway built by `app::build` in front of a real
//! `legacy-engine` (or, in external mode, a whole deployment behind a load
//! balancer); `mistral_v2` binds the vectors that apply to `mistral/v2`
//! programs, in front of the real Mistral, and `n8n_v1` those that apply to
//! `n8n/v1` programs, in front of a real n8n: each of the two is a table
//! (its programs, expectations and engine-side observations) and every
//! body is written once in `binding`. `support` holds what all read;
//! `registry` checks every server vector has a test here and a row in
//! `docs/conformance.md`; `shipped` checks the configurations the vectors
//! run against are the shipped ones.

#[path = "../common/mod.rs"]
mod common;

mod binding;
mod mistral_v2;
mod n8n_v1;
mod registry;
mod shipped;
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

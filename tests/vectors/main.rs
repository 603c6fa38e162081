//! The official conformance vectors (`vectors.json`), one test per
//! server-target vector id, each driving the real HTTP endpoint of a gateway
//! built by `app::build` in front of a real `legacy-engine` (or, in external
//! mode, a whole deployment behind a load balancer).

#[path = "../common/mod.rs"]
mod common;

mod carrier;
mod catalog;
mod discover;
mod execute;
mod learn;
mod support;
mod trace;
mod validate;

//! `pilotage`: a Pilotage 1.1 Host. It performs the standard Client loop of
//! Part II §7 against any Pilotage MCP server, with the Host's two duties in
//! code: the risk gate and the transmission of execute requests.
//!
//! One job per module: `connect` (rmcp client), `discovery` and `manifest`
//! (what the server offers), `learn` and `guide_cache` (guides), `lookup`
//! (catalog), `gate` and `approve` (risk policy, approval), `standard_loop`
//! (the Run), `output` and `report` (rendering), `values` (closed sets and
//! fallbacks), `commands` (trace, guides, catalog), `app` (dispatch),
//! `credentials` (key file, CA roots), `transport_diagnosis` (transport
//! failures in the operator's words), `self_docs` (completions, man page).

pub mod app;
pub mod approve;
pub mod cli;
pub mod commands;
pub mod connect;
pub mod credentials;
pub mod discovery;
#[cfg(test)]
mod fake;
pub mod gate;
pub mod guide_cache;
pub mod learn;
pub mod lookup;
pub mod manifest;
pub mod output;
pub mod report;
pub mod self_docs;
pub mod server;
pub mod standard_loop;
pub mod transport_diagnosis;
pub mod values;

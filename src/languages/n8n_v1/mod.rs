//! `n8n/v1`: one n8n workflow document (`{name, nodes, connections,
//! settings}`) as JSON, read into nodes and connections, checked for what
//! needs only the document and the catalog (its form, the graph, the
//! JavaScript of expressions and Code nodes), planned and traced; served
//! through [`crate::languages::Language`] by [`N8nV1`]. What the language
//! and the n8n engine adapter each check is in `docs/n8n-v1.md`.

pub mod bounds;
pub mod checks;
pub mod document;
pub mod dollar_names;
pub mod expression_names;
#[cfg(test)]
mod fixtures;
pub mod graph;
pub mod input;
pub mod javascript;
mod language;
pub mod plan;
pub mod ports;
#[cfg(test)]
mod tests;
pub mod trace;
pub mod walk;

pub use language::N8nV1;

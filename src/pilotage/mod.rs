//! Wire shapes of Pilotage 1.1 (Part II data model, Part III envelopes) that
//! every tool shares: the extension identity, request errors, outcomes, risk
//! and the text-range locator dialect.

mod errors;
mod failures;
mod outcome;
mod risk;
pub mod text_range;

pub use errors::{RequestError, RequestErrorKind};
pub use failures::{internal, store_internal};
pub use outcome::{Outcome, RunStatus, StepStatus};
pub use risk::RiskHints;

/// Extension identifier (Part III §1.1) and the `_meta` key (Part III §2).
pub const EXTENSION_ID: &str = "io.github.jafarsa0/pilotage";
/// Wire version in the manifest's `pilotage` field (Part II §11.1).
pub const VERSION: &str = "1.1";

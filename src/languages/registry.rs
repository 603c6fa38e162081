//! Which implementation serves a `[[language]]` table: one line per
//! language. Adding a language is its folder under `src/languages/` plus
//! its line here.

use super::Language;
use std::sync::Arc;

/// Builds one language's implementation.
type Make = fn() -> Arc<dyn Language>;

/// Every language this build can serve, by kind.
const LANGUAGES: &[(&str, Make)] = &[
    ("workflow/v1", || Arc::new(super::workflow_v1::WorkflowV1)),
    ("mistral/v2", || Arc::new(super::mistral_v2::MistralV2)),
    ("n8n/v1", || Arc::new(super::n8n_v1::N8nV1)),
];

/// The implementation of `kind`, if this build has one.
pub fn lookup(kind: &str) -> Option<Arc<dyn Language>> {
    LANGUAGES
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, make)| make())
}

/// The kinds this build can serve (for configuration errors).
pub fn kinds() -> Vec<&'static str> {
    LANGUAGES.iter().map(|(k, _)| *k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_serves_the_kind_it_is_registered_under() {
        for kind in kinds() {
            assert_eq!(lookup(kind).map(|l| l.kind()), Some(kind));
        }
        assert!(lookup("mistral/v0").is_none());
        assert!(kinds().contains(&"mistral/v2"));
    }
}

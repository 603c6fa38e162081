//! Locators of whole-program findings (Part II §5.5): an empty locator
//! becomes the language's root locator.

use crate::classify::Diagnostic;
use crate::gateway::LanguageRuntime;
use serde_json::Value;

/// Whole-program findings (an empty locator) get the language's root
/// locator; input and context findings keep their JSON Pointers into those
/// values (Part II §5.5).
pub fn locate_whole_program(
    lang: &LanguageRuntime,
    program: &Value,
    diagnostics: &mut [Diagnostic],
) {
    let mut root = None;
    for d in diagnostics.iter_mut() {
        if d.path.is_empty() && d.code != "input_binding" && d.code != "context_binding" {
            d.path = root
                .get_or_insert_with(|| lang.language.root_locator(program))
                .clone();
        }
    }
}

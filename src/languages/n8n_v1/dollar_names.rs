//! The `$` names a piece of JavaScript reads without binding them itself:
//! `$json` and `$('Node')`'s `$` in `{{ $json.a + $('Node').item.json.b }}`,
//! but not `$x` in `{{ $json.list.map($x => $x.a) }}` (a parameter), nor a
//! property (`$json.$id`) or a string (`"$5"`). Read from the parsed syntax
//! tree, so what JavaScript calls a variable is what is reported.

use oxc_allocator::Allocator;
use oxc_ast::ast::{BindingIdentifier, IdentifierReference};
use oxc_ast_visit::Visit;
use oxc_parser::Parser;
use oxc_span::SourceType;
use std::collections::HashSet;

/// What a walk over the tree found.
#[derive(Default)]
struct Names {
    /// `$` names read, in order of appearance.
    read: Vec<String>,
    /// Every name the source declares (parameters, `const`, functions).
    bound: HashSet<String>,
}

impl<'a> Visit<'a> for Names {
    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if it.name.as_str().starts_with('$') {
            self.read.push(it.name.as_str().to_string());
        }
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.bound.insert(it.name.as_str().to_string());
    }
}

/// The `$` names `source` (a whole script) reads and never declares, each
/// once, in order of appearance; none when it does not parse. A name it
/// declares anywhere is left out everywhere: a finding must never be a
/// variable of the source's own.
pub fn free_dollar_names(source: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    if !parsed.errors.is_empty() || parsed.panicked {
        return Vec::new();
    }
    let mut names = Names::default();
    names.visit_program(&parsed.program);
    let mut seen = HashSet::new();
    names
        .read
        .into_iter()
        .filter(|n| !names.bound.contains(n) && seen.insert(n.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_read_and_bindings_properties_and_strings_are_not() {
        assert_eq!(
            free_dollar_names("($json.a + $('Node').item.json.b + $foo)"),
            ["$json", "$", "$foo"]
        );
        assert_eq!(
            free_dollar_names("($json.list.map($x => $x.a + $json.$id + '$5' + `${$now}`))"),
            ["$json", "$now"]
        );
        assert_eq!(
            free_dollar_names("({ $key: 1, plain: $vars.x })"),
            ["$vars"]
        );
        assert!(free_dollar_names("($json.").is_empty());
    }
}

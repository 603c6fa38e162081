//! The names a piece of JavaScript reads without giving them itself, from
//! its parsed syntax tree, so what JavaScript calls a variable or a method
//! call is what is reported:
//!
//! - the `$` variables: `$json` and `$('Node')`'s `$` in
//!   `{{ $json.a + $('Node').item.json.b }}`, but not `$x` in
//!   `{{ $json.list.map($x => $x.a) }}` (a parameter), nor a property
//!   (`$json.$id`) or a string (`"$5"`);
//! - the methods called, `.name(` and `.name?.(`: `toUpperCase` in
//!   `{{ $json.a.toUpperCase() }}`, but not in a string or a comment, nor a
//!   computed call (`a[name]()`), nor a name the source gives a property of
//!   its own (`{ f() {} }.f()`, `o.f = …`).

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    AssignmentExpression, AssignmentTarget, BindingIdentifier, CallExpression, Expression,
    IdentifierReference, PropertyKey,
};
use oxc_ast_visit::{Visit, walk};
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
    /// Method names called, with where each name starts: a walk meets
    /// `a.f().g()`'s `g` before its `f`.
    called: Vec<(u32, String)>,
    /// Every property name the source gives (object keys, class members,
    /// assignments to a property).
    own_properties: HashSet<String>,
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

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        // `a?.b()` and `a.b?.()` are calls of a static member too.
        if let Expression::StaticMemberExpression(member) = it.callee.without_parentheses() {
            self.called.push((
                member.property.span.start,
                member.property.name.as_str().to_string(),
            ));
        }
        walk::walk_call_expression(self, it);
    }

    fn visit_property_key(&mut self, it: &PropertyKey<'a>) {
        if let Some(name) = it.static_name() {
            self.own_properties.insert(name.into_owned());
        }
        walk::walk_property_key(self, it);
    }

    fn visit_assignment_expression(&mut self, it: &AssignmentExpression<'a>) {
        if let AssignmentTarget::StaticMemberExpression(member) = &it.left {
            self.own_properties
                .insert(member.property.name.as_str().to_string());
        }
        walk::walk_assignment_expression(self, it);
    }
}

/// The names a source reads and does not give itself, each once, in order
/// of appearance.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FreeNames {
    /// `$` variables read and never declared.
    pub dollar: Vec<String>,
    /// Methods called whose name is no property the source gives.
    pub methods: Vec<String>,
}

/// The free names of `source` (a whole script); none when it does not
/// parse. A name it declares (or gives a property) anywhere is left out
/// everywhere: a finding must never be a name of the source's own.
pub fn free_names(source: &str) -> FreeNames {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    if !parsed.errors.is_empty() || parsed.panicked {
        return FreeNames::default();
    }
    let mut names = Names::default();
    names.visit_program(&parsed.program);
    names.called.sort();
    let called = names.called.into_iter().map(|(_, name)| name).collect();
    FreeNames {
        dollar: once_each(names.read, &names.bound),
        methods: once_each(called, &names.own_properties),
    }
}

/// `names` without those in `own`, each once, in order.
fn once_each(names: Vec<String>, own: &HashSet<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter(|n| !own.contains(n) && seen.insert(n.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dollar(source: &str) -> Vec<String> {
        free_names(source).dollar
    }

    fn methods(source: &str) -> Vec<String> {
        free_names(source).methods
    }

    #[test]
    fn variables_are_read_and_bindings_properties_and_strings_are_not() {
        assert_eq!(
            dollar("($json.a + $('Node').item.json.b + $foo)"),
            ["$json", "$", "$foo"]
        );
        assert_eq!(
            dollar("($json.list.map($x => $x.a + $json.$id + '$5' + `${$now}`))"),
            ["$json", "$now"]
        );
        assert_eq!(dollar("({ $key: 1, plain: $vars.x })"), ["$vars"]);
        assert!(dollar("($json.").is_empty());
    }

    #[test]
    fn methods_are_calls_of_a_static_member_only() {
        assert_eq!(
            methods("($json.a.noSuchFunction() + $('A').first().json.b.trim())"),
            ["noSuchFunction", "first", "trim"]
        );
        assert_eq!(
            methods("($json.a?.toUpperCase() ?? $json.b.toLowerCase?.() ?? ($json.c.at)(1))"),
            ["toUpperCase", "toLowerCase", "at"]
        );
        // Strings, comments, reads, computed and bare calls are no method call.
        assert_eq!(
            methods(
                "('x.nope()' + `y.nope()` /* z.nope() */ + $json.a.length + $json[k]() + foo())"
            ),
            Vec::<String>::new()
        );
        // A property the expression gives itself is its own.
        assert_eq!(
            methods("(({ f() { return 1 }, g: () => 2 }).f() + ({ g: () => 2 }).g() + $json.h())"),
            ["h"]
        );
        assert!(methods("($json.a.b(").is_empty());
    }
}

//! Checks of expressions: do they parse, and may this step read what they name
//! (earlier steps in scope, the loop item inside a loop, declared input fields,
//! context keys the request actually carries).

use serde_json::Value;

use super::problem::Kind;
use super::walker::{Scope, Walker};
use crate::language::condition::{Cond, CondError};
use crate::language::expr::{Expr, Root};
use crate::language::path::Where;
use crate::language::program::expression_strings;

impl Walker<'_> {
    /// Checks every expression string inside `value` (found at `at`).
    pub(super) fn check_value_exprs(
        &mut self,
        value: &Value,
        at: &Where,
        step: &str,
        scope: &Scope,
    ) {
        let mut found = Vec::new();
        expression_strings(value, at, &mut found);
        for (text, expr_at) in found {
            match Expr::parse(text) {
                Some(expr) => self.check_expr(&expr, &expr_at, step, scope),
                None => self.push_bare(Kind::BadExpression {
                    step: step.to_owned(),
                    expr: text.to_owned(),
                }),
            }
        }
    }

    /// Checks a branch condition found at `at` (`steps[1].when`).
    pub(super) fn check_condition(&mut self, when: &Value, at: &Where, step: &str, scope: &Scope) {
        match Cond::parse(when, at) {
            Err(CondError::UnknownOperator { op, at }) => {
                self.push(Kind::UnknownOperator { op }, at)
            }
            Err(CondError::BadExpression { text }) => self.push_bare(Kind::BadExpression {
                step: step.to_owned(),
                expr: text,
            }),
            Ok(cond) => {
                for (expr, expr_at) in cond.expressions() {
                    self.check_expr(expr, expr_at, step, scope);
                }
            }
        }
    }

    fn check_expr(&mut self, expr: &Expr, at: &Where, step: &str, scope: &Scope) {
        let step = step.to_owned();
        match &expr.root {
            Root::Input => {
                if let (Some(declared), Some(field)) = (&self.declared_input, expr.path.first())
                    && !declared.contains(field)
                {
                    self.push(
                        Kind::UndeclaredInput {
                            field: field.clone(),
                        },
                        at.clone(),
                    );
                }
            }
            Root::Context(key) => {
                if !self.env.context.is_some_and(|c| c.contains_key(key)) {
                    self.push_bare(Kind::ContextMissing {
                        step,
                        key: key.clone(),
                    });
                }
            }
            Root::Step(other) => {
                self.flow.referenced.insert(other.clone());
                if scope.visible.contains(other) {
                    return;
                }
                let innermost = self.loops_of.get(other).and_then(|loops| loops.last());
                let kind = match innermost {
                    Some(loop_id) if !scope.loops.iter().any(|f| &f.id == loop_id) => {
                        Kind::OnlyInLoop {
                            step,
                            other: other.clone(),
                            loop_id: loop_id.clone(),
                        }
                    }
                    _ => Kind::NotRunYet {
                        step,
                        other: other.clone(),
                    },
                };
                self.push_bare(kind);
            }
            Root::Item => {
                if scope.loops.is_empty() {
                    self.push_bare(Kind::LoopValueOutsideLoop {
                        step,
                        expr: "$.item".to_owned(),
                    });
                }
            }
            Root::Var(name) => {
                if !scope
                    .loops
                    .iter()
                    .any(|f| f.as_name.as_deref() == Some(name.as_str()))
                {
                    let expr = format!("$.vars.{name}");
                    self.push_bare(Kind::LoopValueOutsideLoop { step, expr });
                }
            }
        }
    }
}

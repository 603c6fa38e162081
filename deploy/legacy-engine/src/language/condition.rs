//! Conditions of `branch` steps: `{"op": eq|ne|gt|ge|lt|le, "left", "right"}`,
//! `{"and": [..]}`, `{"or": [..]}`, `{"not": c}` and `{"exists": "$.expr"}`.
//!
//! Parsing stops at the first problem (a legacy engine reports one per condition).
//! Comparison semantics are deliberately forgiving: numbers compare numerically,
//! strings lexically, and any other ordering comparison is simply false.

use serde_json::Value;

use super::expr::{Expr, is_expression};
use super::path::Where;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CmpOp {
    fn parse(text: &str) -> Option<CmpOp> {
        Some(match text {
            "eq" => CmpOp::Eq,
            "ne" => CmpOp::Ne,
            "gt" => CmpOp::Gt,
            "ge" => CmpOp::Ge,
            "lt" => CmpOp::Lt,
            "le" => CmpOp::Le,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
        }
    }
}

/// One side of a comparison, with its location (for "input field" problems).
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Expr(Expr, Where),
    Literal(Value),
}

/// A parsed condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Compare {
        op: CmpOp,
        left: Operand,
        right: Operand,
    },
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
    Exists(Expr, Where),
}

/// Why a condition could not be parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum CondError {
    /// An operator the engine does not know, at the location of the offending object.
    UnknownOperator { op: String, at: Where },
    /// An operand or `exists` target that starts like an expression but does not parse.
    BadExpression { text: String },
}

impl Cond {
    /// Parses the condition found at `at`.
    pub fn parse(value: &Value, at: &Where) -> Result<Cond, CondError> {
        let unknown = |op: String| CondError::UnknownOperator { op, at: at.clone() };
        let Value::Object(map) = value else {
            return Err(unknown(value.to_string()));
        };
        if let Some(op) = map.get("op") {
            let Some(op) = op.as_str().and_then(CmpOp::parse) else {
                return Err(unknown(crate::language::values::quote(op)));
            };
            let null = Value::Null;
            let left = operand(map.get("left").unwrap_or(&null), &at.key("left"))?;
            let right = operand(map.get("right").unwrap_or(&null), &at.key("right"))?;
            return Ok(Cond::Compare { op, left, right });
        }
        for name in ["and", "or"] {
            if let Some(list) = map.get(name) {
                let Value::Array(items) = list else {
                    return Err(unknown(name.to_owned()));
                };
                let here = at.key(name);
                let parts = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| Cond::parse(item, &here.index(i)))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok(if name == "and" {
                    Cond::And(parts)
                } else {
                    Cond::Or(parts)
                });
            }
        }
        if let Some(inner) = map.get("not") {
            return Ok(Cond::Not(Box::new(Cond::parse(inner, &at.key("not"))?)));
        }
        if let Some(target) = map.get("exists") {
            let text = match target {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            return match Expr::parse(&text) {
                Some(expr) => Ok(Cond::Exists(expr, at.key("exists"))),
                None => Err(CondError::BadExpression { text }),
            };
        }
        Err(unknown(map.keys().next().cloned().unwrap_or_default()))
    }

    /// Every expression the condition reads, with its location.
    pub fn expressions(&self) -> Vec<(&Expr, &Where)> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<(&'a Expr, &'a Where)>) {
        match self {
            Cond::Compare { left, right, .. } => {
                for side in [left, right] {
                    if let Operand::Expr(e, at) = side {
                        out.push((e, at));
                    }
                }
            }
            Cond::And(parts) | Cond::Or(parts) => parts.iter().for_each(|c| c.collect(out)),
            Cond::Not(inner) => inner.collect(out),
            Cond::Exists(e, at) => out.push((e, at)),
        }
    }

    /// The text of the condition as printed in branch events, e.g.
    /// `$.input.amount gt 100 and (not exists $.input.memo)`.
    pub fn render(&self) -> String {
        match self {
            Cond::Compare { op, left, right } => {
                format!(
                    "{} {} {}",
                    render_operand(left),
                    op.as_str(),
                    render_operand(right)
                )
            }
            Cond::And(parts) if parts.is_empty() => "true".to_owned(),
            Cond::Or(parts) if parts.is_empty() => "false".to_owned(),
            Cond::And(parts) => join(parts, " and "),
            Cond::Or(parts) => join(parts, " or "),
            Cond::Not(inner) => match **inner {
                Cond::Exists(..) | Cond::Not(_) => format!("not {}", inner.render()),
                _ => format!("not ({})", inner.render()),
            },
            Cond::Exists(e, _) => format!("exists {}", e.text),
        }
    }

    /// A part of an `and`/`or`: parenthesized when it is itself an `and`/`or`.
    fn render_part(&self) -> String {
        match self {
            Cond::And(parts) | Cond::Or(parts) if !parts.is_empty() => {
                format!("({})", self.render())
            }
            _ => self.render(),
        }
    }

    /// Evaluates the condition; `lookup` resolves an expression (null when absent).
    pub fn eval(&self, lookup: &mut dyn FnMut(&Expr) -> Value) -> bool {
        match self {
            Cond::Compare { op, left, right } => {
                let l = operand_value(left, lookup);
                let r = operand_value(right, lookup);
                compare(*op, &l, &r)
            }
            Cond::And(parts) => parts.iter().all(|c| c.eval(lookup)),
            Cond::Or(parts) => parts.iter().any(|c| c.eval(lookup)),
            Cond::Not(inner) => !inner.eval(lookup),
            Cond::Exists(e, _) => !lookup(e).is_null(),
        }
    }
}

fn join(parts: &[Cond], separator: &str) -> String {
    parts
        .iter()
        .map(Cond::render_part)
        .collect::<Vec<_>>()
        .join(separator)
}

fn operand(value: &Value, at: &Where) -> Result<Operand, CondError> {
    match value {
        Value::String(s) if is_expression(s) => match Expr::parse(s) {
            Some(e) => Ok(Operand::Expr(e, at.clone())),
            None => Err(CondError::BadExpression { text: s.clone() }),
        },
        other => Ok(Operand::Literal(other.clone())),
    }
}

fn render_operand(operand: &Operand) -> String {
    match operand {
        Operand::Expr(e, _) => e.text.clone(),
        Operand::Literal(v) => v.to_string(),
    }
}

fn operand_value(operand: &Operand, lookup: &mut dyn FnMut(&Expr) -> Value) -> Value {
    match operand {
        Operand::Expr(e, _) => lookup(e),
        Operand::Literal(v) => v.clone(),
    }
}

/// Compares two values. Numbers compare as numbers (so `1 eq 1.0`), strings
/// lexically; ordering between anything else is false rather than an error.
pub fn compare(op: CmpOp, left: &Value, right: &Value) -> bool {
    use std::cmp::Ordering;
    let ordering = match (left, right) {
        (Value::Number(a), Value::Number(b)) => a
            .as_f64()
            .zip(b.as_f64())
            .and_then(|(a, b)| a.partial_cmp(&b)),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    };
    match op {
        CmpOp::Eq => ordering.map_or(left == right, |o| o == Ordering::Equal),
        CmpOp::Ne => ordering.map_or(left != right, |o| o != Ordering::Equal),
        CmpOp::Gt => ordering == Some(Ordering::Greater),
        CmpOp::Ge => matches!(ordering, Some(Ordering::Greater | Ordering::Equal)),
        CmpOp::Lt => ordering == Some(Ordering::Less),
        CmpOp::Le => matches!(ordering, Some(Ordering::Less | Ordering::Equal)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Cond, CondError> {
        Cond::parse(&v, &Where::root().key("when"))
    }

    #[test]
    fn renders_nested_conditions() {
        let c = parse(json!({"and": [
            {"op": "gt", "left": "$.input.amount", "right": 100},
            {"not": {"exists": "$.input.memo"}},
            {"or": [{"op": "eq", "left": "$.item.tier", "right": "gold"}]}
        ]}))
        .expect("parses");
        assert_eq!(
            c.render(),
            "$.input.amount gt 100 and not exists $.input.memo and ($.item.tier eq \"gold\")"
        );
    }

    #[test]
    fn reports_unknown_operators_with_their_location() {
        let err = parse(json!({"and": [{"op": "contains", "left": 1, "right": 2}]}));
        assert_eq!(
            err,
            Err(CondError::UnknownOperator {
                op: "contains".into(),
                at: Where::root().key("when").key("and").index(0)
            })
        );
        assert!(matches!(
            parse(json!({"xor": []})),
            Err(CondError::UnknownOperator { op, .. }) if op == "xor"
        ));
        assert!(matches!(
            parse(json!({"exists": "$.bad"})),
            Err(CondError::BadExpression { text }) if text == "$.bad"
        ));
    }

    #[test]
    fn compares_forgivingly() {
        assert!(compare(CmpOp::Eq, &json!(1), &json!(1.0)));
        assert!(compare(CmpOp::Lt, &json!("a"), &json!("b")));
        assert!(!compare(CmpOp::Gt, &json!("a"), &json!(1)));
        assert!(compare(CmpOp::Ne, &json!(null), &json!(0)));
    }
}

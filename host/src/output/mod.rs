//! Rendering for people: diagnostics, plans, the approval context, outcomes
//! and traces with their decisions highlighted. `text.rs` and `json.rs` are
//! the two reporters of the loop. Server-authored prose (messages, hints,
//! descriptions) is shown as content, never interpreted.

pub mod json;
pub mod text;

use crate::gate::{Assessment, Basis, Hints, UNVERIFIED_NOTICE};
use crate::values::{Outcome, OutcomeClass};
use serde_json::Value;
use std::fmt::Write as _;

/// Terminal styling: only when writing to a terminal and `NO_COLOR` is not
/// set, so piped output stays plain text.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn warn(&self, s: &str) -> String {
        self.wrap("1;33", s)
    }
    pub fn bad(&self, s: &str) -> String {
        self.wrap("1;31", s)
    }
    pub fn good(&self, s: &str) -> String {
        self.wrap("1;32", s)
    }
    pub fn decision(&self, s: &str) -> String {
        self.wrap("1;36", s)
    }
}

fn flag(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "?",
    }
}

pub fn hints(h: &Hints) -> String {
    format!(
        "readOnly={} destructive={} openWorld={}",
        flag(h.read_only),
        flag(h.destructive),
        flag(h.open_world)
    )
}

/// Diagnostics, one per line, with locator, code and hint.
pub fn diagnostics(list: &[Value], style: Style) -> String {
    let mut s = String::new();
    for d in list {
        let get = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
        let severity = get("severity");
        let sev = if severity == "warning" {
            style.warn("warning")
        } else {
            style.bad(if severity.is_empty() {
                "error"
            } else {
                severity
            })
        };
        let path = match d.get("path") {
            Some(Value::String(p)) if p.is_empty() => "(whole program)".to_string(),
            Some(Value::String(p)) => p.clone(),
            Some(other) => other.to_string(),
            None => "?".into(),
        };
        let _ = writeln!(s, "  {sev} {} at {path}: {}", get("code"), get("message"));
        if let Some(h) = d.get("hint").and_then(Value::as_str) {
            let _ = writeln!(s, "      hint: {h}");
        }
    }
    s
}

/// The risk picture the gate decided on.
pub fn risk(a: &Assessment) -> String {
    let mut s = String::new();
    match &a.basis {
        Basis::Plan => {
            let _ = writeln!(
                s,
                "plan: max risk {} ({})",
                a.max_risk.as_deref().unwrap_or("?"),
                hints(&a.hints)
            );
        }
        Basis::References => {
            let _ = writeln!(
                s,
                "risk from the server's references (no plan): {}",
                hints(&a.hints)
            );
        }
        Basis::Nothing(why) => {
            let _ = writeln!(s, "risk unknown: {why}");
        }
    }
    for i in &a.items {
        let mut flags = Vec::new();
        if i.hints.destructive != Some(false) {
            flags.push("destructive");
        }
        if i.hints.open_world != Some(false) {
            flags.push("openWorld");
        }
        let line = format!(
            "  {:<12} {:<26} {:<12}{}{}",
            i.id,
            i.calls
                .as_deref()
                .map(|c| format!("calls {c}"))
                .unwrap_or_default(),
            i.risk.as_deref().unwrap_or("-"),
            if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            },
            i.place
                .as_deref()
                .map(|p| format!("  ({p})"))
                .unwrap_or_default(),
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}

/// What a person is shown before approving an execute request.
pub fn approval_context(language: &str, a: &Assessment) -> String {
    let mut s = format!(
        "Approval required before executing this {language} program: {}.\n",
        a.reasons.join("; ")
    );
    s.push_str(&risk(a));
    s.push_str(UNVERIFIED_NOTICE);
    s.push('\n');
    s
}

/// A one-line outcome, saying plainly when a status was not recognised.
pub fn outcome(o: &Outcome, style: Style) -> String {
    let mut s = match &o.class {
        OutcomeClass::Success => style.good(&o.status),
        OutcomeClass::Partial { reported } if reported != "partial" => format!(
            "{} (server status {reported:?} is not one this Host knows: treated as partial, side effects may have occurred)",
            style.bad("partial")
        ),
        OutcomeClass::Partial { .. } => {
            format!("{} (side effects may have occurred)", style.bad("partial"))
        }
        OutcomeClass::Error => format!("{} (side effects may have occurred)", style.bad("error")),
        other => format!(
            "{} (refused before execution; no side effects)",
            style.bad(other.name())
        ),
    };
    if let Some(e) = &o.error {
        let _ = write!(s, ": {e}");
    }
    s
}

/// A trace, one step per line, each branch/loop decision on its own
/// highlighted line.
pub fn trace(t: &Value, style: Style) -> String {
    let mut s = String::new();
    let steps = t.get("steps").and_then(Value::as_array);
    let _ = writeln!(
        s,
        "trace ({} level, {} steps)",
        t.get("level").and_then(Value::as_str).unwrap_or("?"),
        steps.map(Vec::len).unwrap_or(0)
    );
    for step in steps.into_iter().flatten() {
        let id = step.get("id").and_then(Value::as_str).unwrap_or("?");
        let status = step
            .get("outcome")
            .and_then(|o| o.get("status"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let calls = step
            .get("calls")
            .and_then(Value::as_str)
            .map(|c| format!("calls {c}"))
            .unwrap_or_default();
        let ms = step
            .get("t_ms")
            .and_then(Value::as_u64)
            .map(|m| format!("{m} ms"))
            .unwrap_or_default();
        let line = format!("  {id:<14} {calls:<28} {status:<10} {ms}");
        let _ = writeln!(s, "{}", line.trim_end());
        if let Some(e) = step
            .get("outcome")
            .and_then(|o| o.get("error"))
            .and_then(Value::as_str)
        {
            let _ = writeln!(s, "      error: {e}");
        }
        if let Some(i) = step.get("input") {
            let _ = writeln!(s, "      input:  {i}");
        }
        if let Some(o) = step.get("output") {
            let _ = writeln!(s, "      output: {o}");
        }
        for d in step
            .get("decisions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let g = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("?");
            let line = format!(
                "◆ decision at {}: took {} because {}",
                g("at"),
                g("took"),
                g("because")
            );
            let _ = writeln!(s, "      {}", style.decision(&line));
        }
    }
    s
}

//! The machine reporter (`--json`): one JSON document on stdout when the
//! command ends, carrying the server's structured answers unchanged plus
//! the Host's own decisions (gate, outcome class, exit).

use crate::gate::{Approval, Basis, UNVERIFIED_NOTICE};
use crate::report::{Event, Exit, Reporter};
use serde_json::{Map, Value, json};
use std::io::Write;

pub struct JsonReporter<O: Write> {
    out: O,
    doc: Map<String, Value>,
}

impl<O: Write> JsonReporter<O> {
    pub fn new(out: O) -> Self {
        JsonReporter {
            out,
            doc: Map::new(),
        }
    }

    fn push(&mut self, key: &str, v: Value) {
        let slot = self
            .doc
            .entry(key.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = slot {
            a.push(v);
        }
    }
}

fn hints(h: &crate::gate::Hints) -> Value {
    json!({"readOnly": h.read_only, "destructive": h.destructive, "openWorld": h.open_world})
}

impl<O: Write> Reporter for JsonReporter<O> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Discovered {
                server,
                discovery,
                chosen,
            } => {
                self.doc.insert("server".into(), json!(server));
                self.doc
                    .insert("pilotage".into(), json!(discovery.manifest.version));
                self.doc.insert(
                    "language".into(),
                    json!({"name": chosen.language.name, "validate_tool": chosen.validate.name,
                        "argument": chosen.validate.argument,
                        "execute_tool": chosen.execute.as_ref().map(|e| e.name.clone()),
                        "alternatives": chosen.alternatives, "notes": chosen.language.notes}),
                );
            }
            Event::Guide(g) => {
                self.doc.insert(
                    "guide".into(),
                    json!({"id": g.meta.id, "version": g.meta.version, "cached": g.cached,
                        "size_bytes": g.body.len()}),
                );
            }
            Event::NoCoreGuide { .. } => {
                self.doc.insert("guide".into(), Value::Null);
            }
            Event::Validated {
                round,
                answer,
                valid,
            } => {
                self.push(
                    "validations",
                    json!({"round": round, "valid": valid, "answer": answer}),
                );
            }
            // The gate event carries the same assessment with the decision.
            Event::Risk { .. } => {}
            Event::Gate {
                assessment,
                approval,
            } => {
                let basis = match &assessment.basis {
                    Basis::Plan => json!("plan"),
                    Basis::References => json!("references"),
                    Basis::Nothing(why) => json!({"nothing": why}),
                };
                let approval = match approval {
                    None => Value::Null,
                    Some(Approval::Granted(by)) => json!({"granted": true, "by": by}),
                    Some(Approval::Refused(why)) => json!({"granted": false, "why": why}),
                };
                self.push(
                    "gates",
                    json!({"basis": basis, "max_risk_hints": hints(&assessment.hints),
                        "approval_required": assessment.requires_approval(),
                        "reasons": assessment.reasons, "approval": approval,
                        "notice": UNVERIFIED_NOTICE}),
                );
            }
            Event::Executing { round, arguments } => {
                // The program itself is already in the caller's hands; the
                // reserved members show what the Host sent besides it.
                let sent: Map<String, Value> = arguments
                    .iter()
                    .filter(|(k, _)| {
                        matches!(
                            k.as_str(),
                            "expected_catalog_version"
                                | "mode"
                                | "idempotency_key"
                                | "input"
                                | "context"
                        )
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                self.push("executions", json!({"round": round, "sent": sent}));
            }
            Event::Executed {
                answer, outcome, ..
            } => {
                if let Some(Value::Array(a)) = self.doc.get_mut("executions")
                    && let Some(Value::Object(last)) = a.last_mut()
                {
                    last.insert("answer".into(), answer.clone());
                    last.insert("outcome_class".into(), json!(outcome.class.name()));
                    last.insert(
                        "side_effects_possible".into(),
                        json!(outcome.class.may_have_side_effects()),
                    );
                }
            }
            Event::Drift { round, max } => {
                self.push(
                    "notes",
                    json!(format!("catalog_drift: recovery {round} of {max}")),
                );
            }
            Event::DriftExhausted { max } => {
                self.push(
                    "notes",
                    json!(format!("catalog_drift after {max} recoveries")),
                );
            }
            Event::Failed {
                stage,
                error,
                advice,
            } => {
                self.doc.insert(
                    "error".into(),
                    json!({"stage": stage, "message": error, "advice": advice}),
                );
            }
            Event::Note(n) => self.push("notes", json!(n)),
        }
    }

    fn finish(&mut self, exit: Exit) {
        self.doc.insert("result".into(), json!(exit.name()));
        self.doc.insert("exit".into(), json!(exit.code()));
        let doc = Value::Object(std::mem::take(&mut self.doc));
        let text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string());
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }
}

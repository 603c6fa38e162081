//! The human-readable reporter: progress and results on stdout, failures
//! and gate refusals on stderr.

use super::Style;
use crate::gate::{Approval, UNVERIFIED_NOTICE};
use crate::report::{Event, Exit, Reporter};
use serde_json::Value;
use std::io::Write;

pub struct TextReporter<O: Write, E: Write> {
    out: O,
    err: E,
    style: Style,
}

impl<O: Write, E: Write> TextReporter<O, E> {
    pub fn new(out: O, err: E, style: Style) -> Self {
        TextReporter { out, err, style }
    }

    pub fn into_inner(self) -> (O, E) {
        (self.out, self.err)
    }
}

impl<O: Write, E: Write> Reporter for TextReporter<O, E> {
    fn event(&mut self, event: Event<'_>) {
        let st = self.style;
        // Output errors (a closed pipe) must not turn into panics; the exit
        // code still tells the caller what happened.
        let _ = match event {
            Event::Discovered {
                server,
                discovery,
                chosen,
            } => {
                let mut s = format!(
                    "server   {server} (Pilotage {}{})\n",
                    discovery.manifest.version,
                    if discovery.extension_declared {
                        ""
                    } else {
                        "; extension not declared at initialize, manifest tool answered"
                    }
                );
                s.push_str(&format!(
                    "language {} ({}): validate with {}({}), execute with {}\n",
                    st.bold(&chosen.language.name),
                    chosen.language.title,
                    chosen.validate.name,
                    chosen.validate.argument,
                    chosen
                        .execute
                        .as_ref()
                        .map(|e| e.name.as_str())
                        .unwrap_or("-"),
                ));
                if !chosen.alternatives.is_empty() {
                    s.push_str(&format!(
                        "         (also possible: {}; choose with --language)\n",
                        chosen.alternatives.join(", ")
                    ));
                }
                if discovery.init_manifest_differs {
                    s.push_str("         (the initialize manifest differs; pilotage_manifest's answer is used)\n");
                }
                for n in &chosen.language.notes {
                    s.push_str(&format!("         note: {n}\n"));
                }
                write!(self.out, "{s}")
            }
            Event::Guide(g) => writeln!(
                self.out,
                "guide    {} \"{}\" version {} ({}, {} bytes)",
                g.meta.id,
                g.meta.title,
                g.meta.version,
                if g.cached { "from cache" } else { "fetched" },
                g.body.len()
            ),
            Event::NoCoreGuide { language } => {
                writeln!(
                    self.err,
                    "warning: the server lists no core guide for {language}"
                )
            }
            Event::Validated {
                round,
                answer,
                valid,
            } => {
                let diags = answer
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let cv = answer
                    .get("catalog_version")
                    .and_then(Value::as_str)
                    .map(|c| format!(", catalog_version {c}"))
                    .unwrap_or_default();
                let verdict = if valid {
                    st.good("valid")
                } else {
                    st.bad("invalid")
                };
                let mut s = format!(
                    "\nvalidate (round {round}): {verdict}, {} diagnostic(s){cv}\n",
                    diags.len()
                );
                s.push_str(&super::diagnostics(&diags, st));
                if !valid {
                    s.push_str("The program was not executed. Revise it using the diagnostics and run again.\n");
                }
                write!(self.out, "{s}")
            }
            Event::Risk { assessment } => write!(self.out, "{}", super::risk(assessment)),
            Event::Gate {
                assessment,
                approval,
            } => {
                let reasons = assessment.reasons.join("; ");
                match approval {
                    None => writeln!(
                        self.out,
                        "gate: no approval needed (no destructive or openWorld step). {UNVERIFIED_NOTICE}"
                    ),
                    Some(Approval::Granted(by)) => writeln!(
                        self.out,
                        "gate: {} ({reasons}); approved by {by}.\n{UNVERIFIED_NOTICE}",
                        st.warn("approval required")
                    ),
                    Some(Approval::Refused(why)) => writeln!(
                        self.err,
                        "{}: approval required before execute ({reasons}). The execute request was NOT sent: {why}.\n{UNVERIFIED_NOTICE}",
                        st.bad("refused")
                    ),
                }
            }
            Event::Executing { round, arguments } => {
                let mut extra = Vec::new();
                for k in ["expected_catalog_version", "mode", "idempotency_key"] {
                    if let Some(v) = arguments.get(k).and_then(Value::as_str) {
                        extra.push(format!("{k} {v}"));
                    }
                }
                writeln!(self.out, "\nexecute (round {round}): {}", extra.join(", "))
            }
            Event::Executed {
                answer, outcome, ..
            } => {
                let mut s = format!(
                    "outcome: {}\nrun_id:  {}\n",
                    super::outcome(outcome, st),
                    answer.get("run_id").and_then(Value::as_str).unwrap_or("?")
                );
                if let Some(d) = answer.get("diagnostics").and_then(Value::as_array) {
                    s.push_str(&super::diagnostics(d, st));
                }
                if let Some(o) = answer.get("output") {
                    s.push_str(&format!("output:  {o}\n"));
                }
                if let Some(t) = answer.get("trace") {
                    s.push_str(&super::trace(t, st));
                }
                write!(self.out, "{s}")
            }
            Event::Drift { round, max } => writeln!(
                self.out,
                "catalog_drift: the catalog changed since validation; nothing ran. Re-validating (recovery {round} of {max})."
            ),
            Event::DriftExhausted { max } => writeln!(
                self.err,
                "catalog_drift persisted after {max} recoveries; giving up (nothing ran)."
            ),
            Event::Failed {
                stage,
                error,
                advice,
            } => {
                let mut s = format!("{} during {stage}: {error}\n", st.bad("error"));
                if let Some(a) = advice {
                    s.push_str(&format!("  {a}\n"));
                }
                write!(self.err, "{s}")
            }
            Event::Note(n) => writeln!(self.out, "note: {n}"),
        };
    }

    fn finish(&mut self, exit: Exit) {
        let _ = writeln!(self.out, "\nresult: {} (exit {})", exit.name(), exit.code());
        let _ = self.out.flush();
        let _ = self.err.flush();
    }
}

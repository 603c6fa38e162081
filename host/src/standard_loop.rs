//! The standard Client loop for one Run (Part II §7.1), with the Host's
//! duties in Host code: discover → learn → validate → GATE → execute →
//! report, and `catalog_drift` recovery by re-validating (§7.5).
//!
//! Error routing (Part II §8, Part III §7): `valid: false` and `ok: false`
//! are values. They end the command with exit 1 and are never retried as if
//! the transport had failed; only `catalog_drift`, which the specification
//! makes recoverable, starts another round, and the rounds are bounded.
//! Request errors, carrier errors and transport failures end with exit 3 and
//! are not retried either: an execute request that may have reached the
//! server is never sent twice behind the operator's back.

use crate::discovery::{self, Chosen, Discovery, DiscoveryError, Needs};
use crate::gate::{Approval, ApprovalRequest, Approver, Assessment};
use crate::guide_cache::GuideCache;
use crate::learn;
use crate::lookup;
use crate::report::{Event, Exit, Reporter};
use crate::server::{CallError, PilotageServer, Timeouts, call_structured};
use crate::values::{Outcome, OutcomeClass, is_error_severity};
use serde_json::{Map, Value, json};

/// What to run and how.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The program as a JSON value: the file parsed as JSON, or its text as
    /// a JSON string when it is not JSON.
    pub program: Value,
    /// The program file's text, when it came from a file: sent as a string
    /// to a Language whose program argument takes strings (e.g. YAML).
    pub program_text: Option<String>,
    pub input: Option<Value>,
    pub context: Option<Value>,
    pub language: Option<String>,
    /// How many `catalog_drift` refusals the loop recovers from.
    pub max_drift_rounds: u32,
    /// An idempotency key to reuse (to replay a run whose answer was lost).
    pub idempotency_key: Option<String>,
    pub timeouts: Timeouts,
}

impl RunSpec {
    pub fn new(program: Value) -> RunSpec {
        RunSpec {
            program,
            program_text: None,
            input: None,
            context: None,
            language: None,
            max_drift_rounds: 3,
            idempotency_key: None,
            timeouts: Timeouts::default(),
        }
    }
}

fn fail(out: &mut dyn Reporter, stage: &str, error: impl ToString, advice: Option<String>) -> Exit {
    out.event(Event::Failed {
        stage,
        error: error.to_string(),
        advice,
    });
    Exit::Failure
}

/// Discovery and the choice of Language, and the program value to send:
/// the JSON value when a Language takes it, else the file's text as a
/// string when a Language takes strings.
async fn discover<S: PilotageServer>(
    server: &S,
    spec: &RunSpec,
) -> Result<(Discovery, Chosen, Value), (DiscoveryError, Option<String>)> {
    let d = discovery::discover(server, spec.timeouts)
        .await
        .map_err(|e| (e, None))?;
    let choose = |program: &Value| {
        discovery::choose(
            &d,
            spec.language.as_deref(),
            Needs {
                program,
                execute: true,
                context_given: spec.context.is_some(),
            },
        )
    };
    let first = match choose(&spec.program) {
        Ok(c) => return Ok((d, c, spec.program.clone())),
        Err(e) => e,
    };
    let Some(text) = spec.program_text.as_ref() else {
        return Err((first, None));
    };
    if !spec.program.is_string() {
        let as_text = Value::String(text.clone());
        if let Ok(c) = choose(&as_text) {
            return Ok((d, c, as_text));
        }
    }
    // Say why a JSON Language did not take it, when that is the reason.
    let advice = serde_json::from_str::<Value>(text).err().map(|e| {
        format!(
            "the program file is not JSON ({e}), and no language here takes its program as text"
        )
    });
    Err((first, advice))
}

/// Runs the loop; reports every step to `out` and returns the exit code
/// (also passed to `out.finish`).
pub async fn run<S: PilotageServer>(
    server: &S,
    cache: Option<&GuideCache>,
    spec: &RunSpec,
    approver: &mut dyn Approver,
    out: &mut dyn Reporter,
) -> Exit {
    let exit = run_inner(server, cache, spec, approver, out).await;
    out.finish(exit);
    exit
}

async fn run_inner<S: PilotageServer>(
    server: &S,
    cache: Option<&GuideCache>,
    spec: &RunSpec,
    approver: &mut dyn Approver,
    out: &mut dyn Reporter,
) -> Exit {
    // 1. discover
    let (found, mut chosen, program) = match discover(server, spec).await {
        Ok(v) => v,
        Err((e, advice)) => return fail(out, "discover", e, advice),
    };
    // From here on the program is the value the chosen Language takes.
    let spec = &RunSpec {
        program,
        ..spec.clone()
    };
    out.event(Event::Discovered {
        server: server.identity(),
        discovery: &found,
        chosen: &chosen,
    });

    // 2. learn: the core guide first (cached by server, language, version).
    match learn::core(server, cache, &chosen.language.name, spec.timeouts).await {
        Ok(Some(g)) => out.event(Event::Guide(&g)),
        Ok(None) => out.event(Event::NoCoreGuide {
            language: &chosen.language.name,
        }),
        Err(e) => return fail(out, "learn", e, None),
    }

    // A key is minted once per invocation: the runnable and input do not
    // change between drift rounds, and refused runs are never recorded for
    // replay (Part II §6.5.6), so reusing it across rounds is safe.
    // Only where `execute.idempotency` is declared: elsewhere the member
    // would be refused, and a retry would not be safe anyway.
    let key = if chosen.language.caps.idempotency {
        Some(spec.idempotency_key.clone().unwrap_or_else(new_key))
    } else {
        if spec.idempotency_key.is_some() {
            out.event(Event::Note(format!(
                "{} declares no execute.idempotency; the idempotency key is not sent",
                chosen.language.name
            )));
        }
        None
    };

    let mut round = 0u32;
    loop {
        round += 1;
        // A tool-list change means the map may have moved: rediscover first.
        if server.take_tools_changed() {
            out.event(Event::Note(
                "the server's tool list changed; discovering again".into(),
            ));
            match discover(server, spec).await {
                Ok((_, c, _)) => chosen = c,
                Err((e, advice)) => return fail(out, "discover", e, advice),
            }
        }

        // 5. validate
        let validation = match validate(server, spec, &chosen).await {
            Ok(v) => v,
            Err(e) => return fail(out, "validate", e, None),
        };
        let Some(valid) = validation.get("valid").and_then(Value::as_bool) else {
            return fail(out, "validate", "the answer has no boolean `valid`", None);
        };
        // The Host never executes while an error-severity diagnostic stands,
        // whatever `valid` says (Part II §7.2).
        let blocking = validation
            .get("diagnostics")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(is_error_severity));
        let valid = valid && !blocking;
        out.event(Event::Validated {
            round,
            answer: &validation,
            valid,
        });
        if !valid {
            return Exit::NotOk;
        }

        // 6. gate
        let assessment = assess(server, &chosen, &validation, spec.timeouts).await;
        out.event(Event::Risk {
            assessment: &assessment,
        });
        let approval = assessment.requires_approval().then(|| {
            approver.approve(&ApprovalRequest {
                language: &chosen.language.name,
                program: &spec.program,
                assessment: &assessment,
            })
        });
        out.event(Event::Gate {
            assessment: &assessment,
            approval: approval.as_ref(),
        });
        if let Some(Approval::Refused(_)) = approval {
            return Exit::Refused;
        }

        // 7. execute
        let Some(exec_tool) = chosen.execute.as_ref() else {
            return fail(
                out,
                "execute",
                "the language declares no execute tool",
                None,
            );
        };
        let arguments = execute_arguments(spec, &chosen, &validation, key.as_deref());
        out.event(Event::Executing {
            round,
            arguments: &arguments,
        });
        let answer = match call_structured(
            server,
            &exec_tool.name,
            arguments,
            spec.timeouts.execute,
        )
        .await
        {
            Ok(v) => v,
            Err(e) => {
                let advice = match (&e, &key) {
                    (CallError::Transport(_), Some(k)) => Some(format!(
                        "the run may or may not have started; the server supports idempotency, so `--idempotency-key {k}` replays it instead of running it twice"
                    )),
                    (CallError::Transport(_), None) => Some(
                        "the run may or may not have started and this server declares no idempotency: check the world before running it again".into(),
                    ),
                    _ => None,
                };
                return fail(out, "execute", e, advice);
            }
        };
        let Some(outcome) = answer.get("outcome").and_then(Outcome::parse) else {
            return fail(out, "execute", "the answer has no readable `outcome`", None);
        };
        out.event(Event::Executed {
            round,
            answer: &answer,
            outcome: &outcome,
        });
        match outcome.class {
            OutcomeClass::Success => return Exit::Success,
            OutcomeClass::CatalogDrift => {
                if round > spec.max_drift_rounds {
                    out.event(Event::DriftExhausted {
                        max: spec.max_drift_rounds,
                    });
                    return Exit::NotOk;
                }
                out.event(Event::Drift {
                    round,
                    max: spec.max_drift_rounds,
                });
                // The catalog moved: the map may have too (Part III §3.3).
                match discover(server, spec).await {
                    Ok((_, c, _)) => chosen = c,
                    Err((e, advice)) => return fail(out, "discover", e, advice),
                }
            }
            // Refusals and failed runs are answers for the author: report
            // them and stop, without retrying.
            OutcomeClass::ValidationError
            | OutcomeClass::PromotionDrift
            | OutcomeClass::Partial { .. }
            | OutcomeClass::Error => return Exit::NotOk,
        }
    }
}

async fn validate<S: PilotageServer>(
    server: &S,
    spec: &RunSpec,
    chosen: &Chosen,
) -> Result<Value, CallError> {
    let mut a = Map::new();
    a.insert(chosen.validate.argument.clone(), spec.program.clone());
    if let Some(c) = &spec.context {
        a.insert("context".into(), c.clone());
    }
    call_structured(server, &chosen.validate.name, a, spec.timeouts.call).await
}

/// The gate's risk picture for a valid program.
async fn assess<S: PilotageServer>(
    server: &S,
    chosen: &Chosen,
    validation: &Value,
    timeouts: Timeouts,
) -> Assessment {
    if let Some(plan) = validation.get("plan").filter(|p| p.is_object()) {
        return Assessment::from_plan(plan);
    }
    if chosen.language.caps.plan {
        return Assessment::nothing_known("plan is declared but the validation returned none");
    }
    // Without a plan: only the server's own `references` count, never a
    // list the Host or Model would infer from the program.
    let Some(refs) = validation.get("references").and_then(Value::as_array) else {
        return Assessment::nothing_known("no plan and no server-provided references");
    };
    if !chosen.language.caps.catalog {
        return Assessment::nothing_known("references given but the catalog is not declared");
    }
    if refs.len() > lookup::MAX_REFERENCES {
        return Assessment::nothing_known("too many references to look up");
    }
    let mut entries = Vec::new();
    for r in refs {
        let Some(id) = r.as_str() else {
            return Assessment::nothing_known("a reference is not a string");
        };
        let entry = lookup::get(server, &chosen.language.name, id, timeouts)
            .await
            .ok()
            .flatten();
        entries.push((id.to_string(), entry));
    }
    Assessment::from_references(&entries)
}

/// The execute request, built from the manifest, the tool's declared
/// members and the reserved-name table (Part III §4.4) only.
fn execute_arguments(
    spec: &RunSpec,
    chosen: &Chosen,
    validation: &Value,
    key: Option<&str>,
) -> Map<String, Value> {
    let mut a = Map::new();
    let Some(tool) = chosen.execute.as_ref() else {
        return a;
    };
    a.insert(tool.argument.clone(), spec.program.clone());
    if let Some(i) = &spec.input {
        a.insert("input".into(), i.clone());
    }
    if let Some(c) = &spec.context {
        a.insert("context".into(), c.clone());
    }
    // Every execute tool of a catalog-bearing language declares it; the
    // token from validation is what drift protection compares.
    if let Some(cv) = validation.get("catalog_version").and_then(Value::as_str) {
        a.insert("expected_catalog_version".into(), json!(cv));
    }
    if chosen.needs_mode() {
        a.insert("mode".into(), json!("immediate"));
    }
    if let Some(k) = key.filter(|_| tool.accepts("idempotency_key")) {
        a.insert("idempotency_key".into(), json!(k));
    }
    a
}

fn new_key() -> String {
    format!("pilotage-{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod text_programs;

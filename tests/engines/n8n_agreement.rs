//! validate = execute for `n8n/v1`, against a real n8n through the HTTP
//! endpoint: no program that validate calls valid is refused as invalid
//! (`validation_error`) by execute.
//!
//! The programs: every case of the mutation corpus
//! (`tests/n8n/mutations/cases.jsonl`, made by `scripts/n8n-mutate` with
//! n8n's recorded verdict), every workflow of the hand corpus
//! (`tests/n8n/corpus/`), and seeded random mutations of the valid ones
//! (a parameter dropped, retyped or invented, a version or a setting out of
//! range, a misspelled type). A program validate calls valid is executed
//! when a refusal is possible: always for a random mutation, for a corpus
//! case when n8n's record says it refused the workflow before running it,
//! and for every fifth of the others (the record still holds). A case
//! n8n was never run on because the record predicts it would not end is
//! executed too when validate passes it, bounded by the run deadline: it
//! must end before it (in success or a failure), or validate missed a loop
//! that does not end. The seeds of the random mutations are the hand
//! corpus's valid workflows and the mutation corpus's seeds
//! (`tests/n8n/mutations/seeds/`).
//! The tally (and what validate catches of what n8n refuses before running)
//! is printed; the test fails on any disagreement.

use crate::common::answers::status;
use crate::common::n8n_gateway::{N8nEnv, run, validate};
use crate::common::repo_path;
use serde_json::{Value, json};

/// Random mutations of the valid workflows.
const RANDOM_MUTATIONS: usize = 60;
/// Of the corpus cases validate passes and n8n's record says ran, every
/// this many is executed again.
const RECHECK_EVERY: usize = 5;

/// One program and what is known of it.
struct Case {
    id: String,
    program: Value,
    /// n8n's recorded verdict: refused before running (at create, at its
    /// start, or with issues) — `None` when not recorded.
    refused_before_running: Option<bool>,
    /// n8n was never run on it (it would not end).
    never_run: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn what_validate_calls_valid_execute_never_refuses_as_invalid() {
    let env = N8nEnv::start().await;
    let c = env.session(&env.a).await;
    let mut cases = mutation_corpus();
    cases.extend(hand_corpus());
    let mut seeds: Vec<Value> = cases
        .iter()
        .filter(|k| k.refused_before_running == Some(false) && k.id.starts_with("valid/"))
        .map(|k| k.program.clone())
        .collect();
    seeds.extend(mutation_seeds());
    cases.extend(random_mutations(&seeds));

    let mut tally = Tally::default();
    let mut ran_records = 0;
    for case in &cases {
        let verdict = validate(&c, &case.program).await;
        let valid = verdict.structured["valid"] == true;
        tally.validated += 1;
        if case.refused_before_running == Some(true) {
            tally.refused_by_n8n += 1;
            if !valid {
                tally.caught += 1;
            }
        }
        if !valid {
            continue;
        }
        tally.valid += 1;
        let execute = case.never_run
            || match case.refused_before_running {
                None | Some(true) => true,
                Some(false) => {
                    ran_records += 1;
                    ran_records % RECHECK_EVERY == 0
                }
            };
        if !execute {
            continue;
        }
        let answer = run(&c, &case.program, json!({"input": {}})).await;
        tally.executed += 1;
        if case.never_run && status(&answer) == "timeout" {
            // The record predicted no end and the run bore it out: stopped
            // at its deadline, so validate missed a loop that never ends.
            tally.disagreements.push(format!(
                "{}: valid at validate, and the run does not end well: {}",
                case.id, answer.structured["outcome"]
            ));
        }
        if status(&answer) == "validation_error" {
            tally.disagreements.push(format!(
                "{}: valid at validate, refused at execute: {}",
                case.id, answer.structured["outcome"]
            ));
        }
    }
    eprintln!(
        "validate = execute: {} programs validated ({} valid), {} executed, {} disagreements; \
         of {} that n8n refuses before running, validate refuses {}",
        tally.validated,
        tally.valid,
        tally.executed,
        tally.disagreements.len(),
        tally.refused_by_n8n,
        tally.caught
    );
    assert!(
        tally.disagreements.is_empty(),
        "validate and execute disagree:\n{}",
        tally.disagreements.join("\n")
    );
}

#[derive(Default)]
struct Tally {
    validated: usize,
    valid: usize,
    executed: usize,
    refused_by_n8n: usize,
    caught: usize,
    disagreements: Vec<String>,
}

/// Whether n8n's recorded run answer is a refusal before running: the run
/// refused (`refused 400 …`) or ended in `WorkflowHasIssuesError`, or the
/// create refused.
fn refused_before_running(create: &str, run: &str) -> bool {
    !create.starts_with("200")
        || run.starts_with("refused")
        || run.contains("WorkflowHasIssuesError")
}

/// The cases of `tests/n8n/mutations/cases.jsonl`.
fn mutation_corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(repo_path("tests/n8n/mutations/cases.jsonl"))
        .expect("tests/n8n/mutations/cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let case: Value = serde_json::from_str(line).expect("a case is JSON");
            let n8n = &case["n8n"];
            let create = n8n["create"].as_str().unwrap_or("");
            let run = n8n["run"].as_str().unwrap_or("");
            Case {
                id: format!("mutation/{}", case["id"].as_str().unwrap_or("?")),
                program: case["workflow"].clone(),
                refused_before_running: Some(refused_before_running(create, run)),
                never_run: n8n["caught"] == "not run",
            }
        })
        .collect()
}

/// The hand corpus: `tests/n8n/corpus/cases.toml` with its files.
fn hand_corpus() -> Vec<Case> {
    let folder = repo_path("tests/n8n/corpus");
    let text = std::fs::read_to_string(folder.join("cases.toml")).expect("cases.toml");
    let table: toml::Value = toml::from_str(&text).expect("cases.toml parses");
    let mut cases: Vec<Case> = table["case"]
        .as_array()
        .expect("[[case]]")
        .iter()
        .map(|case| {
            let file = case["file"].as_str().expect("file");
            let text = |key: &str| case.get(key).and_then(toml::Value::as_str).unwrap_or("");
            Case {
                id: file.trim_end_matches(".json").to_string(),
                program: read_json(&folder.join(file)),
                refused_before_running: Some(refused_before_running(
                    text("n8n_create"),
                    text("n8n_run"),
                )),
                never_run: case.get("run").and_then(toml::Value::as_bool) == Some(false),
            }
        })
        .collect();
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    cases
}

/// The valid workflows the mutation corpus was made from.
fn mutation_seeds() -> Vec<Value> {
    let folder = repo_path("tests/n8n/mutations/seeds");
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .expect("tests/n8n/mutations/seeds")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files.iter().map(|p| read_json(p)).collect()
}

fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Seeded mechanical mutations of `seeds`: each changes one thing of one
/// node or of the settings.
fn random_mutations(seeds: &[Value]) -> Vec<Case> {
    let mut rng = XorShift(0x5eed_1234_abcd_0042);
    let mut out = Vec::new();
    for i in 0..RANDOM_MUTATIONS {
        if seeds.is_empty() {
            break;
        }
        let mut program = seeds[rng.below(seeds.len())].clone();
        let what = mutate(&mut program, &mut rng);
        out.push(Case {
            id: format!("random/{i}: {what}"),
            program,
            refused_before_running: None,
            never_run: false,
        });
    }
    out
}

/// Applies one mutation; what it did.
fn mutate(program: &mut Value, rng: &mut XorShift) -> String {
    let count = program["nodes"].as_array().map_or(0, Vec::len);
    if count == 0 {
        program["settings"] = json!({"executionOrder": "v9"});
        return "settings.executionOrder v9".into();
    }
    let at = rng.below(count);
    let node = &mut program["nodes"][at];
    let keys: Vec<String> = node["parameters"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    match rng.below(6) {
        0 if !keys.is_empty() => {
            let key = &keys[rng.below(keys.len())];
            node["parameters"].as_object_mut().map(|p| p.remove(key));
            format!("/nodes/{at}: parameter {key} dropped")
        }
        1 if !keys.is_empty() => {
            let key = keys[rng.below(keys.len())].clone();
            let retyped = match &node["parameters"][&key] {
                Value::String(_) => json!(7),
                Value::Number(_) => json!("seven"),
                Value::Bool(_) => json!("yes"),
                Value::Object(_) => json!(["x"]),
                _ => json!({"x": 1}),
            };
            node["parameters"][&key] = retyped;
            format!("/nodes/{at}: parameter {key} retyped")
        }
        2 => {
            node["parameters"]["zzUnknown"] = json!(1);
            format!("/nodes/{at}: parameter zzUnknown added")
        }
        3 => {
            node["typeVersion"] = json!(99);
            format!("/nodes/{at}: typeVersion 99")
        }
        4 => {
            let t = node["type"].as_str().unwrap_or("").to_string();
            node["type"] = json!(format!("{t}x"));
            format!("/nodes/{at}: type {t}x")
        }
        _ => {
            program["settings"] = json!({"saveDataErrorExecution": "sometimes"});
            "settings.saveDataErrorExecution sometimes".into()
        }
    }
}

/// A small seeded generator: the same mutations on every run.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

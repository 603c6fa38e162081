//! Bad input searched for, not only listed: property tests (proptest, a
//! bounded number of cases each) over the JSON-RPC layer through the real
//! endpoint, the program walker with its bounds, and the classifier with
//! the shipped rule file.

use crate::common::TestEnv;
use pilotage_gateway::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use pilotage_gateway::config::language::Bounds;
use pilotage_gateway::guides::GuideSet;
use pilotage_gateway::languages::workflow_v1::{checks, program};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Arbitrary JSON, biased towards the shapes of programs (`steps`, `kind`,
/// `then`/`else`/`do` lists, ids) so the walker meets nesting it can follow.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-z#/ ]{0,12}".prop_map(Value::String),
        prop_oneof![Just("call"), Just("branch"), Just("for_each"), Just("set")]
            .prop_map(|k| Value::String(k.into())),
    ];
    leaf.prop_recursive(8, 256, 6, |inner| {
        let key = prop_oneof![
            Just("steps".to_string()),
            Just("id".to_string()),
            Just("kind".to_string()),
            Just("then".to_string()),
            Just("else".to_string()),
            Just("do".to_string()),
            Just("capability".to_string()),
            "[a-z]{1,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the value: the bounds answer without panicking; a program
    /// within them walks to exactly the steps it measured, every pointer
    /// resolves to its step, and the walk holds no more id text than the
    /// program itself (enclosing ids are shared, not copied).
    #[test]
    fn the_walker_is_total_and_proportional(value in json_value()) {
        let bounds = Bounds::default();
        let program = json!({"steps": value});
        if checks::bounds(&program, &bounds).is_ok() {
            let steps = program::steps(&program);
            prop_assert_eq!(steps.len(), program::shape(&program).steps);
            let mut own_text = 0;
            for s in &steps {
                let found = program.pointer(&s.pointer);
                prop_assert!(found.is_some(), "pointer {} resolves", s.pointer);
                let found_id = found.and_then(|f| f.get("id")).and_then(Value::as_str);
                prop_assert_eq!(found_id, s.id.as_deref());
                prop_assert!(s.ancestors.len() <= bounds.max_depth);
                own_text += s.id.as_ref().map_or(0, String::len)
                    + s.capability.as_ref().map_or(0, String::len);
            }
            prop_assert!(own_text <= program.to_string().len());
        }
    }

    /// Programs over a bound are refused by it, whichever bound it is.
    #[test]
    fn every_bound_refuses_what_exceeds_it(steps in 1usize..40, id_len in 1usize..40) {
        let bounds = Bounds { max_depth: 32, max_steps: 20, max_program_bytes: 4096, max_id_bytes: 20 };
        let list: Vec<Value> = (0..steps)
            .map(|i| json!({"id": format!("{i}{}", "x".repeat(id_len)), "kind": "set", "value": 1}))
            .collect();
        let program = json!({"steps": list});
        let shape = program::shape(&program);
        let over = shape.steps > bounds.max_steps
            || shape.longest_id > bounds.max_id_bytes
            || program.to_string().len() > bounds.max_program_bytes;
        let answer = checks::bounds(&program, &bounds);
        prop_assert_eq!(answer.is_err(), over);
        if let Err(e) = answer {
            prop_assert_eq!(e.kind.as_str(), "bounds_exceeded");
        }
    }
}

/// The shipped workflow/v1 rule table, with the closed-sets guide's codes.
fn rules() -> &'static (RuleTable, std::collections::BTreeSet<String>) {
    static RULES: OnceLock<(RuleTable, std::collections::BTreeSet<String>)> = OnceLock::new();
    RULES.get_or_init(|| {
        let guides = GuideSet::load(
            &crate::common::repo_path("guides/workflow-v1"),
            "workflow/v1",
            "",
        )
        .expect("guides load");
        let codes = guides.diagnostic_codes();
        let table = RuleTable::load(
            &crate::common::repo_path("classifiers/workflow-v1.toml"),
            &codes,
        )
        .expect("rules load");
        (table, codes)
    })
}

/// Engine-like messages: fragments of real message shapes, mixed with noise.
fn engine_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("step '".to_string()),
        Just("': ".to_string()),
        Just("unknown capability '".to_string()),
        Just("missing parameter '".to_string()),
        Just("' is not enabled for tenant ".to_string()),
        Just("did you mean ".to_string()),
        Just("duplicate step id '".to_string()),
        Just("expected integer, got string".to_string()),
        "[a-z_.]{0,10}",
        "\\PC{0,12}",
    ];
    prop::collection::vec(fragment, 0..8).prop_map(|parts| parts.concat())
}

fn engine_where() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        "steps\\[[0-9]{1,3}\\](\\.(then|else|do)\\[[0-9]{1,2}\\]){0,3}(\\.with\\.[a-z_]{1,8})?",
        "\\PC{0,16}",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any message and location: one diagnostic with a closed code, a JSON
    /// Pointer (or ""), and hints that name only visible entries.
    #[test]
    fn the_classifier_is_total_over_engine_messages(
        text in engine_text(),
        location in engine_where(),
        error in any::<bool>(),
    ) {
        let (table, codes) = rules();
        let pointers: HashMap<String, String> =
            [("a".to_string(), "/steps/0".to_string())].into_iter().collect();
        let visible = vec!["crm.find_customer".to_string(), "util.echo".to_string()];
        let ctx = ClassifyContext { step_pointers: &pointers, visible_names: &visible };
        let problem = EngineProblem {
            level: if error { Severity::Error } else { Severity::Warning },
            text: text.clone(),
            location,
        };
        let d = table.classify(&problem, &ctx).diagnostic;
        prop_assert!(codes.contains(&d.code) || d.code == "constraint", "code {}", d.code);
        prop_assert!(d.path.is_empty() || d.path.starts_with('/'), "path {:?}", d.path);
        if let Some(hint) = &d.hint {
            prop_assert!(!hint.contains("crm.find_custmer_global"), "{hint}");
        }
    }
}

/// Bodies near JSON-RPC: valid requests with a member mutated, dropped or
/// replaced, truncated texts and plain noise.
fn rpc_body() -> impl Strategy<Value = String> {
    let method = prop_oneof![
        Just("tools/call"),
        Just("tools/list"),
        Just("initialize"),
        Just("ping"),
        Just("nope/x"),
    ];
    let tool = prop_oneof![
        Just("validate_workflow".to_string()),
        Just("run_workflow".to_string()),
        Just("trace_workflow".to_string()),
        Just("pilotage_catalog".to_string()),
        Just("pilotage_get_guide".to_string()),
        Just("pilotage_manifest".to_string()),
        "[a-z_]{0,10}",
    ];
    let shaped = (method, tool, json_value(), json_value(), any::<u8>()).prop_map(
        |(method, tool, args, id, cut)| {
            let id = if id.is_object() || id.is_array() {
                Value::from(7)
            } else {
                id
            };
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method,
                "params": {"name": tool, "arguments": args}});
            let text = body.to_string();
            // Sometimes a truncated body: a parse error, not a crash.
            if cut % 5 == 0 {
                let at = text.len() * usize::from(cut) / 256;
                let mut at = at.min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text[..at].to_string()
            } else {
                text
            }
        },
    );
    prop_oneof![
        4 => shaped,
        1 => json_value().prop_map(|v| v.to_string()),
        1 => "\\PC{0,64}",
    ]
}

/// Whatever is posted: never a 5xx, always a JSON body, and a failure
/// is a JSON-RPC error object (or a tool result) — never plain text. One
/// gateway and engine serve every case and are stopped at the end.
#[test]
fn the_endpoint_answers_every_body_the_json_rpc_way() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let env = rt.block_on(TestEnv::start());
    let client = env.client(crate::common::ACME_OPS);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    });
    let outcome = runner.run(&rpc_body(), |body| {
        let (status, _, value) = rt.block_on(client.raw(&body));
        prop_assert!(status < 500, "HTTP {status} for {body}");
        if status == 202 {
            // A notification (no id) is accepted without an answer body.
            return Ok(());
        }
        prop_assert!(!value.is_null(), "HTTP {status}: no JSON body for {body}");
        let answers = match &value {
            Value::Array(batch) => batch.clone(),
            one => vec![one.clone()],
        };
        for answer in answers {
            prop_assert!(
                answer.get("result").is_some() || answer["error"]["code"].is_i64(),
                "neither result nor error: {answer} for {body}"
            );
        }
        Ok(())
    });
    drop(client);
    drop(env);
    drop(rt);
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

/// Numeric settings a deployment may hold, each within what start-up
/// accepts (the range checks of `check-config`).
#[derive(Debug, Clone)]
struct Settings {
    page_limit: usize,
    limit_asked: u64,
    max_depth: usize,
    max_steps: usize,
    max_program_bytes: usize,
    max_id_bytes: usize,
    timeout_ms: u64,
    run_deadline_ms: u64,
    retries: u32,
    retry_backoff_ms: u64,
    max_body_bytes: usize,
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        (
            prop_oneof![Just(1usize), Just(1000), 1usize..20],
            prop_oneof![Just(0u64), Just(1), Just(u64::MAX), 0u64..2000],
            prop_oneof![Just(1usize), Just(99), 1usize..100],
            prop_oneof![Just(1usize), Just(100_000), 1usize..50],
            prop_oneof![Just(1usize), 1usize..4096, Just(64 << 20)],
            prop_oneof![Just(1usize), Just(4096), 1usize..64],
        ),
        (
            prop_oneof![Just(1u64), 1u64..5000],
            prop_oneof![Just(1u64), 1u64..20_000],
            0u32..=10,
            prop_oneof![Just(0u64), 0u64..200],
            prop_oneof![Just(1024usize), 1024usize..(1 << 20)],
        ),
    )
        .prop_map(|((p, l, d, s, b, i), (t, r, n, k, m))| Settings {
            page_limit: p,
            limit_asked: l,
            max_depth: d,
            max_steps: s,
            max_program_bytes: b,
            max_id_bytes: i,
            timeout_ms: t,
            run_deadline_ms: r,
            retries: n,
            retry_backoff_ms: k,
            max_body_bytes: m,
        })
}

/// Whatever the settings that pass the start-up checks: each tool answers
/// once over HTTP, within a bound, and never with the answer of a panic.
/// One engine serves every case.
#[test]
fn no_accepted_setting_makes_a_request_panic_or_hang() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let engine = crate::common::Engine::spawn(&[]);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 12,
        ..ProptestConfig::default()
    });
    let outcome = runner.run(&settings(), |s| {
        let url = engine.url.clone();
        let case = s.clone();
        rt.block_on(async move {
            let env = TestEnv::in_front_of(
                crate::common::Engine::external(url),
                "tests/fixtures/features.toml",
                |cfg| {
                    for lang in &mut cfg.languages {
                        lang.catalog_page_limit = case.page_limit;
                        lang.bounds.max_depth = case.max_depth;
                        lang.bounds.max_steps = case.max_steps;
                        lang.bounds.max_program_bytes = case.max_program_bytes;
                        lang.bounds.max_id_bytes = case.max_id_bytes;
                    }
                    cfg.engine.timeout_ms = case.timeout_ms;
                    cfg.engine.run_deadline_ms = case.run_deadline_ms;
                    cfg.engine.retries = case.retries;
                    cfg.engine.retry_backoff_ms = case.retry_backoff_ms;
                    cfg.server.max_body_bytes = case.max_body_bytes;
                },
            )
            .await;
            let c = env.client(crate::common::ACME_OPS);
            let program = crate::common::valid_program();
            let calls = [
                ("pilotage_manifest", json!({})),
                ("pilotage_get_guide", json!({"language": "workflow/v1"})),
                (
                    "pilotage_catalog",
                    json!({"language": "workflow/v1", "verb": "list", "limit": case.limit_asked}),
                ),
                ("validate_workflow", json!({"workflow": program})),
                (
                    "run_workflow",
                    json!({"workflow": program, "mode": "immediate", "input": {"id": "cus_1"}, "store": true}),
                ),
                ("trace_workflow", json!({"run_id": "run_unknown"})),
            ];
            for (tool, args) in calls {
                let answer = tokio::time::timeout(
                    std::time::Duration::from_secs(30),
                    c.rpc("tools/call", json!({"name": tool, "arguments": args})),
                )
                .await;
                let Ok(answer) = answer else {
                    return Err(TestCaseError::fail(format!("{tool} hung with {s:?}")));
                };
                let body = answer.to_string();
                prop_assert!(
                    answer.get("result").is_some() || answer["error"]["code"].is_i64(),
                    "{tool}: no JSON-RPC answer with {s:?}: {body}"
                );
                prop_assert!(
                    !body.contains("failed while answering this call"),
                    "{tool} panicked with {s:?}: {body}"
                );
            }
            Ok(())
        })
    });
    drop(engine);
    drop(rt);
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

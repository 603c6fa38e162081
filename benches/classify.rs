//! Micro benchmark of classification: 10,000 engine messages through a
//! 50-rule table.
//!
//! The table is the shipped `classifiers/workflow-v1.toml` (24 rules, with
//! their inline examples, which load-time self-tests still run) followed by
//! 26 generated rules in the same style (a step id and a name captured, an
//! authored message, a step locator), standing in for the rules a larger
//! engine's message set needs. The messages mix the shipped rules' example
//! messages (60%), messages of the generated rules (30%) and messages no
//! rule matches (10%, they fall to `constraint`), in a fixed pseudo-random
//! order, classified with one caller's context (11 visible capabilities).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pilotage_gateway::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
use pilotage_gateway::guides::GuideSet;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

const SHIPPED: &str = include_str!("../classifiers/workflow-v1.toml");
const MESSAGES: usize = 10_000;
const GENERATED_RULES: usize = 26;

/// Phrases of the generated rules: one engine message shape each.
const PHRASES: [&str; GENERATED_RULES] = [
    "argument schema drift for",
    "retired parameter alias",
    "rate class not allowed for",
    "payload exceeds the per-call limit of",
    "secret reference not resolvable in",
    "region pinning violated by",
    "idempotency token required by",
    "approval policy blocks",
    "currency not supported by",
    "time zone ambiguity in",
    "locale fallback used for",
    "batch size out of range for",
    "retry policy invalid for",
    "callback url not allowed for",
    "field mask unknown in",
    "sort key not indexed in",
    "page size above maximum in",
    "filter operator unsupported by",
    "attachment type refused by",
    "template variable missing in",
    "webhook signature scheme unknown for",
    "quota class exhausted for",
    "audit tag required by",
    "data residency conflict in",
    "encryption profile missing for",
    "schema version too old for",
];

/// Codes the generated rules use, cycled.
const CODES: [&str; 4] = [
    "constraint",
    "invalid_structure",
    "type_mismatch",
    "unexpected_parameter",
];

/// The shipped rules plus the generated ones, as one rule file.
fn rule_file() -> String {
    let mut text = SHIPPED.to_string();
    for (k, phrase) in PHRASES.iter().enumerate() {
        let code = CODES[k % CODES.len()];
        let _ = write!(
            text,
            r#"
[[rule]]
name = "generated-{k:02}"
pattern = '''^step '(?P<step>.*?)': {phrase} '(?P<name>.*?)'(?: \(E{code_no}\))?$'''
code = "{code}"
path = ["step:step", "location"]
message = "step '{{step}}': {phrase} '{{name}}'"

[[rule.example]]
message = "step 'a': {phrase} 'x.y' (E{code_no})"
steps = {{ a = "/steps/0" }}
code = "{code}"
path = "/steps/0"
expect_message = "step 'a': {phrase} 'x.y'"
"#,
            code_no = 7000 + k
        );
    }
    text
}

/// A small deterministic generator (no dependency for randomness).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % bound
    }
}

/// The engine problems of the shipped rules' inline examples.
fn example_problems() -> Vec<EngineProblem> {
    let file: toml::Value = toml::from_str(SHIPPED).expect("the shipped rules parse");
    let mut out = Vec::new();
    for rule in file["rule"].as_array().expect("rules") {
        for ex in rule
            .get("example")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
        {
            let level = ex
                .get("level")
                .and_then(toml::Value::as_str)
                .and_then(Severity::from_engine_level)
                .unwrap_or(Severity::Error);
            out.push(EngineProblem {
                level,
                text: ex["message"].as_str().expect("message").to_string(),
                location: ex
                    .get("location")
                    .and_then(toml::Value::as_str)
                    .map(str::to_string),
            });
        }
    }
    out
}

fn messages(step_ids: &[String]) -> Vec<EngineProblem> {
    let examples = example_problems();
    let mut rng = Lcg(42);
    (0..MESSAGES)
        .map(|_| match rng.next(10) {
            0..=5 => examples[rng.next(examples.len())].clone(),
            6..=8 => {
                let k = rng.next(GENERATED_RULES);
                EngineProblem {
                    level: Severity::Error,
                    text: format!(
                        "step '{}': {} 'svc{}.op_{}' (E{})",
                        step_ids[rng.next(step_ids.len())],
                        PHRASES[k],
                        rng.next(9),
                        rng.next(100),
                        7000 + k
                    ),
                    location: None,
                }
            }
            _ => EngineProblem {
                level: Severity::Error,
                text: format!(
                    "E_LIMIT_{:04}: step budget exhausted ({}/200)",
                    rng.next(100),
                    200 + rng.next(50)
                ),
                location: None,
            },
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let guides = GuideSet::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("guides/workflow-v1"),
        "workflow/v1",
        "",
    )
    .expect("guides");
    let table = RuleTable::parse(
        &rule_file(),
        Path::new("workflow-v1.bench.toml"),
        &guides.diagnostic_codes(),
    )
    .expect("the 50-rule table loads and its examples pass");
    assert_eq!(table.len(), 50);
    let step_ids: Vec<String> = (0..40).map(|i| format!("step_{i}")).collect();
    let mut pointers: HashMap<String, String> = step_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.clone(), format!("/steps/{i}")))
        .collect();
    for (i, id) in ["a", "b", "c", "x", "loop", "l", "get", "find"]
        .iter()
        .enumerate()
    {
        pointers.insert((*id).to_string(), format!("/steps/{}/then/{i}", i + 40));
    }
    let visible: Vec<String> = [
        "billing.create_invoice",
        "billing.list_invoices",
        "crm.delete_customer",
        "crm.find_customer",
        "crm.get_customer",
        "crm.set_tier",
        "crm.update_tier",
        "mail.send",
        "util.echo",
        "util.fail",
        "util.sleep",
    ]
    .map(String::from)
    .to_vec();
    let ctx = ClassifyContext {
        step_pointers: &pointers,
        visible_names: &visible,
    };
    let problems = messages(&step_ids);
    let unmatched = problems
        .iter()
        .filter(|p| table.classify(p, &ctx).rule.is_none())
        .count();
    // Only the generated E_LIMIT messages may fall through.
    assert!((800..=1200).contains(&unmatched), "{unmatched} unmatched");

    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(MESSAGES as u64));
    group.sample_size(30);
    group.bench_function("10000_messages_50_rules", |b| {
        b.iter(|| {
            for p in &problems {
                black_box(table.classify(p, &ctx));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Tests of the guide loader, and of the shipped workflow/v1 guides themselves:
//! the guides are part of the product, so their structural promises (sizes,
//! topics, the closed code set, runnable examples) are checked like code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::*;

const LANGUAGE: &str = "workflow/v1";

fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("guides/workflow-v1")
}

fn shipped() -> GuideSet {
    GuideSet::load(&shipped_dir(), LANGUAGE, "").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn shipped_guides_load_with_every_index_field() {
    let set = shipped();
    assert_eq!(set.language(), LANGUAGE);
    let index = set.index();
    assert!(
        index.len() >= 8,
        "expected the eight guides, got {}",
        index.len()
    );
    for entry in &index {
        for field in [
            "id",
            "title",
            "level",
            "topics",
            "language",
            "version",
            "size_bytes",
            "tokens_estimate",
            "format",
        ] {
            assert!(entry.get(field).is_some(), "{field} missing in {entry}");
        }
        assert!(
            entry.get("body").is_none(),
            "the index form carries no body"
        );
        assert_eq!(entry["language"], LANGUAGE);
        let id = entry["id"].as_str().unwrap();
        let fetched = set.fetch(id).unwrap();
        let body = fetched["body"].as_str().unwrap();
        assert_eq!(
            entry["size_bytes"],
            body.len(),
            "{id}: size_bytes is the body's UTF-8 length"
        );
        assert!(!body.contains("{{guide:"), "{id}: unexpanded reference");
        assert!(
            !body.starts_with("---"),
            "{id}: front matter leaked into the body"
        );
    }
    assert_eq!(
        index[0]["level"], "core",
        "core guides come first in the index"
    );
    assert!(set.fetch("no-such-guide").is_none());
}

#[test]
fn exactly_one_closed_sets_guide_at_level_reference() {
    let index = shipped().index();
    let closed: Vec<_> = index
        .iter()
        .filter(|g| {
            g["topics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == CLOSED_SETS_TOPIC)
        })
        .collect();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["level"], "reference");
}

#[test]
fn core_guide_is_under_the_size_recommendation() {
    let index = shipped().index();
    let cores: Vec<_> = index.iter().filter(|g| g["level"] == "core").collect();
    assert!(!cores.is_empty());
    for core in cores {
        let size = core["size_bytes"].as_u64().unwrap() as usize;
        assert!(size < CORE_SIZE_LIMIT, "{} is {size} bytes", core["id"]);
    }
}

#[test]
fn every_topic_resolves_to_its_own_section() {
    let set = shipped();
    for entry in set.index() {
        let id = entry["id"].as_str().unwrap();
        for topic in entry["topics"].as_array().unwrap() {
            let topic = topic.as_str().unwrap();
            let served = set.fetch_topic(id, topic).unwrap();
            let body = served["body"].as_str().unwrap();
            let first = body.lines().next().unwrap();
            assert!(
                first.starts_with("## ") && first.ends_with(&format!("{{#{topic}}}")),
                "{id}/{topic}: {first}"
            );
            assert_eq!(
                body.matches("\n## ").count(),
                0,
                "{id}/{topic}: one section only"
            );
            assert_eq!(served["size_bytes"], body.len());
            assert_eq!(served["topic"], topic);
            assert_eq!(served["version"], entry["version"]);
        }
    }
}

#[test]
fn unknown_guide_and_unknown_topic_are_distinguished() {
    let set = shipped();
    match set.fetch_topic("nope", "scope") {
        Err(TopicError::UnknownGuide { valid, .. }) => assert_eq!(valid, set.ids()),
        other => panic!("{other:?}"),
    }
    match set.fetch_topic("control-flow", "nope") {
        Err(TopicError::UnknownTopic { valid, .. }) => {
            assert!(valid.contains(&"scope".to_string()))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn diagnostic_codes_are_exactly_the_declared_set() {
    let expected: BTreeSet<String> = [
        "unknown_capability",
        "missing_parameter",
        "type_mismatch",
        "unexpected_parameter",
        "duplicate_id",
        "missing_id",
        "reserved_character",
        "unknown_kind",
        "malformed_expression",
        "unresolved_reference",
        "invalid_structure",
        "deprecated_capability",
        "unused_output",
        "risk_ceiling",
        "constraint",
        "input_binding",
        "context_binding",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(shipped().diagnostic_codes(), expected);
}

#[test]
fn prefix_applies_to_ids_examples_and_cross_references() {
    let set = GuideSet::load(&shipped_dir(), LANGUAGE, "wf1-").unwrap();
    assert!(set.ids().iter().all(|id| id.starts_with("wf1-")));
    let core = set.fetch("wf1-core").unwrap();
    assert!(core["body"].as_str().unwrap().contains("`wf1-closed-sets`"));
    assert!(
        set.examples()
            .iter()
            .all(|e| e.guide_id.starts_with("wf1-"))
    );
    assert_eq!(set.diagnostic_codes(), shipped().diagnostic_codes());
}

#[test]
fn versions_carry_the_body_hash() {
    for entry in shipped().index() {
        let version = entry["version"].as_str().unwrap();
        let (manual, hash) = version.rsplit_once('-').unwrap();
        assert!(!manual.is_empty());
        assert!(
            hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()),
            "{version}"
        );
    }
}

// ---- the shipped examples -------------------------------------------------

#[test]
fn examples_are_workflow_objects_with_steps() {
    let examples = shipped().examples();
    assert!(
        examples.iter().any(|e| e.guide_id == "core"),
        "the core guide has its example"
    );
    let in_examples = examples.iter().filter(|e| e.guide_id == "examples").count();
    assert!(
        (3..=5).contains(&in_examples),
        "examples guide has {in_examples}"
    );
    for example in &examples {
        let steps = example.workflow.get("steps").and_then(Value::as_array);
        assert!(
            steps.is_some_and(|s| !s.is_empty()),
            "{}#{}",
            example.guide_id,
            example.index
        );
        if let Some(input) = &example.input {
            assert!(
                input.is_object(),
                "{}#{}: input must be an object",
                example.guide_id,
                example.index
            );
        }
    }
}

/// Parameters of the capabilities the examples may call: (required, optional,
/// read-only). Deprecated and other tenants' names are deliberately absent.
fn capabilities() -> BTreeMap<&'static str, (&'static [&'static str], &'static [&'static str], bool)>
{
    BTreeMap::from([
        ("crm.find_customer", (&["query"][..], &[][..], true)),
        ("crm.get_customer", (&["id"][..], &[][..], true)),
        ("crm.set_tier", (&["id", "tier"][..], &[][..], false)),
        (
            "billing.create_invoice",
            (&["customer_id", "amount_cents"][..], &["memo"][..], false),
        ),
        (
            "billing.list_invoices",
            (&[][..], &["customer_id"][..], true),
        ),
        ("util.echo", (&["value"][..], &[][..], true)),
        ("util.sleep", (&["ms"][..], &[][..], true)),
    ])
}

/// A static check of the language rules an example could break: kinds, ids,
/// parameters, literal types, scope, declared input fields and unused reads.
/// It mirrors the closed-sets guide, so a guide example and the guide's rules
/// cannot silently disagree; the engine's validator remains the final word.
struct Lint<'a> {
    problems: Vec<String>,
    ids: BTreeSet<String>,
    reads: BTreeSet<String>,
    read_calls: Vec<String>,
    inputs: Option<BTreeSet<String>>,
    caps: &'a BTreeMap<&'static str, (&'static [&'static str], &'static [&'static str], bool)>,
}

impl Lint<'_> {
    fn steps(&mut self, steps: &[Value], visible: &mut Vec<String>, loops: &[String]) {
        for step in steps {
            let id = step["id"].as_str().unwrap_or_default().to_string();
            if id.is_empty() || id.contains(['#', '/']) || !self.ids.insert(id.clone()) {
                self.problems.push(format!("bad or duplicate id `{id}`"));
            }
            let exprs = |v: &Value| collect_exprs(v);
            match step["kind"].as_str() {
                Some("call") => {
                    let name = step["capability"].as_str().unwrap_or_default();
                    let with = step["with"].as_object().cloned().unwrap_or_default();
                    match self.caps.get(name) {
                        None => self.problems.push(format!("{id}: capability `{name}`")),
                        Some((required, optional, read)) => {
                            for p in *required {
                                if !with.contains_key(*p) {
                                    self.problems.push(format!("{id}: missing `{p}`"));
                                }
                            }
                            for p in with.keys() {
                                if !required.contains(&p.as_str())
                                    && !optional.contains(&p.as_str())
                                {
                                    self.problems.push(format!("{id}: unexpected `{p}`"));
                                }
                            }
                            if *read {
                                self.read_calls.push(id.clone());
                            }
                        }
                    }
                    if let Some(tier) = with.get("tier").and_then(Value::as_str)
                        && !tier.starts_with("$.")
                        && !["bronze", "silver", "gold"].contains(&tier)
                    {
                        self.problems.push(format!("{id}: tier `{tier}`"));
                    }
                    if with.get("amount_cents").is_some_and(|a| {
                        !(a.is_i64() || a.as_str().is_some_and(|s| s.starts_with("$.")))
                    }) {
                        self.problems
                            .push(format!("{id}: amount_cents must be an integer"));
                    }
                    self.check(&id, exprs(&step["with"]), visible, loops);
                }
                Some("set") => self.check(&id, exprs(&step["value"]), visible, loops),
                Some("branch") => {
                    self.check(&id, exprs(&step["when"]), visible, loops);
                    let mut added = Vec::new();
                    for arm in ["then", "else"] {
                        let mut arm_visible = visible.clone();
                        let before = arm_visible.len();
                        self.steps(
                            step[arm].as_array().map_or(&[][..], |a| a),
                            &mut arm_visible,
                            loops,
                        );
                        added.extend(arm_visible.drain(before..));
                    }
                    if step["then"].as_array().is_none_or(|a| a.is_empty()) {
                        self.problems.push(format!("{id}: empty then"));
                    }
                    // Scope rule 2: arms are transparent to what follows the branch.
                    visible.extend(added);
                }
                Some("for_each") => {
                    self.check(&id, exprs(&step["items"]), visible, loops);
                    let mut inner = loops.to_vec();
                    inner.push(step["as"].as_str().unwrap_or_default().to_string());
                    // Scope rule 3: the body is closed; nothing leaks out.
                    let mut body_visible = visible.clone();
                    self.steps(
                        step["do"].as_array().map_or(&[][..], |a| a),
                        &mut body_visible,
                        &inner,
                    );
                }
                other => self.problems.push(format!("{id}: kind {other:?}")),
            }
            visible.push(id);
        }
    }

    fn check(&mut self, id: &str, exprs: Vec<String>, visible: &[String], loops: &[String]) {
        for expr in exprs {
            let parts: Vec<&str> = expr.split('.').collect();
            let ok = match parts.get(1).copied() {
                Some("input") => match (&self.inputs, parts.get(2)) {
                    (Some(declared), Some(field)) => declared.contains(*field),
                    _ => true,
                },
                Some("steps") => {
                    let target = parts.get(2).copied().unwrap_or_default();
                    self.reads.insert(target.to_string());
                    visible.iter().any(|v| v == target) && parts.get(3) == Some(&"output")
                }
                Some("item") => !loops.is_empty(),
                Some("vars") => parts.get(2).is_some_and(|v| loops.iter().any(|l| l == v)),
                _ => false,
            };
            if !ok {
                self.problems.push(format!("{id}: unresolved `{expr}`"));
            }
        }
    }
}

fn collect_exprs(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) if s.starts_with("$.") => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(collect_exprs).collect(),
        Value::Object(map) => map.values().flat_map(collect_exprs).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn examples_follow_the_language_rules_for_the_documented_capabilities() {
    let caps = capabilities();
    for example in shipped().examples() {
        let wf = &example.workflow;
        let inputs = wf["input"]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect::<BTreeSet<_>>());
        let mut lint = Lint {
            problems: Vec::new(),
            ids: BTreeSet::new(),
            reads: BTreeSet::new(),
            read_calls: Vec::new(),
            inputs,
            caps: &caps,
        };
        let mut visible = Vec::new();
        lint.steps(wf["steps"].as_array().unwrap(), &mut visible, &[]);
        lint.check("output", collect_exprs(&wf["output"]), &visible, &[]);
        for read in lint.read_calls.clone() {
            if !lint.reads.contains(&read) {
                lint.problems.push(format!("{read}: output never used"));
            }
        }
        if let (Some(schema), Some(input)) = (wf.get("input"), &example.input) {
            for field in schema["required"].as_array().into_iter().flatten() {
                if input.get(field.as_str().unwrap()).is_none() {
                    lint.problems.push(format!("sample input lacks {field}"));
                }
            }
        }
        assert!(
            lint.problems.is_empty(),
            "{}#{}: {:?}",
            example.guide_id,
            example.index,
            lint.problems
        );
    }
}

// ---- loader errors on temporary directories -------------------------------

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn with(files: &[(&str, &str)]) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("guides-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CORE: &str = "---\nid: core\ntitle: Core\nlevel: core\ntopics: [intro]\nversion: 1\n---\n# Core\n\n## Intro {#intro}\n\nSee `{{guide:sets#closed-sets}}`.\n";
const SETS: &str = "---\nid: sets\ntitle: Sets\nlevel: reference\ntopics:\n  - closed-sets\nversion: 2\n---\n# Sets\n\n## All {#closed-sets}\n\nText.\n\n## Diagnostic codes\n\n| code | severity |\n|---|---|\n| `constraint` | error |\n| `input_binding` | error |\n| `context_binding` | error |\n";

fn load(files: &[(&str, &str)]) -> Result<GuideSet, GuideError> {
    let dir = TempDir::with(files);
    GuideSet::load(&dir.0, LANGUAGE, "")
}

fn error(files: &[(&str, &str)]) -> GuideError {
    load(files).expect_err("the guides should be refused")
}

#[test]
fn a_minimal_set_loads() {
    let set = load(&[("core.md", CORE), ("sets.md", SETS)]).unwrap();
    assert_eq!(set.ids(), ["core", "sets"]);
    assert_eq!(set.diagnostic_codes().len(), 3);
    let core = set.fetch("core").unwrap();
    assert!(core["body"].as_str().unwrap().contains("See `sets`."));
    assert!(core["version"].as_str().unwrap().starts_with("1-"));
}

#[test]
fn missing_key_names_file_line_and_fix() {
    let err = error(&[
        ("core.md", &CORE.replace("version: 1\n", "")),
        ("sets.md", SETS),
    ]);
    assert!(err.file.ends_with("core.md"));
    assert_eq!(err.kind, ErrorKind::MissingKey("version"));
    assert_eq!(err.line, 6, "the closing `---` line");
    let text = err.to_string();
    assert!(
        text.contains("core.md:6") && text.contains("fix: add `version: <value>`"),
        "{text}"
    );
}

#[test]
fn language_in_front_matter_is_refused_with_the_reason() {
    let err = error(&[
        (
            "core.md",
            &CORE.replace("level: core\n", "level: core\nlanguage: workflow/v1\n"),
        ),
        ("sets.md", SETS),
    ]);
    assert_eq!(err.kind, ErrorKind::UnknownKey("language".into()));
    assert!(
        err.to_string()
            .contains("comes from the gateway configuration")
    );
}

#[test]
fn duplicate_id_names_both_files() {
    let err = error(&[("a.md", CORE), ("b.md", CORE), ("sets.md", SETS)]);
    assert!(err.file.ends_with("b.md"));
    match &err.kind {
        ErrorKind::DuplicateId { id, other } => assert!(id == "core" && other.ends_with("a.md")),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains("give one of the two guides another `id`")
    );
}

#[test]
fn no_core_guide_is_refused() {
    let err = error(&[
        ("core.md", &CORE.replace("level: core", "level: reference")),
        ("sets.md", SETS),
    ]);
    assert_eq!(err.kind, ErrorKind::NoCoreGuide);
    assert!(
        err.to_string()
            .contains("fix: add a guide with `level: core`")
    );
}

#[test]
fn closed_sets_must_be_exactly_one_reference_guide() {
    let err = error(&[("core.md", CORE)]);
    assert_eq!(err.kind, ErrorKind::ClosedSetsCount(vec![]));
    let twice = SETS.replace("id: sets", "id: sets2");
    let err = error(&[("core.md", CORE), ("sets.md", SETS), ("sets2.md", &twice)]);
    assert!(matches!(err.kind, ErrorKind::ClosedSetsCount(ref ids) if ids.len() == 2));
    let err = error(&[
        ("core.md", CORE),
        (
            "sets.md",
            &SETS.replace("level: reference", "level: examples"),
        ),
    ]);
    assert_eq!(
        err.kind,
        ErrorKind::ClosedSetsNotReference("examples".into())
    );
    assert_eq!(err.line, 4);
}

#[test]
fn topics_and_sections_must_match() {
    let missing = CORE.replace("## Intro {#intro}", "## Intro");
    let err = error(&[("core.md", &missing), ("sets.md", SETS)]);
    assert_eq!(err.kind, ErrorKind::MissingTopicSection("intro".into()));
    assert_eq!(err.line, 5, "the `topics:` line");

    let doubled = format!("{CORE}\n## Again {{#intro}}\n");
    let err = error(&[("core.md", &doubled), ("sets.md", SETS)]);
    assert!(
        matches!(
            err.kind,
            ErrorKind::DuplicateTopicSection { first_line: 10, .. }
        ),
        "{err}"
    );

    let unlisted = format!("{CORE}\n## Extra {{#extra}}\n");
    let err = error(&[("core.md", &unlisted), ("sets.md", SETS)]);
    assert_eq!(err.kind, ErrorKind::UndeclaredTopicSection("extra".into()));
}

#[test]
fn headings_inside_code_blocks_are_not_sections() {
    let fenced = format!("{CORE}\n```text\n## Not a section {{#ghost}}\n```\n");
    assert!(load(&[("core.md", &fenced), ("sets.md", SETS)]).is_ok());
}

#[test]
fn bad_level_bad_reference_and_bad_example_are_refused() {
    let err = error(&[
        ("core.md", &CORE.replace("level: core", "level: basic")),
        ("sets.md", SETS),
    ]);
    assert_eq!(
        (err.kind.clone(), err.line),
        (ErrorKind::BadLevel("basic".into()), 4)
    );

    let err = error(&[
        ("core.md", &CORE.replace("sets#closed-sets", "sets#nope")),
        ("sets.md", SETS),
    ]);
    assert!(matches!(err.kind, ErrorKind::BadGuideReference(_)));
    assert_eq!(err.line, 12);

    let example = format!("{CORE}\n```json workflow\n{{\"steps\": [}}\n```\n");
    let err = error(&[("core.md", &example), ("sets.md", SETS)]);
    assert!(matches!(err.kind, ErrorKind::BadExample(_)));
    assert_eq!(err.line, 14);
}

#[test]
fn diagnostic_table_is_required_and_complete() {
    let err = error(&[
        ("core.md", CORE),
        (
            "sets.md",
            &SETS.replace("| `context_binding` | error |\n", ""),
        ),
    ]);
    assert_eq!(err.kind, ErrorKind::MissingReservedCode("context_binding"));
    let err = error(&[
        ("core.md", CORE),
        ("sets.md", &SETS.replace("## Diagnostic codes", "## Codes")),
    ]);
    assert_eq!(err.kind, ErrorKind::NoDiagnosticTable);
}

#[test]
fn examples_pair_a_workflow_with_the_following_input_only() {
    let body = format!(
        "{CORE}\n```json workflow\n{{\"steps\": []}}\n```\n\nInput:\n\n```json input\n{{\"a\": 1}}\n```\n\n```json workflow\n{{\"steps\": [1]}}\n```\n"
    );
    let set = load(&[("core.md", &body), ("sets.md", SETS)]).unwrap();
    let examples = set.examples();
    assert_eq!(examples.len(), 2);
    assert_eq!(examples[0].input, Some(serde_json::json!({"a": 1})));
    assert_eq!((examples[1].index, &examples[1].input), (1, &None));
}

#[test]
fn version_follows_content_and_ignores_line_endings() {
    let version = |core: &str| {
        load(&[("core.md", core), ("sets.md", SETS)])
            .unwrap()
            .index()[0]["version"]
            .clone()
    };
    let original = version(CORE);
    assert_ne!(
        original,
        version(&CORE.replace("Text", "Other text").replace("See", "Read"))
    );
    assert_eq!(original, version(&CORE.replace('\n', "\r\n")));
}

#[test]
fn a_yaml_workflow_block_is_the_program_string_with_its_input() {
    let body = format!(
        "{CORE}\n```yaml workflow\nversion: '2.0'\nwf:\n  tasks: {{}}\n```\n\n```json input\n{{\"a\": 1}}\n```\n\n```yaml\nnot: collected\n```\n"
    );
    let set = load(&[("core.md", &body), ("sets.md", SETS)]).unwrap();
    let examples = set.examples();
    assert_eq!(examples.len(), 1);
    assert_eq!(
        examples[0].workflow,
        serde_json::json!("version: '2.0'\nwf:\n  tasks: {}\n")
    );
    assert_eq!(examples[0].input, Some(serde_json::json!({"a": 1})));
}

#[test]
fn the_mistral_v2_guides_load_with_their_yaml_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("guides/mistral-v2");
    let set = GuideSet::load(&dir, "mistral/v2", "").unwrap_or_else(|e| panic!("{e}"));
    let core = set.fetch("core").expect("a core guide");
    assert!(core["size_bytes"].as_u64().unwrap() < CORE_SIZE_LIMIT as u64);
    let examples = set.examples();
    assert!(examples.iter().any(|e| e.guide_id == "core"));
    for e in &examples {
        let text = e.workflow.as_str().expect("a YAML program is a string");
        assert!(
            text.starts_with("version: '2.0'\n"),
            "{}: {text}",
            e.guide_id
        );
    }
    for code in RESERVED_CODES {
        assert!(set.diagnostic_codes().contains(code), "{code}");
    }
}

//! Unit tests of the classifier: load-time validation, classification semantics and
//! the live reload holder.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::reload::tests::ScratchFile;

const FILE: &str = "classifiers/test.toml";

fn codes() -> BTreeSet<String> {
    [
        "unknown_capability",
        "missing_parameter",
        "type_mismatch",
        "unresolved_reference",
        "invalid_structure",
        "deprecated_capability",
    ]
    .map(String::from)
    .into()
}

fn parse(source: &str) -> Result<RuleTable, RuleFileError> {
    RuleTable::parse(source, Path::new(FILE), &codes())
}

fn problem(text: &str, location: Option<&str>) -> EngineProblem {
    EngineProblem {
        level: Severity::Error,
        text: text.to_owned(),
        location: location.map(str::to_owned),
    }
}

fn classify(table: &RuleTable, problem: &EngineProblem, visible: &[&str]) -> Classified {
    let steps: HashMap<String, String> = [("a", "/steps/0"), ("b", "/steps/1/then/0")]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
    let visible: Vec<String> = visible.iter().map(|s| s.to_string()).collect();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    table.classify(problem, &ctx)
}

/// Two rules sharing one authored message: the "unknown" / "not enabled" pair.
const CAPABILITY_RULES: &str = r#"
location_syntax = "legacy"
redact = ['''\s*\(did you mean '.*?'\?\)''']

[[rule]]
name = "unknown"
pattern = '''^unknown capability '(?P<cap>.*?)'(?: \(did you mean '.*'\?\))?$'''
code = "unknown_capability"
message = "unknown capability '{cap}'"
hint = "close match: {close_match:cap}"

[[rule]]
name = "not-enabled"
pattern = '''^capability '(?P<cap>.*?)' is not enabled for tenant (?P<tenant>.+)$'''
code = "unknown_capability"
message = "unknown capability '{cap}'"
hint = "close match: {close_match:cap}"

[[rule]]
name = "missing"
pattern = '''^missing required parameter '(?P<param>.*?)' for (?P<cap>.+)$'''
code = "missing_parameter"
path = ["location/x", "step:cap"]

[[rule]]
name = "late"
pattern = '''^step '(?P<step>.*?)': reference to step '(?P<target>.*?)' which has not run yet$'''
code = "unresolved_reference"
severity = "warning"
path = ["location", "step:step/with"]
"#;

fn capability_table() -> RuleTable {
    parse(CAPABILITY_RULES).unwrap()
}

#[test]
fn unmatched_message_falls_to_constraint_with_message_kept_and_empty_path() {
    let table = capability_table();
    let text = "E_LIMIT_0042: step budget exhausted (201/200)";
    let got = classify(&table, &problem(text, Some("steps[3]")), &[]);
    assert_eq!(got.rule, None);
    assert_eq!(
        got.diagnostic,
        Diagnostic {
            severity: Severity::Error,
            code: CONSTRAINT.to_owned(),
            path: String::new(),
            message: text.to_owned(),
            hint: None,
        }
    );
}

#[test]
fn unmatched_warning_stays_a_warning() {
    let table = capability_table();
    let mut warn = problem("something new", None);
    warn.level = Severity::Warning;
    assert_eq!(
        classify(&table, &warn, &[]).diagnostic.severity,
        Severity::Warning
    );
}

#[test]
fn not_enabled_and_unknown_are_byte_identical() {
    let table = capability_table();
    let visible = ["crm.get_customer", "crm.list_orders"];
    let unknown = problem(
        "unknown capability 'crm.get_customerz' (did you mean 'crm.get_customers'?)",
        Some("steps[0].capability"),
    );
    let not_enabled = problem(
        "capability 'crm.get_customerz' is not enabled for tenant acme",
        Some("steps[0].capability"),
    );
    let a = classify(&table, &unknown, &visible).diagnostic;
    let b = classify(&table, &not_enabled, &visible).diagnostic;
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(a.message, "unknown capability 'crm.get_customerz'");
    assert_eq!(a.hint.as_deref(), Some("close match: crm.get_customer"));
    assert_eq!(a.path, "/steps/0/capability");
}

#[test]
fn engine_suggestion_of_an_invisible_name_never_appears() {
    let table = capability_table();
    let got = classify(
        &table,
        &problem(
            "unknown capability 'hr.payrol' (did you mean 'hr.payroll'?)",
            Some("steps[0].capability"),
        ),
        &["crm.get_customer"],
    );
    let json = serde_json::to_string(&got.diagnostic).unwrap();
    assert!(!json.contains("hr.payroll"), "{json}");
    assert_eq!(got.diagnostic.hint, None);
}

#[test]
fn suggestions_are_redacted_from_passed_through_text() {
    let table = capability_table();
    let got = classify(
        &table,
        &problem("capability 'x' is odd (did you mean 'hr.payroll'?)", None),
        &[],
    );
    assert_eq!(got.rule, None);
    assert_eq!(got.diagnostic.message, "capability 'x' is odd");
}

#[test]
fn locator_chain_tries_location_then_step_then_gives_empty() {
    let table = capability_table();
    let with_location = problem("missing required parameter 'p' for a", Some("steps[0]"));
    assert_eq!(
        classify(&table, &with_location, &[]).diagnostic.path,
        "/steps/0/x"
    );
    let step_only = problem("missing required parameter 'p' for b", None);
    assert_eq!(
        classify(&table, &step_only, &[]).diagnostic.path,
        "/steps/1/then/0"
    );
    let neither = problem("missing required parameter 'p' for zz", Some("steps[[0"));
    assert_eq!(classify(&table, &neither, &[]).diagnostic.path, "");
}

#[test]
fn step_locator_suffix_and_severity_override_apply() {
    let table = capability_table();
    let got = classify(
        &table,
        &problem(
            "step 'b': reference to step 'c' which has not run yet",
            None,
        ),
        &[],
    );
    assert_eq!(got.rule.as_deref(), Some("late"));
    assert_eq!(got.diagnostic.path, "/steps/1/then/0/with");
    assert_eq!(got.diagnostic.severity, Severity::Warning);
    assert_eq!(
        got.diagnostic.message, "step 'b': reference to step 'c' which has not run yet",
        "rules without a message template keep the engine text"
    );
}

#[test]
fn first_matching_rule_wins() {
    let table = parse(
        r#"
[[rule]]
name = "specific"
pattern = '^missing required parameter .*$'
code = "missing_parameter"

[[rule]]
name = "general"
pattern = '^missing'
code = "invalid_structure"
"#,
    )
    .unwrap();
    let got = classify(
        &table,
        &problem("missing required parameter 'p' for x", None),
        &[],
    );
    assert_eq!(got.rule.as_deref(), Some("specific"));
    let got = classify(&table, &problem("missing things", None), &[]);
    assert_eq!(got.rule.as_deref(), Some("general"));
}

#[test]
fn diagnostic_serializes_lowercase_severity_and_skips_absent_hint() {
    let diagnostic = Diagnostic {
        severity: Severity::Warning,
        code: "unused_output".into(),
        path: "/steps/0".into(),
        message: "m".into(),
        hint: None,
    };
    assert_eq!(
        serde_json::to_string(&diagnostic).unwrap(),
        r#"{"severity":"warning","code":"unused_output","path":"/steps/0","message":"m"}"#
    );
    let with_hint = Diagnostic {
        hint: Some("h".into()),
        ..diagnostic
    };
    assert!(
        serde_json::to_string(&with_hint)
            .unwrap()
            .ends_with(r#","hint":"h"}"#)
    );
}

#[test]
fn engine_levels_map_to_severities() {
    assert_eq!(Severity::from_engine_level("ERROR"), Some(Severity::Error));
    assert_eq!(Severity::from_engine_level("WARN"), Some(Severity::Warning));
    assert_eq!(
        Severity::from_engine_level("warning"),
        Some(Severity::Warning)
    );
    assert_eq!(Severity::from_engine_level("info"), None);
}

// --- load-time validation ---------------------------------------------------------

/// Asserts the error's kind, line and rule, and that its text names all three.
fn assert_error(source: &str, kind: RuleErrorKind, line: usize, rule: Option<&str>) -> String {
    let error = parse(source).expect_err("the file must be rejected");
    let text = error.to_string();
    assert_eq!(error.kind(), kind, "{text}");
    assert_eq!(error.line(), Some(line), "{text}");
    assert_eq!(error.rule(), rule, "{text}");
    assert!(text.starts_with(&format!("{FILE}:{line}: ")), "{text}");
    if let Some(rule) = rule {
        assert!(text.contains(&format!("rule '{rule}'")), "{text}");
    }
    assert!(text.contains("(fix: "), "{text}");
    text
}

#[test]
fn broken_regex_is_rejected_with_file_rule_and_line() {
    let source = r#"[[rule]]
name = "r"
pattern = '^unknown (capability'
code = "unknown_capability"
"#;
    assert_error(source, RuleErrorKind::BadRegex, 3, Some("r"));
}

#[test]
fn unknown_capture_in_a_template_or_locator_is_rejected() {
    let hint = r#"[[rule]]
name = "r"
pattern = '^(?P<cap>x)$'
code = "unknown_capability"
hint = "{close_match:capability}"
"#;
    let text = assert_error(hint, RuleErrorKind::UnknownCapture, 5, Some("r"));
    assert!(
        text.contains("'capability'") && text.contains("cap"),
        "{text}"
    );
    let path = r#"[[rule]]
name = "r"
pattern = '^x$'
code = "unknown_capability"

path = ["location", "step:step"]
"#;
    assert_error(path, RuleErrorKind::UnknownCapture, 6, Some("r"));
}

#[test]
fn undeclared_code_is_rejected() {
    let source = r#"[[rule]]
name = "r"
pattern = '^x$'
code = "no_such_code"
"#;
    let text = assert_error(source, RuleErrorKind::UndeclaredCode, 4, Some("r"));
    assert!(
        text.contains("unknown_capability"),
        "the fix lists the codes: {text}"
    );
}

#[test]
fn duplicate_rule_name_is_rejected_at_the_second_rule() {
    let source = r#"[[rule]]
name = "r"
pattern = '^x$'
code = "unknown_capability"

[[rule]]
name = "r"
pattern = '^y$'
code = "unknown_capability"
"#;
    let text = assert_error(source, RuleErrorKind::DuplicateName, 6, Some("r"));
    assert!(text.contains("line 1"), "{text}");
}

#[test]
fn failing_example_is_rejected_at_the_example() {
    let source = r#"[[rule]]
name = "r"
pattern = '^x (?P<s>\w+)$'
code = "unknown_capability"
path = "step:s"

[[rule.example]]
message = "x a"
steps = { a = "/steps/0" }
code = "unknown_capability"
path = "/steps/0"

[[rule.example]]
message = "x a"
code = "unknown_capability"
path = "/steps/9"
"#;
    let text = assert_error(source, RuleErrorKind::FailingExample, 13, Some("r"));
    assert!(text.contains("example #2"), "{text}");
    assert!(
        text.contains(r#"path: expected "/steps/9", got """#),
        "{text}"
    );
}

#[test]
fn shadowed_rule_example_fails_even_with_the_same_code() {
    let source = r#"[[rule]]
name = "general"
pattern = '^x'
code = "unknown_capability"

[[rule]]
name = "specific"
pattern = '^x y$'
code = "unknown_capability"

[[rule.example]]
message = "x y"
code = "unknown_capability"
path = ""
"#;
    let text = assert_error(source, RuleErrorKind::FailingExample, 11, Some("specific"));
    assert!(
        text.contains("matched rule 'general' instead of rule 'specific'"),
        "{text}"
    );
}

#[test]
fn unmatched_example_that_matches_a_rule_fails() {
    let source = r#"[[rule]]
name = "r"
pattern = '^x$'
code = "unknown_capability"

[[unmatched_example]]
message = "x"
"#;
    let text = assert_error(source, RuleErrorKind::FailingExample, 6, None);
    assert!(text.contains("unmatched example #1"), "{text}");
}

#[test]
fn toml_problems_name_the_line() {
    assert_error(
        r#"[[rule]]
name = "r"
pattern = '^x$'
code = "unknown_capability"
typo = 1
"#,
        RuleErrorKind::Syntax,
        5,
        None,
    );
    assert_error(
        r#"location_syntax = "xpath"
"#,
        RuleErrorKind::Syntax,
        1,
        None,
    );
    assert_error(
        r#"[[rule]]
name = "r"
pattern = '^(?P<a>x)$'
code = "type_mismatch"
message = "{a"
"#,
        RuleErrorKind::BadTemplate,
        5,
        Some("r"),
    );
    assert_error(
        r#"[[rule]]
name = "r"
pattern = '^x$'
code = "type_mismatch"
path = "where"
"#,
        RuleErrorKind::BadPath,
        5,
        Some("r"),
    );
    assert_error(
        r#"redact = ['(']
"#,
        RuleErrorKind::BadRegex,
        1,
        None,
    );
}

#[test]
fn io_error_names_the_file() {
    let missing = Path::new("/nonexistent/classifier.toml");
    let error = RuleTable::load(missing, &codes()).unwrap_err();
    assert_eq!(error.kind(), RuleErrorKind::Io);
    assert!(
        error
            .to_string()
            .starts_with("/nonexistent/classifier.toml: ")
    );
}

#[test]
fn constraint_is_always_an_allowed_code() {
    parse(
        r#"[[rule]]
name = "r"
pattern = '^x$'
code = "constraint"
"#,
    )
    .unwrap();
}

// --- examples report and explain --------------------------------------------------

#[test]
fn check_report_lists_every_example() {
    let source = r#"[[rule]]
name = "r"
pattern = '^x$'
code = "type_mismatch"

[[rule.example]]
message = "x"
code = "type_mismatch"
path = ""

[[rule.example]]
message = "x"
code = "missing_parameter"
path = ""

[[unmatched_example]]
message = "y"
"#;
    let table = RuleTable::parse_unchecked(source, Path::new(FILE), &codes()).unwrap();
    let report = check_examples(&table);
    assert_eq!(report.outcomes.len(), 3);
    assert!(!report.all_passed());
    assert_eq!(report.failures().count(), 1);
    let text = report.to_string();
    assert!(
        text.contains(&format!("ok   {FILE}:6 rule 'r' example #1")),
        "{text}"
    );
    assert!(
        text.contains(&format!("FAIL {FILE}:11 rule 'r' example #2")),
        "{text}"
    );
    assert!(
        text.contains(&format!("ok   {FILE}:16 unmatched example #1")),
        "{text}"
    );
    assert!(text.ends_with("3 examples, 2 passed, 1 failed\n"), "{text}");
}

#[test]
fn explain_names_the_rule_or_the_fallback() {
    let table = capability_table();
    let steps = HashMap::new();
    let visible = vec!["crm.get_customer".to_owned()];
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &visible,
    };
    let matched = explain(
        &table,
        &problem(
            "unknown capability 'crm.get_custmer'",
            Some("steps[0].capability"),
        ),
        &ctx,
    );
    assert!(
        matched.starts_with(&format!("matched: rule 'unknown' ({FILE}:")),
        "{matched}"
    );
    assert!(
        matched.contains("\"code\": \"unknown_capability\""),
        "{matched}"
    );
    assert!(
        matched.contains("\"hint\": \"close match: crm.get_customer\""),
        "{matched}"
    );
    let fallback = explain(&table, &problem("odd", None), &ctx);
    assert!(fallback.contains("falls to constraint"), "{fallback}");
    assert!(fallback.contains("\"code\": \"constraint\""), "{fallback}");
}

// --- scale ------------------------------------------------------------------------

#[test]
fn fifty_rules_classify_ten_thousand_messages_through_one_regex_set() {
    let mut source = String::new();
    for i in 0..50 {
        source.push_str(&format!(
            "[[rule]]\nname = \"r{i}\"\npattern = '''^shape {i} of (?P<step>[a-z]+)$'''\n\
             code = \"invalid_structure\"\npath = \"step:step\"\n\n"
        ));
    }
    let table = parse(&source).unwrap();
    assert_eq!(table.len(), 50);
    assert_eq!(table.set.len(), 50, "all rules live in one RegexSet");
    for n in 0..10_000 {
        let text = if n % 10 == 9 {
            format!("unknown message {n}")
        } else {
            format!("shape {} of a", n % 50)
        };
        let got = classify(&table, &problem(&text, None), &[]);
        if n % 10 == 9 {
            assert_eq!(got.rule, None);
        } else {
            assert_eq!(got.rule, Some(format!("r{}", n % 50)));
            assert_eq!(got.diagnostic.path, "/steps/0");
        }
    }
}

// --- live reload ------------------------------------------------------------------

fn single_rule(code: &str) -> String {
    format!("[[rule]]\nname = \"r\"\npattern = '^x$'\ncode = \"{code}\"\n")
}

fn live(file: &ScratchFile) -> Classifiers {
    Classifiers::load([RuleSource {
        language: "workflow/v1".into(),
        path: file.file.clone(),
        allowed_codes: codes(),
    }])
    .unwrap()
}

fn live_code(classifiers: &Classifiers, text: &str) -> String {
    let steps = HashMap::new();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &[],
    };
    classifiers
        .classify("workflow/v1", &problem(text, None), &ctx)
        .unwrap()
        .diagnostic
        .code
}

#[test]
fn start_up_refuses_a_broken_file() {
    let file = ScratchFile::new("startup", &single_rule("bogus"));
    let error = Classifiers::load([RuleSource {
        language: "workflow/v1".into(),
        path: file.file.clone(),
        allowed_codes: codes(),
    }])
    .err()
    .expect("a broken file must refuse the start");
    assert_eq!(error.kind(), RuleErrorKind::UndeclaredCode);
}

#[test]
fn reload_keeps_the_old_table_on_a_broken_file_and_swaps_on_a_good_one() {
    let file = ScratchFile::new("reload", &single_rule("type_mismatch"));
    let classifiers = live(&file);
    assert_eq!(live_code(&classifiers, "x"), "type_mismatch");

    file.write(&single_rule("not_a_declared_code"));
    let errors = classifiers.reload().unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind(), RuleErrorKind::UndeclaredCode);
    assert_eq!(
        live_code(&classifiers, "x"),
        "type_mismatch",
        "old table kept"
    );

    file.write(&single_rule("missing_parameter"));
    classifiers.reload().unwrap();
    assert_eq!(
        live_code(&classifiers, "x"),
        "missing_parameter",
        "new table live"
    );
}

#[test]
fn counts_are_kept_per_code_and_survive_reloads() {
    let file = ScratchFile::new("counts", &single_rule("type_mismatch"));
    let classifiers = live(&file);
    live_code(&classifiers, "x");
    live_code(&classifiers, "x");
    live_code(&classifiers, "unmatched");
    classifiers.reload().unwrap();
    live_code(&classifiers, "x");
    let counts = classifiers.counts();
    assert_eq!(counts["type_mismatch"], 3);
    assert_eq!(counts[CONSTRAINT], 1);
    assert_eq!(
        counts["unknown_capability"], 0,
        "declared codes are listed at zero"
    );
}

#[test]
fn unknown_language_is_none() {
    let file = ScratchFile::new("language", &single_rule("type_mismatch"));
    let classifiers = live(&file);
    let steps = HashMap::new();
    let ctx = ClassifyContext {
        step_pointers: &steps,
        visible_names: &[],
    };
    assert!(
        classifiers
            .classify("other/v1", &problem("x", None), &ctx)
            .is_none()
    );
    assert_eq!(classifiers.languages().collect::<Vec<_>>(), ["workflow/v1"]);
    assert_eq!(classifiers.paths(), vec![file.file.clone()]);
}

#[test]
fn requests_never_fail_while_tables_are_swapped() {
    let file = ScratchFile::new("swap", &single_rule("type_mismatch"));
    let classifiers = Arc::new(live(&file));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let classifiers = Arc::clone(&classifiers);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut served = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let code = live_code(&classifiers, "x");
                    assert!(
                        code == "type_mismatch" || code == "missing_parameter",
                        "{code}"
                    );
                    served += 1;
                }
                served
            })
        })
        .collect();
    for i in 0..20 {
        let code = if i % 2 == 0 {
            "missing_parameter"
        } else {
            "type_mismatch"
        };
        file.write(&single_rule(code));
        classifiers.reload().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
}

//! Reading and validating a rule file (`classifiers/<language>.toml`).
//!
//! The format is documented on the `classify` module.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use regex::{Regex, RegexSet, RegexSetBuilder};
use serde::Deserialize;
use toml::Spanned;

use super::error::{LineIndex, RuleErrorKind, RuleFileError};
use super::location::LocationSyntax;
use super::table::{Example, PathSource, Rule, RuleTable};
use super::template::Template;
use super::{CONSTRAINT, Severity};

/// Room for a few hundred rules; the default limit is sized for single patterns.
const SET_SIZE_LIMIT: usize = 64 * 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    location_syntax: LocationSyntax,
    #[serde(default)]
    redact: Vec<Spanned<String>>,
    #[serde(default, rename = "rule")]
    rules: Vec<Spanned<RawRule>>,
    #[serde(default, rename = "unmatched_example")]
    unmatched_examples: Vec<Spanned<RawUnmatchedExample>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    name: Spanned<String>,
    pattern: Spanned<String>,
    code: Spanned<String>,
    severity: Option<Severity>,
    path: Option<Spanned<OneOrMany>>,
    message: Option<Spanned<OneOrMany>>,
    hint: Option<Spanned<OneOrMany>>,
    #[serde(default, rename = "example")]
    examples: Vec<Spanned<RawExample>>,
}

/// A single value or a fallback chain tried in order:
/// `path = "location"` or `path = ["location", "step:step"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Chain(Vec<String>),
}

impl OneOrMany {
    fn entries(&self) -> Vec<&String> {
        match self {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Chain(chain) => chain.iter().collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExample {
    message: String,
    location: Option<String>,
    level: Option<Severity>,
    #[serde(default)]
    visible: Vec<String>,
    #[serde(default)]
    steps: HashMap<String, String>,
    code: String,
    path: String,
    hint: Option<String>,
    severity: Option<Severity>,
    expect_message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnmatchedExample {
    message: String,
    location: Option<String>,
    level: Option<Severity>,
    expect_message: Option<String>,
}

/// Shared state while compiling one file: where errors point.
struct Compiler<'a> {
    file: &'a Path,
    lines: LineIndex,
    allowed_codes: &'a BTreeSet<String>,
}

/// Parses and validates a rule file's text; examples are compiled but not run.
pub(crate) fn compile(
    source: &str,
    file: &Path,
    allowed_codes: &BTreeSet<String>,
) -> Result<RuleTable, RuleFileError> {
    let compiler = Compiler {
        file,
        lines: LineIndex::new(source),
        allowed_codes,
    };
    let raw: RawFile = toml::from_str(source).map_err(|e| compiler.syntax_error(&e))?;
    compiler.table(raw)
}

impl Compiler<'_> {
    fn table(&self, raw: RawFile) -> Result<RuleTable, RuleFileError> {
        let redactions = raw
            .redact
            .iter()
            .map(|pattern| self.redaction(pattern))
            .collect::<Result<Vec<_>, _>>()?;
        let rules = self.rules(raw.rules)?;
        let set = self.regex_set(&rules)?;
        let unmatched_examples = raw
            .unmatched_examples
            .into_iter()
            .map(|example| self.unmatched_example(example))
            .collect();
        Ok(RuleTable {
            file: self.file.to_owned(),
            location_syntax: raw.location_syntax,
            redactions,
            set,
            rules,
            unmatched_examples,
        })
    }

    fn rules(&self, raw_rules: Vec<Spanned<RawRule>>) -> Result<Vec<Rule>, RuleFileError> {
        let mut first_line_of: HashMap<String, usize> = HashMap::new();
        let mut rules = Vec::with_capacity(raw_rules.len());
        for raw in raw_rules {
            let rule = self.rule(raw)?;
            if let Some(first) = first_line_of.get(&rule.name) {
                return Err(self.rule_error(
                    rule.line,
                    &rule.name,
                    RuleErrorKind::DuplicateName,
                    format!("the name is already used by the rule at line {first}"),
                    "give every rule a unique name",
                ));
            }
            first_line_of.insert(rule.name.clone(), rule.line);
            rules.push(rule);
        }
        Ok(rules)
    }

    fn rule(&self, raw: Spanned<RawRule>) -> Result<Rule, RuleFileError> {
        let line = self.line_of(&raw);
        let raw = raw.into_inner();
        let name = raw.name.get_ref().trim().to_owned();
        if name.is_empty() {
            return Err(RuleFileError::new(
                self.file,
                line,
                None,
                RuleErrorKind::Syntax,
                "a rule has an empty name",
                "give the rule a unique, descriptive name",
            ));
        }
        let regex = self.pattern(&name, &raw.pattern)?;
        let code = self.code(&name, &raw.code)?;
        let message = self.templates(&name, &regex, raw.message.as_ref())?;
        let hint = self.templates(&name, &regex, raw.hint.as_ref())?;
        let path = self.path(&name, &regex, raw.path.as_ref())?;
        let examples = raw
            .examples
            .into_iter()
            .map(|example| self.example(example))
            .collect();
        Ok(Rule {
            name,
            line,
            regex,
            code,
            severity: raw.severity,
            path,
            message,
            hint,
            examples,
        })
    }

    fn pattern(&self, rule: &str, pattern: &Spanned<String>) -> Result<Regex, RuleFileError> {
        Regex::new(pattern.get_ref()).map_err(|e| {
            self.rule_error(
                self.line_of(pattern),
                rule,
                RuleErrorKind::BadRegex,
                format!("invalid regex: {e}"),
                "correct the pattern (Rust regex syntax; use '''...''' literal strings \
                 so backslashes need no escaping)",
            )
        })
    }

    fn code(&self, rule: &str, code: &Spanned<String>) -> Result<String, RuleFileError> {
        let value = code.get_ref();
        if self.allowed_codes.contains(value) || value == CONSTRAINT {
            return Ok(value.clone());
        }
        let known: Vec<&str> = self.allowed_codes.iter().map(String::as_str).collect();
        Err(self.rule_error(
            self.line_of(code),
            rule,
            RuleErrorKind::UndeclaredCode,
            format!("code '{value}' is not in the language's closed diagnostic set"),
            format!("use one of: {}", known.join(", ")),
        ))
    }

    fn templates(
        &self,
        rule: &str,
        regex: &Regex,
        source: Option<&Spanned<OneOrMany>>,
    ) -> Result<Vec<Template>, RuleFileError> {
        let Some(source) = source else {
            return Ok(Vec::new());
        };
        let line = self.line_of(source);
        let mut templates = Vec::new();
        for entry in source.get_ref().entries() {
            let template = Template::parse(entry).map_err(|problem| {
                self.rule_error(
                    line,
                    rule,
                    RuleErrorKind::BadTemplate,
                    problem,
                    "write placeholders as {capture}, {close_match:capture} or \
                     {visible:capture}; double a brace to write it literally",
                )
            })?;
            for capture in template.capture_names() {
                self.require_capture(rule, line, regex, capture)?;
            }
            templates.push(template);
        }
        Ok(templates)
    }

    fn path(
        &self,
        rule: &str,
        regex: &Regex,
        raw: Option<&Spanned<OneOrMany>>,
    ) -> Result<Vec<PathSource>, RuleFileError> {
        let Some(raw) = raw else {
            return Ok(vec![PathSource::Location {
                suffix: String::new(),
            }]);
        };
        let line = self.line_of(raw);
        let mut sources = Vec::new();
        for entry in raw.get_ref().entries() {
            let source = parse_path_source(entry).map_err(|problem| {
                self.rule_error(
                    line,
                    rule,
                    RuleErrorKind::BadPath,
                    problem,
                    "use \"location\" or \"step:<capture>\", optionally followed by a \
                     JSON Pointer suffix such as \"/capability\"",
                )
            })?;
            if let PathSource::Step { capture, .. } = &source {
                self.require_capture(rule, line, regex, capture)?;
            }
            sources.push(source);
        }
        Ok(sources)
    }

    fn require_capture(
        &self,
        rule: &str,
        line: usize,
        regex: &Regex,
        capture: &str,
    ) -> Result<(), RuleFileError> {
        if regex.capture_names().flatten().any(|name| name == capture) {
            return Ok(());
        }
        let defined: Vec<&str> = regex.capture_names().flatten().collect();
        Err(self.rule_error(
            line,
            rule,
            RuleErrorKind::UnknownCapture,
            format!(
                "capture '{capture}' is not defined by the pattern (it defines: {})",
                if defined.is_empty() {
                    "no named captures".to_owned()
                } else {
                    defined.join(", ")
                }
            ),
            format!("add a named group (?P<{capture}>...) to the pattern or correct the name"),
        ))
    }

    fn example(&self, raw: Spanned<RawExample>) -> Example {
        let line = self.line_of(&raw);
        let raw = raw.into_inner();
        Example {
            line,
            level: raw.level.unwrap_or(Severity::Error),
            message: raw.message,
            location: raw.location,
            visible: raw.visible,
            steps: raw.steps,
            code: raw.code,
            path: raw.path,
            hint: raw.hint,
            severity: raw.severity,
            expect_message: raw.expect_message,
        }
    }

    /// An unmatched example expects the `constraint` fallback by definition.
    fn unmatched_example(&self, raw: Spanned<RawUnmatchedExample>) -> Example {
        let line = self.line_of(&raw);
        let raw = raw.into_inner();
        Example {
            line,
            level: raw.level.unwrap_or(Severity::Error),
            message: raw.message,
            location: raw.location,
            visible: Vec::new(),
            steps: HashMap::new(),
            code: CONSTRAINT.to_owned(),
            path: String::new(),
            hint: None,
            severity: None,
            expect_message: raw.expect_message,
        }
    }

    fn redaction(&self, pattern: &Spanned<String>) -> Result<Regex, RuleFileError> {
        Regex::new(pattern.get_ref()).map_err(|e| {
            RuleFileError::new(
                self.file,
                self.line_of(pattern),
                None,
                RuleErrorKind::BadRegex,
                format!("invalid redact pattern: {e}"),
                "correct the pattern (Rust regex syntax)",
            )
        })
    }

    fn regex_set(&self, rules: &[Rule]) -> Result<RegexSet, RuleFileError> {
        RegexSetBuilder::new(rules.iter().map(|rule| rule.regex.as_str()))
            .size_limit(SET_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                RuleFileError::new(
                    self.file,
                    1,
                    None,
                    RuleErrorKind::TooLarge,
                    format!("the rules cannot be combined into one matcher: {e}"),
                    "simplify the largest patterns (avoid large repetitions and \
                     Unicode classes such as \\w where [A-Za-z0-9_] will do)",
                )
            })
    }

    fn syntax_error(&self, error: &toml::de::Error) -> RuleFileError {
        let line = error
            .span()
            .map(|span| self.lines.line(span.start))
            .unwrap_or(1);
        RuleFileError::new(
            self.file,
            line,
            None,
            RuleErrorKind::Syntax,
            error.message().trim().to_owned(),
            "correct the TOML so it follows the rule file format \
             (location_syntax, redact, [[rule]], [[rule.example]], [[unmatched_example]])",
        )
    }

    fn rule_error(
        &self,
        line: usize,
        rule: &str,
        kind: RuleErrorKind,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> RuleFileError {
        RuleFileError::new(self.file, line, Some(rule), kind, problem, fix)
    }

    fn line_of<T>(&self, spanned: &Spanned<T>) -> usize {
        self.lines.line(spanned.span().start)
    }
}

/// Parses `location[/suffix]` or `step:<capture>[/suffix]`.
fn parse_path_source(entry: &str) -> Result<PathSource, String> {
    let (head, suffix) = match entry.find('/') {
        Some(slash) => entry.split_at(slash),
        None => (entry, ""),
    };
    let suffix = suffix.to_owned();
    if head == "location" {
        return Ok(PathSource::Location { suffix });
    }
    match head.strip_prefix("step:") {
        Some(capture) if !capture.is_empty() => Ok(PathSource::Step {
            capture: capture.to_owned(),
            suffix,
        }),
        _ => Err(format!("unknown locator source '{entry}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_sources_parse() {
        assert_eq!(
            parse_path_source("location").unwrap(),
            PathSource::Location {
                suffix: String::new()
            }
        );
        assert_eq!(
            parse_path_source("location/capability").unwrap(),
            PathSource::Location {
                suffix: "/capability".into()
            }
        );
        assert_eq!(
            parse_path_source("step:step/with").unwrap(),
            PathSource::Step {
                capture: "step".into(),
                suffix: "/with".into()
            }
        );
        for bad in ["", "where", "step:", "step:/x", "locations"] {
            assert!(parse_path_source(bad).is_err(), "{bad}");
        }
    }
}

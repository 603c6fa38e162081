//! Discovery (Part II §6.1, Part III §3): list the tools, read the manifest
//! with `pilotage_manifest` (authoritative over the initialize accelerator),
//! and choose the Language whose loop tools take the program, reading the
//! argument name from each tool's program declaration (Part III §5). The
//! Host never guesses an argument name: a loop tool without a declaration
//! for the chosen Language is not used.

use crate::manifest::{Execution, Language, Manifest, ManifestError};
use crate::server::{PilotageServer, Timeouts, TransportError};
use crate::values::{EXTENSION_ID, RequestError};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The fixed-name access tools (Part III §4).
pub const MANIFEST_TOOL: &str = "pilotage_manifest";
pub const GUIDE_TOOL: &str = "pilotage_get_guide";
pub const CATALOG_TOOL: &str = "pilotage_catalog";

/// A loop tool as the Host will call it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopTool {
    pub name: String,
    /// The program-bearing argument from the tool's declaration.
    pub argument: String,
    /// Every member its `inputSchema` declares: the Host sends a reserved
    /// member only when the tool declares it (Part III §4.4).
    pub members: BTreeSet<String>,
}

impl LoopTool {
    pub fn accepts(&self, member: &str) -> bool {
        self.members.contains(member)
    }
}

/// The result of discovery.
#[derive(Debug, Clone)]
pub struct Discovery {
    pub manifest: Manifest,
    pub tools: Vec<Value>,
    /// The server declared the extension in `initialize`.
    pub extension_declared: bool,
    /// The initialize `_meta` manifest differs from `pilotage_manifest`'s
    /// (the tool's answer wins, Part III §3.3).
    pub init_manifest_differs: bool,
}

/// A Language chosen for a program, with its loop tools.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub language: Language,
    pub validate: LoopTool,
    pub execute: Option<LoopTool>,
    /// Other Languages that would also have taken the program.
    pub alternatives: Vec<String>,
}

impl Chosen {
    /// Execute needs `mode` exactly when the Language's execution is `both`
    /// (Part III §4.4).
    pub fn needs_mode(&self) -> bool {
        self.language.execution == Some(Execution::Both)
    }
}

/// Why discovery stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiscoveryError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(
        "the server offers no `pilotage_manifest` tool: it is not a Pilotage server, and the Host will not infer Pilotage from similar tool names"
    )]
    NotPilotage,
    #[error("`pilotage_manifest` failed with request error {}: {}", .0.kind.name(), .0.message)]
    ManifestRequest(RequestError),
    #[error("the manifest is unusable: {0}")]
    Manifest(#[from] ManifestError),
    #[error("{0}")]
    NoLanguage(String),
}

/// Lists the tools and reads the manifest.
pub async fn discover<S: PilotageServer>(
    server: &S,
    timeouts: Timeouts,
) -> Result<Discovery, DiscoveryError> {
    let tools = server.list_tools().await?;
    if find_tool(&tools, MANIFEST_TOOL).is_none() {
        return Err(DiscoveryError::NotPilotage);
    }
    let answer = server
        .call_tool(MANIFEST_TOOL, Map::new(), timeouts.call)
        .await?;
    if answer.is_error {
        return Err(DiscoveryError::ManifestRequest(RequestError::parse(
            answer.structured.as_ref(),
        )));
    }
    let raw = answer.structured.unwrap_or(Value::Null);
    let manifest = Manifest::parse(&raw)?;
    let init_manifest_differs = server
        .initialize_meta()
        .and_then(|m| m.get("manifest"))
        .is_some_and(|m| *m != raw);
    Ok(Discovery {
        manifest,
        tools,
        extension_declared: server.declared_extension(),
        init_manifest_differs,
    })
}

pub fn find_tool<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
}

/// The program-bearing argument a tool declares for `language`, read only
/// from the registered `_meta` key (single- or multi-Language form).
pub fn program_argument(tool: &Value, language: &str) -> Option<String> {
    let decl = tool.get("_meta")?.get(EXTENSION_ID)?;
    if let Some(list) = decl.get("languages").and_then(Value::as_array) {
        return list
            .iter()
            .find(|e| e.get("language").and_then(Value::as_str) == Some(language))
            .and_then(|e| e.get("argument"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    (decl.get("language").and_then(Value::as_str) == Some(language))
        .then(|| {
            decl.get("argument")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .flatten()
}

fn members(tool: &Value) -> BTreeSet<String> {
    tool.get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The loop tool `name` for `language`, when it is listed and declares its
/// program argument.
pub fn loop_tool(tools: &[Value], name: &str, language: &str) -> Result<LoopTool, String> {
    let tool = find_tool(tools, name).ok_or_else(|| format!("tool {name} is not in tools/list"))?;
    let argument = program_argument(tool, language).ok_or_else(|| {
        format!("tool {name} carries no program declaration for {language}; the Host does not guess argument names")
    })?;
    Ok(LoopTool {
        name: name.to_string(),
        argument,
        members: members(tool),
    })
}

/// Whether a program value fits the declared argument's JSON type (only a
/// `type` keyword is checked: loop schemas are permissive by design).
fn type_fits(tool: &Value, argument: &str, program: &Value) -> bool {
    let schema = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(argument));
    let types: Vec<&str> = match schema.and_then(|s| s.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    let actual = match program {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
    };
    types
        .iter()
        .any(|t| *t == actual || (*t == "number" && actual == "integer"))
}

/// What the program needs from a Language.
#[derive(Debug, Clone, Copy)]
pub struct Needs<'a> {
    pub program: &'a Value,
    pub execute: bool,
    pub context_given: bool,
}

/// Chooses the Language for a program: the requested one, or the first in
/// manifest order whose loop tools accept it (validate, and execute when
/// needed), whose context requirement matches what was supplied, and whose
/// program argument type fits.
pub fn choose(
    discovery: &Discovery,
    requested: Option<&str>,
    needs: Needs<'_>,
) -> Result<Chosen, DiscoveryError> {
    let names: Vec<&str> = discovery
        .manifest
        .languages
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    if let Some(r) = requested {
        let lang = discovery.manifest.language(r).ok_or_else(|| {
            DiscoveryError::NoLanguage(format!(
                "the server has no language {r:?}; it offers {}",
                names.join(", ")
            ))
        })?;
        return usable(discovery, lang, needs, true).map_err(DiscoveryError::NoLanguage);
    }
    let mut chosen: Option<Chosen> = None;
    let mut reasons = Vec::new();
    for lang in &discovery.manifest.languages {
        match usable(discovery, lang, needs, false) {
            Ok(c) => match &mut chosen {
                None => chosen = Some(c),
                Some(first) => first.alternatives.push(lang.name.clone()),
            },
            Err(why) => reasons.push(format!("{}: {why}", lang.name)),
        }
    }
    chosen.ok_or_else(|| {
        DiscoveryError::NoLanguage(format!(
            "no language of this server takes the program ({})",
            reasons.join("; ")
        ))
    })
}

fn usable(
    discovery: &Discovery,
    lang: &Language,
    needs: Needs<'_>,
    explicit: bool,
) -> Result<Chosen, String> {
    if !lang.caps.validate {
        return Err(undeclared(lang, "validate"));
    }
    if needs.execute && !lang.caps.execute {
        return Err(undeclared(lang, "execute"));
    }
    // Without an explicit choice, a Language is only a candidate when the
    // supplied context matches its declaration; explicitly chosen, the
    // server reports the mismatch as a `context_binding` diagnostic.
    if !explicit {
        match (lang.context_schema.is_some(), needs.context_given) {
            (true, false) => return Err("it requires --context".into()),
            (false, true) => return Err("it takes no context".into()),
            _ => {}
        }
    }
    let tools = &discovery.tools;
    let validate_name = lang.validate_tool.as_deref().unwrap_or_default();
    let validate = loop_tool(tools, validate_name, &lang.name)?;
    if let Some(t) = find_tool(tools, validate_name)
        && !type_fits(t, &validate.argument, needs.program)
    {
        return Err(format!(
            "its program argument {:?} does not take a value of this JSON type",
            validate.argument
        ));
    }
    let execute = match (needs.execute, lang.execute_tool.as_deref()) {
        (true, Some(name)) => Some(loop_tool(tools, name, &lang.name)?),
        _ => None,
    };
    Ok(Chosen {
        language: lang.clone(),
        validate,
        execute,
        alternatives: Vec::new(),
    })
}

/// The Language a single-purpose command works on: the requested one, or
/// the first in manifest order for which `fits` holds.
pub fn pick<'a>(
    discovery: &'a Discovery,
    requested: Option<&str>,
    what: &str,
    fits: impl Fn(&Language) -> bool,
) -> Result<&'a Language, DiscoveryError> {
    let langs = &discovery.manifest.languages;
    let found = match requested {
        Some(r) => langs.iter().find(|l| l.name == r),
        None => langs.iter().find(|l| fits(l)),
    };
    match found {
        Some(l) if fits(l) => Ok(l),
        Some(l) => Err(DiscoveryError::NoLanguage(format!(
            "{} does not declare {what}{}",
            l.name,
            if l.notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", l.notes.join("; "))
            }
        ))),
        None => Err(DiscoveryError::NoLanguage(match requested {
            Some(r) => format!(
                "the server has no language {r:?}; it offers {}",
                langs
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => format!("no language of this server declares {what}"),
        })),
    }
}

fn undeclared(lang: &Language, cap: &str) -> String {
    let mut s = format!("{cap} is not declared");
    if !lang.notes.is_empty() {
        s.push_str(&format!(" ({})", lang.notes.join("; ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "pilotage_manifest", "inputSchema": {"type": "object"}}),
            json!({"name": "validate_workflow", "inputSchema": {"type": "object", "properties": {"workflow": {}, "context": {}}},
                "_meta": {EXTENSION_ID: {"argument": "workflow", "language": "workflow/v1"}}}),
            json!({"name": "run_workflow", "inputSchema": {"type": "object", "properties": {"workflow": {}, "mode": {"type": "string"}, "expected_catalog_version": {"type": "string"}}},
                "_meta": {EXTENSION_ID: {"argument": "workflow", "language": "workflow/v1"}}}),
            json!({"name": "validate_staging", "inputSchema": {"type": "object", "properties": {"doc": {}}},
                "_meta": {EXTENSION_ID: {"languages": [{"argument": "doc", "language": "staging/v1"}]}}}),
            json!({"name": "run_staging", "inputSchema": {"type": "object", "properties": {"doc": {}}}}),
            json!({"name": "validate_sql", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
                "_meta": {EXTENSION_ID: {"argument": "query", "language": "sql/1"}}}),
        ]
    }

    fn lang(name: &str, validate: &str, execute: Option<&str>, context: bool) -> Value {
        let mut l = json!({"name": name, "title": name, "guides": "pilotage_get_guide",
            "loop": {"validate": validate}, "locator": "json-pointer",
            "capabilities": {"guides": true, "validate": true, "plan": true}});
        if let Some(e) = execute {
            l["loop"]["execute"] = json!(e);
            l["capabilities"]["execute"] = json!(true);
            l["execution"] = json!("both");
            l["trace"] = json!("full");
            l["retention"] = json!("none");
        }
        if context {
            l["context_schema"] = json!({"type": "object"});
        }
        l
    }

    fn discovery(langs: Vec<Value>) -> Discovery {
        Discovery {
            manifest: Manifest::parse(&json!({"pilotage": "1.1", "languages": langs}))
                .expect("manifest"),
            tools: tools(),
            extension_declared: true,
            init_manifest_differs: false,
        }
    }

    fn needs(program: &Value) -> Needs<'_> {
        Needs {
            program,
            execute: true,
            context_given: false,
        }
    }

    #[test]
    fn reads_the_argument_from_the_declaration_only() {
        let t = tools();
        assert_eq!(
            program_argument(&t[1], "workflow/v1").as_deref(),
            Some("workflow")
        );
        assert_eq!(
            program_argument(&t[3], "staging/v1").as_deref(),
            Some("doc")
        );
        assert_eq!(program_argument(&t[1], "staging/v1"), None);
        assert_eq!(
            program_argument(&t[4], "staging/v1"),
            None,
            "no declaration: no guess"
        );
    }

    #[test]
    fn chooses_the_first_language_whose_tools_take_the_program() {
        let d = discovery(vec![
            lang("staging/v1", "validate_staging", Some("run_staging"), false),
            lang(
                "workflow/v1",
                "validate_workflow",
                Some("run_workflow"),
                false,
            ),
            lang("sql/1", "validate_sql", None, false),
        ]);
        let program = json!({"steps": []});
        let c = choose(&d, None, needs(&program)).expect("chosen");
        // staging's execute tool has no declaration, so it cannot run it.
        assert_eq!(c.language.name, "workflow/v1");
        assert_eq!(c.validate.argument, "workflow");
        assert!(
            c.execute
                .as_ref()
                .is_some_and(|e| e.accepts("expected_catalog_version"))
        );
        assert!(c.needs_mode());
    }

    #[test]
    fn a_string_program_goes_to_a_language_taking_strings() {
        let d = discovery(vec![
            lang("sql/1", "validate_sql", None, false),
            lang(
                "workflow/v1",
                "validate_workflow",
                Some("run_workflow"),
                false,
            ),
        ]);
        let text = json!("select 1");
        let c = choose(
            &d,
            None,
            Needs {
                program: &text,
                execute: false,
                context_given: false,
            },
        )
        .expect("chosen");
        assert_eq!(c.language.name, "sql/1");
        assert_eq!(c.alternatives, vec!["workflow/v1".to_string()]);
        let object = json!({"steps": []});
        let c = choose(
            &d,
            None,
            Needs {
                program: &object,
                execute: false,
                context_given: false,
            },
        )
        .expect("chosen");
        assert_eq!(c.language.name, "workflow/v1");
    }

    #[test]
    fn context_requirements_filter_implicit_choices() {
        let d = discovery(vec![lang(
            "workflow/v1",
            "validate_workflow",
            Some("run_workflow"),
            true,
        )]);
        let program = json!({"steps": []});
        let err = choose(&d, None, needs(&program)).unwrap_err();
        assert!(err.to_string().contains("--context"), "{err}");
        // Chosen explicitly, the server judges the (missing) context.
        assert!(choose(&d, Some("workflow/v1"), needs(&program)).is_ok());
        assert!(choose(&d, Some("nope/v1"), needs(&program)).is_err());
    }
}

//! The adapter's checks of a workflow against n8n's node descriptions: node
//! types and versions, parameters (`params`), filter operators (`filter`),
//! cron expressions (`cron`) and credentials. Every finding is a
//! `RawProblem` in the adapter's fixed wording (classifiers/n8n-v1.toml
//! maps it to a closed code) at a JSON Pointer into the program. The
//! document's form and graph are the language's: a node without a type or
//! with parameters that are not an object is skipped here.

use super::nodes::{NodeCatalog, NodeType, num};
use super::params::{self, Level};
use crate::engines::RawProblem;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// A credential the tenant's user can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantCredential {
    pub id: String,
    pub name: String,
    /// Its credential type (`httpBasicAuth`).
    pub kind: String,
}

/// Every problem of `program`'s nodes. `credentials` is the tenant's list
/// (`None`: not known, so named credentials are not looked up).
pub fn check_workflow(
    catalog: &NodeCatalog,
    program: &Value,
    credentials: Option<&[TenantCredential]>,
) -> Vec<RawProblem> {
    let mut out = Vec::new();
    let Some(nodes) = program.get("nodes").and_then(Value::as_array) else {
        return out;
    };
    for (i, node) in nodes.iter().enumerate() {
        check_node(catalog, i, node, credentials, &mut out);
    }
    out
}

fn check_node(
    catalog: &NodeCatalog,
    i: usize,
    node: &Value,
    credentials: Option<&[TenantCredential]>,
    out: &mut Vec<RawProblem>,
) {
    let at = format!("/nodes/{i}");
    let Some(type_name) = node.get("type").and_then(Value::as_str) else {
        return;
    };
    let Some(node_type) = catalog.types.get(type_name) else {
        out.push(RawProblem::error_at(
            format!("unknown node type '{type_name}'"),
            format!("{at}/type"),
        ));
        return;
    };
    let version = match node.get("typeVersion") {
        None | Some(Value::Null) => num(&node_type.default_version),
        Some(Value::Number(n)) => num(n),
        Some(other) => {
            out.push(RawProblem::error_at(
                format!(
                    "typeVersion {other} is a {}, not a number",
                    params::json_type(other)
                ),
                format!("{at}/typeVersion"),
            ));
            return;
        }
    };
    let Some(description) = node_type.at(version) else {
        out.push(RawProblem::error_at(
            format!(
                "node type '{}' has no version {} (versions: {})",
                short_name(type_name),
                node.get("typeVersion").unwrap_or(&Value::Null),
                version_list(node_type)
            ),
            format!("{at}/typeVersion"),
        ));
        return;
    };
    let empty = Map::new();
    let given = match node.get("parameters") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return,
    };
    let level = Level {
        node_type: type_name,
        version,
        top: true,
    };
    let properties = catalog.properties(description);
    let values = params::check_level(
        &properties,
        given,
        None,
        &level,
        &format!("{at}/parameters"),
        out,
    );
    check_credentials(
        node,
        &at,
        &description.credentials,
        &properties,
        &values,
        version,
        credentials,
        out,
    );
}

/// `set` for `n8n-nodes-base.set`: the name n8n's own messages use.
fn short_name(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap_or(type_name)
}

fn version_list(node_type: &NodeType) -> String {
    node_type
        .versions()
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Credentials required and absent, and credentials named that the tenant
/// does not have.
#[allow(clippy::too_many_arguments)]
fn check_credentials(
    node: &Value,
    at: &str,
    declared: &[Value],
    properties: &[Value],
    values: &Map<String, Value>,
    version: f64,
    tenant: Option<&[TenantCredential]>,
    out: &mut Vec<RawProblem>,
) {
    let named = node.get("credentials").and_then(Value::as_object);
    let scope = super::display::Scope {
        level: values,
        root: values,
        version,
    };
    let mut required: BTreeSet<String> = declared
        .iter()
        .filter(|c| c.get("required").and_then(Value::as_bool) == Some(true))
        .filter(|c| super::display::shown(c.get("displayOptions"), &scope))
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    // A credential type chosen by a parameter (HTTP Request's
    // `genericAuthType`) is required once that parameter is shown.
    for p in properties {
        if p.get("type").and_then(Value::as_str) != Some("credentialsSelect") {
            continue;
        }
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !super::display::shown(p.get("displayOptions"), &scope) {
            continue;
        }
        if let Some(kind) = values.get(name).and_then(Value::as_str)
            && !kind.is_empty()
            && !kind.starts_with('=')
        {
            required.insert(kind.to_string());
        }
    }
    for kind in &required {
        if !named.is_some_and(|n| n.contains_key(kind)) {
            out.push(RawProblem::error_at(
                format!("credentials of type '{kind}' are required and none are named"),
                at.to_string(),
            ));
        }
    }
    let (Some(named), Some(tenant)) = (named, tenant) else {
        return;
    };
    for (kind, reference) in named {
        let id = reference.get("id").and_then(Value::as_str);
        let name = reference.get("name").and_then(Value::as_str);
        let found = tenant.iter().any(|c| {
            c.kind == *kind
                && match id {
                    Some(id) => c.id == id,
                    None => name.is_some_and(|n| c.name == n),
                }
        });
        if !found {
            out.push(RawProblem::error_at(
                format!(
                    "credential '{}' of type '{kind}' does not exist or is not shared with this user",
                    name.or(id).unwrap_or("")
                ),
                format!("{at}/credentials/{}", params::token(kind)),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::n8n::nodes::tests::fixture;
    use serde_json::json;

    fn problems(node: Value) -> Vec<(String, String)> {
        check_workflow(fixture(), &json!({"nodes": [node]}), Some(&[]))
            .into_iter()
            .map(|p| (p.text, p.location.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn expressions_pass_wherever_a_value_goes() {
        let found = problems(
            json!({"name": "Fetch", "type": "n8n-nodes-base.httpRequest",
            "typeVersion": 4.2, "parameters": {"url": "={{ $json.u }}", "method": "={{ $json.m }}"}}),
        );
        assert!(found.is_empty(), "{found:?}");
        let found = problems(json!({"name": "Wait", "type": "n8n-nodes-base.wait",
            "typeVersion": 1.1, "parameters": {"amount": "={{ 2 }}", "unit": "seconds"}}));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn only_shown_parameters_are_required() {
        // Python code: the JavaScript code is hidden, so not required.
        let python = problems(
            json!({"name": "Py", "type": "n8n-nodes-base.code", "typeVersion": 2,
            "parameters": {"language": "pythonNative", "pythonCode": "return items"}}),
        );
        assert!(python.is_empty(), "{python:?}");
        let empty = problems(
            json!({"name": "Py", "type": "n8n-nodes-base.code", "typeVersion": 2,
            "parameters": {"language": "pythonNative", "pythonCode": ""}}),
        );
        assert_eq!(
            empty,
            [(
                "required parameter 'pythonCode' is empty".to_string(),
                "/nodes/0/parameters/pythonCode".to_string()
            )]
        );
    }

    #[test]
    fn a_missing_version_is_the_default_one() {
        let found = problems(
            json!({"name": "Fetch", "type": "n8n-nodes-base.httpRequest",
            "parameters": {}}),
        );
        assert_eq!(
            found,
            [(
                "required parameter 'url' is missing".to_string(),
                "/nodes/0/parameters".to_string()
            )]
        );
    }

    #[test]
    fn any_shape_of_document_is_read_without_a_panic() {
        for program in [
            json!(null),
            json!({"nodes": {"a": 1}}),
            json!({"nodes": [1, "x", null, {"type": 5}, {"type": "n8n-nodes-base.set", "typeVersion": [1]}]}),
            json!({"nodes": [{"type": "n8n-nodes-base.set", "typeVersion": 3.4, "parameters": [1]}]}),
            json!({"nodes": [{"type": "n8n-nodes-base.set", "typeVersion": 3.4,
                "parameters": {"assignments": 7, "options": "x", "mode": {"a": 1}}}]}),
            json!({"nodes": [{"type": "n8n-nodes-base.if", "typeVersion": 2.2,
                "parameters": {"conditions": {"conditions": [1, {"operator": 2}, {"operator": {"type": 3}}]}}}]}),
            json!({"nodes": [{"type": "n8n-nodes-base.httpRequest", "typeVersion": 4.2,
                "parameters": {"url": "http://x"}, "credentials": {"httpBasicAuth": 5}}]}),
        ] {
            let _ = check_workflow(fixture(), &program, Some(&[]));
        }
    }
}

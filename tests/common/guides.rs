//! Reading the guides a gateway serves: a guide's body, and the closed sets
//! its tables enumerate (the first column of the table under a heading).

use super::Mcp;
use serde_json::json;

/// The body of the guide `id` of `language`.
pub async fn guide_body(c: &Mcp, language: &str, id: &str) -> String {
    let g = c
        .call(
            "pilotage_get_guide",
            json!({"language": language, "id": id}),
        )
        .await;
    g.structured["guide"]["body"]
        .as_str()
        .unwrap_or_else(|| panic!("{language} guide {id} has a body: {}", g.structured))
        .to_string()
}

/// The body of the closed-sets guide, found by its topic in the index.
pub async fn closed_sets_body(c: &Mcp, language: &str) -> String {
    let index = c
        .call("pilotage_get_guide", json!({"language": language}))
        .await;
    let id = index.structured["guides"]
        .as_array()
        .and_then(|g| {
            g.iter().find(|g| {
                g["topics"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|x| x == "closed-sets"))
            })
        })
        .and_then(|g| g["id"].as_str())
        .expect("closed-sets guide")
        .to_string();
    guide_body(c, language, &id).await
}

/// The first-column values of the table under `heading`, in guide order.
pub fn listed(guide: &str, heading: &str) -> Vec<String> {
    let section = guide
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("{heading} in the guide"));
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

/// The closed diagnostic-code set of `language`, read from the closed-sets
/// guide the server itself publishes.
pub async fn closed_codes(c: &Mcp, language: &str) -> Vec<String> {
    listed(&closed_sets_body(c, language).await, "## Diagnostic codes")
}

//! Size limits checked before anything else: the step budget and the nesting depth.
//! Both are counted over the raw document, so even a malformed workflow is bounded.

use serde_json::Value;

/// Most steps a workflow may have, nested ones included.
pub const MAX_STEPS: usize = 200;
/// Deepest step nesting: a top-level step is at depth 1, a step in its arm at 2.
pub const MAX_DEPTH: usize = 16;

const NESTED_LISTS: [&str; 3] = ["then", "else", "do"];

fn nested(step: &Value) -> impl Iterator<Item = &Vec<Value>> {
    NESTED_LISTS
        .iter()
        .filter_map(|key| step.get(*key).and_then(Value::as_array))
}

/// Number of steps, nested ones included.
pub fn count_steps(steps: &[Value]) -> usize {
    steps
        .iter()
        .map(|s| 1 + nested(s).map(|list| count_steps(list)).sum::<usize>())
        .sum()
}

/// Deepest nesting level of any step (0 for an empty list).
pub fn max_depth(steps: &[Value]) -> usize {
    steps
        .iter()
        .map(|s| 1 + nested(s).map(|list| max_depth(list)).max().unwrap_or(0))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_and_depths_include_nested_steps() {
        let steps = json!([
            {"id": "a"},
            {"id": "b", "then": [{"id": "c", "do": [{"id": "d"}]}], "else": [{"id": "e"}]}
        ]);
        let steps = steps.as_array().expect("list");
        assert_eq!(count_steps(steps), 5);
        assert_eq!(max_depth(steps), 3);
        assert_eq!(max_depth(&[]), 0);
    }
}

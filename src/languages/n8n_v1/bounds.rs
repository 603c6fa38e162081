//! Validation bounds (Part II §10.1) of an `n8n/v1` program, checked before
//! anything else reads it: the JSON's nesting depth (counted without
//! recursion), its size, the number of nodes (the steps) and the longest
//! node name (the step ids).

use crate::config::language::Bounds;
use crate::languages::steps::bounds::program_size;
use crate::pilotage::RequestError;
use serde_json::Value;

/// `bounds_exceeded` past any bound.
pub fn check(program: &Value, bounds: &Bounds) -> Result<(), RequestError> {
    let d = depth(program);
    if d > bounds.max_depth {
        return Err(RequestError::bounds(format!(
            "program nesting depth {d} exceeds the bound of {}",
            bounds.max_depth
        )));
    }
    program_size(program, bounds.max_program_bytes)?;
    let nodes = program
        .get("nodes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if nodes.len() > bounds.max_steps {
        return Err(RequestError::bounds(format!(
            "program has {} nodes; the bound is {}",
            nodes.len(),
            bounds.max_steps
        )));
    }
    let longest = nodes
        .iter()
        .filter_map(|n| n.get("name").and_then(Value::as_str))
        .map(str::len)
        .max()
        .unwrap_or(0);
    if longest > bounds.max_id_bytes {
        return Err(RequestError::bounds(format!(
            "a node name is {longest} bytes long; the bound is {} bytes",
            bounds.max_id_bytes
        )));
    }
    Ok(())
}

/// The nesting depth of `value`: 1 for a scalar, one more per enclosing
/// object or list.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(fields) => stack.extend(fields.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b(max_depth: usize, max_steps: usize, bytes: usize, id: usize) -> Bounds {
        Bounds {
            max_depth,
            max_steps,
            max_program_bytes: bytes,
            max_id_bytes: id,
        }
    }

    #[test]
    fn each_bound_answers_bounds_exceeded() {
        let program = json!({"nodes": [{"name": "Start", "parameters": {}}, {"name": "Fetch"}], "connections": {}});
        assert_eq!(depth(&program), 4);
        assert!(check(&program, &b(4, 2, 1000, 5)).is_ok());
        let cases = [
            (b(3, 2, 1000, 5), "nesting depth 4"),
            (b(4, 1, 1000, 5), "2 nodes"),
            (b(4, 2, 1000, 4), "5 bytes long"),
            (b(4, 2, 20, 5), "exceeds the bound of 20 bytes"),
        ];
        for (bounds, says) in cases {
            let e = check(&program, &bounds).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
        }
        assert!(check(&json!("text"), &b(1, 0, 100, 0)).is_ok());
    }
}

//! A workflow shared by this folder's unit tests, with every construct the
//! plan and the trace model: a Loop Over Items with a body, an If whose
//! arms meet again at a Merge, a Switch inside an arm, and a sticky note.

use serde_json::{Value, json};

fn to(target: &str, index: usize) -> Value {
    json!([{"node": target, "type": "main", "index": index}])
}

/// The workflow; node positions are the comments' numbers.
pub fn shapes() -> Value {
    let n = |name: &str, kind: &str, version: f64, parameters: Value| {
        json!({"name": name, "type": format!("n8n-nodes-base.{kind}"), "typeVersion": version,
               "position": [0, 0], "parameters": parameters})
    };
    json!({
        "name": "shapes",
        "nodes": [
            n("Start", "manualTrigger", 1.0, json!({})),                       // 0
            n("Items", "code", 2.0, json!({"jsCode": "return [];"})),         // 1
            n("Loop", "splitInBatches", 3.0, json!({"batchSize": 2})),        // 2
            n("Mark", "set", 3.4, json!({})),                                  // 3
            n("Check", "if", 2.2, json!({})),                                  // 4
            n("Big", "httpRequest", 4.2, json!({"method": "DELETE", "url": "http://x"})), // 5
            n("Route", "switch", 3.2, json!({"rules": {"values": [
                {"renameOutput": true, "outputKey": "a"}, {"outputKey": "ignored"}]}})), // 6
            n("A", "noOp", 1.0, json!({})),                                    // 7
            n("B", "noOp", 1.0, json!({})),                                    // 8
            n("Join", "merge", 3.2, json!({})),                                // 9
            n("End", "httpRequest", 4.2, json!({"url": "http://x"})),         // 10
            n("Note", "stickyNote", 1.0, json!({"content": "hi"})),            // 11
        ],
        "connections": {
            "Start": {"main": [to("Items", 0)]},
            "Items": {"main": [to("Loop", 0)]},
            "Loop": {"main": [to("Check", 0), to("Mark", 0)]},
            "Mark": {"main": [to("Loop", 0)]},
            "Check": {"main": [to("Big", 0), to("Route", 0)]},
            "Big": {"main": [to("Join", 0)]},
            "Route": {"main": [to("A", 0), to("B", 0)]},
            "A": {"main": [to("Join", 1)]},
            "B": {"main": [to("Join", 1)]},
            "Join": {"main": [to("End", 0)]}
        }
    })
}

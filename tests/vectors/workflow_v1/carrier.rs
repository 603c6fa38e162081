//! Carrier vectors (Part III §7.1).

use crate::support::session;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn pil_carrier_unknown_tool_b() {
    let (_env, c) = session().await;
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A structural fault on an access tool is carrier-level too.
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "pilotage_catalog", "arguments": {"language": "workflow/v1"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "missing verb: {r}");
    let r = c.rpc("tools/call", json!({"name": "pilotage_catalog", "arguments": {"language": "workflow/v1", "verb": "list", "limit": "ten"}})).await;
    assert_eq!(r["error"]["code"], -32602, "wrong type: {r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_carrier_malformed_b() {
    let (_env, c) = session().await;
    let (status, _, body) = c.raw("{ not json").await;
    assert!(status < 500, "never a 5xx: {status}");
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert!(body["id"].is_null());
    // A JSON value that is not a JSON-RPC message is -32600.
    let (_, _, body) = c.raw("[1, 2]").await;
    assert_eq!(body["error"]["code"], -32600, "{body}");
}

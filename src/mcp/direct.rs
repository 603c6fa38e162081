//! `tools/call` answered by the front itself, without building rmcp's
//! per-request service (a peer, a service loop and a handler task, joined
//! by channels): the same handler, the same checks, the same answer.
//!
//! Only for calls rmcp's stateless transport would hand to the handler
//! untouched: no `MCP-Protocol-Version` header, or one naming a known
//! revision before 2026-07-28 (the standard request headers and the inline
//! lifecycle start there), and no protocol version in the request's
//! `_meta`. Everything else (initialize, discover, notifications, newer
//! revisions) still goes through rmcp. The answer is rmcp's own message
//! type, serialised the way its transport does; the result is shaped for an
//! older peer as rmcp's handler shapes it (no `resultType`, object-only
//! structured output). Shared structured content ([`Rendered`]) is written
//! from its stored text, inside the same rmcp response type.

use super::answer::{Answer, Rendered};
use super::arguments::PlainCall;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ClientRequest,
    GetMeta, JsonRpcResponse, JsonRpcVersion2_0, ProtocolVersion, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use serde::Serialize;
use serde_json::value::RawValue;

const PROTOCOL_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// A tool call the front answers directly.
pub struct DirectCall {
    pub id: RequestId,
    pub params: CallToolRequestParams,
}

/// The call in `message` when rmcp would pass it to the handler as it is.
pub fn direct_call(message: ClientJsonRpcMessage, headers: &HeaderMap) -> Option<DirectCall> {
    if !legacy_revision(headers) {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if request.request.get_meta().protocol_version().is_some() {
        return None;
    }
    let ClientRequest::CallToolRequest(call) = request.request else {
        return None;
    };
    Some(DirectCall {
        id: request.id,
        params: call.params,
    })
}

/// A plain call (one the front read without rmcp's message enums) on the
/// same terms as [`direct_call`]; a plain call has no `_meta`.
pub fn plain_call(call: PlainCall, headers: &HeaderMap) -> Option<DirectCall> {
    legacy_revision(headers).then(|| DirectCall {
        id: call.id,
        params: CallToolRequestParams::new(call.name),
    })
}

/// No protocol header, or one naming a known revision before 2026-07-28.
pub fn legacy_revision(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(PROTOCOL_HEADER).iter();
    let Some(value) = values.next() else {
        return true;
    };
    if values.next().is_some() {
        return false;
    }
    let Ok(version) = value.to_str() else {
        return false;
    };
    version < ProtocolVersion::V_2026_07_28.as_str()
        && ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|v| v.as_str() == version)
}

/// rmcp's result with shared structured content written from its text: the
/// result's other members as rmcp writes them, `structuredContent` as stored.
#[derive(Serialize)]
struct SharedResult<'a> {
    #[serde(flatten)]
    result: &'a CallToolResult,
    #[serde(rename = "structuredContent")]
    structured: &'a RawValue,
}

/// The JSON-RPC answer to `id`, as rmcp's JSON response mode writes it.
pub fn answer(id: RequestId, result: Result<Answer, rmcp::ErrorData>) -> Response<Body> {
    let body = match result {
        Ok(Answer {
            result,
            shared: Some(shared),
        }) => shared_answer(id, result, &shared),
        Ok(answer) => {
            let mut result = ServerResult::from(CallToolResponse::from(answer.into_result()));
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            serde_json::to_vec(&ServerJsonRpcMessage::response(result, id))
        }
        Err(e) => serde_json::to_vec(&ServerJsonRpcMessage::error(e, Some(id))),
    };
    match body {
        Ok(body) => {
            let mut response = Response::new(Body::from(body));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => super::carrier::rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::Value::Null,
            super::carrier::INTERNAL_ERROR,
            &format!("the answer could not be written: {e}"),
        ),
    }
}

/// The answer of a result with shared content, shaped for an older peer as
/// [`answer`] shapes the others: no `resultType`; the shared content is
/// always an object (the manifest, a catalog page).
fn shared_answer(
    id: RequestId,
    mut result: CallToolResult,
    shared: &Rendered,
) -> serde_json::Result<Vec<u8>> {
    result.result_type = None;
    result.structured_content = None;
    // The shared text is most of the answer: room for it and the summary
    // up front, rather than growing the buffer several times over.
    let mut body = Vec::with_capacity(shared.text.get().len() + 512);
    serde_json::to_writer(
        &mut body,
        &JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: SharedResult {
                result: &result,
                structured: &shared.text,
            },
        },
    )?;
    Ok(body)
}

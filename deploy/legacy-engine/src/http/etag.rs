//! ETag and `If-None-Match` for catalog listings. The tag is the hex SHA-256 of the
//! listed array exactly as serialized in the body, so any change to it (the volatile
//! usage counters included) moves the tag.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// The quoted tag of a serialized array.
pub fn tag(serialized_array: &str) -> String {
    format!(
        "\"{}\"",
        hex::encode(Sha256::digest(serialized_array.as_bytes()))
    )
}

fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    let Some(value) = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    value.split(',').map(str::trim).any(|candidate| {
        let candidate = candidate.strip_prefix("W/").unwrap_or(candidate);
        candidate == "*" || candidate == etag
    })
}

/// 304 with an empty body when the client already has this listing, else 200 with
/// `body`; both carry the ETag.
pub fn respond(request_headers: &HeaderMap, serialized_array: &str, body: String) -> Response {
    let etag = tag(serialized_array);
    let etag_header =
        HeaderValue::from_str(&etag).unwrap_or_else(|_| HeaderValue::from_static("\"\""));
    if not_modified(request_headers, &etag) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag_header)]).into_response();
    }
    (
        StatusCode::OK,
        [
            (header::ETAG, etag_header),
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
        ],
        body,
    )
        .into_response()
}

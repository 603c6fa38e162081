//! The size bound every language checks the same way (Part II §10.1): the
//! program's compact JSON, counted rather than written out, so an oversized
//! program is refused without being copied.

use crate::pilotage::RequestError;
use serde_json::Value;

/// `bounds_exceeded` when the compact JSON of `program` is longer than
/// `max_bytes`.
pub fn program_size(program: &Value, max_bytes: usize) -> Result<(), RequestError> {
    serialized_size_within(program, max_bytes).map_err(|size| too_large(size, max_bytes))
}

/// The `bounds_exceeded` error of a program of `size` bytes.
pub fn too_large(size: usize, max_bytes: usize) -> RequestError {
    RequestError::bounds(format!(
        "program size {size} bytes exceeds the bound of {max_bytes} bytes"
    ))
}

/// `Ok` when the compact JSON of `value` fits in `limit` bytes; otherwise
/// `Err` with the bytes counted before the count stopped (just above the
/// limit, or the whole size). Counting stops early, so an oversized value is
/// never written out in full.
pub fn serialized_size_within(value: &Value, limit: usize) -> Result<(), usize> {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, limit };
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => Ok(()),
        Err(_) => Err(counter.bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_the_compact_json_and_names_the_bound() {
        assert_eq!(serialized_size_within(&json!({"a": 1}), 7), Ok(()));
        assert!(serialized_size_within(&json!({"a": 1}), 6).is_err());
        let e = program_size(&json!({"name": "x".repeat(200)}), 150).unwrap_err();
        assert!(
            e.message.contains("exceeds the bound of 150 bytes"),
            "{}",
            e.message
        );
    }
}

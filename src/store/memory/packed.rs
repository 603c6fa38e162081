//! Run records as the embedded store keeps them: compact JSON text,
//! compressed. Retained runs are most of what a busy embedded store holds,
//! and a full trace repeats its member names and step shapes, so its text
//! shrinks several times (the benchmark program's 3 KB record to under a
//! quarter). Compression happens outside the store's lock, once per run; a
//! record is unpacked only when a trace is fetched.

use super::super::StoreError;
use serde_json::Value;
use std::cell::RefCell;

/// zstd's fastest standard level: a record is written once per run, on the
/// execute path, and read rarely.
const LEVEL: i32 = 1;

/// One compressed run record.
#[derive(Debug)]
pub(super) struct Packed(Box<[u8]>);

thread_local! {
    // One compression context per thread, reused: a fresh context per
    // record would allocate and size its tables every time.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

impl Packed {
    /// `record` as compressed compact JSON text.
    pub(super) fn pack(record: &Value) -> Result<Self, StoreError> {
        let text = serde_json::to_vec(record)
            .map_err(|e| StoreError::Corrupt(format!("run record not serializable: {e}")))?;
        let packed = COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::new(LEVEL)?),
            };
            compressor.compress(&text)
        });
        packed
            .map(|bytes| Packed(bytes.into_boxed_slice()))
            .map_err(|e| StoreError::Corrupt(format!("run record not compressible: {e}")))
    }

    /// The record again.
    pub(super) fn unpack(&self) -> Result<Value, StoreError> {
        let text = zstd::stream::decode_all(&self.0[..])
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))?;
        serde_json::from_slice(&text)
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))
    }

    /// Bytes held.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// `len` random letters and digits, which compress to about three
/// quarters of their size at best: the budget tests' records must weigh
/// about what their text says.
#[cfg(test)]
pub(super) fn incompressible(len: usize) -> String {
    use rand::Rng;
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_comes_back_as_it_went_in_and_smaller() {
        let steps: Vec<Value> = (0..40)
            .map(|i| json!({"step": format!("s{i}"), "kind": "call", "status": "ok", "output": {"n": i}}))
            .collect();
        let record = json!({"run_id": "r-1", "outcome": {"ok": true}, "trace": {"steps": steps}});
        let packed = Packed::pack(&record).unwrap();
        assert_eq!(packed.unpack().unwrap(), record);
        let text = serde_json::to_string(&record).unwrap();
        assert!(
            packed.len() * 3 < text.len(),
            "{} of {}",
            packed.len(),
            text.len()
        );
    }

    #[test]
    fn noise_stays_its_size() {
        let text = incompressible(4096);
        let packed = Packed::pack(&Value::String(text)).unwrap();
        // About 6 bits of each 8 carry information.
        assert!(packed.len() > 2 * 4096 / 3, "{}", packed.len());
    }

    #[test]
    fn damaged_bytes_are_a_corrupt_record_not_a_panic() {
        let packed = Packed(vec![1, 2, 3].into_boxed_slice());
        assert!(matches!(packed.unpack(), Err(StoreError::Corrupt(_))));
    }
}

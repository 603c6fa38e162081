//! Run records as the embedded store keeps them: compact JSON text,
//! compressed. Retained runs are most of what a busy embedded store holds,
//! and a full trace repeats its member names and step shapes, so its text
//! shrinks several times (the benchmark program's 3 KB record to under a
//! quarter). Compression happens outside the store's lock, once per run; a
//! record is unpacked only when a trace is fetched.
//!
//! Records are laid side by side in shared blocks ("shelves"), one per
//! retention and thread, not each in an allocation of its own: a record
//! allocated alone sat in the allocator's pages among the request's
//! short-lived buffers of its size, and every such page stayed resident
//! for as long as one record in it lived (with the names shared as well,
//! about 1.4 KB resident per kept run instead of 1.7, measured). Records of
//! one retention written one after another also expire one after another,
//! so a block empties and is returned whole.

use super::super::StoreError;
use bytes::{Bytes, BytesMut};
use serde_json::Value;
use std::cell::RefCell;
use std::time::Duration;

/// zstd's fastest standard level: a record is written once per run, on the
/// execute path, and read rarely.
const LEVEL: i32 = 1;

/// The words every run record repeats, whatever the language: the execute
/// envelope's and the trace's member names and their usual values, given
/// to zstd as a raw-content dictionary. A record is a few KB, too short for
/// the compressor to learn these from the record itself (the benchmark
/// program's 3,034 B record: 698 B without, about 600 B with). Records never leave
/// this process, so only this build ever reads what it wrote with it.
const VOCABULARY: &[u8] = br#"{"run_id":"run_","outcome":{"ok":false,"status":"failed","error":"engine_error"},"output":null,"trace":{"run_id":"run_","level":"summary","steps":[{"id":"","calls":"","input":{"value":""},"output":{"value":[]},"outcome":{"ok":false,"status":"skipped","error":null},"t_ms":1}],"stats":{"calls":1,"duration_ms":1,"test_run":true,"retained":false}}}{"id":"","outcome":{"ok":true,"status":"success","error":null},"decisions":[{"at":"","took":"continue","because":"item 1 of "},{"at":"","took":"exit","because":"items exhausted after "},{"at":"","took":"then","because":" is true"},{"at":"","took":"else","because":" is false"}],"t_ms":0},{"id":"","calls":"","input":{},"output":{},"outcome":{"ok":true,"status":"success","error":null},"t_ms":0}],"stats":{"calls":0,"duration_ms":0,"test_run":false}},"output":{"#;

/// One shelf block: about four hundred records of the benchmark program's
/// size. Larger than the buffers a request grows (which double through
/// 64 KiB), so blocks do not share the allocator's pages with them.
const BLOCK: usize = 256 * 1024;

/// A record larger than this gets an allocation of its own: it would
/// leave too much of a block unused.
const SHELVED_UP_TO: usize = BLOCK / 32;

/// Retentions with a shelf of their own per thread; a record of any other
/// is allocated alone (a configuration has a few languages, each with one
/// retention).
const SHELVES: usize = 8;

/// One compressed run record: its bytes, in a block shared with the
/// records written just before and after it on the same shelf.
#[derive(Debug, Clone)]
pub(super) struct Packed(Bytes);

thread_local! {
    // One compression context per thread, reused: a fresh context per
    // record would allocate and size its tables every time.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    // The block each retention's records are laid in on this thread.
    static SHELF: RefCell<Vec<(Duration, BytesMut)>> = const { RefCell::new(Vec::new()) };
}

impl Packed {
    /// `record` as compressed compact JSON text, shelved with the records
    /// of the same retention `ttl`.
    pub(super) fn pack(record: &Value, ttl: Duration) -> Result<Self, StoreError> {
        compress(record).map(|bytes| Packed(shelve(&bytes, ttl)))
    }

    /// The record again.
    pub(super) fn unpack(&self) -> Result<Value, StoreError> {
        let mut text = Vec::new();
        zstd::stream::read::Decoder::with_dictionary(&self.0[..], VOCABULARY)
            .and_then(|mut decoder| std::io::Read::read_to_end(&mut decoder, &mut text))
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))?;
        serde_json::from_slice(&text)
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))
    }

    /// Bytes held.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// `record` as compressed compact JSON text.
pub(super) fn compress(record: &Value) -> Result<Vec<u8>, StoreError> {
    let text = serde_json::to_vec(record)
        .map_err(|e| StoreError::Corrupt(format!("run record not serializable: {e}")))?;
    COMPRESSOR
        .with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::with_dictionary(LEVEL, VOCABULARY)?),
            };
            compressor.compress(&text)
        })
        .map_err(|e| StoreError::Corrupt(format!("run record not compressible: {e}")))
}

/// `bytes` copied onto this thread's shelf for `ttl`: the next free part of
/// its block, or a new block when the rest is too small (the old one then
/// lives on in its records until the last of them leaves).
fn shelve(bytes: &[u8], ttl: Duration) -> Bytes {
    if bytes.len() > SHELVED_UP_TO {
        return Bytes::copy_from_slice(bytes);
    }
    SHELF.with(|cell| {
        let mut shelves = cell.borrow_mut();
        let at = match shelves.iter().position(|(t, _)| *t == ttl) {
            Some(at) => at,
            None if shelves.len() < SHELVES => {
                shelves.push((ttl, BytesMut::new()));
                shelves.len() - 1
            }
            None => return Bytes::copy_from_slice(bytes),
        };
        let block = &mut shelves[at].1;
        if block.capacity() < bytes.len() {
            *block = BytesMut::with_capacity(BLOCK);
        }
        block.extend_from_slice(bytes);
        block.split().freeze()
    })
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
        let packed = Packed::pack(&record, Duration::from_secs(60)).unwrap();
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
    fn records_shelved_together_come_back_apart() {
        let ttl = Duration::from_secs(3600);
        let records: Vec<Value> = (0..2_000)
            .map(|i| json!({"run_id": format!("r-{i}"), "note": incompressible(i % 50)}))
            .collect();
        let mut packed: Vec<Packed> = records
            .iter()
            .map(|r| Packed::pack(r, ttl).unwrap())
            .collect();
        // The blocks outlive any one record: drop every other one, then
        // read the rest (their blocks now hold records that left).
        let kept: Vec<(usize, Packed)> = packed
            .drain(..)
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .collect();
        for (i, p) in &kept {
            assert_eq!(p.unpack().unwrap(), records[*i]);
        }
        // Neighbours share a block; a large record has its own allocation.
        let (a, b) = (&kept[10].1.0, &kept[11].1.0);
        let gap = (b.as_ptr() as usize).abs_diff(a.as_ptr() as usize);
        assert!(gap < BLOCK, "neighbours {gap} bytes apart");
        let large = Packed::pack(&Value::String(incompressible(SHELVED_UP_TO * 2)), ttl).unwrap();
        assert!(large.len() > SHELVED_UP_TO);
        assert_eq!(
            large.unpack().unwrap().as_str().map(str::len),
            Some(SHELVED_UP_TO * 2)
        );
    }

    #[test]
    fn noise_stays_its_size() {
        let text = incompressible(4096);
        let packed = Packed::pack(&Value::String(text), Duration::from_secs(60)).unwrap();
        // About 6 bits of each 8 carry information.
        assert!(packed.len() > 2 * 4096 / 3, "{}", packed.len());
    }

    #[test]
    fn damaged_bytes_are_a_corrupt_record_not_a_panic() {
        let packed = Packed(Bytes::from_static(&[1, 2, 3]));
        assert!(matches!(packed.unpack(), Err(StoreError::Corrupt(_))));
    }
}

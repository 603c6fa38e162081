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
//!
//! Runs kept one after another are mostly alike (one program run again, or
//! programs of one language with the same trace shape), so a shelf keeps
//! the text of one recent record as a reference, and the records that
//! follow are compressed against it: only what differs from it is kept
//! (the benchmark program's record, about 600 B alone, takes under 100 B
//! against another run's). A reference serves a bounded number of records
//! and lives as long as the last of them.

use super::super::StoreError;
use bytes::{Bytes, BytesMut};
use serde_json::Value;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

/// zstd's fastest standard level: a record is written once per run, on the
/// execute path, and read rarely.
const LEVEL: i32 = 1;

/// The words every run record repeats, whatever the language: the execute
/// envelope's and the trace's member names and their usual values, given
/// to zstd as a raw-content dictionary. A record is a few KB, too short for
/// the compressor to learn these from the record itself (the benchmark
/// program's 3,034 B record: 698 B without, about 600 B with). It is the
/// dictionary of records with no reference. Records never leave this
/// process, so only this build ever reads what it wrote with it.
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

/// The longest record text that becomes a reference: a reference stays
/// resident while any record compressed against it lives.
const REFERENCE_UP_TO: usize = 16 * 1024;

/// Records compressed against one reference before the next record
/// becomes the reference: its text, shared by this many, costs each a few
/// bytes, and a newer reference follows what the runs look like now.
const REFERENCE_USES: u32 = 256;

/// One compressed run record: its bytes, in a block shared with the
/// records written just before and after it on the same shelf, and the
/// reference they were compressed against (none: the vocabulary).
#[derive(Debug, Clone)]
pub(super) struct Packed {
    bytes: Bytes,
    reference: Option<Reference>,
}

/// The text of a record other records are compressed against.
type Reference = Arc<Vec<u8>>;

/// One retention's shelf on one thread.
struct Shelf {
    ttl: Duration,
    block: BytesMut,
    reference: Option<Reference>,
    uses: u32,
}

thread_local! {
    // One compression context per thread, reused: a fresh context per
    // record would allocate and size its tables every time.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    // Another for records with a reference, with the reference it holds
    // loaded: loading one prepares tables, so it is done once per reference.
    static AGAINST_REFERENCE: RefCell<Option<(zstd::bulk::Compressor<'static>, Reference)>> = const { RefCell::new(None) };
    static SHELVES_HERE: RefCell<Vec<Shelf>> = const { RefCell::new(Vec::new()) };
}

impl Packed {
    /// `record` as compressed compact JSON text, shelved with the records
    /// of the same retention `ttl` and compressed against their reference;
    /// with the bytes it brings to be held: its own, and the text of the
    /// reference it starts (which lives on with the records compressed
    /// against it, a bounded number of them).
    pub(super) fn pack(record: &Value, ttl: Duration) -> Result<(Self, usize), StoreError> {
        let text = text_of(record)?;
        SHELVES_HERE.with(|cell| {
            let mut shelves = cell.borrow_mut();
            let Some(shelf) = shelf_for(&mut shelves, ttl) else {
                let bytes = compress_text(&text)?;
                let held = bytes.len();
                let packed = Packed {
                    bytes: Bytes::from(bytes),
                    reference: None,
                };
                return Ok((packed, held));
            };
            let (bytes, reference, started) = match &shelf.reference {
                Some(reference) if shelf.uses < REFERENCE_USES => {
                    shelf.uses += 1;
                    let bytes = compress_against(&text, reference)?;
                    (bytes, Some(reference.clone()), 0)
                }
                _ => {
                    let bytes = compress_text(&text)?;
                    let reference = (text.len() <= REFERENCE_UP_TO).then(|| Arc::new(text));
                    let started = reference.as_ref().map_or(0, |r| r.len());
                    shelf.reference = reference;
                    shelf.uses = 0;
                    (bytes, None, started)
                }
            };
            let held = bytes.len() + started;
            let packed = Packed {
                bytes: shelve(&mut shelf.block, &bytes),
                reference,
            };
            Ok((packed, held))
        })
    }

    /// The record again.
    pub(super) fn unpack(&self) -> Result<Value, StoreError> {
        let dictionary = self.reference.as_ref().map_or(VOCABULARY, |r| &r[..]);
        let mut text = Vec::new();
        zstd::stream::read::Decoder::with_dictionary(&self.bytes[..], dictionary)
            .and_then(|mut decoder| std::io::Read::read_to_end(&mut decoder, &mut text))
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))?;
        serde_json::from_slice(&text)
            .map_err(|e| StoreError::Corrupt(format!("stored run record: {e}")))
    }
}

/// `record` as compressed compact JSON text, against the vocabulary alone.
pub(super) fn compress(record: &Value) -> Result<Vec<u8>, StoreError> {
    compress_text(&text_of(record)?)
}

/// `record` as compressed compact JSON text, against `reference`'s text.
pub(super) fn compress_after(reference: &Value, record: &Value) -> Result<Vec<u8>, StoreError> {
    compress_against(&text_of(record)?, &Arc::new(text_of(reference)?))
}

fn text_of(record: &Value) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(record)
        .map_err(|e| StoreError::Corrupt(format!("run record not serializable: {e}")))
}

fn compress_text(text: &[u8]) -> Result<Vec<u8>, StoreError> {
    COMPRESSOR
        .with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::with_dictionary(LEVEL, VOCABULARY)?),
            };
            compressor.compress(text)
        })
        .map_err(not_compressible)
}

fn compress_against(text: &[u8], reference: &Reference) -> Result<Vec<u8>, StoreError> {
    AGAINST_REFERENCE
        .with(|cell| {
            let mut slot = cell.borrow_mut();
            match slot.as_mut() {
                Some((compressor, loaded)) if Arc::ptr_eq(loaded, reference) => {
                    compressor.compress(text)
                }
                Some((compressor, loaded)) => {
                    compressor.set_dictionary(LEVEL, reference)?;
                    *loaded = reference.clone();
                    compressor.compress(text)
                }
                None => {
                    let compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, reference)?;
                    let (compressor, _) = slot.insert((compressor, reference.clone()));
                    compressor.compress(text)
                }
            }
        })
        .map_err(not_compressible)
}

fn not_compressible(e: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("run record not compressible: {e}"))
}

/// This thread's shelf for `ttl`, made when there is room for another.
fn shelf_for(shelves: &mut Vec<Shelf>, ttl: Duration) -> Option<&mut Shelf> {
    let at = match shelves.iter().position(|s| s.ttl == ttl) {
        Some(at) => at,
        None if shelves.len() < SHELVES => {
            shelves.push(Shelf {
                ttl,
                block: BytesMut::new(),
                reference: None,
                uses: 0,
            });
            shelves.len() - 1
        }
        None => return None,
    };
    shelves.get_mut(at)
}

/// `bytes` copied onto a shelf's `block`: its next free part, or a new
/// block when the rest is too small (the old one then lives on in its
/// records until the last of them leaves). A large record is allocated
/// alone.
fn shelve(block: &mut BytesMut, bytes: &[u8]) -> Bytes {
    if bytes.len() > SHELVED_UP_TO {
        return Bytes::copy_from_slice(bytes);
    }
    if block.capacity() < bytes.len() {
        *block = BytesMut::with_capacity(BLOCK);
    }
    block.extend_from_slice(bytes);
    block.split().freeze()
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
        let text = serde_json::to_string(&record).unwrap();
        let alone = compress(&record).unwrap();
        assert!(
            alone.len() * 3 < text.len(),
            "{} of {}",
            alone.len(),
            text.len()
        );
        // On a shelf of its own it is the reference, and holds its text too.
        let (packed, held) = Packed::pack(&record, Duration::from_secs(61)).unwrap();
        assert_eq!(packed.unpack().unwrap(), record);
        assert_eq!(packed.bytes.len(), alone.len());
        assert_eq!(held, alone.len() + text.len());
    }

    #[test]
    fn runs_alike_keep_only_what_differs_from_their_reference() {
        let ttl = Duration::from_secs(62);
        let run = |i: usize| {
            let steps: Vec<Value> = (0..30)
                .map(|s| json!({"id": format!("s{s}"), "calls": "crm.get", "output": {"n": s, "name": "Ada Lovelace"}}))
                .collect();
            json!({"run_id": format!("run_{:032x}", i * 7_919), "trace": {"steps": steps}})
        };
        let (first, _) = Packed::pack(&run(0), ttl).unwrap();
        let alone = compress(&run(1)).unwrap().len();
        let (later, held): (Vec<Packed>, Vec<usize>) = (1..=REFERENCE_USES as usize + 1)
            .map(|i| Packed::pack(&run(i), ttl).unwrap())
            .unzip();
        // Against the reference, a run is a fraction of itself alone.
        assert!(held[0] * 4 < alone, "{} vs {alone}", held[0]);
        // A reference serves a bounded number: the one after them is the
        // next reference, holding its own text.
        assert!(held[REFERENCE_USES as usize] > alone);
        // Each comes back whole, also once the reference's first record left.
        drop(first);
        for (i, packed) in later.iter().enumerate() {
            assert_eq!(packed.unpack().unwrap(), run(i + 1));
        }
    }

    #[test]
    fn records_shelved_together_come_back_apart() {
        let ttl = Duration::from_secs(3600);
        let records: Vec<Value> = (0..2_000)
            .map(|i| json!({"run_id": format!("r-{i}"), "note": incompressible(i % 50)}))
            .collect();
        let mut packed: Vec<Packed> = records
            .iter()
            .map(|r| Packed::pack(r, ttl).unwrap().0)
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
        let (a, b) = (&kept[10].1.bytes, &kept[11].1.bytes);
        let gap = (b.as_ptr() as usize).abs_diff(a.as_ptr() as usize);
        assert!(gap < BLOCK, "neighbours {gap} bytes apart");
        let (large, _) =
            Packed::pack(&Value::String(incompressible(SHELVED_UP_TO * 2)), ttl).unwrap();
        assert!(large.bytes.len() > SHELVED_UP_TO);
        assert_eq!(
            large.unpack().unwrap().as_str().map(str::len),
            Some(SHELVED_UP_TO * 2)
        );
    }

    #[test]
    fn noise_stays_its_size() {
        let text = incompressible(4096);
        let (packed, _) = Packed::pack(&Value::String(text), Duration::from_secs(60)).unwrap();
        // About 6 bits of each 8 carry information.
        assert!(packed.bytes.len() > 2 * 4096 / 3, "{}", packed.bytes.len());
    }

    #[test]
    fn damaged_bytes_are_a_corrupt_record_not_a_panic() {
        let packed = Packed {
            bytes: Bytes::from_static(&[1, 2, 3]),
            reference: None,
        };
        assert!(matches!(packed.unpack(), Err(StoreError::Corrupt(_))));
    }
}

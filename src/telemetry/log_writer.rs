//! Where log lines go: one shared buffer that a thread of its own writes to
//! stderr in batches.
//!
//! Why not a queue that wakes its thread for every line: on a busy gateway
//! that wake (a futex call and a context switch per request) cost more than
//! formatting the line. Here a request appends its line under a short lock;
//! the logging thread is woken only by the first line after it went idle,
//! then pauses [`BATCH_PAUSE`] so the lines of that moment gather, and
//! writes them in one `write`. Nothing is dropped: past [`BUFFER_LIMIT`]
//! bytes a caller waits for the thread to take the batch, as a full pipe
//! would make it wait. Dropping the [`LogGuard`] writes out what is left.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the logging thread lets lines gather after a batch, at most
/// this late for a line of a busy moment.
const BATCH_PAUSE: Duration = Duration::from_millis(2);

/// Bytes of lines waiting at most before callers wait for the thread: a
/// fraction of a second of a busy gateway's lines.
const BUFFER_LIMIT: usize = 1024 * 1024;

/// A batch buffer that grew past this is freed after it is written, so
/// one burst does not keep its size for good.
const KEPT_CAPACITY: usize = 256 * 1024;

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    /// The thread waits on `wake` and must be woken by the next line.
    thread_idle: bool,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    /// The logging thread waits here while idle.
    wake: Condvar,
    /// Callers wait here while the buffer is full.
    room: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A panic while holding the lock leaves whole lines behind (the copy
        // is the only work under it), so the buffer is still good.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The writer the log layer writes each line to.
#[derive(Clone)]
pub struct LogWriter(Arc<Shared>);

/// Keeps the logging thread; dropping it writes out every queued line.
pub struct LogGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Starts the logging thread writing to `out`.
pub fn spawn(out: impl Write + Send + 'static) -> (LogWriter, LogGuard) {
    let shared = Arc::new(Shared::default());
    let thread = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("pilotage-log".into())
            .spawn(move || write_batches(&shared, out))
            .ok()
    };
    if thread.is_none() {
        // No thread, no batches: lines go straight out (see `write`).
        shared.lock().closed = true;
    }
    (LogWriter(shared.clone()), LogGuard { shared, thread })
}

fn write_batches(shared: &Shared, mut out: impl Write) {
    let mut batch = Vec::new();
    loop {
        {
            let mut pending = shared.lock();
            while pending.lines.is_empty() && !pending.closed {
                pending.thread_idle = true;
                pending = shared.wake.wait(pending).unwrap_or_else(|e| e.into_inner());
            }
            if pending.lines.is_empty() {
                return;
            }
            std::mem::swap(&mut batch, &mut pending.lines);
        }
        shared.room.notify_all();
        // A log line that cannot be written (stderr closed) is lost, as it
        // would be written straight.
        let _ = out.write_all(&batch).and_then(|()| out.flush());
        batch.clear();
        if batch.capacity() > KEPT_CAPACITY {
            batch = Vec::new();
        }
        std::thread::sleep(BATCH_PAUSE);
    }
}

impl Write for LogWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let mut pending = self.0.lock();
        if pending.closed {
            // After shutdown (or without a thread) a line goes out at once.
            drop(pending);
            return std::io::stderr().write(line);
        }
        while pending.lines.len() + line.len() > BUFFER_LIMIT && !pending.lines.is_empty() {
            pending = self.0.room.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
        pending.lines.extend_from_slice(line);
        if std::mem::take(&mut pending.thread_idle) {
            drop(pending);
            self.0.wake.notify_one();
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::TestSink as Sink;

    #[test]
    fn every_line_from_every_thread_is_written_whole_by_the_time_the_guard_is_dropped() {
        let sink = Sink::default();
        let (writer, guard) = spawn(sink.clone());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let mut w = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..2_000 {
                        w.write_all(format!("thread {t} line {i}\n").as_bytes())
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        drop(guard);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 8_000);
        for t in 0..4 {
            let mine: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| l.starts_with(&format!("thread {t} ")))
                .collect();
            let expected: Vec<String> =
                (0..2_000).map(|i| format!("thread {t} line {i}")).collect();
            assert_eq!(mine, expected, "thread {t}'s lines, in order");
        }
    }

    #[test]
    fn a_caller_waits_for_room_instead_of_losing_lines() {
        let sink = Sink::default();
        let (mut writer, guard) = spawn(sink.clone());
        let line = vec![b'x'; BUFFER_LIMIT / 3];
        for _ in 0..10 {
            writer.write_all(&line).unwrap();
        }
        drop(guard);
        assert_eq!(sink.0.lock().unwrap().len(), 10 * line.len());
    }

    #[test]
    fn a_line_after_an_idle_moment_is_written_without_more_lines_behind_it() {
        let sink = Sink::default();
        let (mut writer, _guard) = spawn(sink.clone());
        writer.write_all(b"first\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        writer.write_all(b"second\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while sink.0.lock().unwrap().as_slice() != b"first\nsecond\n" {
            assert!(
                std::time::Instant::now() < deadline,
                "the second line was not written"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

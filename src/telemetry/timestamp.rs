//! The log line's timestamp: UTC in RFC 3339 with microseconds,
//! `2026-12-05T15:04:05.123456Z`, the shape tracing-subscriber writes.
//!
//! The date and the time of day change once a second, and a busy gateway
//! writes thousands of lines a second: each thread keeps the text of its
//! current second, and a line adds only its microseconds.

use std::cell::Cell;
use std::fmt::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

/// `YYYY-MM-DDTHH:MM:SS`.
type Second = [u8; 19];

thread_local! {
    /// The last second this thread wrote, and its text.
    static LAST: Cell<Option<(u64, Second)>> = const { Cell::new(None) };
}

/// Writes the current time.
pub fn write_now(out: &mut impl Write) -> fmt::Result {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    write_at(out, now.as_secs(), now.subsec_micros())
}

/// Writes `secs` after the epoch, plus `micros`.
fn write_at(out: &mut impl Write, secs: u64, micros: u32) -> fmt::Result {
    let second = LAST.with(|last| match last.get() {
        Some((held, text)) if held == secs => text,
        _ => {
            let text = second_text(secs);
            last.set(Some((secs, text)));
            text
        }
    });
    let mut line = [0u8; 27];
    line[..19].copy_from_slice(&second);
    line[19] = b'.';
    digits(&mut line[20..26], micros);
    line[26] = b'Z';
    // Only ASCII digits and separators were written.
    out.write_str(std::str::from_utf8(&line).map_err(|_| fmt::Error)?)
}

/// The text of the second `secs` after the epoch.
fn second_text(secs: u64) -> Second {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let (year, month, day) = civil_date(days);
    let of_day = secs % 86_400;
    let mut text = *b"0000-00-00T00:00:00";
    digits(
        &mut text[0..4],
        u32::try_from(year.clamp(0, 9999)).unwrap_or(0),
    );
    digits(&mut text[5..7], month);
    digits(&mut text[8..10], day);
    // Below 86,400: every part fits.
    digits(&mut text[11..13], (of_day / 3600) as u32);
    digits(&mut text[14..16], (of_day / 60 % 60) as u32);
    digits(&mut text[17..19], (of_day % 60) as u32);
    text
}

/// The proleptic Gregorian date `days` after 1970-01-01 (the well-known
/// era-of-400-years computation, March-based so leap days fall last).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Month and day are small and positive by construction.
    (year, month as u32, day as u32)
}

/// `value`'s last `slot.len()` decimal digits, zero-padded, into `slot`.
fn digits(slot: &mut [u8], mut value: u32) {
    for byte in slot.iter_mut().rev() {
        *byte = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, micros: u32) -> String {
        let mut out = String::new();
        write_at(&mut out, secs, micros).unwrap();
        out
    }

    #[test]
    fn known_instants_are_written_in_rfc_3339() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(at(1_798_761_599, 999_999), "2026-12-31T23:59:59.999999Z");
        assert_eq!(at(4_107_542_400, 120_000), "2100-03-01T00:00:00.120000Z");
    }

    #[test]
    fn a_new_second_replaces_the_one_kept() {
        assert_eq!(at(86_399, 1), "1970-01-01T23:59:59.000001Z");
        assert_eq!(at(86_400, 2), "1970-01-02T00:00:00.000002Z");
        assert_eq!(at(86_399, 3), "1970-01-01T23:59:59.000003Z");
    }

    #[test]
    fn now_has_the_shape_tracing_subscriber_writes() {
        use tracing_subscriber::fmt::format::Writer;
        use tracing_subscriber::fmt::time::FormatTime;
        let mut ours = String::new();
        write_now(&mut ours).unwrap();
        let mut theirs = String::new();
        tracing_subscriber::fmt::time::SystemTime
            .format_time(&mut Writer::new(&mut theirs))
            .unwrap();
        assert_eq!(ours.len(), theirs.len(), "{ours} / {theirs}");
        // The same minute (unless the test straddles one).
        assert!(ours[..16] == theirs[..16] || ours[14..16] != theirs[14..16]);
    }
}

//! ISO 8601 durations (`P1Y2M3DT4H5M6.5S`, `P2W`), read the same way by the
//! gateway (`retention`, `promotion_lifetime`) and the Host CLI (a server's
//! declared retention), through the `iso8601` crate's parser.
//!
//! On top of that parser: the whole text must be one duration (the parser
//! alone stops at the first unit it cannot place, so `PT1H1H` would read as
//! one hour), and a `T` must be followed by a time component (`PT`, `P1DT`).
//! Calendar units have fixed lengths: a year is 365 days, a month 30 days.

use std::time::Duration;

/// Text that is not one ISO 8601 duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not an ISO 8601 duration (e.g. PT24H, P30D, P1M, PT1.5S)")]
pub struct NotADuration {
    pub text: String,
}

/// Parses `text` as one ISO 8601 duration (zero allowed).
pub fn parse(text: &str) -> Result<Duration, NotADuration> {
    let refuse = || NotADuration {
        text: text.to_string(),
    };
    if text.ends_with('T') {
        return Err(refuse());
    }
    match iso8601::parsers::parse_duration(text.as_bytes()) {
        Ok((b"", parsed)) => Ok(Duration::from(parsed)),
        _ => Err(refuse()),
    }
}

/// Parses `text` as a duration longer than zero.
pub fn parse_positive(text: &str) -> Result<Duration, NotADuration> {
    parse(text).and_then(|d| {
        if d.is_zero() {
            Err(NotADuration {
                text: text.to_string(),
            })
        } else {
            Ok(d)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 86_400;

    #[test]
    fn accepted() {
        for (text, secs, millis) in [
            ("PT24H", DAY, 0),
            ("PT48H", 2 * DAY, 0),
            ("P30D", 30 * DAY, 0),
            ("P1M", 30 * DAY, 0),
            ("P1Y", 365 * DAY, 0),
            ("P2W", 14 * DAY, 0),
            ("PT1.5S", 1, 500),
            ("PT0.5S", 0, 500),
            ("P1DT1M", DAY + 60, 0),
            ("PT90M", 5400, 0),
        ] {
            assert_eq!(
                parse(text),
                Ok(Duration::from_secs(secs) + Duration::from_millis(millis)),
                "{text}"
            );
        }
    }

    #[test]
    fn refused() {
        for text in [
            "", "P", "PT", "P1DT", "PT1H1H", "P2W3D", "PT1D", "PT1S2M", "PT.5S", "P1.5D", "P-1D",
            "P1H", "24H", " PT1H", "PT1H ", "none",
        ] {
            assert!(parse(text).is_err(), "{text} was accepted");
        }
    }

    #[test]
    fn zero_is_a_duration_but_not_a_positive_one() {
        assert_eq!(parse("PT0S"), Ok(Duration::ZERO));
        assert!(parse_positive("PT0S").is_err());
        assert!(parse_positive("P0D").is_err());
        assert_eq!(parse_positive("PT1S"), Ok(Duration::from_secs(1)));
    }
}

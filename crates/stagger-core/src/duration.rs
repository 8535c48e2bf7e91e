//! Durations as people write them: `100ms`, `1s`, `1.5s`, `1h30m`.
//!
//! [`parse`] reads the forms that configuration files and the CLI accept; [`human`] writes the
//! form a delivery schedule's table uses (`1 s`, `1 min 3 s`); [`millis`] gives the number of milliseconds,
//! exactly, for data formats.

use std::fmt;
use std::time::Duration;

/// Why a duration could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseDurationError {
    /// The text is empty.
    Empty,
    /// The text starts with a minus sign. Durations are never negative.
    Negative,
    /// A number has no unit after it, as in `100`. Only `0` may stand alone.
    MissingUnit,
    /// The unit is not one of `ns`, `us`, `µs`, `ms`, `s`, `m`, `min`, `h`, `d`.
    UnknownUnit(String),
    /// A character that is neither part of a number nor of a unit.
    Malformed,
    /// The duration exceeds [`Duration::MAX`].
    TooLarge,
}

impl fmt::Display for ParseDurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "empty duration; write it like 100ms, 1s or 1h"),
            Self::Negative => write!(f, "durations cannot be negative"),
            Self::MissingUnit => write!(f, "missing unit; write it like 100ms, 1s or 1h"),
            Self::UnknownUnit(unit) => write!(
                f,
                "unknown unit `{unit}`; use ns, us, ms, s, m (or min), h or d"
            ),
            Self::Malformed => write!(f, "not a duration; write it like 100ms, 1.5s or 1h30m"),
            Self::TooLarge => write!(f, "duration too large"),
        }
    }
}

impl std::error::Error for ParseDurationError {}

/// Parses a duration such as `100ms`, `1.5s`, `2m`, `1h30m` or `0`.
///
/// A duration is one or more parts, each a decimal number followed by a unit: `ns`, `us` (or
/// `µs`), `ms`, `s`, `m` (or `min`), `h`, `d`. Parts add up. Spaces between a number and its
/// unit, and between parts, are allowed. Fractions below a nanosecond are rounded down.
///
/// # Errors
///
/// A [`ParseDurationError`] for empty text, a negative sign, a missing or unknown unit, stray
/// characters, or a total above [`Duration::MAX`].
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::{parse, ParseDurationError};
///
/// assert_eq!(parse("100ms"), Ok(Duration::from_millis(100)));
/// assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
/// assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse("-1s"), Err(ParseDurationError::Negative));
/// ```
pub fn parse(text: &str) -> Result<Duration, ParseDurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseDurationError::Empty);
    }
    if text.starts_with('-') {
        return Err(ParseDurationError::Negative);
    }
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let mut rest = text;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        if number.is_empty() {
            return Err(ParseDurationError::Malformed);
        }
        let after = after.trim_start();
        let unit_len = after
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(ParseDurationError::MissingUnit);
        }
        let part = scale(number, unit)?;
        total = total
            .checked_add(part)
            .ok_or(ParseDurationError::TooLarge)?;
        rest = after.trim_start();
    }
    Ok(total)
}

/// `number` (decimal digits with at most one point) times `unit`, exactly.
fn scale(number: &str, unit: &str) -> Result<Duration, ParseDurationError> {
    let nanos_per_unit: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        other => return Err(ParseDurationError::UnknownUnit(other.to_owned())),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(ParseDurationError::Malformed);
    }
    let digits = |s: &str| -> Result<u128, ParseDurationError> {
        s.bytes().try_fold(0u128, |acc, b| {
            acc.checked_mul(10)
                .and_then(|a| a.checked_add(u128::from(b - b'0')))
                .ok_or(ParseDurationError::TooLarge)
        })
    };
    let mut nanos = digits(whole)?
        .checked_mul(nanos_per_unit)
        .ok_or(ParseDurationError::TooLarge)?;
    // Only the fraction's first 20 digits can matter at nanosecond resolution.
    let fraction = &fraction[..fraction.len().min(20)];
    if !fraction.is_empty() {
        let denominator = 10u128.pow(fraction.len() as u32);
        nanos = nanos
            .checked_add(digits(fraction)? * nanos_per_unit / denominator)
            .ok_or(ParseDurationError::TooLarge)?;
    }
    from_nanos_u128(nanos).ok_or(ParseDurationError::TooLarge)
}

fn from_nanos_u128(nanos: u128) -> Option<Duration> {
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// A duration as a person reads it: `0 s`, `250 ms`, `1.5 s`, `1 min 3 s`, `1 h`, `2 d 3 h`.
///
/// Below a second it is written in milliseconds, below a minute in seconds, and above that in
/// days, hours, minutes and seconds, leaving out zero parts. At most three decimals are shown,
/// trailing zeros removed.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::human;
///
/// assert_eq!(human(Duration::from_secs(63)), "1 min 3 s");
/// assert_eq!(human(Duration::from_millis(6400)), "6.4 s");
/// assert_eq!(human(Duration::from_micros(734_125)), "734.125 ms");
/// assert_eq!(human(Duration::from_secs(3600)), "1 h");
/// ```
#[must_use]
pub fn human(d: Duration) -> String {
    const MS: u128 = 1_000_000;
    const S: u128 = 1_000 * MS;
    let nanos = d.as_nanos();
    if nanos < S {
        return format!("{} ms", decimal(nanos, MS));
    }
    if nanos < 60 * S {
        return format!("{} s", decimal(nanos, S));
    }
    let mut parts = Vec::new();
    let mut rest = nanos;
    for (unit, name) in [(86_400 * S, "d"), (3_600 * S, "h"), (60 * S, "min")] {
        let count = rest / unit;
        rest %= unit;
        if count > 0 {
            parts.push(format!("{count} {name}"));
        }
    }
    if rest > 0 {
        parts.push(format!("{} s", decimal(rest, S)));
    }
    parts.join(" ")
}

/// `value / unit` with at most three decimals, truncated, trailing zeros removed.
fn decimal(value: u128, unit: u128) -> String {
    fixed(value * 1_000 / unit, 3)
}

/// `scaled / 10^digits` as decimal text, trailing zeros (and a bare point) removed.
fn fixed(scaled: u128, digits: u32) -> String {
    let one = 10u128.pow(digits);
    let (whole, fraction) = (scaled / one, scaled % one);
    if fraction == 0 {
        whole.to_string()
    } else {
        let fraction = format!("{fraction:0width$}", width = digits as usize);
        format!("{whole}.{}", fraction.trim_end_matches('0'))
    }
}

/// `d` in whole nanoseconds, saturating at `u64::MAX` (about 584 years): the value of
/// `u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)`, without the 128-bit arithmetic below
/// 18 446 744 073 s, where `secs * 10^9 + 999 999 999` cannot overflow.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::saturating_nanos;
///
/// assert_eq!(saturating_nanos(Duration::new(2, 5)), 2_000_000_005);
/// assert_eq!(saturating_nanos(Duration::MAX), u64::MAX);
/// ```
#[inline(always)]
#[must_use]
pub const fn saturating_nanos(d: Duration) -> u64 {
    let secs = d.as_secs();
    if secs < 18_446_744_073 {
        secs * 1_000_000_000 + d.subsec_nanos() as u64
    } else {
        let nanos = d.as_nanos();
        if nanos > u64::MAX as u128 {
            u64::MAX
        } else {
            nanos as u64
        }
    }
}

/// A duration in milliseconds as exact decimal text: `127000`, `0.25`, `964.389636`.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::millis_text;
///
/// assert_eq!(millis_text(Duration::from_secs(127)), "127000");
/// assert_eq!(millis_text(Duration::from_nanos(964_389_636)), "964.389636");
/// ```
#[must_use]
pub fn millis_text(d: Duration) -> String {
    fixed(d.as_nanos(), 6)
}

/// A duration in milliseconds: a whole number when it is one, otherwise a fraction with
/// nanosecond precision.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::millis;
///
/// assert_eq!(millis(Duration::from_secs(127)), 127_000.0);
/// assert_eq!(millis(Duration::from_micros(1_500)), 1.5);
/// assert_eq!(millis(Duration::from_nanos(250)), 0.00025);
/// ```
#[must_use]
pub fn millis(d: Duration) -> f64 {
    let nanos = d.as_nanos();
    (nanos / 1_000_000) as f64 + (nanos % 1_000_000) as f64 / 1e6
}

/// `d` as compact text that [`crate::duration::parse`] reads back exactly: every non-zero
/// unit from hours down to nanoseconds, largest first (`"1h30m"`, `"1s500ms"`, `"0s"`).
///
/// ```
/// use std::time::Duration;
/// use stagger_core::duration::compact;
///
/// assert_eq!(compact(Duration::from_millis(1_500)), "1s500ms");
/// assert_eq!(compact(Duration::ZERO), "0s");
/// ```
#[must_use]
pub fn compact(d: Duration) -> String {
    use std::fmt::Write as _;

    const UNITS: [(u128, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    if d.is_zero() {
        return "0s".to_owned();
    }
    let mut rest = d.as_nanos();
    let mut out = String::new();
    for (unit, name) in UNITS {
        let count = rest / unit;
        rest %= unit;
        if count > 0 {
            // Writing to a String cannot fail.
            let _ = write!(out, "{count}{name}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturating_nanos_saturates_like_the_u128_conversion() {
        let cases = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(1, 999_999_999),
            Duration::from_nanos(u64::MAX),
            Duration::from_nanos(u64::MAX) + Duration::from_nanos(1),
            Duration::new(18_446_744_073, 709_551_615),
            Duration::new(18_446_744_073, 709_551_616),
            Duration::new(18_446_744_074, 0),
            Duration::new(u64::MAX / 1_000_000_000 + 1, 0),
            Duration::MAX,
        ];
        for d in cases {
            let expected = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            assert_eq!(saturating_nanos(d), expected, "{d:?}");
        }
    }

    #[test]
    fn parses_every_unit_and_compound_forms() {
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
        assert_eq!(parse("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(parse("7us"), Ok(Duration::from_micros(7)));
        assert_eq!(parse("7µs"), Ok(Duration::from_micros(7)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse(" 1 h 30 m "), Ok(Duration::from_secs(5_400)));
        assert_eq!(parse("0.25s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1.s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse("1.0000000001s"), Ok(Duration::from_secs(1)));
    }

    #[test]
    fn refuses_bad_text_with_a_reason() {
        assert_eq!(parse(""), Err(ParseDurationError::Empty));
        assert_eq!(parse("-1s"), Err(ParseDurationError::Negative));
        assert_eq!(parse("100"), Err(ParseDurationError::MissingUnit));
        assert_eq!(
            parse("5parsecs"),
            Err(ParseDurationError::UnknownUnit("parsecs".into()))
        );
        assert_eq!(parse("1.2.3s"), Err(ParseDurationError::Malformed));
        assert_eq!(parse("."), Err(ParseDurationError::MissingUnit));
        assert_eq!(parse(".s"), Err(ParseDurationError::Malformed));
        assert_eq!(parse("s"), Err(ParseDurationError::Malformed));
        assert_eq!(parse("1s!"), Err(ParseDurationError::Malformed));
        assert_eq!(parse("NaNs"), Err(ParseDurationError::Malformed));
        assert_eq!(
            parse("99999999999999999999999d"),
            Err(ParseDurationError::TooLarge)
        );
        let days = u64::MAX / 86_400 + 1;
        assert_eq!(
            parse(&format!("{days}d")),
            Err(ParseDurationError::TooLarge)
        );
    }

    #[test]
    fn parse_reaches_but_never_exceeds_the_maximum() {
        let max = format!("{}s", u64::MAX);
        assert_eq!(parse(&max), Ok(Duration::from_secs(u64::MAX)));
        assert_eq!(
            parse(&format!("{max} 1s")),
            Err(ParseDurationError::TooLarge)
        );
    }

    #[test]
    fn human_matches_the_delivery_schedule_table() {
        let secs = |s| human(Duration::from_secs(s));
        assert_eq!(secs(1), "1 s");
        assert_eq!(secs(31), "31 s");
        assert_eq!(secs(63), "1 min 3 s");
        assert_eq!(secs(127), "2 min 7 s");
        assert_eq!(human(Duration::ZERO), "0 ms");
        assert_eq!(human(Duration::from_millis(90_500)), "1 min 30.5 s");
        assert_eq!(human(Duration::from_secs(90_061)), "1 d 1 h 1 min 1 s");
        assert!(!human(Duration::MAX).is_empty());
    }
}

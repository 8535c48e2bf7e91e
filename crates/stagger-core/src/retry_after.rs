//! Server-directed waits: parsing `Retry-After` and its millisecond cousins.
//!
//! A server that sheds load can say how long to wait. Three headers carry that wait, and each has
//! its own parser here. None of them decides anything: they turn text into a [`Duration`] (or,
//! for gRPC, a refusal), and the executor treats the result as a floor under the next delay.
//!
//! | header | parser | form | unit |
//! |---|---|---|---|
//! | `Retry-After` (RFC 9110 §10.2.3) | [`parse_retry_after`] | delay-seconds or an HTTP-date | seconds |
//! | `grpc-retry-pushback-ms` (gRFC A6) | [`parse_grpc_pushback`] | signed integer; negative means "do not retry" | milliseconds |
//! | `x-amz-retry-after` (AWS) | [`parse_amz_retry_after`] | non-negative integer | milliseconds |
//!
//! # `Retry-After`
//!
//! RFC 9110 §10.2.3 allows two forms. *delay-seconds* is `1*DIGIT`: a whole, non-negative
//! number of seconds, with no sign and no fraction (`Retry-After: 120`), counted from when the
//! response was received. An *HTTP-date* (§5.6.7) names the moment after which to retry, in one
//! of three formats, all of which a recipient must accept:
//!
//! - IMF-fixdate, the only one a server may send today: `Sun, 06 Nov 1994 08:49:37 GMT`;
//! - the obsolete RFC 850 format, with a two-digit year: `Sunday, 06-Nov-94 08:49:37 GMT`;
//! - ANSI C's `asctime()` format, without a zone: `Sun Nov  6 08:49:37 1994`.
//!
//! Dates are read by the [`httpdate`] crate. It reads a two-digit year as 1970 to 2069, where
//! RFC 9110 reads a year that appears more than 50 years ahead as the latest past year with those
//! digits; the two agree whenever the date is less than 50 years from `now` and before 2070,
//! which covers any wait a server means today. A date whose weekday is wrong for its day, or
//! before 1970, is refused. A date at or before `now` means "retry now": [`Duration::ZERO`].
//!
//! # Why the wall clock is an argument
//!
//! An HTTP-date only becomes a wait when it is compared with the present, so the parser needs
//! the wall-clock time. It is given as `now` rather than read, for the same reasons as
//! everywhere in this crate: the answer is a pure function of its inputs, so a test or the
//! simulator can replay it, and a property test can check it for any `now`. It also lets the
//! caller choose *which* present: the moment the response arrived rather than the moment the
//! header happened to be parsed, or the response's own `Date` header, which measures the wait on
//! the server's clock and so cancels any skew between the two clocks. Nothing in this module
//! reads a clock.
//!
//! # `grpc-retry-pushback-ms`
//!
//! gRFC A6 (client retries) defines this trailer: an ASCII signed 32-bit integer, without
//! unnecessary leading zeros, giving the milliseconds to wait before the retry. A negative value
//! asks the client not to retry at all ([`Pushback::DoNotRetry`]), and A6 says an unparseable
//! value is to be taken the same way. This parser returns an error for such a value instead of
//! choosing for the caller: the executor decides, and A6's rule is to not retry. (grpc-go and
//! grpc-java both follow it.) The parser is lenient where that is harmless: leading zeros are
//! accepted, and integers outside 32 bits are still read, a negative one still meaning "do not
//! retry" and a positive one too large for a [`Duration`] becoming [`Duration::MAX`].
//!
//! # `x-amz-retry-after`
//!
//! AWS services may send this header with a whole, non-negative number of milliseconds to wait
//! (`x-amz-retry-after: 5000` is five seconds), which the AWS SDKs take as an explicit delay.
//!
//! # Errors and panics
//!
//! Every parser returns a [`RetryAfterError`] for a value it cannot read, so that the caller can
//! ignore the value and report it, and none of them panics on any input. Spaces and tabs around
//! a value (HTTP's optional whitespace) are ignored. A number of any length is accepted; one too
//! large for a [`Duration`] saturates to [`Duration::MAX`] rather than failing, since a wait that
//! long is a valid, if unwelcome, answer that the executor's maximum honoured wait will refuse.

use std::fmt;
use std::time::{Duration, SystemTime};

/// Why a server-directed wait could not be read.
///
/// The message is one line, fit for a trace event that reports the ignored value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryAfterError {
    /// The value is empty, or only spaces and tabs.
    Empty,
    /// A minus sign before the digits, in a header whose waits are never negative
    /// (`Retry-After`, `x-amz-retry-after`).
    Negative,
    /// A `Retry-After` value that is neither delay-seconds (digits only: no sign, no fraction)
    /// nor an HTTP-date in one of the three formats.
    Malformed,
    /// A millisecond value that is not a whole number: a fraction, a stray character, a plus
    /// sign, or no digits at all.
    NotAnInteger,
}

impl fmt::Display for RetryAfterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "empty value"),
            Self::Negative => write!(f, "negative wait; a server-directed wait is zero or more"),
            Self::Malformed => write!(
                f,
                "neither a whole number of seconds nor an HTTP-date (like Wed, 21 Oct 2015 07:28:00 GMT)"
            ),
            Self::NotAnInteger => write!(f, "not a whole number of milliseconds"),
        }
    }
}

impl std::error::Error for RetryAfterError {}

/// What a `grpc-retry-pushback-ms` trailer asks of the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pushback {
    /// Retry, but not before this much time has passed (a value of zero or more).
    After(Duration),
    /// Do not retry this call at all (a negative value).
    DoNotRetry,
}

/// Parses an RFC 9110 `Retry-After` value into the wait it asks for, as seen at `now`.
///
/// delay-seconds (`120`) is that many seconds. An HTTP-date, in any of the three formats, is the
/// time from `now` until that date, or [`Duration::ZERO`] if it is not after `now`. `now` is the
/// wall-clock time the response was received; see the [module docs](self) for why it is an
/// argument. This function never reads a clock.
///
/// # Errors
///
/// [`RetryAfterError::Empty`] for an empty value, [`RetryAfterError::Negative`] for a negative
/// number, and [`RetryAfterError::Malformed`] for anything else that is neither delay-seconds
/// nor a valid HTTP-date, such as `1.5`, `+3` or a date with an unknown month.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use stagger_core::retry_after::{parse_retry_after, RetryAfterError};
///
/// // Wed, 21 Oct 2015 07:28:00 GMT, as seconds since the epoch.
/// let date = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
/// let now = date - Duration::from_secs(90);
///
/// assert_eq!(parse_retry_after("120", now), Ok(Duration::from_secs(120)));
/// assert_eq!(
///     parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
///     Ok(Duration::from_secs(90))
/// );
/// // A date in the past means "retry now".
/// assert_eq!(
///     parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", date + Duration::from_secs(5)),
///     Ok(Duration::ZERO)
/// );
///
/// // The two obsolete formats, for Sun, 06 Nov 1994 08:49:37 GMT.
/// let then = UNIX_EPOCH + Duration::from_secs(784_111_777);
/// let now = then - Duration::from_secs(7);
/// assert_eq!(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), Ok(Duration::from_secs(7)));
/// assert_eq!(parse_retry_after("Sun Nov  6 08:49:37 1994", now), Ok(Duration::from_secs(7)));
///
/// assert_eq!(parse_retry_after("1.5", now), Err(RetryAfterError::Malformed));
/// assert_eq!(parse_retry_after("-1", now), Err(RetryAfterError::Negative));
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Result<Duration, RetryAfterError> {
    let value = trim_ows(value);
    if value.is_empty() {
        return Err(RetryAfterError::Empty);
    }
    if let Some(digits) = Digits::parse(value) {
        return Ok(digits.secs());
    }
    if value.strip_prefix('-').and_then(Digits::parse).is_some() {
        return Err(RetryAfterError::Negative);
    }
    let date = httpdate::parse_http_date(value).map_err(|_| RetryAfterError::Malformed)?;
    Ok(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses a gRPC `grpc-retry-pushback-ms` value: an integer number of milliseconds.
///
/// Zero or more is [`Pushback::After`] that many milliseconds; a negative value is
/// [`Pushback::DoNotRetry`], as gRFC A6 says. A value too large for a [`Duration`] saturates to
/// [`Duration::MAX`].
///
/// # Errors
///
/// [`RetryAfterError::Empty`] for an empty value and [`RetryAfterError::NotAnInteger`] for
/// anything else that is not an optional minus sign followed by digits. gRFC A6 tells the client
/// to treat such a value as "do not retry"; the parser reports it, and the executor applies
/// that rule.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::retry_after::{parse_grpc_pushback, Pushback, RetryAfterError};
///
/// assert_eq!(parse_grpc_pushback("250"), Ok(Pushback::After(Duration::from_millis(250))));
/// assert_eq!(parse_grpc_pushback("0"), Ok(Pushback::After(Duration::ZERO)));
/// assert_eq!(parse_grpc_pushback("-1"), Ok(Pushback::DoNotRetry));
/// assert_eq!(parse_grpc_pushback("soon"), Err(RetryAfterError::NotAnInteger));
/// ```
pub fn parse_grpc_pushback(value: &str) -> Result<Pushback, RetryAfterError> {
    let value = trim_ows(value);
    if value.is_empty() {
        return Err(RetryAfterError::Empty);
    }
    let (negative, digits) = match value.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value),
    };
    let digits = Digits::parse(digits).ok_or(RetryAfterError::NotAnInteger)?;
    if negative && !digits.is_zero() {
        Ok(Pushback::DoNotRetry)
    } else {
        Ok(Pushback::After(digits.millis()))
    }
}

/// Parses an AWS `x-amz-retry-after` value: a non-negative integer number of milliseconds.
///
/// A value too large for a [`Duration`] saturates to [`Duration::MAX`].
///
/// # Errors
///
/// [`RetryAfterError::Empty`] for an empty value, [`RetryAfterError::Negative`] for a negative
/// number, and [`RetryAfterError::NotAnInteger`] for anything else that is not digits only.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::retry_after::{parse_amz_retry_after, RetryAfterError};
///
/// assert_eq!(parse_amz_retry_after("5000"), Ok(Duration::from_secs(5)));
/// assert_eq!(parse_amz_retry_after(" 1500 "), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_amz_retry_after("-5"), Err(RetryAfterError::Negative));
/// assert_eq!(parse_amz_retry_after("1.5"), Err(RetryAfterError::NotAnInteger));
/// ```
pub fn parse_amz_retry_after(value: &str) -> Result<Duration, RetryAfterError> {
    let value = trim_ows(value);
    if value.is_empty() {
        return Err(RetryAfterError::Empty);
    }
    if let Some(digits) = Digits::parse(value) {
        return Ok(digits.millis());
    }
    if value.strip_prefix('-').and_then(Digits::parse).is_some() {
        return Err(RetryAfterError::Negative);
    }
    Err(RetryAfterError::NotAnInteger)
}

/// Removes HTTP's optional whitespace (spaces and horizontal tabs) from both ends.
fn trim_ows(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

/// A run of ASCII digits, read as a `u64` where it fits.
#[derive(Clone, Copy)]
enum Digits {
    /// The number fits in a `u64`.
    Value(u64),
    /// The number exceeds `u64::MAX`.
    Overflow,
}

impl Digits {
    /// Reads `1*DIGIT`; `None` for anything else (empty, a sign, a point, another character).
    fn parse(text: &str) -> Option<Self> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value = text.bytes().try_fold(0u64, |acc, b| {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        });
        Some(value.map_or(Self::Overflow, Self::Value))
    }

    fn is_zero(self) -> bool {
        matches!(self, Self::Value(0))
    }

    /// This many seconds. `u64::MAX` seconds fits a [`Duration`]; more saturates.
    fn secs(self) -> Duration {
        match self {
            Self::Value(n) => Duration::from_secs(n),
            Self::Overflow => Duration::MAX,
        }
    }

    /// This many milliseconds; more than `u64::MAX` saturates.
    fn millis(self) -> Duration {
        match self {
            Self::Value(n) => Duration::from_millis(n),
            Self::Overflow => Duration::MAX,
        }
    }
}

//! The server-directed wait parsers: `Retry-After`, `grpc-retry-pushback-ms`,
//! `x-amz-retry-after`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use stagger_core::retry_after::{
    Pushback, RetryAfterError, parse_amz_retry_after, parse_grpc_pushback, parse_retry_after,
};

/// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date.
const RFC_EXAMPLE: u64 = 784_111_777;
/// Wed, 21 Oct 2015 07:28:00 GMT.
const OCT_2015: u64 = 1_445_412_480;
/// Fri, 31 Dec 9999 23:59:59 GMT, the last second an HTTP-date can name.
const LAST_SECOND: u64 = 253_402_300_799;

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn secs(n: u64) -> Result<Duration, RetryAfterError> {
    Ok(Duration::from_secs(n))
}

// ---- Retry-After: delay-seconds ----

#[test]
fn delay_seconds_is_that_many_seconds_whatever_now() {
    for now in [
        UNIX_EPOCH,
        at(OCT_2015),
        UNIX_EPOCH - Duration::from_secs(1),
    ] {
        assert_eq!(parse_retry_after("120", now), secs(120));
        assert_eq!(parse_retry_after("0", now), secs(0));
        assert_eq!(parse_retry_after("000120", now), secs(120));
    }
}

#[test]
fn delay_seconds_tolerates_surrounding_spaces_and_tabs() {
    let now = at(OCT_2015);
    assert_eq!(parse_retry_after(" 120", now), secs(120));
    assert_eq!(parse_retry_after("120 ", now), secs(120));
    assert_eq!(parse_retry_after("\t 120 \t", now), secs(120));
    assert_eq!(
        parse_retry_after("1 20", now),
        Err(RetryAfterError::Malformed)
    );
}

#[test]
fn huge_delay_seconds_saturate() {
    let now = at(OCT_2015);
    assert_eq!(
        parse_retry_after(&u64::MAX.to_string(), now),
        secs(u64::MAX)
    );
    assert_eq!(
        parse_retry_after("18446744073709551616", now), // u64::MAX + 1
        Ok(Duration::MAX)
    );
    assert_eq!(
        parse_retry_after(&"9".repeat(10_000), now),
        Ok(Duration::MAX)
    );
}

#[test]
fn malformed_values_are_refused_with_a_reason() {
    let now = at(OCT_2015);
    let cases = [
        ("", RetryAfterError::Empty),
        ("   ", RetryAfterError::Empty),
        ("\t", RetryAfterError::Empty),
        ("-1", RetryAfterError::Negative),
        ("-0", RetryAfterError::Negative),
        ("-", RetryAfterError::Malformed),
        ("--1", RetryAfterError::Malformed),
        ("1.5", RetryAfterError::Malformed),
        ("1.", RetryAfterError::Malformed),
        ("+3", RetryAfterError::Malformed),
        ("abc", RetryAfterError::Malformed),
        ("12abc", RetryAfterError::Malformed),
        ("0x10", RetryAfterError::Malformed),
        ("1e3", RetryAfterError::Malformed),
        ("١٢", RetryAfterError::Malformed), // Arabic-Indic digits are not DIGIT
        ("120s", RetryAfterError::Malformed),
        ("\n120", RetryAfterError::Malformed),
    ];
    for (value, error) in cases {
        assert_eq!(parse_retry_after(value, now), Err(error), "{value:?}");
    }
}

// ---- Retry-After: HTTP-date ----

#[test]
fn all_three_date_formats_name_the_same_moment() {
    let now = at(RFC_EXAMPLE - 30);
    for value in [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
    ] {
        assert_eq!(parse_retry_after(value, now), secs(30), "{value:?}");
    }
}

#[test]
fn a_future_date_is_the_time_until_it() {
    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    assert_eq!(parse_retry_after(date, at(OCT_2015 - 90)), secs(90));
    assert_eq!(parse_retry_after(date, at(OCT_2015 - 1)), secs(1));
    assert_eq!(
        parse_retry_after(date, at(OCT_2015) - Duration::from_millis(250)),
        Ok(Duration::from_millis(250))
    );
    assert_eq!(parse_retry_after(date, UNIX_EPOCH), secs(OCT_2015));
    assert_eq!(
        parse_retry_after(date, UNIX_EPOCH - Duration::from_secs(10)),
        secs(OCT_2015 + 10)
    );
}

#[test]
fn a_date_at_or_before_now_is_zero() {
    let date = "Wed, 21 Oct 2015 07:28:00 GMT";
    assert_eq!(parse_retry_after(date, at(OCT_2015)), secs(0));
    assert_eq!(
        parse_retry_after(date, at(OCT_2015) + Duration::from_nanos(1)),
        secs(0)
    );
    assert_eq!(parse_retry_after(date, at(OCT_2015 + 3_600)), secs(0));
    assert_eq!(
        parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", at(OCT_2015)),
        secs(0)
    );
    assert_eq!(
        parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", at(OCT_2015)),
        secs(0)
    );
}

#[test]
fn dates_tolerate_surrounding_whitespace() {
    let now = at(OCT_2015 - 90);
    assert_eq!(
        parse_retry_after("  Wed, 21 Oct 2015 07:28:00 GMT\t", now),
        secs(90)
    );
}

#[test]
fn two_digit_years_fall_in_1970_to_2069() {
    // 69 is 2069, 70 is 1970.
    let now = at(OCT_2015);
    assert_eq!(
        parse_retry_after("Tuesday, 01-Jan-69 00:00:00 GMT", now),
        secs(3_124_224_000 - OCT_2015)
    );
    assert_eq!(
        parse_retry_after("Thursday, 01-Jan-70 00:00:00 GMT", UNIX_EPOCH),
        secs(0)
    );
}

#[test]
fn the_last_representable_date_is_read() {
    assert_eq!(
        parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", at(LAST_SECOND - 5)),
        secs(5)
    );
}

#[test]
fn invalid_dates_are_malformed() {
    let now = at(OCT_2015);
    for value in [
        "Wed, 21 Foo 2015 07:28:00 GMT",  // bad month
        "Wed, 21 oct 2015 07:28:00 GMT",  // month names are case-sensitive
        "Thu, 21 Oct 2015 07:28:00 GMT",  // wrong weekday
        "Wed, 32 Oct 2015 07:28:00 GMT",  // no such day
        "Wed, 21 Oct 2015 24:00:00 GMT",  // no such hour
        "Wed, 21 Oct 2015 07:60:00 GMT",  // no such minute
        "Wed, 21 Oct 2015 07:28:00 UTC",  // only GMT
        "Wed, 21 Oct 2015 07:28:00",      // no zone
        "Wed, 21 Oct 15 07:28:00 GMT",    // two-digit year in IMF-fixdate
        "Wed,  21 Oct 2015 07:28:00 GMT", // extra space
        "2015-10-21T07:28:00Z",           // ISO 8601 is not an HTTP-date
        "Sun Nov 10 08:00:00 1000",       // before 1970
        "Sun Nov  6 08:49:37 1994 GMT",   // asctime has no zone
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Wed, 21 Oct 2015 07:28:00 GMT, 120",
        "Wed, 21 Oct 2015 07:28:00 GMT\u{e9}", // non-ASCII
    ] {
        assert_eq!(
            parse_retry_after(value, now),
            Err(RetryAfterError::Malformed),
            "{value:?}"
        );
    }
}

// ---- grpc-retry-pushback-ms ----

#[test]
fn grpc_pushback_zero_or_more_is_a_wait() {
    assert_eq!(
        parse_grpc_pushback("250"),
        Ok(Pushback::After(Duration::from_millis(250)))
    );
    assert_eq!(
        parse_grpc_pushback("0"),
        Ok(Pushback::After(Duration::ZERO))
    );
    assert_eq!(
        parse_grpc_pushback("-0"),
        Ok(Pushback::After(Duration::ZERO))
    );
    assert_eq!(
        parse_grpc_pushback(" 2147483647\t"),
        Ok(Pushback::After(Duration::from_millis(2_147_483_647)))
    );
    assert_eq!(
        parse_grpc_pushback("007"),
        Ok(Pushback::After(Duration::from_millis(7)))
    );
    assert_eq!(
        parse_grpc_pushback(&"9".repeat(100)),
        Ok(Pushback::After(Duration::MAX))
    );
}

#[test]
fn grpc_pushback_negative_means_do_not_retry() {
    for value in [
        "-1",
        "-2147483648",
        "-9223372036854775808",
        &format!("-{}", "9".repeat(100)),
    ] {
        assert_eq!(
            parse_grpc_pushback(value),
            Ok(Pushback::DoNotRetry),
            "{value:?}"
        );
    }
}

#[test]
fn grpc_pushback_that_is_not_an_integer_is_an_error() {
    assert_eq!(parse_grpc_pushback(""), Err(RetryAfterError::Empty));
    assert_eq!(parse_grpc_pushback(" \t "), Err(RetryAfterError::Empty));
    for value in ["-", "+3", "1.5", "abc", "12abc", "--1", "1 000", "1e3"] {
        assert_eq!(
            parse_grpc_pushback(value),
            Err(RetryAfterError::NotAnInteger),
            "{value:?}"
        );
    }
}

// ---- x-amz-retry-after ----

#[test]
fn amz_retry_after_is_milliseconds() {
    assert_eq!(parse_amz_retry_after("5000"), Ok(Duration::from_secs(5)));
    assert_eq!(parse_amz_retry_after("0"), Ok(Duration::ZERO));
    assert_eq!(
        parse_amz_retry_after("\t1500 "),
        Ok(Duration::from_millis(1500))
    );
    assert_eq!(
        parse_amz_retry_after(&u64::MAX.to_string()),
        Ok(Duration::from_millis(u64::MAX))
    );
    assert_eq!(parse_amz_retry_after(&"9".repeat(100)), Ok(Duration::MAX));
}

#[test]
fn amz_retry_after_refuses_what_is_not_a_non_negative_integer() {
    let cases = [
        ("", RetryAfterError::Empty),
        ("  ", RetryAfterError::Empty),
        ("-5", RetryAfterError::Negative),
        ("+5", RetryAfterError::NotAnInteger),
        ("1.5", RetryAfterError::NotAnInteger),
        ("abc", RetryAfterError::NotAnInteger),
        ("12abc", RetryAfterError::NotAnInteger),
        (
            "Wed, 21 Oct 2015 07:28:00 GMT",
            RetryAfterError::NotAnInteger,
        ),
    ];
    for (value, error) in cases {
        assert_eq!(parse_amz_retry_after(value), Err(error), "{value:?}");
    }
}

// ---- errors ----

#[test]
fn error_messages_are_one_line() {
    for error in [
        RetryAfterError::Empty,
        RetryAfterError::Negative,
        RetryAfterError::Malformed,
        RetryAfterError::NotAnInteger,
    ] {
        let message = error.to_string();
        assert!(!message.is_empty());
        assert!(!message.contains('\n'), "{message:?}");
        let _: &dyn std::error::Error = &error;
    }
    assert_eq!(
        RetryAfterError::NotAnInteger.to_string(),
        "not a whole number of milliseconds"
    );
}

// ---- properties ----

/// Any `SystemTime` that the platform can hold near the present range, before the epoch too.
fn any_now() -> impl Strategy<Value = SystemTime> {
    prop_oneof![
        Just(UNIX_EPOCH),
        (0..=LAST_SECOND + 1_000_000, 0u32..1_000_000_000)
            .prop_map(|(s, n)| UNIX_EPOCH + Duration::new(s, n)),
        (0..=LAST_SECOND, 0u32..1_000_000_000).prop_map(|(s, n)| UNIX_EPOCH - Duration::new(s, n)),
        (any::<bool>(), any::<u64>(), 0u32..1_000_000_000).prop_map(|(after, s, n)| {
            let d = Duration::new(s, n);
            let t = if after {
                UNIX_EPOCH.checked_add(d)
            } else {
                UNIX_EPOCH.checked_sub(d)
            };
            t.unwrap_or(UNIX_EPOCH)
        }),
    ]
}

/// Whole-second times from 1970 through 9999, the range an HTTP-date can name.
fn http_time() -> impl Strategy<Value = SystemTime> {
    (0..=LAST_SECOND).prop_map(at)
}

/// Text that looks like a Retry-After value: numbers with stray signs, points and spaces, and
/// dates in all three layouts with plausible and implausible fields.
fn header_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ \t]{0,2}[-+]?[0-9]{0,30}([.][0-9]{0,3})?[a-z]{0,2}[ \t]{0,2}",
        "(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Bad), [0-9]{1,3} (Jan|Feb|Oct|Nov|Dec|Foo) [0-9]{2,5} [0-9]{2}:[0-9]{2}:[0-9]{2} (GMT|UTC)?",
        "(Monday|Sunday|Wednesday|Fun)day?, [0-9]{2}-(Jan|Nov|Xyz)-[0-9]{2,4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT",
        "(Mon|Sun|Thu) (Jan|Nov|Dec) [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}",
        // Valid dates in every layout, which must parse.
        (http_time(), any::<prop::sample::Index>()).prop_map(|(t, i)| {
            let all = layouts(t);
            all[i.index(all.len())].clone()
        }),
        // A valid date with one character replaced.
        (http_time(), any::<prop::sample::Index>(), any::<char>()).prop_map(|(t, i, c)| {
            let mut chars: Vec<char> = httpdate::fmt_http_date(t).chars().collect();
            let i = i.index(chars.len());
            chars[i] = c;
            chars.into_iter().collect()
        }),
    ]
}

/// `t` in the three HTTP-date layouts: IMF-fixdate, RFC 850 (only for 1970 through 2069, the
/// years its two digits are read as) and asctime.
fn layouts(t: SystemTime) -> Vec<String> {
    let imf = httpdate::fmt_http_date(t); // Sun, 06 Nov 1994 08:49:37 GMT
    let (wkday, day, month, year, time) = (
        &imf[0..3],
        &imf[5..7],
        &imf[8..11],
        &imf[12..16],
        &imf[17..25],
    );
    let weekday = match wkday {
        "Mon" => "Monday",
        "Tue" => "Tuesday",
        "Wed" => "Wednesday",
        "Thu" => "Thursday",
        "Fri" => "Friday",
        "Sat" => "Saturday",
        _ => "Sunday",
    };
    let asctime_day = day.trim_start_matches('0');
    let mut out = vec![
        imf.clone(),
        format!("{wkday} {month} {asctime_day:>2} {time} {year}"),
    ];
    if ("1970".."2070").contains(&year) {
        out.push(format!(
            "{weekday}, {day}-{month}-{} {time} GMT",
            &year[2..]
        ));
    }
    out
}

/// What a `Retry-After` value means at `now`, computed independently of the parser under test.
fn expected_date_wait(value: &str, now: SystemTime) -> Option<Duration> {
    let date = httpdate::parse_http_date(value.trim_matches([' ', '\t'])).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

fn check_no_panic_and_a_pure_function(value: &str, now: SystemTime) -> Result<(), TestCaseError> {
    let first = parse_retry_after(value, now);
    // The same inputs give the same answer: nothing else, such as a clock, is read.
    prop_assert_eq!(&first, &parse_retry_after(value, now));
    let _ = parse_grpc_pushback(value);
    let _ = parse_amz_retry_after(value);
    let trimmed = value.trim_matches([' ', '\t']);
    if let Ok(wait) = &first {
        if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
            // A date: the wait is exactly the date minus `now`, so it came from `now`.
            prop_assert_eq!(Some(*wait), expected_date_wait(value, now));
        }
    } else {
        prop_assert!(expected_date_wait(value, now).is_none());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_strings_never_panic(value in any::<String>(), now in any_now()) {
        check_no_panic_and_a_pure_function(&value, now)?;
    }

    #[test]
    fn header_like_strings_never_panic(value in header_like(), now in any_now()) {
        check_no_panic_and_a_pure_function(&value, now)?;
    }

    #[test]
    fn delay_seconds_round_trip(n in any::<u32>(), now in any_now()) {
        prop_assert_eq!(parse_retry_after(&n.to_string(), now), Ok(Duration::from_secs(u64::from(n))));
    }

    #[test]
    fn u64_delay_seconds_round_trip(n in any::<u64>(), now in any_now()) {
        prop_assert_eq!(parse_retry_after(&n.to_string(), now), Ok(Duration::from_secs(n)));
    }

    #[test]
    fn dates_round_trip(t in http_time(), d in 0u64..1_000_000) {
        let value = httpdate::fmt_http_date(t);
        let now = t - Duration::from_secs(d);
        prop_assert_eq!(parse_retry_after(&value, now), Ok(Duration::from_secs(d)));
    }

    #[test]
    fn every_date_layout_round_trips(t in http_time(), d in 0u64..1_000_000) {
        let now = t - Duration::from_secs(d);
        for value in layouts(t) {
            prop_assert_eq!(parse_retry_after(&value, now), Ok(Duration::from_secs(d)), "{:?}", value);
            let padded = format!(" \t{value}\t ");
            prop_assert_eq!(parse_retry_after(&padded, now), Ok(Duration::from_secs(d)), "{:?}", padded);
        }
    }

    #[test]
    fn dates_not_after_now_are_zero(t in http_time(), past in 0u64..1_000_000_000, nanos in 0u32..1_000_000_000) {
        let value = httpdate::fmt_http_date(t);
        let now = t + Duration::new(past, nanos);
        prop_assert_eq!(parse_retry_after(&value, now), Ok(Duration::ZERO));
    }

    #[test]
    fn grpc_pushback_reads_any_i64(n in any::<i64>()) {
        let expected = if n >= 0 {
            Pushback::After(Duration::from_millis(n.unsigned_abs()))
        } else {
            Pushback::DoNotRetry
        };
        prop_assert_eq!(parse_grpc_pushback(&n.to_string()), Ok(expected));
    }

    #[test]
    fn amz_retry_after_reads_any_u64(n in any::<u64>()) {
        prop_assert_eq!(parse_amz_retry_after(&n.to_string()), Ok(Duration::from_millis(n)));
        if n > 0 {
            prop_assert_eq!(parse_amz_retry_after(&format!("-{n}")), Err(RetryAfterError::Negative));
        }
    }
}

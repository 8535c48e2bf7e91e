//! The HTTP classifier, the server-directed waits it reads, idempotency by method, and the
//! classifier driving the blocking executor on a manual clock.

#![cfg(feature = "http")]

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use proptest::prelude::*;
use stagger::Failure;
use stagger::classify::Classifier;
use stagger::clock::{Clock, ManualClock, Timestamp};
use stagger::engine::{Dispersal, Settings, StopReason};
use stagger::http::{
    HttpClassifier, classify_response, classify_status, is_idempotent, request_is_idempotent,
};
use stagger::policy::{ExponentialFullJitter, Policy, PolicyConfig};
use stagger::rng::SeededRng;

/// Wed, 21 Oct 2015 07:28:00 GMT.
const DATE: &str = "Wed, 21 Oct 2015 07:28:00 GMT";

fn date() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_445_412_480)
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_bytes(value).unwrap(),
        );
    }
    map
}

/// Classifies `status` with `pairs` as headers, at `now`.
fn classify_at(status: u16, pairs: &[(&str, &[u8])], now: SystemTime) -> Option<Failure> {
    classify_status(StatusCode::from_u16(status).unwrap(), &headers(pairs), now)
}

fn classify(status: u16, pairs: &[(&str, &[u8])]) -> Option<Failure> {
    classify_at(status, pairs, date())
}

#[test]
fn informational_success_and_redirect_statuses_are_not_failures() {
    for status in [
        100, 101, 200, 201, 202, 204, 206, 299, 300, 301, 302, 304, 307, 308, 399,
    ] {
        assert_eq!(classify(status, &[]), None, "{status}");
        // Not even with a wait attached.
        assert_eq!(classify(status, &[("retry-after", b"5")]), None, "{status}");
    }
}

#[test]
fn each_failure_status_has_its_kind() {
    assert_eq!(classify(408, &[]), Some(Failure::Rejected));
    assert_eq!(classify(429, &[]), Some(Failure::Throttled(None)));
    for status in [500, 502, 504] {
        assert_eq!(classify(status, &[]), Some(Failure::Retryable), "{status}");
    }
    assert_eq!(classify(503, &[]), Some(Failure::Retryable));
    for status in [
        400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418,
        421, 422, 423, 424, 425, 426, 428, 431, 451, 499, 501, 505, 506, 507, 508, 510, 511, 599,
        600, 999,
    ] {
        assert_eq!(classify(status, &[]), Some(Failure::Permanent), "{status}");
    }
}

#[test]
fn only_408_and_429_are_known_to_have_had_no_effect() {
    for status in 400..=599 {
        let failure = classify(status, &[]).unwrap();
        assert_eq!(
            failure.had_no_effect(),
            matches!(status, 408 | 429),
            "{status}"
        );
    }
}

#[test]
fn retry_after_in_delay_seconds() {
    let wait = &[("retry-after", b"120".as_slice())];
    assert_eq!(
        classify(429, wait),
        Some(Failure::Throttled(Some(secs(120))))
    );
    assert_eq!(classify(503, wait), Some(Failure::RetryAfter(secs(120))));
    // Optional whitespace around the value, and zero.
    assert_eq!(
        classify(503, &[("retry-after", b" \t7 ")]),
        Some(Failure::RetryAfter(secs(7)))
    );
    assert_eq!(
        classify(429, &[("retry-after", b"0")]),
        Some(Failure::Throttled(Some(Duration::ZERO)))
    );
    // Delay-seconds do not depend on any clock, the response's Date included.
    let with_date = &[
        ("retry-after", b"120".as_slice()),
        ("date", b"Wed, 21 Oct 2015 07:00:00 GMT"),
    ];
    assert_eq!(
        classify_at(503, with_date, UNIX_EPOCH),
        Some(Failure::RetryAfter(secs(120)))
    );
}

#[test]
fn retry_after_as_a_date_is_measured_from_the_response_date() {
    let pairs = &[
        ("date", b"Wed, 21 Oct 2015 07:20:00 GMT".as_slice()),
        ("retry-after", DATE.as_bytes()),
    ];
    // The local clock is far off; the server's two dates are 480 s apart.
    for now in [UNIX_EPOCH, date() + secs(3_600), date() - secs(86_400)] {
        assert_eq!(
            classify_at(503, pairs, now),
            Some(Failure::RetryAfter(secs(480)))
        );
        assert_eq!(
            classify_at(429, pairs, now),
            Some(Failure::Throttled(Some(secs(480))))
        );
    }
    // The obsolete date formats, in both headers.
    let obsolete = &[
        ("date", b"Sunday, 06-Nov-94 08:49:30 GMT".as_slice()),
        ("retry-after", b"Sun Nov  6 08:49:37 1994"),
    ];
    assert_eq!(
        classify_at(503, obsolete, date()),
        Some(Failure::RetryAfter(secs(7)))
    );
    // A Retry-After date before the response's Date means "now".
    let past = &[
        ("date", b"Wed, 21 Oct 2015 07:30:00 GMT".as_slice()),
        ("retry-after", DATE.as_bytes()),
    ];
    assert_eq!(
        classify_at(503, past, UNIX_EPOCH),
        Some(Failure::RetryAfter(Duration::ZERO))
    );
}

#[test]
fn retry_after_as_a_date_without_a_valid_date_header_is_measured_from_now() {
    let now = date() - secs(90);
    let expected = Some(Failure::RetryAfter(secs(90)));
    assert_eq!(
        classify_at(503, &[("retry-after", DATE.as_bytes())], now),
        expected
    );
    // A Date that is not an HTTP-date is not the server's clock: `now` is used.
    for bad in [
        b"yesterday".as_slice(),
        b"1445412000",
        b"",
        b"Wed, 21 Foo 2015 07:20:00 GMT",
        b"\xff\xfe",
    ] {
        let pairs = &[("date", bad), ("retry-after", DATE.as_bytes())];
        assert_eq!(classify_at(503, pairs, now), expected, "{bad:?}");
    }
    // In the past of `now`: retry now.
    assert_eq!(
        classify_at(429, &[("retry-after", DATE.as_bytes())], date() + secs(5)),
        Some(Failure::Throttled(Some(Duration::ZERO)))
    );
}

#[test]
fn a_malformed_retry_after_is_ignored_and_the_kind_kept() {
    for bad in [
        b"soon".as_slice(),
        b"1.5",
        b"-1",
        b"+3",
        b"",
        b"   ",
        b"Wed, 21 Foo 2015 07:28:00 GMT",
        b"\xff\xfe12",
        b"12\x80",
    ] {
        let pairs = &[("retry-after", bad)];
        assert_eq!(classify(503, pairs), Some(Failure::Retryable), "{bad:?}");
        assert_eq!(
            classify(429, pairs),
            Some(Failure::Throttled(None)),
            "{bad:?}"
        );
    }
}

#[test]
fn retry_after_is_read_only_from_429_and_503() {
    let pairs = &[("retry-after", b"2".as_slice())];
    assert_eq!(classify(408, pairs), Some(Failure::Rejected));
    for status in [500, 502, 504] {
        assert_eq!(
            classify(status, pairs),
            Some(Failure::Retryable),
            "{status}"
        );
    }
    for status in [400, 404, 501, 505] {
        assert_eq!(
            classify(status, pairs),
            Some(Failure::Permanent),
            "{status}"
        );
    }
}

#[test]
fn grpc_pushback_takes_precedence() {
    let pairs = &[
        ("retry-after", b"10".as_slice()),
        ("x-amz-retry-after", b"5000"),
        ("grpc-retry-pushback-ms", b"250"),
    ];
    let wait = Duration::from_millis(250);
    assert_eq!(classify(503, pairs), Some(Failure::RetryAfter(wait)));
    assert_eq!(classify(429, pairs), Some(Failure::Throttled(Some(wait))));
    assert_eq!(
        classify(503, &[("grpc-retry-pushback-ms", b"0")]),
        Some(Failure::RetryAfter(Duration::ZERO))
    );
}

#[test]
fn negative_or_unparseable_pushback_means_do_not_retry() {
    for bad in [
        b"-1".as_slice(),
        b"-250",
        b"-99999999999999999999999",
        b"soon",
        b"1.5",
        b"",
        b"\xff",
    ] {
        let pairs = &[
            ("retry-after", b"1".as_slice()),
            ("grpc-retry-pushback-ms", bad),
        ];
        assert_eq!(classify(503, pairs), Some(Failure::Permanent), "{bad:?}");
        assert_eq!(classify(429, pairs), Some(Failure::Permanent), "{bad:?}");
    }
    // "-0" is zero, not negative.
    assert_eq!(
        classify(503, &[("grpc-retry-pushback-ms", b"-0")]),
        Some(Failure::RetryAfter(Duration::ZERO))
    );
}

#[test]
fn pushback_is_read_only_from_429_and_503() {
    let pairs = &[("grpc-retry-pushback-ms", b"-1".as_slice())];
    assert_eq!(classify(500, pairs), Some(Failure::Retryable));
    assert_eq!(classify(408, pairs), Some(Failure::Rejected));
    assert_eq!(classify(200, pairs), None);
}

#[test]
fn x_amz_retry_after_is_honoured_without_a_usable_retry_after() {
    let wait = Duration::from_millis(1500);
    let amz = &[("x-amz-retry-after", b"1500".as_slice())];
    assert_eq!(classify(503, amz), Some(Failure::RetryAfter(wait)));
    assert_eq!(classify(429, amz), Some(Failure::Throttled(Some(wait))));
    // A valid Retry-After wins.
    let both = &[
        ("retry-after", b"3".as_slice()),
        ("x-amz-retry-after", b"1500"),
    ];
    assert_eq!(classify(503, both), Some(Failure::RetryAfter(secs(3))));
    // A malformed one is as good as absent.
    let bad_standard = &[
        ("retry-after", b"soon".as_slice()),
        ("x-amz-retry-after", b"1500"),
    ];
    assert_eq!(classify(503, bad_standard), Some(Failure::RetryAfter(wait)));
    // A malformed x-amz-retry-after is ignored too.
    for bad in [b"-5".as_slice(), b"1.5", b"", b"\xff"] {
        let pairs = &[("x-amz-retry-after", bad)];
        assert_eq!(classify(503, pairs), Some(Failure::Retryable), "{bad:?}");
        assert_eq!(
            classify(429, pairs),
            Some(Failure::Throttled(None)),
            "{bad:?}"
        );
    }
    // Read only from 429 and 503.
    assert_eq!(classify(500, amz), Some(Failure::Retryable));
}

#[test]
fn huge_waits_saturate_instead_of_failing() {
    let huge = b"999999999999999999999999999999".as_slice();
    assert_eq!(
        classify(503, &[("retry-after", huge)]),
        Some(Failure::RetryAfter(Duration::MAX))
    );
    assert_eq!(
        classify(429, &[("grpc-retry-pushback-ms", huge)]),
        Some(Failure::Throttled(Some(Duration::MAX)))
    );
}

#[test]
fn the_first_of_repeated_values_is_read() {
    let pairs = &[("retry-after", b"2".as_slice()), ("retry-after", b"9")];
    assert_eq!(classify(503, pairs), Some(Failure::RetryAfter(secs(2))));
}

#[test]
fn non_utf8_header_values_do_not_panic() {
    let junk = b"\x80\xff \xfe\tobs-text \xc3\x28".as_slice();
    for name in [
        "retry-after",
        "date",
        "grpc-retry-pushback-ms",
        "x-amz-retry-after",
        "idempotency-key",
    ] {
        for status in [200, 408, 429, 500, 503, 504] {
            let _ = classify(status, &[(name, junk)]);
        }
    }
    assert_eq!(
        classify(503, &[("retry-after", junk), ("date", junk)]),
        Some(Failure::Retryable)
    );
    assert!(is_idempotent(
        &Method::POST,
        &headers(&[("idempotency-key", junk)])
    ));
}

proptest! {
    #[test]
    fn no_header_bytes_make_classification_panic(
        status in 100u16..1000,
        values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 4),
        now in 0u64..(1 << 40),
    ) {
        let names = ["retry-after", "date", "grpc-retry-pushback-ms", "x-amz-retry-after"];
        let mut map = HeaderMap::new();
        for (name, value) in names.iter().zip(&values) {
            if let Ok(value) = HeaderValue::from_bytes(value) {
                map.insert(*name, value);
            }
        }
        let now = UNIX_EPOCH + Duration::from_secs(now);
        let failure = classify_status(StatusCode::from_u16(status).unwrap(), &map, now);
        prop_assert_eq!(failure.is_none(), status < 400);
    }
}

#[test]
fn classify_response_reads_the_response() {
    let response = Response::builder()
        .status(503)
        .header("retry-after", "4")
        .body("busy")
        .unwrap();
    assert_eq!(
        classify_response(&response, date()),
        Some(Failure::RetryAfter(secs(4)))
    );
    assert_eq!(classify_response(&Response::new(()), date()), None);
}

#[test]
fn the_classifier_reads_its_wall_clock_and_calls_non_failures_permanent() {
    let response = Response::builder()
        .status(429)
        .header("retry-after", DATE)
        .body(())
        .unwrap();
    let classifier = HttpClassifier::with_clock(date() - secs(30));
    assert_eq!(
        classifier.classify_response(&response),
        Some(Failure::Throttled(Some(secs(30))))
    );
    assert_eq!(
        Classifier::classify(&classifier, &response),
        Failure::Throttled(Some(secs(30)))
    );
    let moving = HttpClassifier::with_clock(|| date() - secs(10));
    assert_eq!(
        Classifier::classify(&moving, &response),
        Failure::Throttled(Some(secs(10)))
    );
    for status in [200, 204, 304] {
        let ok = Response::builder().status(status).body(()).unwrap();
        assert_eq!(classifier.classify_response(&ok), None);
        assert_eq!(Classifier::classify(&classifier, &ok), Failure::Permanent);
    }
    // The system clock is past 2015, so the date is in the past: retry now.
    assert_eq!(
        HttpClassifier::new().classify_response(&response),
        Some(Failure::Throttled(Some(Duration::ZERO)))
    );
}

#[test]
fn idempotency_by_method_and_key() {
    let none = HeaderMap::new();
    let keyed = headers(&[("idempotency-key", b"\"8e03978e-40d5-43e8\"")]);
    let empty_key = headers(&[("idempotency-key", b" ")]);
    let propfind = Method::from_bytes(b"PROPFIND").unwrap();
    let lower_get = Method::from_bytes(b"get").unwrap();
    let table = [
        (Method::GET, true),
        (Method::HEAD, true),
        (Method::OPTIONS, true),
        (Method::TRACE, true),
        (Method::PUT, true),
        (Method::DELETE, true),
        (Method::POST, false),
        (Method::PATCH, false),
        (Method::CONNECT, false),
        (propfind, false),
        (lower_get, false), // method names are case-sensitive
    ];
    for (method, idempotent) in table {
        assert_eq!(is_idempotent(&method, &none), idempotent, "{method}");
        assert_eq!(is_idempotent(&method, &empty_key), idempotent, "{method}");
        assert!(is_idempotent(&method, &keyed), "{method} with a key");
        let request = Request::builder().method(method.clone()).body(()).unwrap();
        assert_eq!(request_is_idempotent(&request), idempotent, "{method}");
    }
    let keyed_post = Request::post("/orders")
        .header("Idempotency-Key", "order-17")
        .body(())
        .unwrap();
    assert!(request_is_idempotent(&keyed_post));
}

// The classifier driving the blocking executor.

fn response(status: u16, pairs: &[(&str, &str)]) -> Response<()> {
    let mut builder = Response::builder().status(status);
    for (name, value) in pairs {
        builder = builder.header(*name, *value);
    }
    builder.body(()).unwrap()
}

fn policy() -> impl Policy {
    ExponentialFullJitter::new()
        .with_base(Duration::from_millis(10))
        .build(SeededRng::new(1))
        .unwrap()
}

struct Run {
    result: Result<(), StopReason>,
    attempts: u32,
    waits: Vec<Duration>,
    now: Timestamp,
}

/// Runs `script` through the blocking executor with the HTTP classifier, a manual clock and a
/// recording sleeper that advances it.
fn run_script(script: Vec<Response<()>>, idempotent: bool, timeout: Option<Duration>) -> Run {
    run_dispersed(script, idempotent, timeout, Dispersal::default())
}

/// [`run_script`], spreading retries above a server's wait by `dispersal`.
fn run_dispersed(
    script: Vec<Response<()>>,
    idempotent: bool,
    timeout: Option<Duration>,
    dispersal: Dispersal,
) -> Run {
    let clock = ManualClock::new();
    let waits = RefCell::new(Vec::new());
    let http = HttpClassifier::with_clock(date());
    let mut script = script.into_iter();
    let retry = stagger::blocking::retry(policy(), |_| -> Result<(), Response<()>> {
        let response = script.next().expect("a scripted response");
        if response.status().is_success() {
            Ok(())
        } else {
            Err(response)
        }
    })
    .settings(Settings::new().with_dispersal(dispersal))
    .idempotent(idempotent)
    .classify(move |r| stagger::classify::Classifier::classify(&http, r))
    .sleeper(|d: Duration| {
        waits.borrow_mut().push(d);
        clock.advance(d);
    })
    .clock(clock.clone());
    let outcome = match timeout {
        Some(t) => retry.timeout(t).call_outcome(),
        None => retry.call_outcome(),
    };
    Run {
        result: outcome.result.map_err(|e| e.reason()),
        attempts: outcome.summary.attempts,
        waits: waits.into_inner(),
        now: clock.now(),
    }
}

#[test]
fn a_503_retry_after_is_a_floor_under_the_policy_delay() {
    let busy = Failure::RetryAfter(secs(2));
    let policy_delay = policy().next_delay(1, &busy).expect("a retry");
    assert!(policy_delay <= Duration::from_millis(10));
    let expected = policy_delay.max(secs(2));
    assert_eq!(expected, secs(2));

    let busy_then_ok = || vec![response(503, &[("retry-after", "2")]), response(200, &[])];
    let run = run_dispersed(busy_then_ok(), true, None, Dispersal::Floor);
    assert_eq!(run.result, Ok(()));
    assert_eq!(run.attempts, 2);
    assert_eq!(run.waits, [expected]);
    assert_eq!(run.now, Timestamp::from_duration(expected));

    // By default the retry is spread over the wait that follows the floor, never before it.
    for _ in 0..20 {
        let run = run_script(busy_then_ok(), true, None);
        assert_eq!(run.result, Ok(()));
        assert!(
            (secs(2)..secs(4)).contains(&run.waits[0]),
            "{:?}",
            run.waits
        );
    }

    // The date form, measured against the classifier's fixed wall clock.
    let run = run_dispersed(
        vec![
            response(503, &[("retry-after", "Wed, 21 Oct 2015 07:28:03 GMT")]),
            response(200, &[]),
        ],
        true,
        None,
        Dispersal::Floor,
    );
    assert_eq!((run.result, run.waits), (Ok(()), vec![secs(3)]));
}

#[test]
fn a_503_without_a_wait_follows_the_policy() {
    let run = run_script(vec![response(503, &[]), response(200, &[])], true, None);
    assert_eq!((run.result, run.attempts), (Ok(()), 2));
    assert_eq!(run.waits.len(), 1);
    assert!(run.waits[0] <= Duration::from_millis(10));
}

#[test]
fn a_retry_after_that_cannot_fit_the_deadline_gives_up_now() {
    let run = run_script(
        vec![response(503, &[("retry-after", "2")])],
        true,
        Some(secs(1)),
    );
    assert_eq!(
        run.result,
        Err(StopReason::WaitExceedsDeadline {
            wait: secs(2),
            remaining: secs(1)
        })
    );
    assert_eq!((run.attempts, run.waits.len()), (1, 0));
}

#[test]
fn post_503_is_not_retried_unless_it_has_an_idempotency_key() {
    let plain = headers(&[]);
    let keyed = headers(&[("idempotency-key", b"order-17")]);
    let script = || vec![response(503, &[]), response(200, &[])];

    let run = run_script(script(), is_idempotent(&Method::POST, &plain), None);
    assert_eq!(run.result, Err(StopReason::NotIdempotent));
    assert_eq!((run.attempts, run.waits.len()), (1, 0));

    // Not even when the server named a wait: the first attempt may have taken effect.
    let run = run_script(
        vec![response(503, &[("retry-after", "1")])],
        is_idempotent(&Method::POST, &plain),
        None,
    );
    assert_eq!(run.result, Err(StopReason::NotIdempotent));

    let run = run_script(script(), is_idempotent(&Method::POST, &keyed), None);
    assert_eq!((run.result, run.attempts), (Ok(()), 2));
}

#[test]
fn post_429_and_408_are_retried_because_they_had_no_effect() {
    let post = is_idempotent(&Method::POST, &HeaderMap::new());
    assert!(!post);
    let run = run_script(
        vec![response(429, &[("retry-after", "1")]), response(200, &[])],
        post,
        None,
    );
    assert_eq!((run.result, run.attempts), (Ok(()), 2));
    assert!(
        (secs(1)..secs(2)).contains(&run.waits[0]),
        "{:?}",
        run.waits
    );

    let run = run_script(vec![response(408, &[]), response(200, &[])], post, None);
    assert_eq!((run.result, run.attempts), (Ok(()), 2));
}

#[test]
fn negative_pushback_and_permanent_statuses_stop_at_once() {
    for script in [
        vec![response(503, &[("grpc-retry-pushback-ms", "-1")])],
        vec![response(400, &[])],
        vec![response(501, &[])],
    ] {
        let run = run_script(script, true, None);
        assert_eq!(run.result, Err(StopReason::NotRetryable));
        assert_eq!(run.attempts, 1);
    }
}

#[cfg(feature = "tracing")]
mod traced {
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::{Event, Level, Metadata, Subscriber, span};

    use super::*;

    /// Records the `header` field of every `warn` event with target `stagger`.
    #[derive(Clone, Default)]
    struct Warnings(Arc<Mutex<Vec<String>>>);

    struct HeaderField(Option<String>);

    impl Visit for HeaderField {
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "header" {
                self.0 = Some(value.to_owned());
            }
        }

        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "header" {
                self.0 = Some(format!("{value:?}"));
            }
        }
    }

    impl Subscriber for Warnings {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, event: &Event<'_>) {
            let meta = event.metadata();
            if *meta.level() == Level::WARN && meta.target() == "stagger" {
                let mut header = HeaderField(None);
                event.record(&mut header);
                self.0.lock().unwrap().push(header.0.unwrap_or_default());
            }
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }

    #[test]
    fn malformed_waits_are_reported_in_a_warn_event() {
        let warnings = Warnings::default();
        tracing::subscriber::with_default(warnings.clone(), || {
            tracing::callsite::rebuild_interest_cache();
            assert_eq!(
                classify(503, &[("retry-after", b"soon")]),
                Some(Failure::Retryable)
            );
            assert_eq!(
                classify(429, &[("x-amz-retry-after", b"\xff")]),
                Some(Failure::Throttled(None))
            );
            assert_eq!(
                classify(503, &[("grpc-retry-pushback-ms", b"later")]),
                Some(Failure::Permanent)
            );
            // Valid values, and a negative pushback (a valid answer), are not reported.
            let _ = classify(503, &[("retry-after", b"2")]);
            let _ = classify(503, &[("grpc-retry-pushback-ms", b"-1")]);
        });
        assert_eq!(
            *warnings.0.lock().unwrap(),
            ["retry-after", "x-amz-retry-after", "grpc-retry-pushback-ms"]
        );
    }
}

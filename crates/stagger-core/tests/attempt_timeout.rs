//! A timeout per attempt beside the run's one deadline: each attempt is told the shorter of
//! the two, and a timeout is retried as any timeout is.

use std::time::Duration;

use stagger_core::engine::{Run, Settings, StopReason};
use stagger_core::policy::Immediate;
use stagger_core::{Failure, PolicyConfig, SeededRng, Timestamp};

fn ms(ms: u64) -> Timestamp {
    Timestamp::from_duration(Duration::from_millis(ms))
}

fn run(settings: Settings) -> Run<impl stagger_core::Policy> {
    let policy = Immediate::new()
        .with_max_attempts(3)
        .build(SeededRng::new(1))
        .unwrap();
    Run::new(policy, settings, ms(0))
}

#[test]
fn each_attempt_is_told_the_shorter_of_its_timeout_and_the_time_left() {
    let settings = Settings::new()
        .with_timeout(Duration::from_millis(500))
        .with_attempt_timeout(Duration::from_millis(200));
    let mut run = run(settings);
    let first = run.begin(ms(0)).unwrap();
    assert_eq!(first.remaining, Some(Duration::from_millis(200)));
    assert_eq!(first.deadline, Some(ms(500)));
    // Cut at its timeout: a timeout, retried.
    assert!(run.failed(ms(200), Failure::Timeout).is_ok());
    let second = run.begin(ms(200)).unwrap();
    assert_eq!(second.remaining, Some(Duration::from_millis(200)));
    assert!(run.failed(ms(400), Failure::Timeout).is_ok());
    // The third has less time left than its own timeout: the deadline bounds it.
    let third = run.begin(ms(400)).unwrap();
    assert_eq!(third.remaining, Some(Duration::from_millis(100)));
}

#[test]
fn without_a_deadline_an_attempt_has_its_own_timeout_and_without_either_none() {
    let mut timed = run(Settings::new().with_attempt_timeout(Duration::from_secs(1)));
    let attempt = timed.begin(ms(10)).unwrap();
    assert_eq!(attempt.remaining, Some(Duration::from_secs(1)));
    assert_eq!(attempt.deadline, None);
    let mut plain = run(Settings::new());
    let attempt = plain.begin(ms(10)).unwrap();
    assert_eq!((attempt.remaining, attempt.deadline), (None, None));
    // A huge attempt timeout is the time the attempt has, as it is.
    let mut huge = run(Settings::new().with_attempt_timeout(Duration::MAX));
    assert_eq!(huge.begin(ms(10)).unwrap().remaining, Some(Duration::MAX));
}

#[test]
fn an_attempt_that_timed_out_is_not_repeated_for_an_operation_that_is_not_idempotent() {
    let settings = Settings::new()
        .with_attempt_timeout(Duration::from_millis(200))
        .with_idempotent(false);
    let mut run = run(settings);
    run.begin(ms(0)).unwrap();
    let stopped = run.failed(ms(200), Failure::Timeout).unwrap_err();
    assert_eq!(stopped.reason, StopReason::NotIdempotent);
}

//! Every check of seed 001's `retry_check.py`, ported to the engine with the same numbers.
//!
//! The script's clock and downstream calls are deterministic models; so are these. Its retry
//! policy (`ceiling = 2^min(attempt - 1, 3)`, `delay = ceiling * sample()`) is reproduced by
//! [`ScriptPolicy`], and its loop by [`retry`], which drives [`Run`] exactly as an executor does.

use std::collections::BTreeMap;
use std::time::Duration;

use stagger_core::engine::{Run, Settings, Verdict};
use stagger_core::policy::{Constant, ExponentialFullJitter};
use stagger_core::{Failure, Policy, PolicyConfig, SeededRng, Timestamp};

/// The script's policy: a ceiling of `2^min(attempt - 1, 3)` seconds times a fixed sample.
struct ScriptPolicy {
    sample: f64,
    max_attempts: u32,
}

impl Policy for ScriptPolicy {
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        let ceiling = 2f64.powi(attempt.saturating_sub(1).min(3) as i32);
        let delay = ceiling * self.sample;
        assert!((0.0..=ceiling).contains(&delay));
        Some(Duration::from_secs_f64(delay))
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The script's `ScriptedCall`: each call takes `duration` of the clock, or all of `timeout`
/// if it is shorter, in which case it raises a timeout.
struct Scripted {
    steps: std::collections::VecDeque<(u16, f64)>,
    timeouts: Vec<Duration>,
}

impl Scripted {
    fn new(steps: &[(u16, f64)]) -> Self {
        Self {
            steps: steps.iter().copied().collect(),
            timeouts: Vec::new(),
        }
    }

    fn call(&mut self, now: &mut Timestamp, timeout: Duration) -> Option<u16> {
        self.timeouts.push(timeout);
        let (status, duration) = self.steps.pop_front().expect("a scripted step");
        let duration = secs(duration);
        *now = now.saturating_add(duration.min(timeout));
        (duration < timeout).then_some(status)
    }
}

/// The script's `retry`: GET and HEAD are idempotent; timeouts and 503 are retryable.
fn retry(
    call: &mut dyn FnMut(&mut Timestamp, Duration) -> Option<u16>,
    now: &mut Timestamp,
    budget: f64,
    sample: f64,
    method: &str,
    max_attempts: u32,
) -> (&'static str, u32) {
    let options = Settings::new()
        .with_timeout(secs(budget))
        .with_idempotent(matches!(method, "GET" | "HEAD"));
    let policy = ScriptPolicy {
        sample,
        max_attempts,
    };
    let mut run = Run::new(policy, options, *now);
    loop {
        let attempt = match run.begin(*now) {
            Ok(attempt) => attempt,
            Err(stopped) => return (stopped.reason.name(), stopped.summary.attempts),
        };
        let result = match call(now, attempt.remaining.expect("a deadline")) {
            Some(200) => Ok(()),
            None => Err(Failure::Timeout),
            Some(503) => Err(Failure::Retryable),
            Some(_) => Err(Failure::Permanent),
        };
        match run.end(*now, result) {
            Verdict::Success(summary) => return ("success", summary.attempts),
            Verdict::Retry(retry) => *now = now.saturating_add(retry.delay),
            Verdict::Stop(stopped) => return (stopped.reason.name(), stopped.summary.attempts),
        }
    }
}

fn at(s: f64) -> Timestamp {
    Timestamp::from_duration(secs(s))
}

#[test]
fn three_attempts_finish_at_2_25_with_shrinking_propagated_timeouts() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[(503, 0.25), (503, 0.25), (200, 0.25)]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 5.0, 0.5, "GET", 3);
    assert_eq!(outcome, ("success", 3));
    assert_eq!(now, at(2.25));
    assert_eq!(call.timeouts, [secs(5.0), secs(4.25), secs(3.0)]);
}

#[test]
fn an_early_timeout_recovers_without_resetting_the_shared_deadline() {
    let mut now = Timestamp::ZERO;
    let mut timeouts = Vec::new();
    let mut early_timeout = |now: &mut Timestamp, timeout: Duration| {
        timeouts.push(timeout);
        *now = now.saturating_add(secs(0.25));
        (timeouts.len() > 1).then_some(200)
    };
    let outcome = retry(&mut early_timeout, &mut now, 5.0, 0.5, "GET", 3);
    assert_eq!(outcome, ("success", 2));
    assert_eq!(now, at(1.0));
    assert_eq!(timeouts, [secs(5.0), secs(4.25)]);
}

#[test]
fn post_503_and_get_400_are_not_retried() {
    // The script reports both as "not-retryable"; the engine says which rule stopped the run:
    // a POST's 503 may have taken effect, a GET's 400 is permanent. Both stop after one attempt.
    for (method, status, reason) in [
        ("POST", 503, "not-idempotent"),
        ("GET", 400, "not-retryable"),
    ] {
        let mut now = Timestamp::ZERO;
        let mut call = Scripted::new(&[(status, 0.25)]);
        let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 5.0, 0.5, method, 3);
        assert_eq!(outcome, (reason, 1), "{method} {status}");
    }
}

#[test]
fn the_total_attempt_cap_stops_further_work() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[(503, 0.25); 4]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 5.0, 0.5, "GET", 3);
    assert_eq!(outcome, ("attempt-limit", 3));
    assert_eq!(call.timeouts.len(), 3);
}

#[test]
fn the_exponential_ceiling_stops_at_8_rather_than_growing_without_bound() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[(503, 0.25); 7]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 100.0, 1.0, "GET", 7);
    assert_eq!(outcome, ("attempt-limit", 7));
    // Seven 0.25 calls plus waits 1, 2, 4, 8, 8, 8.
    assert_eq!(now, at(32.75));
}

#[test]
fn a_wait_that_cannot_fit_is_abandoned() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[(503, 0.1)]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 0.5, 1.0, "GET", 3);
    assert_eq!(outcome, ("wait-exceeds-deadline", 1));
    assert_eq!(now, at(0.1));
    assert_eq!(call.timeouts.len(), 1);
}

#[test]
fn cooperative_execution_cannot_consume_a_fresh_budget_per_attempt() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[(503, 99.0)]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 0.5, 0.5, "GET", 3);
    assert_eq!(outcome, ("deadline", 1));
    assert_eq!(now, at(0.5));
}

#[test]
fn an_exhausted_deadline_makes_no_call() {
    let mut now = Timestamp::ZERO;
    let mut call = Scripted::new(&[]);
    let outcome = retry(&mut |n, t| call.call(n, t), &mut now, 0.0, 0.5, "GET", 3);
    assert_eq!(outcome, ("deadline", 0));
    assert!(call.timeouts.is_empty());
}

/// The script compares 100 fixed first-retry delays with 100 full-jitter ones in 0.1 s bins:
/// the fixed ones all land in one bin, the jittered ones do not.
#[test]
fn fixed_first_retries_share_one_bin_and_full_jitter_spreads_them() {
    let bins = |delays: &[Duration]| -> BTreeMap<u128, usize> {
        let mut bins = BTreeMap::new();
        for d in delays {
            *bins.entry(d.as_millis() / 100).or_default() += 1;
        }
        bins
    };
    let first_retry = |policy: &mut dyn Policy| policy.next_delay(1, &Failure::Retryable).unwrap();
    let fixed: Vec<Duration> = (0..100)
        .map(|_| {
            let mut p = Constant::new()
                .with_base(Duration::from_secs(1))
                .build(SeededRng::new(0))
                .unwrap();
            first_retry(&mut p)
        })
        .collect();
    let config = ExponentialFullJitter::new().with_base(Duration::from_secs(1));
    let jittered: Vec<Duration> = (0..100)
        .map(|client| first_retry(&mut config.build(SeededRng::new(client)).unwrap()))
        .collect();
    assert!(jittered.iter().all(|d| *d < Duration::from_secs(1)));
    let fixed_peak = *bins(&fixed).values().max().unwrap();
    let jitter_bins = bins(&jittered);
    assert_eq!(fixed_peak, 100);
    assert_eq!(jitter_bins.values().sum::<usize>(), 100);
    assert!(*jitter_bins.values().max().unwrap() < 100);
}

#[test]
fn a_nested_run_leaves_recovery_to_the_outer_layer() {
    let policy = Constant::new()
        .with_max_attempts(3)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::new(policy, Settings::new(), Timestamp::ZERO);
    run.mark_nested();
    run.begin(Timestamp::ZERO).unwrap();
    let Verdict::Stop(stopped) = run.end(Timestamp::ZERO, Err(Failure::Retryable)) else {
        panic!("a nested run stops after one attempt");
    };
    assert_eq!(stopped.reason.name(), "outer-layer-owns-recovery");
    assert_eq!(stopped.summary.attempts, 1);
}

//! Nothing lost, nothing repeated, in the executors: a retry the budget granted and that was
//! never sent goes back to the budget, an outer layer sees exactly the facts of the inner run's
//! last failure, and a manual clock covers every timestamp.
//!
//! The tower layer and the reqwest middleware are checked against a real server in their own
//! test files.

#![cfg(feature = "tokio")]

use std::cell::Cell;
use std::future::ready;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use stagger::budget::Spent;
use stagger::budget::{Budget, TokenBucket, TokenBucketBudget};
use stagger::clock::{Clock, ManualClock, Timestamp};
use stagger::engine::{Attempt, Nested, Run, Settings, StopReason, Verdict};
use stagger::policy::{Constant, Immediate, PolicyConfig};
use stagger::rng::SeededRng;
use stagger::{Failure, RetryError};

/// A bucket of 10 tokens at 5 a retry: two unsent retries would leave it empty.
fn small_bucket() -> Arc<TokenBucketBudget> {
    Arc::new(TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap())
}

/// Three attempts, a second apart.
fn slow() -> Constant {
    Constant::new()
        .with_base(Duration::from_secs(1))
        .with_max_attempts(3)
}

// ---------------------------------------------------------------------------------------------
// A retry is paid for when it is sent.

#[tokio::test(start_paused = true)]
async fn a_retry_cancelled_during_its_wait_goes_back_to_the_budget() {
    let bucket = small_bucket();
    let calls = Arc::new(AtomicU32::new(0));
    for _ in 0..4 {
        let calls = Arc::clone(&calls);
        let run = stagger::retry(slow(), move |_| {
            calls.fetch_add(1, Ordering::Relaxed);
            ready(Err::<(), _>("unavailable"))
        })
        .classify(|_: &&str| Failure::Retryable)
        .budget(Arc::clone(&bucket));
        // The caller gives up during the first wait: the retry is never sent.
        let cut = tokio::time::timeout(Duration::from_millis(500), run).await;
        assert!(cut.is_err(), "the caller's timeout ends the run mid-wait");
    }
    assert_eq!(
        calls.load(Ordering::Relaxed),
        4,
        "one attempt per run, no retry sent"
    );
    assert_eq!(
        bucket.tokens(),
        10.0,
        "no retry was sent, so none was paid for"
    );

    // The next request still has both of its retries.
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let result = stagger::retry(slow(), move |_| {
        counted.fetch_add(1, Ordering::Relaxed);
        ready(Err::<(), _>("unavailable"))
    })
    .classify(|_: &&str| Failure::Retryable)
    .budget(Arc::clone(&bucket))
    .await;
    assert_eq!(result.unwrap_err().reason(), StopReason::AttemptLimit);
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(bucket.tokens(), 0.0);
}

#[tokio::test]
async fn a_sleeper_that_oversleeps_the_deadline_sends_nothing_and_pays_nothing() {
    let bucket = small_bucket();
    let clock = ManualClock::new();
    let late = clock.clone();
    let result = stagger::retry(slow(), |_| ready(Err::<(), _>("unavailable")))
        .classify(|_: &&str| Failure::Retryable)
        .timeout(Duration::from_secs(2))
        .clock(clock)
        // Asked for 1 s, wakes after 5: the deadline has passed when the retry would begin.
        .sleeper(move |d: Duration| {
            late.advance(d * 5);
            ready(())
        })
        .budget(Arc::clone(&bucket))
        .await;
    let error = result.unwrap_err();
    assert_eq!(error.reason(), StopReason::Deadline);
    assert_eq!(error.summary().attempts, 1);
    assert_eq!(bucket.tokens(), 10.0);
}

#[test]
fn a_blocking_sleeper_that_oversleeps_the_deadline_pays_nothing() {
    let bucket = small_bucket();
    let clock = ManualClock::new();
    let late = clock.clone();
    let result = stagger::blocking::retry(slow(), |_| Err::<(), _>("unavailable"))
        .classify(|_: &&str| Failure::Retryable)
        .timeout(Duration::from_secs(2))
        .clock(clock)
        .sleeper(move |d: Duration| late.advance(d * 5))
        .budget(Arc::clone(&bucket))
        .call();
    assert_eq!(result.unwrap_err().reason(), StopReason::Deadline);
    assert_eq!(bucket.tokens(), 10.0);
}

// ---------------------------------------------------------------------------------------------
// A manual clock covers every timestamp.

/// A run on a manual clock whose only failure asks for `wait`: its result and the clock's time
/// at its end, or a panic if it has not ended within ten seconds.
fn after_server_wait(wait: Duration) -> (Result<usize, StopReason>, Timestamp) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let clock = ManualClock::new();
        let sleeps = clock.clone();
        let calls = Cell::new(0);
        let result = stagger::blocking::retry(Immediate::new().with_max_attempts(2), |_| {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                Err(Failure::RetryAfter(wait))
            } else {
                Ok(calls.get())
            }
        })
        .classify(|f: &Failure| *f)
        .max_server_wait(Duration::MAX)
        .clock(clock.clone())
        .sleeper(move |d: Duration| sleeps.advance(d))
        .call();
        let _ = done.send((result.map_err(|e| e.reason()), clock.now()));
    });
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("the run ends instead of waiting again for ever")
}

#[test]
fn a_300_year_server_wait_on_a_manual_clock_is_honoured() {
    let centuries = Duration::from_secs(300 * 365 * 24 * 3600);
    let (result, now) = after_server_wait(centuries);
    assert_eq!(result, Ok(2));
    // Never before the server's time, and spread at most as long again above it.
    let waited = now.since_origin();
    assert!(waited >= centuries && waited < centuries * 2, "{waited:?}");
}

#[test]
fn a_600_year_server_wait_on_a_manual_clock_ends_at_the_end_of_time() {
    // Past 2^64 ns (about 584 years), where the timeline ends: the clock saturates there, the
    // wait counts as over at the last timestamp, and the run goes on instead of asking for
    // more of a wait that no clock can show.
    let (result, now) = after_server_wait(Duration::from_secs(600 * 365 * 24 * 3600));
    assert_eq!(result, Ok(2));
    assert_eq!(now, Timestamp::MAX);
}

// ---------------------------------------------------------------------------------------------
// Nested errors keep exactly the facts a single attempt would have had.

/// How the inner layer is set up, and so why it gives up.
#[derive(Clone, Copy, Debug)]
enum Inner {
    /// The default: nested, it makes one attempt and leaves recovery to the outer layer.
    SingleAttempt,
    /// It retries on its own, but its budget is empty: it gives up with `BudgetExhausted`.
    EmptyBudget,
    /// It retries on its own, with one attempt: it gives up with `AttemptLimit`.
    OneAttempt,
    /// It retries on its own, but waits at most 1 s for a server: `ServerWaitTooLong` for a
    /// longer wait, `AttemptLimit` after three attempts otherwise.
    ShortServerWait,
    /// It retries on its own within 2 s, and its second attempt succeeds 10 s later: a success
    /// past the deadline (`Deadline`), or `WaitExceedsDeadline` for a server wait of 5 s.
    LateSuccess,
    /// Its budget refuses the first attempt: `BudgetRefusedFirstAttempt`, no call at all.
    RefusedFirst,
    /// Its deadline has passed before the first attempt: `Deadline`, no call at all.
    NoTime,
}

const INNERS: [Inner; 7] = [
    Inner::SingleAttempt,
    Inner::EmptyBudget,
    Inner::OneAttempt,
    Inner::ShortServerWait,
    Inner::LateSuccess,
    Inner::RefusedFirst,
    Inner::NoTime,
];

/// Every kind of failure, with a short (10 ms) and a long (5 s) server wait where it has one.
const FAILURES: [Failure; 9] = [
    Failure::Retryable,
    Failure::Permanent,
    Failure::Timeout,
    Failure::Rejected,
    Failure::Throttled(None),
    Failure::Throttled(Some(Duration::from_millis(10))),
    Failure::Throttled(Some(Duration::from_secs(5))),
    Failure::RetryAfter(Duration::from_millis(10)),
    Failure::RetryAfter(Duration::from_secs(5)),
];

/// A budget that refuses everything, first attempts included.
struct Closed;

impl Budget for Closed {
    fn admit(&self, _: Timestamp) -> bool {
        false
    }
    fn try_retry(&self, _: Timestamp, _: &Failure) -> Option<Spent> {
        None
    }
}

/// The inner layer's settings.
fn inner_settings(inner: Inner, idempotent: bool) -> Settings {
    let settings = Settings::new().with_idempotent(idempotent);
    match inner {
        Inner::SingleAttempt => settings,
        Inner::ShortServerWait => settings
            .with_nested(Nested::Retry)
            .with_max_server_wait(Duration::from_secs(1)),
        Inner::LateSuccess => settings
            .with_nested(Nested::Retry)
            .with_timeout(Duration::from_secs(2)),
        Inner::NoTime => settings.with_timeout(Duration::ZERO),
        _ => settings.with_nested(Nested::Retry),
    }
}

/// Whether one attempt that failed with `failure` is retried under `settings`, as the engine
/// decides it: the reference the nested layers must agree with.
fn a_single_attempt_is_retried(failure: Failure, settings: Settings) -> bool {
    let policy = Immediate::new()
        .with_max_attempts(2)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::new(policy, settings, Timestamp::ZERO);
    run.begin(Timestamp::ZERO).unwrap();
    matches!(run.end(Timestamp::ZERO, Err(failure)), Verdict::Retry(_))
}

/// What the inner run's last attempt showed, as a single attempt would have shown it: the
/// leaf's failure, a timeout for an attempt that ran out the inner deadline, and for a run
/// that sent nothing (no time at all, a refused first attempt), a failure without effect.
fn inner_last_failure(failure: Failure, inner: Inner, idempotent: bool) -> Failure {
    match inner {
        Inner::RefusedFirst => Failure::Throttled(None),
        Inner::NoTime => Failure::Rejected,
        Inner::LateSuccess
            if a_single_attempt_is_retried(failure, inner_settings(inner, idempotent)) =>
        {
            Failure::Timeout
        }
        _ => failure,
    }
}

/// An outer blocking executor of two attempts around an inner one, around a leaf that fails
/// with `failure` (but in [`Inner::LateSuccess`], whose second attempt succeeds late).
/// Answers the outer run's attempts, the leaf's calls and the outer run's reason.
fn nested_run(
    failure: Failure,
    inner: Inner,
    inner_idempotent: bool,
    outer_idempotent: bool,
    outer_max_wait: Duration,
) -> (u32, u32, StopReason) {
    let clock = ManualClock::new();
    let leaf_calls = Cell::new(0);
    let empty = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(1.0)).unwrap();
    let outer = stagger::blocking::retry(Immediate::new().with_max_attempts(2), |_| {
        let inner_attempts = match inner {
            Inner::OneAttempt => 1,
            _ => 3,
        };
        let sleeps = clock.clone();
        let run = stagger::blocking::retry(
            Immediate::new().with_max_attempts(inner_attempts),
            |attempt: Attempt| {
                leaf_calls.set(leaf_calls.get() + 1);
                if matches!(inner, Inner::LateSuccess) && attempt.number > 1 {
                    clock.advance(Duration::from_secs(10));
                    return Ok(());
                }
                Err::<(), _>(failure)
            },
        )
        .classify(|f: &Failure| *f)
        .settings(inner_settings(inner, inner_idempotent))
        .clock(clock.clone())
        .sleeper(move |d: Duration| sleeps.advance(d));
        match inner {
            Inner::EmptyBudget => run.budget(&empty).call(),
            Inner::RefusedFirst => run.budget(Closed).call(),
            _ => run.call(),
        }
    })
    .idempotent(outer_idempotent)
    .max_server_wait(outer_max_wait)
    .clock(clock.clone())
    .sleeper({
        let clock = clock.clone();
        move |d: Duration| clock.advance(d)
    })
    .call();
    let error: RetryError<RetryError<Failure>> = result_error(outer);
    (error.summary().attempts, leaf_calls.get(), error.reason())
}

fn result_error<E>(result: Result<(), E>) -> E {
    match result {
        Ok(()) => panic!("the leaf always fails, or succeeds too late"),
        Err(error) => error,
    }
}

/// For every inner failure, inner settings and give-up reason (all 504 combinations), the
/// outer layer retries iff a single attempt with the inner run's last failure would be retried
/// under the stricter of the two layers' idempotency (both must allow a repeat) and the outer
/// layer's own limit on server waits (it is the one that would wait).
#[test]
fn the_outer_layer_retries_iff_a_single_attempt_would_be() {
    let mut retried = 0;
    let mut cases = 0;
    for failure in FAILURES {
        for inner in INNERS {
            for inner_idempotent in [false, true] {
                for outer_idempotent in [false, true] {
                    for outer_max_wait in [Duration::from_secs(1), Duration::from_secs(60)] {
                        let (outer_attempts, _, _) = nested_run(
                            failure,
                            inner,
                            inner_idempotent,
                            outer_idempotent,
                            outer_max_wait,
                        );
                        let stricter = Settings::new()
                            .with_idempotent(inner_idempotent && outer_idempotent)
                            .with_max_server_wait(outer_max_wait);
                        let last = inner_last_failure(failure, inner, inner_idempotent);
                        let expected = a_single_attempt_is_retried(last, stricter);
                        assert_eq!(
                            outer_attempts == 2,
                            expected,
                            "{failure:?} {inner:?} inner idempotent {inner_idempotent}, outer \
                             idempotent {outer_idempotent}, outer waits up to {outer_max_wait:?}"
                        );
                        retried += u32::from(expected);
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 504);
    // Neither vacuous nor trivial: both answers occur, many times.
    assert!(
        (100..400).contains(&retried),
        "{retried} of {cases} retried"
    );
}

#[test]
fn an_exhausted_inner_budget_does_not_make_an_outer_layer_repeat_a_post() {
    // A 503 (may have taken effect) on a POST: the inner layer may retry it (idempotent there),
    // but its budget is empty. The outer, non-idempotent layer must not repeat it.
    let (outer_attempts, leaf_calls, reason) = nested_run(
        Failure::Retryable,
        Inner::EmptyBudget,
        true,
        false,
        Duration::from_secs(60),
    );
    assert_eq!((outer_attempts, leaf_calls), (1, 1));
    assert_eq!(reason, StopReason::NotIdempotent);
}

#[test]
fn a_429_the_inner_layer_would_not_wait_for_is_retried_by_an_outer_layer_that_would() {
    // A 429 asking for 5 s had no effect; the inner layer waits at most 1 s, the outer 60 s.
    let (outer_attempts, leaf_calls, _) = nested_run(
        Failure::Throttled(Some(Duration::from_secs(5))),
        Inner::ShortServerWait,
        false,
        false,
        Duration::from_secs(60),
    );
    assert_eq!((outer_attempts, leaf_calls), (2, 2));
}

#[test]
fn a_late_success_after_a_429_is_not_repeated_by_an_outer_layer() {
    // The inner layer retried a 429 (no effect), and its second attempt succeeded, past the
    // inner deadline. That attempt may have taken effect: a non-idempotent outer layer must
    // not send the POST again.
    let (outer_attempts, leaf_calls, reason) = nested_run(
        Failure::Throttled(None),
        Inner::LateSuccess,
        false,
        false,
        Duration::from_secs(60),
    );
    assert_eq!((outer_attempts, leaf_calls), (1, 2));
    // Final for every layer: the inner operation is not idempotent and may have taken effect.
    assert_eq!(reason, StopReason::NotRetryable);
}

#[test]
fn a_give_up_for_safety_stays_final_at_every_depth() {
    // Inner: not idempotent, a timeout whose effect is unknown. No layer above repeats it.
    let (outer_attempts, leaf_calls, reason) = nested_run(
        Failure::Timeout,
        Inner::SingleAttempt,
        false,
        true,
        Duration::from_secs(60),
    );
    assert_eq!((outer_attempts, leaf_calls), (1, 1));
    assert_eq!(reason, StopReason::NotRetryable);
}

/// Three blocking layers: `outer` (two attempts, idempotent or not), a middle layer that
/// retries on its own (three attempts, `middle_budget`), and the default inner layer, which
/// makes one attempt; the leaf always fails with `failure`. Answers the leaf's calls and the
/// outer run's reason.
fn three_layers(
    failure: Failure,
    inner_idempotent: bool,
    outer_idempotent: bool,
    middle_budget: &dyn Budget,
) -> (u32, StopReason) {
    let calls = Cell::new(0);
    let outer = stagger::blocking::retry(Immediate::new().with_max_attempts(2), |_| {
        stagger::blocking::retry(Immediate::new().with_max_attempts(3), |_| {
            stagger::blocking::retry(Immediate::new().with_max_attempts(3), |_| {
                calls.set(calls.get() + 1);
                Err::<(), _>(failure)
            })
            .classify(|f: &Failure| *f)
            .idempotent(inner_idempotent)
            .call()
        })
        .when_nested(Nested::Retry)
        .budget(middle_budget)
        .call()
    })
    .idempotent(outer_idempotent)
    .call();
    let error: RetryError<RetryError<RetryError<Failure>>> = result_error(outer);
    (calls.get(), error.reason())
}

#[test]
fn three_layers_keep_the_facts_of_the_leaf() {
    let empty = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(1.0)).unwrap();
    // A 503 on a POST, the middle budget empty: the top layer does not repeat it.
    assert_eq!(
        three_layers(Failure::Retryable, true, false, &empty),
        (1, StopReason::NotIdempotent)
    );
    // The innermost layer must not repeat a timeout: no layer above does.
    assert_eq!(
        three_layers(Failure::Timeout, false, true, &stagger::budget::Unlimited),
        (1, StopReason::NotRetryable)
    );
    // A refused connection had no effect: every layer may retry it, the middle one 3 times
    // per outer attempt, the outer one twice.
    assert_eq!(
        three_layers(Failure::Rejected, false, false, &stagger::budget::Unlimited),
        (6, StopReason::AttemptLimit)
    );
}

// ---------------------------------------------------------------------------------------------
// The spread above a server's wait is reproducible when its generator is given.

#[test]
fn a_seeded_spread_makes_every_delay_reproducible_retry_after_included() {
    let waits = |seed: u64| {
        let clock = ManualClock::new();
        let sleeps = clock.clone();
        let taken = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = std::rc::Rc::clone(&taken);
        let _ = stagger::blocking::retry(
            Immediate::new()
                .with_max_attempts(4)
                .build(SeededRng::new(1))
                .unwrap(),
            |_| Err::<(), _>(Failure::Throttled(Some(Duration::from_secs(1)))),
        )
        .classify(|f: &Failure| *f)
        .clock(clock)
        .sleeper(move |d: Duration| {
            log.borrow_mut().push(d);
            sleeps.advance(d);
        })
        .dispersal_rng(SeededRng::new(seed))
        .call();
        taken.take()
    };
    let first = waits(7);
    assert_eq!(first.len(), 3);
    assert!(
        first
            .iter()
            .all(|w| (Duration::from_secs(1)..Duration::from_secs(2)).contains(w))
    );
    assert_eq!(first, waits(7), "the same generator, the same waits");
    assert_ne!(first, waits(8), "another generator, other waits");
}

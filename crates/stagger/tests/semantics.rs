//! The executors' contract beyond seed 001's script: ownership of recovery, server-directed
//! waits, zero delays, the hook, and the summary.

mod support;

use std::cell::{Cell, RefCell};
use std::time::Duration;

use stagger::Failure;
use stagger::clock::ManualClock;
use stagger::engine::{Dispersal, Nested, Settings, StopReason};
use stagger::policy::{Constant, ExponentialFullJitter, Immediate, PolicyConfig};
use stagger::rng::SeededRng;
use support::RecordingSleeper;

fn three_attempts() -> Constant {
    Constant::new()
        .with_base(Duration::ZERO)
        .with_max_attempts(3)
}

#[derive(Debug)]
struct Unavailable;

fn retryable(_: &Unavailable) -> Failure {
    Failure::Retryable
}

/// Three retrying layers, each allowing three attempts, around a leaf that always fails.
fn nested_blocking(depth: u32, nested: Nested, leaf_calls: &Cell<u32>) -> Result<(), Unavailable> {
    if depth == 0 {
        leaf_calls.set(leaf_calls.get() + 1);
        return Err(Unavailable);
    }
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    stagger::blocking::retry(policy, |_| nested_blocking(depth - 1, nested, leaf_calls))
        .classify(retryable)
        .when_nested(nested)
        .call()
        .map_err(|_| Unavailable)
}

#[test]
fn nested_blocking_layers_leave_recovery_to_the_outermost() {
    let calls = Cell::new(0);
    assert!(nested_blocking(3, Nested::SingleAttempt, &calls).is_err());
    assert_eq!(calls.get(), 3, "only the outer layer retries");
    let calls = Cell::new(0);
    assert!(nested_blocking(3, Nested::Retry, &calls).is_err());
    assert_eq!(calls.get(), 27, "opted out, the layers multiply: 3^3");
}

#[test]
fn the_inner_layer_says_why_it_stopped() {
    let inner_reason = RefCell::new(None);
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let _ = stagger::blocking::retry(policy, |_| {
        let inner = three_attempts().build(SeededRng::new(1)).unwrap();
        let result = stagger::blocking::retry(inner, |_| Err::<(), _>(Unavailable))
            .classify(retryable)
            .call();
        *inner_reason.borrow_mut() = result.err().map(|e| e.reason());
        Err::<(), _>(Unavailable)
    })
    .classify(retryable)
    .call();
    assert_eq!(
        inner_reason.into_inner(),
        Some(StopReason::OuterLayerOwnsRecovery)
    );
}

#[test]
fn a_sequential_run_after_another_is_not_nested() {
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let first = stagger::blocking::retry(policy, |_| Err::<(), _>(Unavailable))
        .classify(retryable)
        .call();
    assert_eq!(first.unwrap_err().summary().attempts, 3);
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let second = stagger::blocking::retry(policy, |_| Err::<(), _>(Unavailable))
        .classify(retryable)
        .call();
    assert_eq!(
        second.unwrap_err().summary().attempts,
        3,
        "the mark is cleared after a run"
    );
}

#[test]
fn a_server_directed_wait_is_a_floor_never_undercut() {
    for (seed, dispersal) in (0..50).flat_map(|seed| Dispersal::ALL.map(|d| (seed, d))) {
        let clock = ManualClock::new();
        let sleeper = RecordingSleeper::new(&clock);
        let policy = ExponentialFullJitter::new()
            .with_base(Duration::from_millis(10))
            .build(SeededRng::new(seed))
            .unwrap();
        let mut attempts = 0;
        let result = stagger::blocking::retry(policy, |_| {
            attempts += 1;
            if attempts == 1 {
                Err(Failure::RetryAfter(Duration::from_secs(2)))
            } else {
                Ok(())
            }
        })
        .classify(|f: &Failure| *f)
        .settings(Settings::new().with_dispersal(dispersal))
        .sleeper(sleeper.sleeper())
        .clock(clock.clone())
        .call();
        assert!(result.is_ok());
        let waited = sleeper.waits();
        match dispersal {
            Dispersal::Floor => assert_eq!(waited, [Duration::from_secs(2)], "seed {seed}"),
            // Spread over the two seconds after the floor, never before it.
            _ => assert!(
                waited.len() == 1
                    && (Duration::from_secs(2)..Duration::from_secs(4)).contains(&waited[0]),
                "seed {seed}: {waited:?}"
            ),
        }
    }
}

#[test]
fn a_server_wait_that_cannot_fit_gives_up_now_and_says_why() {
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::new(&clock);
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let err = stagger::blocking::retry(policy, |_| {
        Err::<(), _>(Failure::RetryAfter(Duration::from_secs(10)))
    })
    .classify(|f: &Failure| *f)
    .timeout(Duration::from_secs(5))
    .sleeper(sleeper.sleeper())
    .clock(clock.clone())
    .call()
    .unwrap_err();
    assert_eq!(
        err.reason(),
        StopReason::WaitExceedsDeadline {
            wait: Duration::from_secs(10),
            remaining: Duration::from_secs(5)
        }
    );
    assert!(sleeper.waits().is_empty(), "never a shortened wait");

    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let err = stagger::blocking::retry(policy, |_| {
        Err::<(), _>(Failure::Throttled(Some(Duration::from_secs(600))))
    })
    .classify(|f: &Failure| *f)
    .sleeper(sleeper.sleeper())
    .clock(clock)
    .call()
    .unwrap_err();
    assert_eq!(
        err.reason(),
        StopReason::ServerWaitTooLong {
            asked: Duration::from_secs(600),
            limit: Duration::from_secs(300)
        }
    );
    assert_eq!(
        err.to_string(),
        "gave up after 1 attempt in 0 ms (0 ms waiting): the server asked to wait 10 min, \
         longer than the 5 min honoured; last error: throttled (retry after 10 min)"
    );
}

#[test]
fn non_idempotent_work_is_retried_only_after_failures_with_no_effect() {
    for (failure, retried) in [
        (Failure::Retryable, false),
        (Failure::Timeout, false),
        (Failure::RetryAfter(Duration::ZERO), false),
        (Failure::Rejected, true),
        (Failure::Throttled(None), true),
    ] {
        let policy = three_attempts().build(SeededRng::new(0)).unwrap();
        let err = stagger::blocking::retry(policy, |_| Err::<(), _>(failure))
            .classify(|f: &Failure| *f)
            .idempotent(false)
            .call()
            .unwrap_err();
        assert_eq!(
            err.summary().attempts,
            if retried { 3 } else { 1 },
            "{failure:?}"
        );
    }
}

#[test]
fn zero_delays_never_touch_the_sleeper_and_the_hook_hears_only_real_retries() {
    let sleeps = Cell::new(0);
    let events = RefCell::new(Vec::new());
    let mut calls = 0;
    let policy = Immediate::new()
        .with_max_attempts(4)
        .build(SeededRng::new(0))
        .unwrap();
    let outcome = stagger::blocking::retry(policy, |attempt| {
        calls += 1;
        if attempt.number < 3 {
            Err(Unavailable)
        } else {
            Ok("done")
        }
    })
    .classify(retryable)
    .sleeper(|_| sleeps.set(sleeps.get() + 1))
    .notify(|event| {
        events
            .borrow_mut()
            .push((event.attempt, event.delay, event.failure));
    })
    .call_outcome();
    assert_eq!(outcome.result.unwrap(), "done");
    assert_eq!(sleeps.get(), 0);
    assert_eq!(
        events.into_inner(),
        [
            (1, Duration::ZERO, Failure::Retryable),
            (2, Duration::ZERO, Failure::Retryable)
        ]
    );
    // The summary comes on success too.
    assert_eq!(
        (outcome.summary.attempts, outcome.summary.retries()),
        (3, 2)
    );
    assert_eq!(outcome.summary.last_failure, Some(Failure::Retryable));
}

#[test]
fn the_hook_is_silent_when_the_run_gives_up() {
    let events = Cell::new(0);
    let policy = three_attempts().build(SeededRng::new(0)).unwrap();
    let result = stagger::blocking::retry(policy, |_| Err::<(), _>(Failure::Permanent))
        .classify(|f: &Failure| *f)
        .notify(|_| events.set(events.get() + 1))
        .call();
    assert_eq!(result.unwrap_err().reason(), StopReason::NotRetryable);
    assert_eq!(events.get(), 0);
}

#[test]
fn the_server_wait_is_a_floor_not_an_override() {
    // The policy asks for 5 s, the server for 1 s: the longer wins.
    let clock = ManualClock::new();
    let sleeper = RecordingSleeper::new(&clock);
    let policy = Constant::new()
        .with_base(Duration::from_secs(5))
        .build(SeededRng::new(0))
        .unwrap();
    let mut attempts = 0;
    let result = stagger::blocking::retry(policy, |_| {
        attempts += 1;
        if attempts == 1 {
            Err(Failure::RetryAfter(Duration::from_secs(1)))
        } else {
            Ok(())
        }
    })
    .classify(|f: &Failure| *f)
    .sleeper(sleeper.sleeper())
    .clock(clock.clone())
    .call();
    assert!(result.is_ok());
    assert_eq!(sleeper.waits(), [Duration::from_secs(5)]);
}

#[test]
fn a_sleeper_that_wakes_early_cannot_undercut_the_server() {
    use stagger::clock::Clock;
    let clock = ManualClock::new();
    let waits = RefCell::new(Vec::new());
    let early = |d: Duration| {
        waits.borrow_mut().push(d);
        // Wakes 100 ms early on long waits.
        let taken = if d > Duration::from_millis(100) {
            d - Duration::from_millis(100)
        } else {
            d
        };
        clock.advance(taken);
    };
    let policy = Constant::new()
        .with_base(Duration::from_millis(10))
        .build(SeededRng::new(0))
        .unwrap();
    let starts = RefCell::new(Vec::new());
    let result = stagger::blocking::retry(policy, |_| {
        starts.borrow_mut().push(clock.now());
        if starts.borrow().len() == 1 {
            Err(Failure::Throttled(Some(Duration::from_secs(2))))
        } else {
            Ok(())
        }
    })
    .classify(|f: &Failure| *f)
    .settings(Settings::new().with_dispersal(Dispersal::Floor))
    .sleeper(early)
    .clock(clock.clone())
    .call();
    assert!(result.is_ok());
    assert_eq!(
        waits.into_inner(),
        [Duration::from_secs(2), Duration::from_millis(100)]
    );
    let starts = starts.into_inner();
    assert_eq!(
        starts[1].saturating_duration_since(starts[0]),
        Duration::from_secs(2)
    );
}

#[test]
fn an_absolute_deadline_on_a_shared_clock() {
    use stagger::clock::{Clock, Timestamp};
    let clock = ManualClock::new();
    clock.advance(Duration::from_secs(10));
    let deadline = Timestamp::from_duration(Duration::from_millis(10_500));
    let remaining = RefCell::new(Vec::new());
    let policy = Constant::new()
        .with_base(Duration::from_millis(100))
        .build(SeededRng::new(0))
        .unwrap();
    let sleeper = RecordingSleeper::new(&clock);
    let err = stagger::blocking::retry(policy, |attempt| {
        remaining.borrow_mut().push(attempt.remaining.unwrap());
        clock.advance(Duration::from_millis(150));
        Err::<(), _>(Failure::Retryable)
    })
    .classify(|f: &Failure| *f)
    .deadline(deadline)
    .sleeper(sleeper.sleeper())
    .clock(clock.clone())
    .call()
    .unwrap_err();
    let ms = |d: &Duration| d.as_millis();
    assert_eq!(
        remaining.into_inner().iter().map(ms).collect::<Vec<_>>(),
        [500, 250]
    );
    assert!(matches!(
        err.reason(),
        StopReason::WaitExceedsDeadline { .. } | StopReason::Deadline
    ));
    assert!(clock.now() <= Timestamp::from_duration(Duration::from_millis(10_500)));

    // A deadline already past allows no attempt.
    let policy = Constant::new().build(SeededRng::new(0)).unwrap();
    let err = stagger::blocking::retry(policy, |_| Ok::<(), Failure>(()))
        .classify(|f: &Failure| *f)
        .deadline(Timestamp::from_duration(Duration::from_secs(1)))
        .clock(clock)
        .call()
        .unwrap_err();
    assert_eq!(
        (err.reason(), err.summary().attempts),
        (StopReason::Deadline, 0)
    );
}

#[test]
fn an_inner_retry_error_classifies_itself_for_the_outer_layer() {
    let calls = Cell::new(0);
    let outer = three_attempts().build(SeededRng::new(0)).unwrap();
    let result = stagger::blocking::retry(outer, |_| {
        let inner = three_attempts().build(SeededRng::new(1)).unwrap();
        stagger::blocking::retry(inner, |_| {
            calls.set(calls.get() + 1);
            Err::<(), _>(Failure::Timeout)
        })
        .classify(|f: &Failure| *f)
        .call()
    })
    .call(); // the default classifier: RetryError<Failure> classifies itself
    assert_eq!(result.unwrap_err().summary().attempts, 3);
    assert_eq!(
        calls.get(),
        3,
        "the inner layer made one attempt per outer attempt"
    );
}

#[test]
fn a_hook_hears_why_the_run_gave_up_budget_refusals_included() {
    use stagger::budget::{TokenBucket, TokenBucketBudget};
    use stagger::engine::Stopped;
    use stagger::notify::{Notify, RetryEvent};

    #[derive(Default)]
    struct Log {
        retries: u32,
        gave_up: Option<StopReason>,
    }
    impl Notify<(), Failure> for &mut Log {
        fn notify(&mut self, _: &RetryEvent<'_, (), Failure>) {
            self.retries += 1;
        }
        fn gave_up(&mut self, stopped: &Stopped, last: Option<Result<&(), &Failure>>) {
            assert_eq!(last, Some(Err(&Failure::Retryable)));
            self.gave_up = Some(stopped.reason);
        }
    }
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap();
    let mut log = Log::default();
    let policy = Constant::new()
        .with_base(Duration::ZERO)
        .with_max_attempts(10)
        .build(SeededRng::new(0))
        .unwrap();
    let err = stagger::blocking::retry(policy, |_| Err::<(), _>(Failure::Retryable))
        .classify(|f: &Failure| *f)
        .budget(&bucket)
        .notifier(&mut log)
        .call()
        .unwrap_err();
    assert_eq!(err.reason(), StopReason::BudgetExhausted);
    assert_eq!(
        (log.retries, log.gave_up),
        (2, Some(StopReason::BudgetExhausted))
    );
}

#[test]
fn the_blocking_executor_takes_a_configuration_and_refuses_an_invalid_one_as_it_starts() {
    let calls = Cell::new(0);
    let error = stagger::blocking::retry(three_attempts().with_max_attempts(0), |_| {
        calls.set(calls.get() + 1);
        Ok::<(), Unavailable>(())
    })
    .classify(retryable)
    .call()
    .unwrap_err();
    assert_eq!(error.reason(), StopReason::InvalidConfig);
    assert_eq!(
        error.config_error().and_then(stagger::ConfigError::param),
        Some("max_attempts")
    );
    assert_eq!((error.summary().attempts, calls.get()), (0, 0));

    // A valid configuration runs, with a policy built for the run.
    let result = stagger::blocking::retry(three_attempts(), |attempt| {
        if attempt.number < 3 {
            Err(Unavailable)
        } else {
            Ok(attempt.number)
        }
    })
    .classify(retryable)
    .call();
    assert_eq!(result.unwrap(), 3);
}

#[test]
fn a_refused_value_reaches_the_give_up_hook_and_the_error() {
    use stagger::engine::Stopped;
    use stagger::notify::{Notify, RetryEvent};

    #[derive(Default)]
    struct Log {
        refused: Vec<u32>,
        gave_up_with: Option<(StopReason, u32)>,
    }
    impl Notify<u32, Unavailable> for &mut Log {
        fn notify(&mut self, event: &RetryEvent<'_, u32, Unavailable>) {
            self.refused.extend(event.result.ok());
        }
        fn gave_up(&mut self, stopped: &Stopped, last: Option<Result<&u32, &Unavailable>>) {
            self.gave_up_with = last.and_then(Result::ok).map(|v| (stopped.reason, *v));
        }
    }
    let mut log = Log::default();
    let error = stagger::blocking::retry(three_attempts(), |attempt| {
        Ok::<_, Unavailable>(attempt.number * 10)
    })
    .classify(retryable)
    .classify_ok(|value| (*value < 100).then_some(Failure::Retryable))
    .notifier(&mut log)
    .call()
    .unwrap_err();
    assert_eq!(error.into_last_value(), Some(30));
    assert_eq!(log.refused, [10, 20]);
    assert_eq!(log.gave_up_with, Some((StopReason::AttemptLimit, 30)));
}

#[test]
fn a_refused_value_of_a_non_idempotent_operation_is_not_repeated_unless_it_had_no_effect() {
    for (failure, attempts) in [(Failure::Retryable, 1), (Failure::Throttled(None), 3)] {
        let error = stagger::blocking::retry(three_attempts(), |_| Ok::<_, Unavailable>("busy"))
            .classify(retryable)
            .classify_ok(move |_| Some(failure))
            .idempotent(false)
            .call()
            .unwrap_err();
        assert_eq!(error.summary().attempts, attempts, "{failure:?}");
        assert_eq!(error.last_value(), Some(&"busy"));
    }
}

#[test]
fn an_outer_layer_never_repeats_what_an_inner_one_declared_not_idempotent() {
    // The inner run stops at once: a timeout may have taken effect. Its error classifies
    // itself as permanent for the outer layer, so the leaf is called once, not three times.
    let calls = Cell::new(0);
    let error = stagger::blocking::retry(Immediate::new().with_max_attempts(3), |_| {
        stagger::blocking::retry(Immediate::new().with_max_attempts(3), |_| {
            calls.set(calls.get() + 1);
            Err::<(), _>("timed out after sending the payment")
        })
        .classify(|_| Failure::Timeout)
        .idempotent(false)
        .call()
    })
    .call()
    .unwrap_err();
    assert_eq!(
        error.last_error().map(|inner| inner.reason()),
        Some(StopReason::NotIdempotent)
    );
    assert_eq!(error.reason(), StopReason::NotRetryable);
    assert_eq!(calls.get(), 1);
}

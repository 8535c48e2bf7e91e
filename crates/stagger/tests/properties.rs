//! The executor's promises, for arbitrary scripts of failures, policies, deadlines and
//! idempotency: never sleeps past the deadline, never retries earlier than the server asked,
//! never exceeds `max_attempts`, never retries a permanent failure, and never repeats a
//! non-idempotent operation after a failure that may have taken effect.

mod support;

use std::cell::RefCell;
use std::time::Duration;

use proptest::prelude::*;
use stagger::Failure;
use stagger::clock::{Clock, ManualClock, Timestamp};
use stagger::policy::{AnyConfig, Param, PolicyConfig, PolicyKind};
use stagger::rng::SeededRng;

#[derive(Debug, Clone, Copy)]
enum Event {
    Attempt(Timestamp),
    Failed(Failure),
    Slept { at: Timestamp, wait: Duration },
}

fn failure() -> impl Strategy<Value = Failure> {
    let wait = (0u64..5_000).prop_map(Duration::from_millis);
    prop_oneof![
        Just(Failure::Retryable),
        Just(Failure::Permanent),
        Just(Failure::Timeout),
        Just(Failure::Rejected),
        proptest::option::of(wait.clone()).prop_map(Failure::Throttled),
        wait.prop_map(Failure::RetryAfter),
    ]
}

fn policy() -> impl Strategy<Value = AnyConfig> {
    (
        proptest::sample::select(PolicyKind::ALL.to_vec()),
        1u32..8,
        0u64..2_000,
    )
        .prop_map(|(kind, max_attempts, base_ms)| {
            let config = AnyConfig::from(kind);
            let config = config
                .set(Param::MaxAttempts(max_attempts))
                .unwrap_or(config);
            config
                .set(Param::Base(Duration::from_millis(base_ms)))
                .unwrap_or(config)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_executor_keeps_its_promises(
        config in policy(),
        seed in any::<u64>(),
        script in proptest::collection::vec((failure(), 0u64..3_000), 1..12),
        timeout_ms in proptest::option::of(0u64..20_000),
        idempotent in any::<bool>(),
        max_server_wait_ms in 0u64..6_000,
    ) {
        prop_assume!(config.validate().is_ok());
        let clock = ManualClock::new();
        let log = RefCell::new(Vec::new());
        let policy = config.build(SeededRng::new(seed)).unwrap();
        let mut steps = script.iter().copied();
        let sleeper = {
            let (clock, log) = (clock.clone(), &log);
            move |wait: Duration| {
                log.borrow_mut().push(Event::Slept { at: clock.now(), wait });
                clock.advance(wait);
            }
        };
        let mut retry = stagger::blocking::retry(policy, |_| {
            log.borrow_mut().push(Event::Attempt(clock.now()));
            match steps.next() {
                Some((failure, ms)) => {
                    clock.advance(Duration::from_millis(ms));
                    log.borrow_mut().push(Event::Failed(failure));
                    Err(failure)
                }
                None => Ok(()),
            }
        })
        .classify(|f: &Failure| *f)
        .idempotent(idempotent)
        .max_server_wait(Duration::from_millis(max_server_wait_ms))
        .sleeper(sleeper)
        .clock(clock.clone());
        if let Some(ms) = timeout_ms {
            retry = retry.timeout(Duration::from_millis(ms));
        }
        let outcome = retry.call_outcome();
        let deadline = timeout_ms.map(|ms| Timestamp::from_nanos(ms * 1_000_000));
        let log = log.into_inner();

        let attempts = log.iter().filter(|e| matches!(e, Event::Attempt(_))).count() as u32;
        prop_assert!(attempts <= config.max_attempts());
        prop_assert_eq!(attempts, outcome.summary.attempts);
        if let Some(deadline) = deadline {
            for event in &log {
                match *event {
                    Event::Attempt(at) => prop_assert!(at < deadline, "attempt at {} past {}", at, deadline),
                    Event::Slept { at, wait } => prop_assert!(at.saturating_add(wait) < deadline),
                    Event::Failed(_) => {}
                }
            }
        }
        for pair in log.windows(2) {
            if let [Event::Failed(failure), next] = pair {
                let retried = matches!(next, Event::Slept { .. } | Event::Attempt(_));
                if retried {
                    prop_assert!(failure.is_retryable(), "retried a permanent failure");
                    prop_assert!(idempotent || failure.had_no_effect(), "repeated non-idempotent work after {:?}", failure);
                }
                if let (Some(asked), Event::Slept { wait, .. }) = (failure.retry_after(), next) {
                    prop_assert!(*wait >= asked, "waited {:?}, the server asked {:?}", wait, asked);
                    prop_assert!(asked <= Duration::from_millis(max_server_wait_ms));
                }
                if let (Some(asked), Event::Attempt(_)) = (failure.retry_after(), next) {
                    prop_assert!(asked.is_zero(), "retried at once after a wait of {:?}", asked);
                }
            }
        }
    }
}

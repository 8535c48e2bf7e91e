//! The `sre-adaptive` and `breaker` budgets: steady states, boundaries, determinism and
//! concurrency, all under timestamps the tests construct.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use stagger_core::budget::{Breaker, BreakerBudget, Budget, Spent, SreAdaptive, SreAdaptiveBudget};
use stagger_core::{ConfigError, Failure, Rng, SeededRng, Timestamp};

const SECOND: u64 = 1_000_000_000;

fn at_secs(secs: u64) -> Timestamp {
    Timestamp::from_duration(Duration::from_secs(secs))
}

fn sre(seed: u64) -> SreAdaptiveBudget {
    SreAdaptiveBudget::new(SreAdaptive::DEFAULT, SeededRng::new(seed)).unwrap()
}

#[test]
fn budgets_are_send_sync_and_debug() {
    fn check<T: Send + Sync + std::fmt::Debug>() {}
    check::<SreAdaptiveBudget>();
    check::<BreakerBudget>();
}

// ---------------------------------------------------------------------------------------------
// sre-adaptive
// ---------------------------------------------------------------------------------------------

/// What one simulated run saw: the attempts let through in each second, the first attempts
/// refused, and every decision in order.
struct Run {
    sent_per_second: Vec<u64>,
    refused: u64,
    decisions: Vec<bool>,
}

/// A client asking for `asked` attempts per second, evenly spaced, for `secs` seconds, against
/// a backend that accepts the first `capacity` attempts of each second and refuses the rest
/// with `Throttled`. Every third ask is a retry (`try_retry`), the rest first attempts.
fn simulate(budget: &SreAdaptiveBudget, asked: u64, capacity: u64, secs: u64) -> Run {
    let mut run = Run {
        sent_per_second: Vec::new(),
        refused: 0,
        decisions: Vec::new(),
    };
    for s in 0..secs {
        let mut sent = 0;
        for i in 0..asked {
            let now = Timestamp::from_nanos(s * SECOND + i * SECOND / asked);
            let allowed = if i % 3 == 2 {
                budget.try_retry(now, &Failure::Throttled(None)).is_some()
            } else {
                let admitted = budget.admit(now);
                run.refused += u64::from(!admitted);
                admitted
            };
            run.decisions.push(allowed);
            if allowed {
                sent += 1;
                if sent <= capacity {
                    budget.on_success(now, None);
                } else {
                    budget.on_failure(now, &Failure::Throttled(None));
                }
            }
        }
        run.sent_per_second.push(sent);
    }
    run
}

fn mean(values: &[u64]) -> f64 {
    values.iter().sum::<u64>() as f64 / values.len() as f64
}

#[test]
fn sre_never_refuses_when_every_attempt_is_accepted() {
    let budget = sre(11);
    for s in 0..600 {
        for i in 0..50 {
            let now = Timestamp::from_nanos(s * SECOND + i * SECOND / 50);
            // Each request fails once (a 500 or a timeout was processed by the backend: it
            // counts as an accept), is retried, and succeeds.
            assert!(budget.admit(now));
            let failure = if i % 2 == 0 {
                Failure::Retryable
            } else {
                Failure::Timeout
            };
            budget.on_failure(now, &failure);
            assert_eq!(budget.try_retry(now, &failure), Some(Spent(0)));
            budget.on_success(now, Some(Spent(0)));
        }
    }
    assert_eq!(budget.rejection_probability(at_secs(600)), 0.0);
}

#[test]
fn sre_refuses_almost_everything_when_nothing_is_accepted() {
    let budget = sre(12);
    let now = at_secs(5);
    let mut allowed = 0;
    for r in 0..10_000u64 {
        // Before counting this request: p = r / (r + 1).
        assert_eq!(
            budget.rejection_probability(now),
            r as f64 / (r as f64 + 1.0)
        );
        if budget.admit(now) {
            allowed += 1;
            let refusal = if r % 2 == 0 {
                Failure::Rejected
            } else {
                Failure::Throttled(None)
            };
            budget.on_failure(now, &refusal);
        }
    }
    assert_eq!(budget.counts(now), (10_000, 0));
    assert!(budget.rejection_probability(now) > 0.9999);
    // The expected number let through is the harmonic sum 1 + 1/2 + ... + 1/10000, about 9.8.
    assert!(
        (1..=30).contains(&allowed),
        "{allowed} attempts let through"
    );

    // Retries are refused just as first attempts are.
    let retries = (0..1000)
        .filter(|_| budget.try_retry(now, &Failure::Throttled(None)).is_some())
        .count();
    assert!(retries <= 5, "{retries} retries granted");
    assert_eq!(budget.counts(now).0, 11_000);
}

#[test]
fn sre_converges_to_k_times_accepts() {
    for (k, asked, capacity) in [
        (2.0, 100, 10),
        (2.0, 200, 40),
        (3.0, 100, 10),
        (1.5, 60, 20),
    ] {
        let config = SreAdaptive::DEFAULT.with_k(k);
        let budget = SreAdaptiveBudget::new(config, SeededRng::new(21)).unwrap();
        let run = simulate(&budget, asked, capacity, 600);
        let target = k * capacity as f64;
        // After the first window, the client lets through about k * accepts per second.
        let steady = mean(&run.sent_per_second[120..]);
        let error = (steady - target).abs() / target;
        assert!(
            error < 0.03,
            "k = {k}, {asked}/s asked, {capacity}/s accepted: {steady:.2}/s sent, expected {target}"
        );
        // Every minute after the first window stays close too.
        for minute in 2..10 {
            let m = mean(&run.sent_per_second[minute * 60..(minute + 1) * 60]);
            assert!(
                (m - target).abs() / target < 0.1,
                "k = {k}, minute {minute}: {m:.2}/s sent, expected {target}"
            );
        }
        // First attempts are refused locally too, not only retries.
        assert!(run.refused > 0);
    }
}

/// A backend that accepts each attempt with probability `a`, whatever the load: the sent
/// attempts in each second.
fn simulate_fraction(budget: &SreAdaptiveBudget, a: f64, asked: u64, secs: u64) -> Vec<u64> {
    let mut backend = SeededRng::new(4242);
    (0..secs)
        .map(|s| {
            let mut sent = 0;
            for i in 0..asked {
                let now = Timestamp::from_nanos(s * SECOND + i * SECOND / asked);
                if budget.admit(now) {
                    sent += 1;
                    if backend.next_f64() < a {
                        budget.on_success(now, None);
                    } else {
                        budget.on_failure(now, &Failure::Throttled(None));
                    }
                }
            }
            sent
        })
        .collect()
}

#[test]
fn sre_is_a_cliff_for_a_backend_accepting_a_fraction() {
    // Above 1/k, nothing is refused once the window has filled.
    let sent = simulate_fraction(&sre(31), 0.6, 100, 600);
    assert!(sent[120..].iter().all(|&s| s == 100));
    // Below 1/k, the traffic collapses far below k * a of what is asked.
    let sent = simulate_fraction(&sre(32), 0.3, 100, 600);
    let late = mean(&sent[480..]);
    assert!(late < 5.0, "{late:.2}/s sent of 100/s asked");
}

#[test]
fn sre_is_deterministic_for_a_seed() {
    let first = simulate(&sre(99), 100, 10, 300);
    let again = simulate(&sre(99), 100, 10, 300);
    assert_eq!(first.decisions, again.decisions);
    assert_eq!(first.sent_per_second, again.sent_per_second);
    let other = simulate(&sre(100), 100, 10, 300);
    assert_ne!(first.decisions, other.decisions);
}

#[test]
fn sre_forgets_after_the_window() {
    let budget = sre(5);
    for _ in 0..1000 {
        if budget.admit(at_secs(0)) {
            budget.on_failure(at_secs(0), &Failure::Throttled(None));
        }
    }
    assert!(budget.rejection_probability(at_secs(119)) > 0.99);
    // The slot of second 0 leaves the two-minute window at 120 s.
    assert_eq!(budget.counts(at_secs(120)), (0, 0));
    assert_eq!(budget.rejection_probability(at_secs(120)), 0.0);
    assert!(budget.admit(at_secs(120)));
}

#[test]
fn sre_validates_its_configuration() {
    let bad_k = [0.0, 0.999, -1.0];
    for k in bad_k {
        let err = SreAdaptiveBudget::new(SreAdaptive::DEFAULT.with_k(k), SeededRng::new(1));
        assert!(
            matches!(err, Err(ConfigError::OutOfRange { param: "k", .. })),
            "k = {k}"
        );
    }
    for k in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = SreAdaptive::DEFAULT.with_k(k).validate();
        assert!(matches!(
            err,
            Err(ConfigError::NotFinite { param: "k", .. })
        ));
    }
    let err = SreAdaptive::DEFAULT.with_window(Duration::ZERO).validate();
    assert!(matches!(
        err,
        Err(ConfigError::OutOfRange {
            param: "window",
            ..
        })
    ));
    // Extremes that are allowed must not panic.
    let wide = SreAdaptive::DEFAULT.with_k(1.0).with_window(Duration::MAX);
    let budget = SreAdaptiveBudget::new(wide, SeededRng::new(2)).unwrap();
    assert!(budget.admit(Timestamp::MAX));
    budget.on_success(Timestamp::ZERO, None);
    assert_eq!(budget.config(), wide);
}

// ---------------------------------------------------------------------------------------------
// breaker
// ---------------------------------------------------------------------------------------------

fn retry_allowed(breaker: &BreakerBudget, now: Timestamp) -> bool {
    breaker.try_retry(now, &Failure::Retryable) == Some(Spent(0))
}

#[test]
fn cumulative_breaker_trips_above_ten_percent_and_stays_tripped() {
    let breaker = BreakerBudget::new(Breaker::DEFAULT).unwrap();
    let now = Timestamp::ZERO;
    assert!(retry_allowed(&breaker, now)); // no observations: ratio 0
    for _ in 0..90 {
        breaker.on_success(now, None);
    }
    for _ in 0..10 {
        breaker.on_failure(now, &Failure::Timeout);
    }
    assert!(retry_allowed(&breaker, now)); // 10 in 100
    breaker.on_failure(now, &Failure::Permanent);
    assert!(!retry_allowed(&breaker, now)); // 11 in 101
    assert!(breaker.is_tripped(now));
    // Time alone changes nothing: the cumulative breaker never forgets.
    for hours in [1, 24, 24 * 365] {
        assert!(!retry_allowed(&breaker, at_secs(hours * 3600)));
    }
    // Eight more successes are still not enough (11 in 109); the ninth is (11 in 110).
    for _ in 0..8 {
        breaker.on_success(at_secs(10), None);
    }
    assert!(!retry_allowed(&breaker, at_secs(10)));
    breaker.on_success(at_secs(10), None);
    assert!(retry_allowed(&breaker, at_secs(10)));
    // First attempts are never refused.
    assert!(breaker.admit(now));
    assert_eq!(breaker.counts(now), (99, 11));
}

#[test]
fn an_early_failure_trips_a_young_breaker() {
    let breaker = BreakerBudget::new(Breaker::DEFAULT).unwrap();
    breaker.on_failure(Timestamp::ZERO, &Failure::Retryable);
    assert!(!retry_allowed(&breaker, Timestamp::ZERO)); // 1 in 1
}

#[test]
fn windowed_breaker_recovers_after_the_window() {
    let config = Breaker::DEFAULT.with_window(Some(Duration::from_secs(60)));
    let breaker = BreakerBudget::new(config).unwrap();
    for s in 0..30 {
        breaker.on_success(at_secs(s), None);
        breaker.on_failure(at_secs(s), &Failure::Retryable);
    }
    assert!(!retry_allowed(&breaker, at_secs(30)));
    assert!(!retry_allowed(&breaker, at_secs(59)));
    // The last failure (second 29) leaves the window at 89 s; by then the ratio is 0.
    assert!(!retry_allowed(&breaker, at_secs(88)));
    assert!(retry_allowed(&breaker, at_secs(89)));
    assert_eq!(breaker.counts(at_secs(89)), (0, 0));
    // Fresh successes after the outage keep it open; a burst of failures trips it again.
    for s in 90..100 {
        breaker.on_success(at_secs(s), None);
    }
    breaker.on_failure(at_secs(100), &Failure::Retryable);
    assert!(retry_allowed(&breaker, at_secs(100))); // 1 in 11
    breaker.on_failure(at_secs(100), &Failure::Retryable);
    assert!(!retry_allowed(&breaker, at_secs(100))); // 2 in 12
}

#[test]
fn a_ratio_exactly_at_the_threshold_allows() {
    for (threshold, successes, failures) in [
        (0.1, 9, 1),
        (0.1, 90, 10),
        (0.1, 900_000, 100_000),
        (0.25, 3, 1),
        (0.2, 4, 1),
        (0.3, 7, 3),
        (0.7, 3, 7),
        (1.0, 0, 5),
        (0.0, 5, 0),
    ] {
        for window in [None, Some(Duration::from_secs(10))] {
            let config = Breaker::DEFAULT
                .with_threshold(threshold)
                .with_window(window);
            let breaker = BreakerBudget::new(config).unwrap();
            let now = at_secs(1);
            for _ in 0..successes {
                breaker.on_success(now, None);
            }
            for _ in 0..failures {
                breaker.on_failure(now, &Failure::Retryable);
            }
            assert!(
                retry_allowed(&breaker, now),
                "{failures} in {} at {threshold} ({window:?})",
                successes + failures
            );
            if threshold < 1.0 {
                breaker.on_failure(now, &Failure::Retryable);
                assert!(
                    !retry_allowed(&breaker, now),
                    "{} in {} at {threshold} ({window:?})",
                    failures + 1,
                    successes + failures + 1
                );
            }
        }
    }
}

#[test]
fn breaker_validates_its_configuration() {
    for threshold in [-0.01, 1.01, -1.0, 2.0] {
        let err = BreakerBudget::new(Breaker::DEFAULT.with_threshold(threshold));
        assert!(
            matches!(
                err,
                Err(ConfigError::OutOfRange {
                    param: "threshold",
                    ..
                })
            ),
            "threshold = {threshold}"
        );
    }
    for threshold in [f64::NAN, f64::INFINITY] {
        let err = Breaker::DEFAULT.with_threshold(threshold).validate();
        assert!(matches!(
            err,
            Err(ConfigError::NotFinite {
                param: "threshold",
                ..
            })
        ));
    }
    let err = Breaker::DEFAULT
        .with_window(Some(Duration::ZERO))
        .validate();
    assert!(matches!(
        err,
        Err(ConfigError::OutOfRange {
            param: "window",
            ..
        })
    ));
    // Extremes that are allowed must not panic.
    for window in [Some(Duration::from_nanos(1)), Some(Duration::MAX)] {
        let config = Breaker::DEFAULT.with_window(window);
        let breaker = BreakerBudget::new(config).unwrap();
        breaker.on_failure(Timestamp::MAX, &Failure::Retryable);
        let _ = breaker.try_retry(Timestamp::MAX, &Failure::Retryable);
        assert_eq!(breaker.config(), config);
    }
}

#[test]
fn concurrent_reports_are_never_lost() {
    const THREADS: u64 = 4;
    const EACH: u64 = 50_000;
    for window in [None, Some(Duration::from_secs(3600))] {
        let breaker = Arc::new(BreakerBudget::new(Breaker::DEFAULT.with_window(window)).unwrap());
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let breaker = Arc::clone(&breaker);
                thread::spawn(move || {
                    for i in 0..EACH {
                        let now = Timestamp::from_nanos(i * 1_000);
                        // Each thread reports failures in a different proportion.
                        if (i + t) % (t + 2) == 0 {
                            breaker.on_failure(now, &Failure::Retryable);
                        } else {
                            breaker.on_success(now, None);
                        }
                        let _ = breaker.try_retry(now, &Failure::Retryable);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        let expected_failures: u64 = (0..THREADS)
            .map(|t| (0..EACH).filter(|i| (i + t) % (t + 2) == 0).count() as u64)
            .sum();
        let now = Timestamp::from_nanos(EACH * 1_000);
        assert_eq!(
            breaker.counts(now),
            (THREADS * EACH - expected_failures, expected_failures),
            "{window:?}"
        );
    }
}

#[test]
fn concurrent_sre_counts_are_never_lost() {
    let budget = Arc::new(sre(77));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let budget = Arc::clone(&budget);
            thread::spawn(move || {
                let now = at_secs(1);
                let mut accepted = 0u64;
                for _ in 0..20_000 {
                    if budget.admit(now) {
                        budget.on_success(now, None);
                        accepted += 1;
                    }
                    let _ = budget.try_retry(now, &Failure::Retryable);
                }
                accepted
            })
        })
        .collect();
    let accepted: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    // 4 threads asked 2 * 20 000 times each, allowed or not; every admitted attempt succeeded.
    assert_eq!(budget.counts(at_secs(1)), (160_000, accepted));
    // Every attempt accepted keeps the throttle near 0: only a race between one thread's
    // request and its accept can make a refusal possible at all.
    assert!(accepted > 79_000, "{accepted} accepted");
}

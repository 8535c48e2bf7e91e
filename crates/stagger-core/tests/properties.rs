//! Invariants that hold for every policy, every valid configuration and every draw.

mod support;

use std::time::Duration;

use proptest::prelude::*;
use stagger_core::policy::{Exponential, ExponentialSubtractiveJitter};
use stagger_core::{
    AnyConfig, ConfigError, Failure, Param, Policy, PolicyConfig, PolicyKind, Schedule, SeededRng,
};

/// Durations from zero to `Duration::MAX`, weighted towards realistic values.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..=10_000_000_000_000).prop_map(Duration::from_nanos),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

fn kind() -> impl Strategy<Value = PolicyKind> {
    proptest::sample::select(PolicyKind::ALL.to_vec())
}

/// A valid configuration of any policy, with parameters anywhere in their allowed ranges.
fn valid_config() -> impl Strategy<Value = AnyConfig> {
    (
        kind(),
        duration(),
        duration(),
        prop_oneof![Just(2.0), 1.0f64..4.0, 0.01f64..1.0, 1.0f64..1e6],
        prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
        prop_oneof![1u32..12, Just(u32::MAX)],
    )
        .prop_map(|(kind, base, extra, factor, jitter, max_attempts)| {
            let cap = base.saturating_add(extra);
            let params = [
                Param::Base(base),
                Param::Cap(cap),
                Param::Factor(factor),
                Param::Jitter(jitter),
                Param::MaxAttempts(max_attempts),
            ];
            params
                .into_iter()
                .fold(AnyConfig::from(kind), |config, param| {
                    config.set(param).unwrap_or(config)
                })
        })
}

/// The cap a policy promises not to exceed, if it has one.
fn promised_cap(config: &AnyConfig) -> Option<Duration> {
    match config {
        AnyConfig::Linear(c) => Some(c.cap()),
        AnyConfig::Exponential(c) => Some(c.cap()),
        AnyConfig::ExponentialFullJitter(c) => Some(c.cap()),
        AnyConfig::ExponentialEqualJitter(c) => Some(c.cap()),
        AnyConfig::ExponentialSubtractiveJitter(c) => Some(c.cap()),
        AnyConfig::DecorrelatedJitter(c) => Some(c.cap()),
        AnyConfig::DecorrelatedJitterV2(c) => Some(c.cap()),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Asked in order, every delay lies in its retry's published band, under the cap where
    /// the policy promises one, and the policy gives up exactly at `max_attempts`.
    #[test]
    fn delays_stay_in_their_bands(config in valid_config(), seed in any::<u64>()) {
        prop_assert!(config.validate().is_ok());
        let mut policy = config.build(SeededRng::new(seed)).unwrap();
        let retries = config.max_attempts().saturating_sub(1).min(40);
        for attempt in 1..=retries {
            let delay = policy.next_delay(attempt, &Failure::Retryable);
            let Some(delay) = delay else {
                prop_assert_eq!(config.kind(), PolicyKind::NoRetry);
                continue;
            };
            let band = config.bounds(attempt);
            prop_assert!(band.contains(delay), "retry {}: {:?} outside {:?}", attempt, delay, band);
            if let Some(cap) = promised_cap(&config) {
                prop_assert!(delay <= cap, "retry {}: {:?} above cap {:?}", attempt, delay, cap);
            }
        }
        let max = config.max_attempts();
        prop_assert_eq!(policy.next_delay(max, &Failure::Retryable), None);
        prop_assert_eq!(policy.next_delay(u32::MAX, &Failure::Retryable), None);
        prop_assert_eq!(policy.next_delay(1, &Failure::Permanent), None);
    }

    /// No attempt number panics, in any order, and none escapes the cap.
    #[test]
    fn any_attempt_is_answered_without_panic(
        config in valid_config(),
        seed in any::<u64>(),
        attempts in proptest::collection::vec(any::<u32>(), 1..20),
    ) {
        let mut policy = config.build(SeededRng::new(seed)).unwrap();
        for attempt in attempts {
            let delay = policy.next_delay(attempt, &Failure::Timeout);
            if attempt >= config.max_attempts() {
                prop_assert_eq!(delay, None);
            }
            if let (Some(delay), Some(cap)) = (delay, promised_cap(&config)) {
                prop_assert!(delay <= cap);
            }
        }
    }

    /// Subtractive jitter never waits longer than the published (un-jittered) schedule.
    #[test]
    fn subtractive_jitter_never_exceeds_the_published_schedule(
        base in duration(),
        extra in duration(),
        factor in prop_oneof![Just(2.0), 1.0f64..4.0],
        jitter in prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
        seed in any::<u64>(),
    ) {
        let cap = base.saturating_add(extra);
        let published = Exponential::new().with_base(base).with_cap(cap).with_factor(factor);
        let jittered = ExponentialSubtractiveJitter::new()
            .with_base(base)
            .with_cap(cap)
            .with_factor(factor)
            .with_jitter(jitter);
        let mut published = published.with_max_attempts(30).build(SeededRng::new(0)).unwrap();
        let mut jittered = jittered.with_max_attempts(30).build(SeededRng::new(seed)).unwrap();
        for attempt in 1..30 {
            let p = published.next_delay(attempt, &Failure::Retryable).unwrap();
            let j = jittered.next_delay(attempt, &Failure::Retryable).unwrap();
            prop_assert!(j <= p, "retry {}: {:?} above the schedule's {:?}", attempt, j, p);
            // And never below the band's floor, (1 - jitter) of the schedule, to the nanosecond.
            let floor = p.as_secs_f64() * (1.0 - jitter);
            prop_assert!(j.as_secs_f64() >= floor * (1.0 - 1e-12) - 1e-9);
        }
    }

    /// A schedule's elapsed times lie in their bands, and so does its total window.
    #[test]
    fn schedules_lie_in_their_bands(config in valid_config(), seed in any::<u64>()) {
        let config = config
            .set(Param::MaxAttempts(config.max_attempts().min(20)))
            .unwrap_or(config);
        let schedule = Schedule::new(config, SeededRng::new(seed)).unwrap();
        for row in schedule.retries() {
            prop_assert!(row.bounds.contains(row.delay));
            prop_assert!(row.elapsed_bounds.contains(row.elapsed), "{:?}", row);
        }
        prop_assert!(schedule.total_window_bounds().contains(schedule.total_window()));
    }

    /// Out-of-range numbers are typed errors naming the parameter, never panics.
    #[test]
    fn invalid_numbers_are_refused_by_name(
        kind in kind(),
        factor in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), -1e9f64..=0.0],
        jitter in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -1e9f64..-1e-12, 1.000_000_1f64..1e9],
    ) {
        let config = AnyConfig::from(kind);
        for (param, name) in [(Param::Factor(factor), "factor"), (Param::Jitter(jitter), "jitter")] {
            match config.set(param) {
                Ok(changed) => {
                    let err = changed.validate().unwrap_err();
                    prop_assert_eq!(err.param(), Some(name));
                    prop_assert!(changed.build(SeededRng::new(1)).is_err());
                }
                Err(err) => {
                    let not_applicable = matches!(err, ConfigError::NotApplicable { .. });
                    prop_assert!(not_applicable, "{:?}", err);
                }
            }
        }
    }
}

#[test]
fn cap_below_base_and_zero_attempts_are_refused() {
    for config in support::catalog() {
        let small_cap = config
            .set(Param::Base(Duration::from_secs(1)))
            .and_then(|c| c.set(Param::Cap(Duration::from_millis(1))));
        if let Ok(c) = small_cap {
            assert_eq!(
                c.validate(),
                Err(ConfigError::CapBelowBase {
                    base: Duration::from_secs(1),
                    cap: Duration::from_millis(1)
                }),
                "{}",
                config.kind()
            );
        }
        if let Ok(c) = config.set(Param::MaxAttempts(0)) {
            assert_eq!(c.validate(), Err(ConfigError::ZeroAttempts));
        }
    }
}

#[test]
fn extreme_parameters_do_not_panic() {
    for config in support::catalog() {
        for (base, cap) in [
            (Duration::ZERO, Duration::ZERO),
            (Duration::ZERO, Duration::MAX),
            (Duration::MAX, Duration::MAX),
            (Duration::from_nanos(1), Duration::MAX),
        ] {
            let c = [
                Param::Base(base),
                Param::Cap(cap),
                Param::MaxAttempts(u32::MAX),
            ]
            .into_iter()
            .fold(config, |c, p| c.set(p).unwrap_or(c));
            let mut policy = c.build(SeededRng::new(3)).unwrap();
            for attempt in [
                0,
                1,
                2,
                63,
                64,
                65,
                1023,
                1024,
                1025,
                u32::MAX - 1,
                u32::MAX,
            ] {
                if let Some(d) = policy.next_delay(attempt, &Failure::Retryable)
                    && let Some(cap) = promised_cap(&c)
                {
                    assert!(d <= cap, "{} {attempt}: {d:?} > {cap:?}", c.kind());
                }
            }
        }
    }
}

/// Far out (past 2^1024, where the float powers overflow) every delay still lies in its band.
#[test]
fn bands_hold_for_a_thousand_retries_and_beyond() {
    for config in support::catalog() {
        for base in [
            Duration::from_millis(100),
            Duration::from_nanos(1),
            Duration::MAX,
        ] {
            let c = [
                Param::Base(base),
                Param::Cap(Duration::MAX),
                Param::MaxAttempts(u32::MAX),
            ]
            .into_iter()
            .fold(config, |c, p| c.set(p).unwrap_or(c));
            let mut policy = c.build(SeededRng::new(11)).unwrap();
            for attempt in 1..=1100 {
                let Some(d) = policy.next_delay(attempt, &Failure::Retryable) else {
                    continue;
                };
                let band = c.bounds(attempt);
                assert!(
                    band.contains(d),
                    "{} retry {attempt}: {d:?} outside {band:?}",
                    c.kind()
                );
            }
        }
    }
}

#[test]
fn two_instances_never_share_a_sequence_by_accident() {
    let config = stagger_core::policy::ExponentialFullJitter::new();
    let draws = |rng: SeededRng| -> Vec<Duration> {
        let mut p = config.build(rng).unwrap();
        (1..8)
            .filter_map(|a| p.next_delay(a, &Failure::Retryable))
            .collect()
    };
    assert_ne!(
        draws(SeededRng::from_entropy()),
        draws(SeededRng::from_entropy())
    );
    assert_ne!(draws(SeededRng::new(1)), draws(SeededRng::new(2)));
    assert_ne!(
        draws(SeededRng::from_key("delivery-1")),
        draws(SeededRng::from_key("delivery-2"))
    );
    assert_eq!(
        draws(SeededRng::from_key("delivery-1")),
        draws(SeededRng::from_key("delivery-1"))
    );
}

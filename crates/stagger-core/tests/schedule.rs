//! Schedules as data: seed 002's published numbers, bands, windows and presets.

mod support;

use std::time::Duration;

use stagger_core::policy::{Exponential, ExponentialProportionalJitter};
use stagger_core::{
    ConfigError, Failure, Param, Policy, PolicyConfig, Preset, Schedule, SeededRng,
};

fn ms(values: impl IntoIterator<Item = Duration>) -> Vec<u128> {
    values.into_iter().map(|d| d.as_millis()).collect()
}

#[test]
fn the_delivery_preset_is_seed_002s_schedule() {
    let schedule = Schedule::new(Preset::DELIVERY.config(), SeededRng::new(0)).unwrap();
    assert_eq!(schedule.max_attempts(), 8);
    assert_eq!(
        ms(schedule.delays()),
        [1000, 2000, 4000, 8000, 16000, 32000, 64000]
    );
    let elapsed: Vec<u128> = schedule
        .retries()
        .iter()
        .map(|r| r.elapsed.as_millis())
        .collect();
    assert_eq!(elapsed, [1000, 3000, 7000, 15000, 31000, 63000, 127000]);
    assert_eq!(schedule.total_window(), Duration::from_millis(127_000));
    assert!(schedule.is_exact());
    // Every generator gives the same exact schedule.
    let other = Schedule::new(Preset::DELIVERY.config(), SeededRng::from_key("x")).unwrap();
    assert_eq!(other, schedule);
}

#[test]
fn with_41_attempts_the_last_delay_is_the_one_hour_cap() {
    let config = Preset::DELIVERY
        .config()
        .set(Param::MaxAttempts(41))
        .unwrap();
    let schedule = Schedule::new(config, SeededRng::new(0)).unwrap();
    assert_eq!(schedule.retries().len(), 40);
    assert_eq!(schedule.delays().last(), Some(Duration::from_secs(3600)));
    // seed 002: nextDelayMs(3, { baseDelayMs: 100, maxDelayMs: 250 }) is 250.
    let small = Exponential::new()
        .with_base(Duration::from_millis(100))
        .with_cap(Duration::from_millis(250));
    let mut policy = small.build(SeededRng::new(0)).unwrap();
    assert_eq!(
        policy.next_delay(3, &Failure::Retryable),
        Some(Duration::from_millis(250))
    );
}

#[test]
fn jitter_0_2_spreads_each_delay_over_80_to_100_percent_and_never_above() {
    let config = Preset::DELIVERY.config().set(Param::Jitter(0.2)).unwrap();
    let published = [1000u64, 2000, 4000, 8000, 16000, 32000, 64000];
    for key in 0..200 {
        let schedule =
            Schedule::new(config, SeededRng::from_key(&format!("delivery-{key}"))).unwrap();
        assert!(!schedule.is_exact());
        for (row, &p) in schedule.retries().iter().zip(&published) {
            let p = Duration::from_millis(p);
            assert_eq!(row.bounds.max, p);
            assert_eq!(row.bounds.min, p.mul_f64(0.8));
            assert!(row.delay <= p && row.delay >= p.mul_f64(0.8), "{row:?}");
        }
        assert!(schedule.total_window() <= Duration::from_secs(127));
        assert_eq!(
            schedule.total_window_bounds(),
            stagger_core::Bounds::new(Duration::from_millis(101_600), Duration::from_secs(127))
        );
    }
    // seed 002: nextDelayMs(4, { jitter: 0.2 }) is somewhere in 6400–8000 ms.
    assert_eq!(config.bounds(4).min, Duration::from_millis(6400));
    assert_eq!(config.bounds(4).max, Duration::from_millis(8000));
}

#[test]
fn the_same_delivery_always_gets_the_same_schedule_and_two_deliveries_differ() {
    let config = Preset::DELIVERY.config().set(Param::Jitter(0.2)).unwrap();
    let of = |key: &str| Schedule::new(config, SeededRng::from_key(key)).unwrap();
    assert_eq!(of("delivery-123"), of("delivery-123"));
    assert_ne!(of("delivery-123").retries(), of("delivery-124").retries());
}

#[test]
fn every_preset_is_valid_and_documented() {
    for preset in Preset::ALL {
        preset
            .config()
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", preset.name()));
        assert!(!preset.source().is_empty() && !preset.notes().is_empty());
        assert_eq!(Preset::named(preset.name()), Ok(preset));
        Schedule::new(preset.config(), SeededRng::new(0)).unwrap();
    }
    assert_eq!(
        Preset::named("nope"),
        Err(ConfigError::UnknownPreset {
            name: "nope".to_owned(),
            valid: &[
                "delivery",
                "aws-standard",
                "grpc",
                "envoy",
                "polly",
                "cenkalti"
            ],
        })
    );
}

#[test]
fn the_cenkalti_preset_fits_24_nominal_retries_in_15_minutes() {
    // cenkalti has no attempt limit, only a 15-minute elapsed limit. Without jitter its
    // schedule fits 24 retries in 15 minutes and not 25: hence 25 attempts.
    let preset = Preset::CENKALTI;
    let deadline = preset.deadline().unwrap();
    assert_eq!(deadline, Duration::from_secs(900));
    let nominal = preset.config().set(Param::Jitter(0.0)).unwrap();
    let longer = nominal.set(Param::MaxAttempts(26)).unwrap();
    let schedule = Schedule::new(longer, SeededRng::new(0)).unwrap();
    assert!(schedule.retries()[23].elapsed <= deadline);
    assert!(schedule.retries()[24].elapsed > deadline);
    assert_eq!(preset.config().max_attempts(), 25);
}

#[test]
fn proportional_jitter_reports_that_it_may_exceed_the_cap() {
    let config = ExponentialProportionalJitter::new()
        .with_base(Duration::from_secs(1))
        .with_cap(Duration::from_secs(1))
        .with_jitter(0.2);
    assert_eq!(config.bounds(5).max, Duration::from_millis(1200));
    assert_eq!(config.bounds(5).min, Duration::from_millis(800));
}

#[test]
fn schedules_that_are_too_long_are_refused() {
    let config = Preset::DELIVERY
        .config()
        .set(Param::MaxAttempts(u32::MAX))
        .unwrap();
    assert_eq!(
        Schedule::new(config, SeededRng::new(0)),
        Err(ConfigError::ScheduleTooLong {
            retries: u32::MAX - 1,
            limit: stagger_core::schedule::MAX_SCHEDULE_RETRIES
        })
    );
}

#[test]
fn a_single_attempt_has_an_empty_schedule() {
    for config in support::catalog() {
        let one = config.set(Param::MaxAttempts(1)).unwrap_or(config);
        if one.max_attempts() == 1 {
            let schedule = Schedule::new(one, SeededRng::new(0)).unwrap();
            assert!(schedule.retries().is_empty());
            assert_eq!(schedule.total_window(), Duration::ZERO);
        }
    }
}

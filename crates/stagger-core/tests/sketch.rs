//! The latency sketch: its quantiles against exact sample quantiles, its window, its limits and
//! its sharing between threads.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;
use stagger_core::sketch::LatencySketch;
use stagger_core::{ConfigError, Rng, SeededRng};

/// 1 hour, in nanoseconds: the top of the range the error bound is promised for.
const HOUR_NS: u64 = 3_600_000_000_000;

/// Whether `estimate` is within the documented bound, 1/51 of `truth`.
fn within_bound(estimate: Duration, truth: Duration) -> bool {
    estimate.abs_diff(truth).as_nanos() * 51 <= truth.as_nanos()
}

#[track_caller]
fn assert_within(estimate: Option<Duration>, truth: Duration) {
    let estimate = estimate.expect("an estimate");
    assert!(
        within_bound(estimate, truth),
        "{estimate:?} is not within 1/51 of {truth:?}"
    );
}

/// The nearest-rank quantile of `sorted`: its `⌈p × n / 10000⌉`-th smallest value.
fn nearest_rank(sorted: &[Duration], per_ten_thousand: u16) -> Duration {
    let rank = (u64::from(per_ten_thousand) * sorted.len() as u64).div_ceil(10_000);
    sorted[rank as usize - 1]
}

/// A latency drawn log-uniformly between 1 µs and 1 hour.
fn log_uniform(rng: &mut SeededRng) -> Duration {
    let nanos = 1_000.0 * (HOUR_NS as f64 / 1_000.0).powf(rng.next_f64());
    Duration::from_nanos((nanos as u64).clamp(1_000, HOUR_NS))
}

/// `values` in an order shuffled by `rng` (Fisher–Yates).
fn shuffled<T>(mut values: Vec<T>, rng: &mut SeededRng) -> Vec<T> {
    for i in (1..values.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        values.swap(i, j);
    }
    values
}

/// A sketch that answers from one sample on and holds `window` samples without forgetting.
fn exact_window(window: u32) -> LatencySketch {
    LatencySketch::with_window(window)
        .and_then(|sketch| sketch.with_min_samples(1))
        .unwrap()
}

#[test]
fn is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<LatencySketch>();
    shared::<Arc<LatencySketch>>();
}

#[test]
fn uniform_1_to_1000_ms_gives_the_median_p95_and_p99_within_the_bound() {
    let mut rng = SeededRng::new(7);
    let sketch = LatencySketch::new();
    for ms in shuffled((1..=1000).collect(), &mut rng) {
        sketch.record(Duration::from_millis(ms));
    }
    assert_eq!(sketch.count(), 1000);
    let ms = Duration::from_millis;
    assert_within(sketch.quantile(5000), ms(500));
    assert_within(sketch.quantile(9500), ms(950));
    assert_within(sketch.quantile(9900), ms(990));
    assert_within(sketch.quantile(9990), ms(999));
    assert_within(sketch.quantile(1), ms(1));
    assert_within(sketch.quantile(9999), ms(1000));
    // The bound is tight enough to tell neighbouring percentiles apart.
    assert!(!within_bound(sketch.quantile(5000).unwrap(), ms(470)));
    assert!(!within_bound(sketch.quantile(9500).unwrap(), ms(900)));
    // Quantiles do not decrease.
    let all: Vec<_> = (1..10_000).map(|p| sketch.quantile(p).unwrap()).collect();
    assert!(all.windows(2).all(|pair| pair[0] <= pair[1]));
}

#[test]
fn every_quantile_of_20000_log_uniform_latencies_is_within_the_bound() {
    let mut rng = SeededRng::from_key("sketch-log-uniform");
    let values: Vec<_> = (0..20_000).map(|_| log_uniform(&mut rng)).collect();
    let sketch = exact_window(20_000);
    for &value in &values {
        sketch.record(value);
    }
    let mut sorted = values;
    sorted.sort_unstable();
    for p in 1..10_000 {
        let truth = nearest_rank(&sorted, p);
        let estimate = sketch.quantile(p).unwrap();
        assert!(
            within_bound(estimate, truth),
            "p = {p}: {estimate:?} for {truth:?}"
        );
    }
}

#[test]
fn a_narrow_distribution_around_50_ms_is_within_the_bound() {
    // The sum of four uniform draws from [0, 25 ms): a hump around 50 ms, most of it in a few
    // buckets, so that ranks fall inside crowded buckets.
    let mut rng = SeededRng::new(2024);
    let values: Vec<_> = (0..5_000)
        .map(|_| {
            let sum: f64 = (0..4).map(|_| rng.next_f64()).sum();
            Duration::from_secs_f64(sum * 0.025)
        })
        .collect();
    let sketch = exact_window(5_000);
    for &value in &values {
        sketch.record(value);
    }
    let mut sorted = values;
    sorted.sort_unstable();
    for p in [1, 100, 1000, 2500, 5000, 7500, 9000, 9500, 9900, 9990, 9999] {
        assert_within(sketch.quantile(p), nearest_rank(&sorted, p));
    }
}

proptest! {
    #[test]
    fn any_quantile_of_in_range_latencies_is_within_the_bound(
        nanos in prop::collection::vec(
            prop_oneof![
                1_000u64..=HOUR_NS,
                1_000u64..=10_000_000,
                (0.0f64..1.0).prop_map(|u| {
                    ((1_000.0 * (HOUR_NS as f64 / 1_000.0).powf(u)) as u64).clamp(1_000, HOUR_NS)
                }),
            ],
            1..400,
        ),
        per_ten_thousand in 1u16..10_000,
    ) {
        let sketch = exact_window(1_000);
        let mut values: Vec<_> = nanos.into_iter().map(Duration::from_nanos).collect();
        for &value in &values {
            sketch.record(value);
        }
        values.sort_unstable();
        let truth = nearest_rank(&values, per_ten_thousand);
        let estimate = sketch.quantile(per_ten_thousand).unwrap();
        prop_assert!(within_bound(estimate, truth), "{:?} for {:?}", estimate, truth);
    }

    #[test]
    fn a_single_latency_reads_back_within_the_bound(nanos in 1_000u64..=HOUR_NS) {
        let sketch = exact_window(1);
        sketch.record(Duration::from_nanos(nanos));
        let truth = Duration::from_nanos(nanos);
        let estimate = sketch.quantile(5000).unwrap();
        prop_assert!(within_bound(estimate, truth), "{:?} for {:?}", estimate, truth);
    }
}

#[test]
fn the_window_forgets_old_latencies() {
    let sketch = LatencySketch::new(); // a window of 1000
    for _ in 0..2_000 {
        sketch.record(Duration::from_secs(1));
    }
    assert_within(sketch.quantile(5000), Duration::from_secs(1));

    // Half a window of fast answers: they are read with the slow ones still held.
    for _ in 0..500 {
        sketch.record(Duration::from_millis(10));
    }
    assert_eq!(sketch.count(), 1_500);
    assert_within(sketch.quantile(3000), Duration::from_millis(10)); // rank 450 of 1500
    assert_within(sketch.quantile(5000), Duration::from_secs(1));

    for _ in 500..2_000 {
        sketch.record(Duration::from_millis(10));
    }
    assert_eq!(sketch.count(), 1_000);
    assert_within(sketch.quantile(5000), Duration::from_millis(10));
    // Not one slow answer is left, even in the tail.
    assert_within(sketch.quantile(9999), Duration::from_millis(10));
}

#[test]
fn count_holds_between_one_and_two_windows() {
    let sketch = LatencySketch::with_window(10).unwrap();
    for recorded in 1..=35u64 {
        sketch.record(Duration::from_millis(recorded));
        let expected = if recorded < 10 {
            recorded
        } else {
            10 + recorded % 10
        };
        assert_eq!(sketch.count(), expected, "after {recorded} records");
    }
    // The 30 oldest are gone: 31..=35 in the current generation, 21..=30 in the previous.
    let sketch = sketch.with_min_samples(1).unwrap();
    assert_within(sketch.quantile(1), Duration::from_millis(21));
    assert_within(sketch.quantile(9999), Duration::from_millis(35));
}

#[test]
fn no_estimate_below_min_samples_or_for_a_quantile_outside_1_to_9999() {
    let sketch = LatencySketch::new();
    for _ in 0..99 {
        sketch.record(Duration::from_millis(5));
    }
    assert_eq!(sketch.count(), 99);
    assert!((1..10_000).all(|p| sketch.quantile(p).is_none()));
    sketch.record(Duration::from_millis(5));
    assert_within(sketch.quantile(9500), Duration::from_millis(5));
    for p in [0, 10_000, 10_001, u16::MAX] {
        assert_eq!(sketch.quantile(p), None, "p = {p}");
    }

    let empty = LatencySketch::new().with_min_samples(1).unwrap();
    assert_eq!(empty.count(), 0);
    assert_eq!(empty.quantile(5000), None);

    let custom = LatencySketch::new().with_min_samples(3).unwrap();
    custom.record(Duration::from_millis(1));
    custom.record(Duration::from_millis(1));
    assert_eq!(custom.quantile(5000), None);
    custom.record(Duration::from_millis(1));
    assert!(custom.quantile(5000).is_some());
}

#[test]
fn a_small_window_lowers_the_default_minimum_to_the_window() {
    let sketch = LatencySketch::with_window(20).unwrap();
    assert_eq!(sketch.min_samples(), 20);
    for _ in 0..19 {
        sketch.record(Duration::from_millis(2));
    }
    assert_eq!(sketch.quantile(5000), None);
    sketch.record(Duration::from_millis(2));
    assert!(sketch.quantile(5000).is_some());
    assert_eq!(
        LatencySketch::with_window(5_000).unwrap().min_samples(),
        100
    );
    assert_eq!(LatencySketch::default().window(), 1_000);
}

#[test]
fn windows_and_minimums_out_of_range_are_refused() {
    for window in [0, LatencySketch::MAX_WINDOW + 1, u32::MAX] {
        let err = LatencySketch::with_window(window).unwrap_err();
        assert!(
            matches!(err, ConfigError::OutOfRange { param: "window", value, .. } if value == f64::from(window)),
            "{err:?}"
        );
    }
    assert_eq!(
        LatencySketch::with_window(0).unwrap_err().to_string(),
        "window must be between 1 and 10000000 samples, got 0"
    );
    assert!(LatencySketch::with_window(1).is_ok());
    assert!(LatencySketch::with_window(LatencySketch::MAX_WINDOW).is_ok());

    for min in [0, 1_001, u32::MAX] {
        let err = LatencySketch::new().with_min_samples(min).unwrap_err();
        assert_eq!(err.param(), Some("min_samples"), "{err:?}");
    }
    assert!(LatencySketch::new().with_min_samples(1_000).is_ok());
    let small = LatencySketch::with_window(8).unwrap();
    assert!(small.with_min_samples(9).is_err());
}

#[test]
fn extreme_latencies_are_kept_in_the_end_buckets() {
    let sketch = exact_window(100);
    let extremes = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_nanos(999),
        Duration::from_secs(10 * 3_600),
        Duration::from_secs(u64::MAX),
        Duration::MAX,
    ];
    for latency in extremes {
        sketch.record(latency);
    }
    assert_eq!(sketch.count(), 6);
    for p in 1..10_000 {
        assert!(sketch.quantile(p).is_some());
    }
    // Below 1 µs reads back as the lowest bucket, about 1.02 µs.
    let low = sketch.quantile(1).unwrap();
    assert!(
        Duration::from_micros(1) <= low && low <= Duration::from_nanos(1_020),
        "{low:?}"
    );
    assert_eq!(sketch.quantile(5000), Some(low)); // 3 of 6 are below the range
    // Above the range reads back as the highest bucket, about 3617 s.
    let high = sketch.quantile(9999).unwrap();
    assert!(
        Duration::from_secs(3_600) * 50 / 51 <= high && high <= Duration::from_secs(3_689),
        "{high:?}"
    );

    let zero = exact_window(1);
    zero.record(Duration::ZERO);
    assert_eq!(zero.quantile(9999), Some(low));
    let max = exact_window(1);
    max.record(Duration::MAX);
    assert_eq!(max.quantile(1), Some(high));
    // The ends of the promised range are within the bound.
    let edges = exact_window(1);
    edges.record(Duration::from_micros(1));
    assert_within(edges.quantile(5000), Duration::from_micros(1));
    edges.record(Duration::from_secs(3_600));
    assert_within(edges.quantile(5000), Duration::from_secs(3_600));
}

#[test]
fn the_same_records_give_the_same_answers() {
    let mut rng = SeededRng::new(99);
    let values: Vec<_> = (0..5_000).map(|_| log_uniform(&mut rng)).collect();
    let a = LatencySketch::new();
    let b = LatencySketch::new();
    for (i, &value) in values.iter().enumerate() {
        a.record(value);
        b.record(value);
        if i % 250 == 249 {
            for p in [1, 5000, 9500, 9900, 9990, 9999] {
                assert_eq!(a.quantile(p), b.quantile(p));
            }
            assert_eq!(a.count(), b.count());
        }
    }
}

#[test]
fn four_threads_recording_at_once_are_all_counted() {
    const PER_THREAD: u64 = 25_000;
    let latency =
        |thread: u64, i: u64| Duration::from_micros((thread * PER_THREAD + i) % 5_000 + 1);
    let run = |window: u32| {
        let sketch = Arc::new(LatencySketch::with_window(window).unwrap());
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let sketch = Arc::clone(&sketch);
                thread::spawn(move || {
                    for i in 0..PER_THREAD {
                        sketch.record(latency(t, i));
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        sketch
    };

    // No rotation: every sample is held, and the answers do not depend on the interleaving.
    let shared = run(1_000_000);
    assert_eq!(shared.count(), 4 * PER_THREAD);
    let alone = LatencySketch::with_window(1_000_000).unwrap();
    for t in 0..4 {
        for i in 0..PER_THREAD {
            alone.record(latency(t, i));
        }
    }
    for p in [1, 5000, 9500, 9999] {
        assert_eq!(shared.quantile(p), alone.quantile(p), "p = {p}");
    }
    assert_within(shared.quantile(5000), Duration::from_micros(2_500));

    // With rotations: 14 full windows of 7000, then 2000 in the current one.
    let rotating = run(7_000);
    assert_eq!(rotating.count(), 7_000 + 2_000);
}

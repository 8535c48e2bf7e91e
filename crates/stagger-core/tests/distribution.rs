//! Distribution conformance (anchors W7): every jittered policy's draws follow its formula.
//!
//! Each draw is mapped through its formula's conditional CDF given the policy's state (the
//! probability integral transform), which turns a correct sampler into independent U(0, 1)
//! values. A one-sample Kolmogorov–Smirnov test then compares them with the uniform CDF.
//!
//! Critical value: at significance α = 0.001 the asymptotic KS critical value is
//! `sqrt(-ln(α / 2) / 2) / sqrt(n) ≈ 1.9495 / sqrt(n)`. With a fixed seed the test is
//! deterministic: it either passes every time or fails every time. Two negative controls show
//! that the test has the power to catch a wrong sampler: full-jitter draws judged against the
//! equal-jitter CDF, and AWS's clamp-after-draw decorrelated jitter judged against ours.

mod support;

use std::time::Duration;

use stagger_core::policy::{
    DecorrelatedJitter, DecorrelatedJitterV2, ExponentialEqualJitter, ExponentialFullJitter,
    ExponentialProportionalJitter, ExponentialSubtractiveJitter,
};
use stagger_core::{Failure, Policy, PolicyConfig, Rng, SeededRng};

const SEQUENCES: usize = 20_000;
const ALPHA_COEFFICIENT: f64 = 1.949_5; // sqrt(-ln(0.001 / 2) / 2)

fn critical(n: usize) -> f64 {
    ALPHA_COEFFICIENT / (n as f64).sqrt()
}

/// The KS statistic of `values` against U(0, 1).
fn ks_uniform(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, &u)| {
            let u = u.clamp(0.0, 1.0);
            ((i as f64 + 1.0) / n - u).max(u - i as f64 / n)
        })
        .fold(0.0, f64::max)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `SEQUENCES` schedules of `retries` delays, each from its own generator forked from
/// one seed, and maps every delay through `cdf(retry, delay_ms, previous_delays_ms)`.
/// Returns the transformed values of every retry, and of each retry separately.
fn transform<P: Policy>(
    mut build: impl FnMut(SeededRng) -> P,
    retries: u32,
    cdf: impl Fn(u32, f64, &[f64]) -> f64,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut world = SeededRng::new(20_261_130);
    let mut all = Vec::new();
    let mut per_retry = vec![Vec::new(); retries as usize];
    for _ in 0..SEQUENCES {
        let mut policy = build(world.fork());
        let mut history = Vec::new();
        for retry in 1..=retries {
            let d = ms(policy
                .next_delay(retry, &Failure::Retryable)
                .expect("a delay"));
            let u = cdf(retry, d, &history);
            all.push(u);
            per_retry[retry as usize - 1].push(u);
            history.push(d);
        }
    }
    (all, per_retry)
}

fn assert_uniform(name: &str, (all, per_retry): (Vec<f64>, Vec<Vec<f64>>)) {
    let n = all.len();
    let d = ks_uniform(all);
    assert!(
        d < critical(n),
        "{name}: D = {d:.5} >= {:.5} (n = {n})",
        critical(n)
    );
    for (i, values) in per_retry.into_iter().enumerate() {
        let n = values.len();
        let d = ks_uniform(values);
        assert!(
            d < critical(n),
            "{name} retry {}: D = {d:.5} >= {:.5}",
            i + 1,
            critical(n)
        );
    }
}

/// The exponential ceiling at the defaults (100 ms doubling, cap 20 s not reached by retry 7).
fn ceiling_ms(retry: u32) -> f64 {
    100.0 * 2f64.powi(retry as i32 - 1)
}

#[test]
fn full_jitter_is_uniform_under_the_ceiling() {
    let config = ExponentialFullJitter::new();
    let draws = transform(|r| config.build(r).unwrap(), 7, |n, d, _| d / ceiling_ms(n));
    assert_uniform("exponential-full-jitter", draws);
}

#[test]
fn equal_jitter_is_uniform_over_the_upper_half() {
    let config = ExponentialEqualJitter::new();
    let draws = transform(
        |r| config.build(r).unwrap(),
        7,
        |n, d, _| (d - ceiling_ms(n) / 2.0) / (ceiling_ms(n) / 2.0),
    );
    assert_uniform("exponential-equal-jitter", draws);
}

#[test]
fn subtractive_jitter_is_uniform_over_its_band() {
    let config = ExponentialSubtractiveJitter::new().with_jitter(0.3);
    // d = v (1 - j U), so P(D <= x) = 1 - (1 - x / v) / j.
    let draws = transform(
        |r| config.build(r).unwrap(),
        7,
        |n, d, _| 1.0 - (1.0 - d / ceiling_ms(n)) / 0.3,
    );
    assert_uniform("exponential-subtractive-jitter", draws);
}

#[test]
fn proportional_jitter_is_uniform_around_the_ceiling() {
    let config = ExponentialProportionalJitter::new().with_jitter(0.5);
    let draws = transform(
        |r| config.build(r).unwrap(),
        7,
        |n, d, _| (d / ceiling_ms(n) - 0.5) / 1.0,
    );
    assert_uniform("exponential-proportional-jitter", draws);
}

#[test]
fn proportional_jitter_is_uniform_when_the_cap_binds() {
    // Ceiling capped at 300 ms from retry 3 on; the band is still [0.8, 1.2] x 300 ms.
    let config = ExponentialProportionalJitter::new()
        .with_cap(Duration::from_millis(300))
        .with_max_attempts(10);
    let draws = transform(
        |r| config.build(r).unwrap(),
        9,
        |n, d, _| (d / ceiling_ms(n).min(300.0) - 0.8) / 0.4,
    );
    assert_uniform("exponential-proportional-jitter (capped)", draws);
}

/// Decorrelated jitter: `U(base, min(cap, 3 * prev))`, `prev` the previous delay (`base` at
/// first).
fn decorrelated_cdf(base: f64, cap: f64) -> impl Fn(u32, f64, &[f64]) -> f64 {
    move |_, d, history| {
        let prev = history.last().copied().unwrap_or(base);
        (d - base) / ((3.0 * prev).min(cap) - base)
    }
}

#[test]
fn decorrelated_jitter_is_uniform_given_the_previous_delay() {
    let config = DecorrelatedJitter::new();
    let draws = transform(
        |r| config.build(r).unwrap(),
        7,
        decorrelated_cdf(100.0, 20_000.0),
    );
    assert_uniform("decorrelated-jitter", draws);
}

#[test]
fn decorrelated_jitter_samples_under_the_cap_without_piling_onto_it() {
    // A 1 s cap binds from the third retry on: draws stay uniform over [base, cap].
    let config = DecorrelatedJitter::new()
        .with_cap(Duration::from_secs(1))
        .with_max_attempts(10);
    let draws = transform(
        |r| config.build(r).unwrap(),
        9,
        decorrelated_cdf(100.0, 1_000.0),
    );
    assert_uniform("decorrelated-jitter (capped)", draws);
}

/// Polly's formula: `f(t) = 2^t tanh(sqrt(4 t))`, `t = n - 1 + U`, delays telescoping to
/// `f(t_n) * base / 1.4`. Given the previous delays, `U = f^-1(f(t_{n-1}) + d * 1.4 / base) - (n - 1)`.
fn shape(t: f64) -> f64 {
    2f64.powf(t) * (4.0 * t).sqrt().tanh()
}

fn inverse_shape(y: f64, lo: f64, hi: f64) -> f64 {
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if shape(mid) < y { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

#[test]
fn decorrelated_jitter_v2_follows_pollys_formula() {
    let config = DecorrelatedJitterV2::new().with_cap(Duration::from_secs(3600));
    let base = 100.0;
    let draws = transform(
        |r| config.build(r).unwrap(),
        7,
        |n, d, history| {
            let before: f64 = history.iter().sum();
            let target = (before + d) * 1.4 / base;
            let lo = f64::from(n - 1);
            inverse_shape(target, lo, lo + 1.0) - lo
        },
    );
    assert_uniform("decorrelated-jitter-v2", draws);
}

#[test]
fn the_test_rejects_a_wrong_formula() {
    // Full-jitter draws judged as if they were equal jitter: most fall below the band.
    let config = ExponentialFullJitter::new();
    let (all, _) = transform(
        |r| config.build(r).unwrap(),
        7,
        |n, d, _| (d - ceiling_ms(n) / 2.0) / (ceiling_ms(n) / 2.0),
    );
    let n = all.len();
    assert!(ks_uniform(all) > 10.0 * critical(n));
}

/// AWS's 2015 simulator: `sleep = min(cap, U(base, 3 * sleep))`, clamped after the draw.
struct ClampedDecorrelated {
    base: f64,
    cap: f64,
    sleep: f64,
    rng: SeededRng,
}

impl Policy for ClampedDecorrelated {
    fn next_delay(&mut self, attempt: u32, _: &Failure) -> Option<Duration> {
        if attempt <= 1 {
            self.sleep = self.base;
        }
        let draw = self.base + (3.0 * self.sleep - self.base) * self.rng.next_f64();
        self.sleep = draw.min(self.cap);
        Some(Duration::from_secs_f64(self.sleep / 1e3))
    }
}

#[test]
fn the_test_catches_the_clamp_after_draw_collapse() {
    let (all, _) = transform(
        |rng| ClampedDecorrelated {
            base: 100.0,
            cap: 1_000.0,
            sleep: 100.0,
            rng,
        },
        9,
        decorrelated_cdf(100.0, 1_000.0),
    );
    let n = all.len();
    let d = ks_uniform(all);
    assert!(d > 5.0 * critical(n), "D = {d}");
}

#![doc = include_str!("decorrelated_jitter_v2.md")]

use std::time::Duration;

use super::curve::{Limit, nanos};
use super::decorrelated::{Decorrelated, DecorrelatedPolicy, Walk, private::Sealed};
use super::{Bounds, PolicyKind};

/// Polly's second decorrelated jitter: retry instants spread around 1, 2, 4, 8… × `base`
/// without the spikes of the first. See the [module page](self).
pub type DecorrelatedJitterV2 = Decorrelated<Telescoping>;

/// The running [`DecorrelatedJitterV2`] policy. It remembers where the previous retry fell on
/// the formula's curve.
pub type DecorrelatedJitterV2Policy<R> = DecorrelatedPolicy<Telescoping, R>;

/// Retry `n` falls at `t` drawn in `[n - 1, n)` on the curve `shape(t) * base / 1.4`, and waits
/// the curve's rise since the previous retry: the delays telescope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Telescoping;

/// Polly's `RpScalingFactor`: scales the formula so the median first delay is near `base`.
const SCALE: f64 = 1.0 / 1.4;

/// The formula's shape: `2^t * tanh(sqrt(4t))`, increasing in `t`, with `shape(0) = 0`.
///
/// `pow` and `tanh` come from the pure-Rust `libm` crate rather than the platform's C library,
/// whose results may differ in the last bit, so a seed gives the same delays everywhere.
#[inline]
fn shape(t: f64) -> f64 {
    libm::pow(2.0, t) * libm::tanh((4.0 * t).sqrt())
}

/// `shape(t) * base / 1.4`, in nanoseconds, in the order Polly computes it.
fn scaled(config: &DecorrelatedJitterV2, shape: f64) -> f64 {
    shape * SCALE * nanos(config.base())
}

impl Sealed for Telescoping {}

impl Walk for Telescoping {
    const KIND: PolicyKind = PolicyKind::DecorrelatedJitterV2;
    const WALK: Self = Self;

    /// The start of the curve: `shape(0) = 0`.
    fn start(_base_ns: f64) -> f64 {
        0.0
    }

    #[inline]
    fn step(prev: &mut f64, attempt: u32, u: f64, base_ns: f64, _cap_ns: f64) -> f64 {
        let t = f64::from(attempt.max(1) - 1) + u;
        let next = shape(t);
        let delay = (next - *prev) * SCALE * base_ns;
        *prev = next;
        if delay.is_nan() {
            // Far out, `next` and `prev` are both infinite. Polly answers its maximum there;
            // so do we: infinity is clamped to the cap. (A zero base times an infinite
            // difference lands here too, and waits nothing.)
            return if base_ns == 0.0 { 0.0 } else { f64::INFINITY };
        }
        delay
    }

    /// Retry `n` lies in `[0, (shape(n) - shape(n - 2)) * base / 1.4]` (the first retry in
    /// `[0, shape(1) * base / 1.4]`), capped. Far out (from retry 1025 on, where `2^n`
    /// overflows) the band's top is the cap, which is also what the policy answers there.
    fn bounds(config: &DecorrelatedJitterV2, retry: u32) -> Bounds {
        let n = f64::from(retry.max(1));
        let top = scaled(config, shape(n) - shape((n - 2.0).max(0.0)));
        let top = if top.is_finite() {
            Limit::new(config.cap()).duration(top)
        } else {
            config.cap()
        };
        Bounds::new(Duration::ZERO, top)
    }

    /// The delays telescope: the first `N` add up to `shape(t_N) * base / 1.4` with `t_N` in
    /// `[N - 1, N)`. That band is exact while the cap never binds.
    fn window_bounds(config: &DecorrelatedJitterV2, retries: u32) -> Option<Bounds> {
        if retries == 0 {
            return Some(Bounds::exact(Duration::ZERO));
        }
        let n = f64::from(retries);
        let largest = scaled(config, shape(n) - shape((n - 2.0).max(0.0)));
        if !largest.is_finite() || largest >= nanos(config.cap()) {
            return None;
        }
        // Each delay is truncated to whole nanoseconds, so the sum may fall short by `retries`
        // ns; the floating-point sum may drift from the telescoped value by a few ulps per term.
        let slack = n + 4e-16 * n * scaled(config, shape(n));
        let lo = scaled(config, shape(n - 1.0)) - slack;
        let hi = scaled(config, shape(n)) + slack;
        let unbounded = Limit::new(Duration::MAX);
        Some(Bounds::new(unbounded.duration(lo), unbounded.duration(hi)))
    }
}

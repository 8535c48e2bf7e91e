//! The arithmetic every growing policy shares: a capped geometric curve in floating point.
//!
//! Delays are computed as `f64` nanoseconds and converted back to [`Duration`] once, so that
//! nothing overflows: `base * factor^n` becomes infinite long before it could wrap, and the cap
//! is applied with `min`, never with a shift. Powers are taken by square-and-multiply with
//! correctly rounded IEEE multiplications only, so a given seed yields bit-identical delays on
//! every platform (a platform's `pow` may differ in its last bit).

use std::time::Duration;


/// `d` in nanoseconds, as `f64`.
#[inline]
pub(crate) fn nanos(d: Duration) -> f64 {
    d.as_nanos() as f64
}

/// `factor^exponent` by square-and-multiply, lowest bit first.
///
/// Overflow gives infinity and underflow zero, never a panic. At most 32 squarings.
#[inline]
pub(crate) fn powi(factor: f64, exponent: u32) -> f64 {
    let mut result = 1.0;
    let mut square = factor;
    let mut e = exponent;
    while e > 0 {
        if e & 1 == 1 {
            result *= square;
        }
        e >>= 1;
        if e > 0 {
            square *= square;
        }
    }
    result
}

/// A duration given in (possibly fractional, possibly non-finite) nanoseconds, truncated to
/// whole nanoseconds and clamped to `[0, limit]`. NaN and infinity give `limit`.
///
/// `limit_ns` must be `nanos(limit)`; it is passed in so that hot paths compute it once.
#[inline]
pub(crate) fn clamp_to_duration(ns: f64, limit: Duration, limit_ns: f64) -> Duration {
    if ns.is_nan() || ns >= limit_ns {
        return limit;
    }
    if ns <= 0.0 {
        return Duration::ZERO;
    }
    if ns < 18_446_744_073_709_551_615.0 {
        // Truncation toward zero; exact below 2^53 ns (104 days), and never above `ns`.
        Duration::from_nanos(ns as u64).min(limit)
    } else {
        Duration::try_from_secs_f64(ns / 1e9)
            .unwrap_or(limit)
            .min(limit)
    }
}

/// `min(cap, base * factor^exponent)`, precomputed for repeated evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Curve {
    base_ns: f64,
    factor: f64,
    cap_ns: f64,
    cap: Duration,
}

impl Curve {
    pub(crate) fn new(base: Duration, factor: f64, cap: Duration) -> Self {
        Self {
            base_ns: nanos(base),
            factor,
            cap_ns: nanos(cap),
            cap,
        }
    }

    /// The ceiling before retry `retry` (1-based), in nanoseconds: `min(cap, base * factor^(retry-1))`.
    ///
    /// Retry 0 is treated as retry 1. A zero base gives zero for every retry.
    #[inline]
    pub(crate) fn ceiling_ns(&self, retry: u32) -> f64 {
        if self.base_ns == 0.0 {
            return 0.0;
        }
        let v = self.base_ns * powi(self.factor, retry.saturating_sub(1));
        if v < self.cap_ns { v } else { self.cap_ns }
    }

    /// The ceiling before retry `retry`, as a duration.
    pub(crate) fn ceiling(&self, retry: u32) -> Duration {
        clamp_to_duration(self.ceiling_ns(retry), self.cap, self.cap_ns)
    }

    /// The cap.
    pub(crate) fn cap(&self) -> Duration {
        self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powi_is_exact_for_powers_of_two_and_saturates() {
        assert_eq!(powi(2.0, 0), 1.0);
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(2.0, 1023), 2f64.powi(1023));
        assert_eq!(powi(2.0, u32::MAX), f64::INFINITY);
        assert_eq!(powi(0.5, u32::MAX), 0.0);
        assert_eq!(powi(1.0, u32::MAX), 1.0);
    }

    #[test]
    fn clamp_handles_every_edge() {
        let cap = Duration::from_secs(1);
        let cap_ns = nanos(cap);
        assert_eq!(clamp_to_duration(f64::NAN, cap, cap_ns), cap);
        assert_eq!(clamp_to_duration(f64::INFINITY, cap, cap_ns), cap);
        assert_eq!(clamp_to_duration(-1.0, cap, cap_ns), Duration::ZERO);
        assert_eq!(clamp_to_duration(1.9, cap, cap_ns), Duration::from_nanos(1));
        let max_ns = nanos(Duration::MAX);
        assert_eq!(
            clamp_to_duration(1e25, Duration::MAX, max_ns),
            Duration::from_secs(10_000_000_000_000_000)
        );
        // Just below the largest duration: converted through seconds, never past the limit.
        let near = clamp_to_duration(max_ns * 0.999_999_999, Duration::MAX, max_ns);
        assert!(near < Duration::MAX);
        assert!(near > Duration::MAX.mul_f64(0.999_999_99));
    }

    #[test]
    fn curve_clamps_in_floating_point() {
        let c = Curve::new(Duration::from_secs(1), 2.0, Duration::from_secs(3600));
        assert_eq!(c.ceiling(1), Duration::from_secs(1));
        assert_eq!(c.ceiling(7), Duration::from_secs(64));
        assert_eq!(c.ceiling(40), Duration::from_secs(3600));
        assert_eq!(c.ceiling(u32::MAX), Duration::from_secs(3600));
        let zero = Curve::new(Duration::ZERO, 2.0, Duration::MAX);
        assert_eq!(zero.ceiling(u32::MAX), Duration::ZERO);
        let huge = Curve::new(Duration::MAX, 2.0, Duration::MAX);
        assert_eq!(huge.ceiling(u32::MAX), Duration::MAX);
    }
}

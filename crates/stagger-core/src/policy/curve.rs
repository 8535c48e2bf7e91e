//! The arithmetic every growing policy shares: a capped geometric curve in floating point.
//!
//! Delays are computed as `f64` nanoseconds and converted back to [`Duration`] once, so that
//! nothing overflows: `base * factor^n` becomes infinite long before it could wrap, and the cap
//! is applied with `min`, never with a shift. Powers are taken by square-and-multiply with
//! correctly rounded IEEE multiplications only, so a given seed yields bit-identical delays on
//! every platform (a platform's `pow` may differ in its last bit).

use std::time::Duration;

use crate::duration::saturating_nanos;

/// `d` in nanoseconds, as `f64`: `secs * 1e9 + subsec_nanos`.
///
/// Exact below 2^53 ns (about 104 days) and correctly rounded above, in two conversions from
/// 64-bit integers rather than the much slower one from `u128`.
#[inline]
pub(crate) fn nanos(d: Duration) -> f64 {
    d.as_secs() as f64 * 1e9 + f64::from(d.subsec_nanos())
}

/// [`nanos`] of a duration whose [`saturating_nanos`] is `whole`: below 2^53 the two are the same
/// exact value, converted in one signed instruction instead of two unsigned sequences.
#[inline(always)]
fn nanos_given(d: Duration, whole: u64) -> f64 {
    if whole < 1 << 53 {
        whole as i64 as f64
    } else {
        nanos(d)
    }
}

/// `2^exponent`, written straight into the exponent bits: exact, and infinite from 2^1024 on.
#[inline(always)]
fn pow2(exponent: u32) -> f64 {
    if exponent < 1024 {
        f64::from_bits((1023 + u64::from(exponent)) << 52)
    } else {
        f64::INFINITY
    }
}

/// `factor^exponent` by square-and-multiply, lowest bit first.
///
/// Overflow gives infinity and underflow zero, never a panic. At most 32 squarings.
#[inline]
pub(crate) fn powi(factor: f64, exponent: u32) -> f64 {
    if factor == 2.0 {
        // The common case: the same exact powers of two, and the same infinity, without the loop.
        return pow2(exponent);
    }
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

/// The largest duration a conversion may produce, with its value in whole nanoseconds
/// (saturated at `u64::MAX`) for a fast integer comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    max: Duration,
    max_ns: u64,
    /// `min(max_ns, i64::MAX)`: below it, the cheaper signed conversion is exact.
    fast_ns: u64,
}

impl Limit {
    /// No limit but the largest duration.
    pub(crate) const UNBOUNDED: Self = Self::with_nanos(Duration::MAX, u64::MAX);

    #[inline(always)]
    pub(crate) fn new(max: Duration) -> Self {
        Self::with_nanos(max, saturating_nanos(max))
    }

    #[inline(always)]
    const fn with_nanos(max: Duration, max_ns: u64) -> Self {
        Self {
            max,
            max_ns,
            fast_ns: if max_ns < i64::MAX as u64 {
                max_ns
            } else {
                i64::MAX as u64
            },
        }
    }

    /// `ns` nanoseconds, truncated to whole nanoseconds and clamped to `[0, max]`. Negative
    /// values and NaN give zero; infinity gives `max`.
    #[inline(always)]
    pub(crate) fn duration(&self, ns: f64) -> Duration {
        // The signed saturating conversion costs half the unsigned one. NaN becomes 0; a
        // negative value wraps past every limit, and a value at or past 2^63 - 1 saturates to
        // it, which is never below `fast_ns`: both go out of line.
        let whole = ns as i64 as u64;
        if whole < self.fast_ns {
            Duration::from_nanos(whole)
        } else {
            self.out_of_line(ns)
        }
    }

    /// `ns` negative, at or past `max`, or at or past 2^63 - 1 nanoseconds (292 years).
    #[cold]
    fn out_of_line(&self, ns: f64) -> Duration {
        if ns.is_nan() || ns <= 0.0 {
            return Duration::ZERO;
        }
        // Saturating: anything past u64::MAX becomes u64::MAX.
        let whole = ns as u64;
        if whole < self.max_ns {
            Duration::from_nanos(whole)
        } else if self.max_ns < u64::MAX {
            self.max
        } else {
            Duration::try_from_secs_f64(ns / 1e9).map_or(self.max, |d| d.min(self.max))
        }
    }
}

/// `min(cap, base * factor^exponent)`, precomputed for repeated evaluation.
///
/// Everything a delay needs to know about its parameters is decided here, once, so that the
/// per-delay code is arithmetic and one well-predicted branch or two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Curve {
    base_ns: f64,
    factor: f64,
    /// The cap the floating-point ceiling is held to: the cap in nanoseconds, or zero when the
    /// base is zero (every delay is then zero, including `0 * infinity`, which is NaN).
    ceiling_cap_ns: f64,
    cap: Limit,
    /// The base in whole nanoseconds, saturated at `u64::MAX`, for the integer doubling path.
    base_whole: u64,
    /// `base_whole.leading_zeros()`: the largest shift that cannot overflow.
    base_room: u32,
    /// The factor is exactly 2.
    doubles: bool,
    /// The factor is 2 and the cap is 2^53 ns (104 days) or more, where `f64` rounds.
    float_may_round: bool,
}

impl Curve {
    #[inline(always)]
    pub(crate) fn new(base: Duration, factor: f64, cap: Duration) -> Self {
        let base_whole = saturating_nanos(base);
        let cap = Limit::new(cap);
        let doubles = factor == 2.0;
        Self {
            base_ns: nanos_given(base, base_whole),
            factor,
            ceiling_cap_ns: if base_whole == 0 {
                0.0
            } else {
                nanos_given(cap.max, cap.max_ns)
            },
            cap,
            base_whole,
            base_room: base_whole.leading_zeros(),
            doubles,
            float_may_round: doubles && cap.max_ns >= 1 << 53,
        }
    }

    /// Whether the growth factor is exactly 2, so that [`Curve::doubling`] applies.
    #[inline(always)]
    pub(crate) fn doubles(&self) -> bool {
        self.doubles
    }

    /// Whether the floating-point ceiling may differ from the exact doubling: only with a
    /// factor of 2 and a cap of 2^53 ns (104 days) or more, where `f64` rounds.
    #[inline(always)]
    pub(crate) fn float_may_round(&self) -> bool {
        self.float_may_round
    }

    /// `min(cap, base * 2^(retry-1))` in exact integer nanoseconds: a shift that saturates
    /// instead of overflowing, then the cap. Beyond 2^64 ns (584 years) it falls back to the
    /// floating-point curve. For every base and cap below 2^53 ns it equals that curve exactly.
    #[inline]
    pub(crate) fn doubling(&self, retry: u32) -> Duration {
        let e = retry.saturating_sub(1);
        let base = self.base_whole;
        let v = if e < self.base_room {
            base << e
        } else if base == 0 {
            0
        } else {
            u64::MAX
        };
        if v < self.cap.max_ns {
            Duration::from_nanos(v)
        } else if self.cap.max_ns < u64::MAX {
            self.cap.max
        } else {
            self.cap.duration(self.ceiling_ns(retry))
        }
    }

    /// The ceiling before retry `retry` (1-based), in nanoseconds:
    /// `min(cap, base * factor^(retry-1))`.
    ///
    /// Retry 0 is treated as retry 1. A zero base gives zero for every retry.
    #[inline(always)]
    pub(crate) fn ceiling_ns(&self, retry: u32) -> f64 {
        let e = retry.saturating_sub(1);
        let power = if self.doubles {
            pow2(e)
        } else {
            powi(self.factor, e)
        };
        let v = self.base_ns * power;
        // A select, not a branch. With a zero base, `v` may be NaN (zero times an infinite
        // power); the comparison is then false and the zero cap is the answer.
        if v < self.ceiling_cap_ns {
            v
        } else {
            self.ceiling_cap_ns
        }
    }

    /// The ceiling before retry `retry`, as a duration.
    #[cfg(test)]
    pub(crate) fn ceiling(&self, retry: u32) -> Duration {
        self.cap.duration(self.ceiling_ns(retry))
    }

    /// The cap, as a conversion limit.
    #[inline]
    pub(crate) fn cap(&self) -> &Limit {
        &self.cap
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
        assert_eq!(powi(2.0, 1024), f64::INFINITY);
        // The shortcut for 2 agrees with square-and-multiply everywhere.
        let slow = |e: u32| powi(2.000_000_000_000_000_4, e) / powi(1.000_000_000_000_000_2, e);
        for e in [0, 1, 2, 7, 52, 53, 64, 1022, 1023] {
            assert_eq!(powi(2.0, e), 2f64.powi(e as i32), "2^{e}");
            assert!((slow(e) / powi(2.0, e) - 1.0).abs() < 1e-12, "2^{e}");
        }
    }

    /// The conversion in its plainest form, the definition the fast one must match: below the
    /// limit the truncated nanoseconds, at or past it the limit, negative and NaN zero.
    fn plain_duration(max: Duration, ns: f64) -> Duration {
        if ns.is_nan() || ns <= 0.0 {
            return Duration::ZERO;
        }
        let max_ns = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        let whole = ns as u64;
        if whole < max_ns {
            Duration::from_nanos(whole)
        } else if max_ns < u64::MAX {
            max
        } else {
            Duration::try_from_secs_f64(ns / 1e9).map_or(max, |d| d.min(max))
        }
    }

    #[test]
    fn limit_agrees_with_the_plain_conversion_everywhere() {
        use crate::rng::{Rng, SeededRng};
        let mut rng = SeededRng::new(15);
        let limits = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_secs(20),
            Duration::from_nanos((1 << 53) + 1),
            Duration::from_nanos(i64::MAX as u64),
            Duration::from_nanos(i64::MAX as u64 + 1),
            Duration::from_nanos(u64::MAX - 1),
            Duration::from_nanos(u64::MAX),
            Duration::from_secs(u64::MAX / 1_000_000_000 + 1),
            Duration::MAX,
        ];
        for max in limits {
            let limit = Limit::new(max);
            let edges = [
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                0.0,
                f64::MIN_POSITIVE,
                0.999_999,
                1.0,
                nanos(max),
                nanos(max) * (1.0 - f64::EPSILON),
                nanos(max) * (1.0 + f64::EPSILON),
                9_223_372_036_854_775_807.0,
                9_223_372_036_854_775_808.0,
                18_446_744_073_709_551_615.0,
                1e30,
            ];
            for ns in edges {
                assert_eq!(limit.duration(ns), plain_duration(max, ns), "{max:?} {ns}");
            }
            for _ in 0..20_000 {
                // Any bit pattern: every sign, exponent and mantissa, NaNs included.
                let ns = f64::from_bits(rng.next_u64());
                assert_eq!(limit.duration(ns), plain_duration(max, ns), "{max:?} {ns}");
                // And values spread over the range that matters, up to 2^66 ns.
                let ns = rng.next_f64() * 2f64.powi((rng.next_u64() % 67) as i32);
                assert_eq!(limit.duration(ns), plain_duration(max, ns), "{max:?} {ns}");
            }
        }
    }

    #[test]
    fn limit_handles_every_edge() {
        let cap = Limit::new(Duration::from_secs(1));
        assert_eq!(cap.duration(f64::NAN), Duration::ZERO);
        assert_eq!(cap.duration(f64::INFINITY), Duration::from_secs(1));
        assert_eq!(cap.duration(-1.0), Duration::ZERO);
        assert_eq!(cap.duration(1.9), Duration::from_nanos(1));
        assert_eq!(
            cap.duration(999_999_999.9),
            Duration::from_nanos(999_999_999)
        );
        assert_eq!(cap.duration(1e9), Duration::from_secs(1));
        let max = Limit::new(Duration::MAX);
        assert_eq!(
            max.duration(1e25),
            Duration::from_secs(10_000_000_000_000_000)
        );
        assert_eq!(max.duration(f64::INFINITY), Duration::MAX);
        // Just below the largest duration: converted through seconds, never past the limit.
        let near = max.duration(nanos(Duration::MAX) * 0.999_999_999);
        assert!(near < Duration::MAX);
        assert!(near > Duration::MAX.mul_f64(0.999_999_99));
        // Around 2^63 ns, where the fast signed conversion hands over to the unsigned one.
        let two63 = 9_223_372_036_854_775_808.0;
        assert_eq!(max.duration(two63), Duration::from_nanos(1 << 63));
        assert_eq!(max.duration(-two63), Duration::ZERO);
        assert_eq!(max.duration(-0.5), Duration::ZERO);
        // A limit between 2^63 and u64::MAX nanoseconds is honoured on both sides of 2^63.
        let wide = Limit::new(Duration::from_nanos(u64::MAX - (1 << 20)));
        assert_eq!(
            wide.duration(1e18),
            Duration::from_nanos(1_000_000_000_000_000_000)
        );
        assert_eq!(wide.duration(two63), Duration::from_nanos(1 << 63));
        assert_eq!(
            wide.duration(2e19),
            Duration::from_nanos(u64::MAX - (1 << 20))
        );
        let zero = Limit::new(Duration::ZERO);
        assert_eq!(zero.duration(5.0), Duration::ZERO);
        assert_eq!(zero.duration(f64::INFINITY), Duration::ZERO);
    }

    #[test]
    fn nanos_given_agrees_with_nanos() {
        let near = Duration::from_nanos((1 << 53) - 1);
        for d in [
            Duration::ZERO,
            Duration::new(7, 3),
            near,
            near + Duration::from_nanos(1),
        ] {
            let whole = saturating_nanos(d);
            assert_eq!(nanos_given(d, whole).to_bits(), nanos(d).to_bits(), "{d:?}");
        }
        assert_eq!(nanos_given(Duration::MAX, u64::MAX), nanos(Duration::MAX));
    }

    #[test]
    fn nanos_is_exact_below_two_to_the_53() {
        let d = Duration::new(9_007_199, 254_740_991); // 2^53 - 1 ns
        assert_eq!(nanos(d), 9_007_199_254_740_991.0);
        assert_eq!(nanos(Duration::MAX), Duration::MAX.as_nanos() as f64);
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

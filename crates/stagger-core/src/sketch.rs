//! [`LatencySketch`]: a bounded-memory estimate of a latency quantile over recent attempts.
//!
//! A hedged request sends another attempt when the first has not answered within a quantile
//! (say the 95th percentile) of recent latencies. The driver records each answered attempt's
//! latency in a sketch shared by every request to the destination (an `Arc<LatencySketch>`,
//! like a budget) and asks for the quantile when a run starts.
//!
//! # Buckets and accuracy
//!
//! A latency is counted in one of [`LatencySketch::BUCKETS`] (562) buckets whose bounds grow
//! geometrically, as in DDSketch: from 1 µs, each bucket's lower bound is the one before plus
//! a 25th of it (rounded down to a whole nanosecond), so a bucket spans at most 4 % of its lower
//! bound, and the last bucket ends past 1 hour (at about 3689 s). The bounds are whole numbers of
//! nanoseconds computed with integer arithmetic at compile time, so a latency falls in the same
//! bucket on every platform.
//!
//! A quantile is answered with its bucket's representative, the value nearest (relatively) to
//! both ends of the bucket. For every bucket it is within **1/51 (about 1.96 %)** of every
//! latency the bucket holds; a test checks this exactly, bucket by bucket. So for the
//! nearest-rank quantile of the samples held (the `⌈q·n⌉`-th smallest of `n`), when that sample
//! `x` is between 1 µs and 1 hour, the answer `a` satisfies `|a - x| <= x / 51`.
//!
//! Latencies outside the range are kept, not refused: one below 1 µs (`Duration::ZERO`
//! included) counts in the lowest bucket and reads back as about 1.02 µs; one above about 3689 s
//! (up to `Duration::MAX`) counts in the highest and reads back as about 3617 s. The error
//! bound does not hold for them, but the rank of every other sample is unaffected.
//!
//! # Window
//!
//! A sketch follows change by forgetting. It keeps two generations of counts, the current one
//! and the previous one; when `window` samples have been recorded in the current one, the
//! previous is dropped and the current becomes the previous. A quantile reads both, so it
//! covers the last `window` to `2 × window - 1` samples once the sketch is warm. The window
//! counts samples, not time (tower's `hedge` rotates by time): no clock is read, and the same
//! records always give the same answers, which is what a deterministic simulator needs.
//!
//! # Memory and cost
//!
//! Each sketch holds two arrays of 562 `u32` counts (4496 bytes, on the heap) behind one
//! `Mutex`, whatever it records. The bucket bounds and representatives are two static tables
//! shared by all sketches (about 9 KB).
//!
//! - [`record`](LatencySketch::record) takes the lock, binary-searches the static bounds (ten
//!   comparisons) and increments a count. Once every `window` records it also zeroes the
//!   dropped generation's counts, at most 562 of them (only the span that was occupied).
//! - [`quantile`](LatencySketch::quantile) takes the lock and walks the buckets from the lowest
//!   occupied one, adding the two generations' counts, until it reaches the quantile's rank:
//!   at most the span between the lowest and highest occupied buckets, 562 at worst and about
//!   60 for latencies spread over one decade (say 10 ms to 100 ms). It allocates nothing and
//!   caches nothing; a recorder waits for it while it walks.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use stagger_core::sketch::LatencySketch;
//!
//! let sketch = Arc::new(LatencySketch::new()); // shared by every request to one destination
//! for ms in 1..=1000 {
//!     sketch.record(Duration::from_millis(ms));
//! }
//! let p95 = sketch.quantile(9500).unwrap();
//! assert!(p95.abs_diff(Duration::from_millis(950)) <= Duration::from_millis(950) / 51);
//! ```

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::error::ConfigError;

/// The lower bound of the lowest bucket, in nanoseconds: 1 µs.
const LOWEST_NS: u64 = 1_000;
/// The last bucket ends above this, in nanoseconds: 1 hour.
const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;
/// Each bucket's lower bound is the previous one plus a `STEP_DIVISOR`th of it.
const STEP_DIVISOR: u64 = 25;

/// How many buckets it takes, starting at [`LOWEST_NS`], for the last one to end above
/// [`HIGHEST_NS`].
const fn bucket_count() -> usize {
    let mut bound = LOWEST_NS;
    let mut buckets = 0;
    while bound <= HIGHEST_NS {
        bound += bound / STEP_DIVISOR;
        buckets += 1;
    }
    buckets
}

const BUCKETS: usize = bucket_count();

/// `bounds()[i]` is bucket `i`'s lower bound in nanoseconds, and `bounds()[i + 1] - 1` its
/// upper bound (inclusive).
const fn bounds() -> [u64; BUCKETS + 1] {
    let mut out = [0; BUCKETS + 1];
    out[0] = LOWEST_NS;
    let mut i = 1;
    while i <= BUCKETS {
        out[i] = out[i - 1] + out[i - 1] / STEP_DIVISOR;
        i += 1;
    }
    out
}

/// Each bucket's representative in nanoseconds: `2·lo·hi / (lo + hi)` rounded to the nearest
/// nanosecond, which makes the largest relative error towards either end of `[lo, hi]` about
/// equal.
const fn representatives() -> [u64; BUCKETS] {
    let bounds = bounds();
    let mut out = [0; BUCKETS];
    let mut i = 0;
    while i < BUCKETS {
        let lo = bounds[i] as u128;
        let hi = bounds[i + 1] as u128 - 1;
        out[i] = ((2 * lo * hi + (lo + hi) / 2) / (lo + hi)) as u64;
        i += 1;
    }
    out
}

static BOUNDS: [u64; BUCKETS + 1] = bounds();
static REPRESENTATIVES: [u64; BUCKETS] = representatives();

const _: () = {
    let bounds = bounds();
    assert!(bounds[BUCKETS - 1] <= HIGHEST_NS && bounds[BUCKETS] > HIGHEST_NS);
};

/// The bucket that counts `latency`: the one whose range holds it, or the lowest or highest for
/// a latency outside them all.
fn bucket_of(latency: Duration) -> usize {
    let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
    BOUNDS
        .partition_point(|&bound| bound <= nanos)
        .saturating_sub(1)
        .min(BUCKETS - 1)
}

/// One generation's counts.
struct Generation {
    counts: Box<[u32; BUCKETS]>,
    /// How many samples it holds.
    held: u32,
    /// The lowest occupied bucket, or `BUCKETS` when empty.
    lowest: usize,
    /// The highest occupied bucket, or 0 when empty.
    highest: usize,
}

impl Generation {
    fn new() -> Self {
        Self {
            counts: Box::new([0; BUCKETS]),
            held: 0,
            lowest: BUCKETS,
            highest: 0,
        }
    }

    fn add(&mut self, bucket: usize) {
        self.counts[bucket] += 1;
        self.held += 1;
        self.lowest = self.lowest.min(bucket);
        self.highest = self.highest.max(bucket);
    }

    fn clear(&mut self) {
        if self.lowest <= self.highest {
            self.counts[self.lowest..=self.highest].fill(0);
        }
        self.held = 0;
        self.lowest = BUCKETS;
        self.highest = 0;
    }
}

struct State {
    current: Generation,
    previous: Generation,
}

/// A bounded-memory, windowed estimate of latency quantiles, shared by many tasks.
///
/// [`record`](Self::record) each answered attempt's latency; ask for a
/// [`quantile`](Self::quantile) when a run starts. Every method takes `&self`: share one sketch
/// through an `Arc` by every request to a destination, from any thread. The
/// [module documentation](crate::sketch) gives the accuracy (within 1/51 of the true sample quantile,
/// between 1 µs and 1 hour), the window, the memory (4.4 KiB of counts) and the cost.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::sketch::LatencySketch;
///
/// let sketch = LatencySketch::with_window(200)?.with_min_samples(50)?;
/// for _ in 0..49 {
///     sketch.record(Duration::from_millis(20));
/// }
/// assert_eq!(sketch.quantile(9500), None); // fewer than 50 samples: no estimate yet
/// sketch.record(Duration::from_millis(20));
/// let p95 = sketch.quantile(9500).unwrap();
/// assert!(p95.abs_diff(Duration::from_millis(20)) <= Duration::from_millis(20) / 51);
///
/// // 350 slow answers later, the fast ones are forgotten: the sketch reads the last 200 to 399.
/// for _ in 0..350 {
///     sketch.record(Duration::from_secs(2));
/// }
/// assert_eq!(sketch.count(), 200);
/// let p50 = sketch.quantile(5000).unwrap();
/// assert!(p50.abs_diff(Duration::from_secs(2)) <= Duration::from_secs(2) / 51);
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
pub struct LatencySketch {
    state: Mutex<State>,
    window: u32,
    min_samples: u32,
}

impl LatencySketch {
    /// The number of buckets each generation counts in: 562.
    pub const BUCKETS: usize = BUCKETS;
    /// The window of [`new`](Self::new): 1000 samples.
    pub const DEFAULT_WINDOW: u32 = 1_000;
    /// The fewest samples held for [`quantile`](Self::quantile) to answer, unless set with
    /// [`with_min_samples`](Self::with_min_samples): 100, or the window if it is smaller.
    pub const DEFAULT_MIN_SAMPLES: u32 = 100;
    /// The largest window [`with_window`](Self::with_window) accepts: 10 000 000 samples, an
    /// alias of [`limits::MAX_SKETCH_WINDOW`](crate::limits::MAX_SKETCH_WINDOW).
    pub const MAX_WINDOW: u32 = crate::limits::MAX_SKETCH_WINDOW;

    /// A sketch with a window of [`DEFAULT_WINDOW`](Self::DEFAULT_WINDOW) (1000) samples that
    /// answers once it holds [`DEFAULT_MIN_SAMPLES`](Self::DEFAULT_MIN_SAMPLES) (100).
    ///
    /// ```
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// let sketch = LatencySketch::new();
    /// assert_eq!((sketch.window(), sketch.min_samples()), (1000, 100));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::build(Self::DEFAULT_WINDOW, Self::DEFAULT_MIN_SAMPLES)
    }

    /// A sketch whose generations hold `samples` each, so that it reads the last `samples` to
    /// `2 × samples - 1` latencies. It answers once it holds
    /// [`DEFAULT_MIN_SAMPLES`](Self::DEFAULT_MIN_SAMPLES) (100) samples, or `samples` if that is
    /// fewer.
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for `window` if `samples` is 0 or above
    /// [`MAX_WINDOW`](Self::MAX_WINDOW).
    ///
    /// ```
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// assert_eq!(LatencySketch::with_window(50)?.min_samples(), 50);
    /// assert_eq!(LatencySketch::with_window(0).unwrap_err().param(), Some("window"));
    /// # Ok::<(), stagger_core::ConfigError>(())
    /// ```
    pub fn with_window(samples: u32) -> Result<Self, ConfigError> {
        if (1..=Self::MAX_WINDOW).contains(&samples) {
            Ok(Self::build(samples, Self::DEFAULT_MIN_SAMPLES.min(samples)))
        } else {
            Err(ConfigError::OutOfRange {
                param: "window",
                value: f64::from(samples),
                allowed: crate::limits::MAX_SKETCH_WINDOW_ALLOWED,
            })
        }
    }

    /// The same sketch, answering [`quantile`](Self::quantile) only once it holds at least
    /// `samples` latencies.
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for `min_samples` if `samples` is 0 or above the window: a
    /// warm sketch holds between `window` and `2 × window - 1` samples, so a larger minimum
    /// would let it answer only now and then.
    ///
    /// ```
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// assert_eq!(LatencySketch::new().with_min_samples(20)?.min_samples(), 20);
    /// let err = LatencySketch::new().with_min_samples(1001).unwrap_err();
    /// assert_eq!(err.param(), Some("min_samples"));
    /// # Ok::<(), stagger_core::ConfigError>(())
    /// ```
    pub fn with_min_samples(self, samples: u32) -> Result<Self, ConfigError> {
        if (1..=self.window).contains(&samples) {
            Ok(Self {
                min_samples: samples,
                ..self
            })
        } else {
            Err(ConfigError::OutOfRange {
                param: "min_samples",
                value: f64::from(samples),
                allowed: "between 1 and the window",
            })
        }
    }

    fn build(window: u32, min_samples: u32) -> Self {
        Self {
            state: Mutex::new(State {
                current: Generation::new(),
                previous: Generation::new(),
            }),
            window,
            min_samples,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held, and the counts stay consistent if it did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of samples in a generation: the sketch reads the last `window` to
    /// `2 × window - 1` latencies recorded.
    #[must_use]
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The fewest samples held for [`quantile`](Self::quantile) to answer.
    #[must_use]
    pub fn min_samples(&self) -> u32 {
        self.min_samples
    }

    /// Counts one answered attempt's latency.
    ///
    /// Any duration is accepted: one below 1 µs counts as the lowest bucket, one above about
    /// 3689 s as the highest. When the current generation reaches the window, the previous one
    /// is dropped and the current one becomes the previous.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// let sketch = LatencySketch::with_window(3)?;
    /// for ms in [5, 6, 7, 8] {
    ///     sketch.record(Duration::from_millis(ms));
    /// }
    /// assert_eq!(sketch.count(), 4); // 3 in the previous generation, 1 in the current
    /// sketch.record(Duration::ZERO);
    /// sketch.record(Duration::MAX);
    /// assert_eq!(sketch.count(), 3); // the first generation was dropped
    /// # Ok::<(), stagger_core::ConfigError>(())
    /// ```
    pub fn record(&self, latency: Duration) {
        let bucket = bucket_of(latency);
        let mut state = self.state();
        state.current.add(bucket);
        if state.current.held >= self.window {
            let State { current, previous } = &mut *state;
            std::mem::swap(current, previous);
            current.clear();
        }
    }

    /// The latency quantile `per_ten_thousand` (in hundredths of a percent: `9500` for the 95th
    /// percentile, `9990` for the 99.9th) of the samples held.
    ///
    /// The answer is the representative of the bucket holding the nearest-rank sample quantile
    /// (the `⌈per_ten_thousand × count / 10000⌉`-th smallest sample), within 1/51 of that sample
    /// when it is between 1 µs and 1 hour. `None` if fewer than
    /// [`min_samples`](Self::min_samples) samples are held, or if `per_ten_thousand` is 0 or
    /// 10 000 and above.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// let sketch = LatencySketch::new().with_min_samples(1)?;
    /// assert_eq!(sketch.quantile(5000), None); // nothing recorded
    /// sketch.record(Duration::from_millis(100));
    /// let p50 = sketch.quantile(5000).unwrap();
    /// assert!(p50.abs_diff(Duration::from_millis(100)) <= Duration::from_millis(100) / 51);
    /// assert_eq!(sketch.quantile(10_000), None); // the maximum is not a quantile asked for
    /// # Ok::<(), stagger_core::ConfigError>(())
    /// ```
    #[must_use]
    pub fn quantile(&self, per_ten_thousand: u16) -> Option<Duration> {
        if per_ten_thousand == 0 || per_ten_thousand >= 10_000 {
            return None;
        }
        let bucket = {
            let state = self.state();
            let State { current, previous } = &*state;
            let held = u64::from(current.held) + u64::from(previous.held);
            if held == 0 || held < u64::from(self.min_samples) {
                return None;
            }
            // Between 1 and `held`, since `per_ten_thousand` is between 1 and 9999.
            let rank = (u64::from(per_ten_thousand) * held).div_ceil(10_000);
            let lowest = current.lowest.min(previous.lowest);
            let highest = current.highest.max(previous.highest);
            let mut seen = 0;
            let offset = current.counts[lowest..=highest]
                .iter()
                .zip(&previous.counts[lowest..=highest])
                .position(|(&now, &before)| {
                    seen += u64::from(now) + u64::from(before);
                    seen >= rank
                })?;
            lowest + offset
        };
        Some(Duration::from_nanos(REPRESENTATIVES[bucket]))
    }

    /// The number of samples held, in both generations: what a quantile is computed over.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::sketch::LatencySketch;
    ///
    /// let sketch = LatencySketch::new();
    /// sketch.record(Duration::from_millis(3));
    /// assert_eq!(sketch.count(), 1);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        let state = self.state();
        u64::from(state.current.held) + u64::from(state.previous.held)
    }
}

impl Default for LatencySketch {
    /// [`LatencySketch::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LatencySketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencySketch")
            .field("window", &self.window)
            .field("min_samples", &self.min_samples)
            .field("count", &self.count())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_562_buckets_from_1_us_to_past_1_hour() {
        assert_eq!(BUCKETS, 562);
        assert_eq!(BOUNDS[0], LOWEST_NS);
        assert!(BOUNDS[BUCKETS] > HIGHEST_NS);
        assert!(BOUNDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn every_representative_is_within_1_in_51_of_every_value_in_its_bucket() {
        for (i, &rep) in REPRESENTATIVES.iter().enumerate() {
            let (lo, hi) = (BOUNDS[i], BOUNDS[i + 1] - 1);
            assert!(lo <= rep && rep <= hi, "bucket {i}");
            // The relative error is largest at the ends: |rep - v| / v <= 1/51 for v = lo, hi.
            assert!((rep - lo) * 51 <= lo, "bucket {i}: {rep} for {lo}");
            assert!((hi - rep) * 51 <= hi, "bucket {i}: {rep} for {hi}");
        }
    }

    #[test]
    fn each_value_falls_in_the_bucket_whose_range_holds_it() {
        for i in 0..BUCKETS {
            let (lo, hi) = (BOUNDS[i], BOUNDS[i + 1] - 1);
            assert_eq!(bucket_of(Duration::from_nanos(lo)), i);
            assert_eq!(bucket_of(Duration::from_nanos(hi)), i);
        }
        assert_eq!(bucket_of(Duration::ZERO), 0);
        assert_eq!(bucket_of(Duration::from_nanos(999)), 0);
        assert_eq!(
            bucket_of(Duration::from_nanos(BOUNDS[BUCKETS])),
            BUCKETS - 1
        );
        assert_eq!(bucket_of(Duration::MAX), BUCKETS - 1);
    }

    #[test]
    fn out_of_range_values_read_back_as_documented() {
        assert_eq!(REPRESENTATIVES[0], 1_019); // about 1.02 µs
        let top = Duration::from_nanos(REPRESENTATIVES[BUCKETS - 1]);
        assert_eq!(top.as_secs(), 3_616); // about 3617 s
        let end = Duration::from_nanos(BOUNDS[BUCKETS]);
        assert_eq!(end.as_secs(), 3_688); // the last bucket ends at about 3689 s
    }
}

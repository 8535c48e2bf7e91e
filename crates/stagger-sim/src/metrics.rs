//! What a run measures, and the result row it reports.

use std::collections::{BTreeMap, VecDeque};

use hdrhistogram::Histogram;
use serde::Serialize;
use stagger_core::engine::StopReason;

use crate::queue::Nanos;

/// Counters and samples collected during one run of one strategy.
///
/// The peak retry share needs the time of every retry. A run that records its attempts in
/// time order ([`Metrics::new`]: every workload driven by an [`EventQueue`]) keeps only the
/// retries of the last window; one that records them out of order ([`Metrics::unordered`])
/// keeps them all, [`Metrics::STORED_RETRY_BYTES`] each, and at the end counts them in coarse
/// buckets and sorts only those near the busiest ones (exactly as sorting them all would
/// answer; [`Metrics::scratch_bytes`] is the memory of the counts).
///
/// [`EventQueue`]: crate::queue::EventQueue
#[derive(Debug)]
pub struct Metrics {
    /// Requests started (first attempts made or refused).
    pub first_tries: u64,
    /// Attempts made, first ones included.
    pub attempts: u64,
    /// Requests that succeeded.
    pub successes: u64,
    /// Retries sent (attempts after the first).
    pub retries: u64,
    /// The retries' times, for the peak window share.
    retry_times: RetryTimes,
    /// Latency of successful requests, in microseconds.
    pub latency_us: Histogram<u64>,
    /// Requests given up, by the engine's reason: [`stop_slot`]'s order, counted without a
    /// look-up by name, for the many runs where every request gives up.
    stops: [u64; STOP_SLOTS],
    /// Requests given up for any other reason (`unfinished`, and reasons [`stop_slot`] does
    /// not know), by name.
    other_give_ups: BTreeMap<&'static str, u64>,
    /// Events the run processed.
    pub events: u64,
}

/// How the peak window share is measured.
#[derive(Debug)]
enum RetryTimes {
    /// Retries come in time order: the busiest window so far, and the retries of the last
    /// window.
    Ordered {
        window: Nanos,
        recent: VecDeque<Nanos>,
        busiest: usize,
    },
    /// Retries come in any order: all of their times.
    Unordered { window: Nanos, times: Vec<Nanos> },
}

impl Metrics {
    /// The memory each retry takes in [`Metrics::unordered`] metrics, and each retry of one
    /// window in ordered ones.
    pub const STORED_RETRY_BYTES: usize = size_of::<Nanos>();

    /// The memory of empty metrics, outside the struct itself: the latency histogram's
    /// counters (its range and precision are fixed).
    #[must_use]
    pub fn fixed_bytes() -> usize {
        Self::histogram().distinct_values() * size_of::<u64>()
    }

    /// Empty metrics for a run that records attempts in time order (as an
    /// [`EventQueue`](crate::queue::EventQueue) pops them), measuring the peak retry share
    /// over windows of `window` nanoseconds as the retries come.
    ///
    /// # Panics
    ///
    /// In debug builds, [`Metrics::attempt`] panics if a retry is recorded before an earlier
    /// one.
    #[must_use]
    pub fn new(window: Nanos) -> Self {
        Self::with(RetryTimes::Ordered {
            window,
            recent: VecDeque::new(),
            busiest: 0,
        })
    }

    /// Empty metrics for a run that may record attempts out of time order: every retry's time
    /// is kept, with room reserved for `retries` of them.
    #[must_use]
    pub fn unordered(window: Nanos, retries: usize) -> Self {
        Self::with(RetryTimes::Unordered {
            window,
            times: Vec::with_capacity(retries),
        })
    }

    fn with(retry_times: RetryTimes) -> Self {
        Self {
            first_tries: 0,
            attempts: 0,
            successes: 0,
            retries: 0,
            retry_times,
            latency_us: Self::histogram(),
            stops: [0; STOP_SLOTS],
            other_give_ups: BTreeMap::new(),
            events: 0,
        }
    }

    fn histogram() -> Histogram<u64> {
        // Microseconds up to about 12 days, 3 significant digits; these bounds are valid.
        Histogram::new_with_bounds(1, 1 << 40, 3).expect("constant histogram bounds are valid")
    }

    /// An attempt was sent at `at`; `number` 1 is the first try.
    #[inline]
    pub fn attempt(&mut self, at: Nanos, number: u32) {
        self.attempts += 1;
        if number > 1 {
            self.retries += 1;
            match &mut self.retry_times {
                RetryTimes::Ordered {
                    window,
                    recent,
                    busiest,
                } => {
                    debug_assert!(recent.back().is_none_or(|&last| last <= at));
                    recent.push_back(at);
                    while recent
                        .front()
                        .is_some_and(|&t| at.saturating_sub(t) >= *window)
                    {
                        recent.pop_front();
                    }
                    *busiest = (*busiest).max(recent.len());
                }
                RetryTimes::Unordered { times, .. } => times.push(at),
            }
        }
    }

    /// The times of the retries, in the order they were recorded, if these metrics keep them
    /// ([`Metrics::unordered`]).
    #[must_use]
    pub fn retry_times(&self) -> Option<&[Nanos]> {
        match &self.retry_times {
            RetryTimes::Unordered { times, .. } => Some(times),
            RetryTimes::Ordered { .. } => None,
        }
    }

    /// The times of the retries, in the order they were recorded (empty unless these metrics
    /// keep them, [`Metrics::unordered`]), without copying them.
    #[must_use]
    pub fn into_retry_times(self) -> Vec<Nanos> {
        match self.retry_times {
            RetryTimes::Unordered { times, .. } => times,
            RetryTimes::Ordered { .. } => Vec::new(),
        }
    }

    /// A request started.
    pub fn first_try(&mut self) {
        self.first_tries += 1;
    }

    /// A request succeeded after `latency`.
    pub fn success(&mut self, latency: Nanos) {
        self.successes += 1;
        self.latency_us.saturating_record((latency / 1_000).max(1));
    }

    /// A request gave up.
    #[inline]
    pub fn gave_up(&mut self, reason: StopReason) {
        match stop_slot(reason) {
            Some(slot) => self.stops[slot] += 1,
            None => self.gave_up_as(reason.name(), 1),
        }
    }

    /// `n` requests gave up, for the reason called `name` (such as `unfinished`: still running
    /// when the run ended).
    pub fn gave_up_as(&mut self, name: &'static str, n: u64) {
        *self.other_give_ups.entry(name).or_default() += n;
    }

    /// The requests given up so far for `reason`.
    #[must_use]
    pub fn gave_up_for(&self, reason: StopReason) -> u64 {
        match stop_slot(reason) {
            Some(slot) => self.stops[slot],
            None => self.other_give_ups.get(reason.name()).copied().unwrap_or(0),
        }
    }

    /// The requests given up so far, by the name of their reason (reasons with none left out).
    #[must_use]
    pub fn give_ups(&self) -> BTreeMap<&'static str, u64> {
        let mut all = self.other_give_ups.clone();
        for (reason, &n) in STOPS.iter().zip(&self.stops) {
            if n > 0 {
                *all.entry(reason.name()).or_default() += n;
            }
        }
        all
    }

    /// The largest share of all retries sent within any one window (the window these metrics
    /// were made with).
    #[must_use]
    pub fn peak_window_share(&mut self) -> f64 {
        if self.retries == 0 {
            return 0.0;
        }
        let busiest = match &mut self.retry_times {
            RetryTimes::Ordered { busiest, .. } => *busiest,
            RetryTimes::Unordered { window, times } => busiest(times, *window),
        };
        busiest as f64 / self.retries as f64
    }

    /// The memory the peak retry share of `retries` unordered retries takes when it is
    /// measured, beside their times: the counts of a coarse pass over them, which finds the
    /// busiest stretch before only its times are sorted.
    #[must_use]
    pub fn scratch_bytes(retries: f64) -> f64 {
        let buckets = (retries / 16.0).max(MIN_BUCKETS as f64);
        buckets * (size_of::<u32>() + size_of::<bool>()) as f64
    }

    /// The result row for strategy `policy` (+ `budget`), with the common metrics filled in.
    pub fn row(&mut self, policy: String, budget: Option<String>) -> ResultRow {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let percentile = |h: &Histogram<u64>, q: f64| {
            (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1_000.0)
        };
        let retries = self.retries;
        ResultRow {
            policy,
            budget,
            success_rate: ratio(self.successes, self.first_tries),
            load: ratio(self.attempts, self.first_tries),
            retries_per_success: (self.successes > 0).then(|| ratio(retries, self.successes)),
            peak_window_share: self.peak_window_share(),
            p50_ms: percentile(&self.latency_us, 0.5),
            p99_ms: percentile(&self.latency_us, 0.99),
            p999_ms: None,
            first_tries: self.first_tries,
            attempts: self.attempts,
            successes: self.successes,
            give_ups: self.give_ups(),
            events: self.events,
            writes_per_round: None,
            completion_ms: None,
            met_outage: None,
            recovery_load: None,
            tail_goodput_ratio: None,
            recovery_ms: None,
            served_share: None,
            rejected_per_success: None,
            early_retries: None,
            dispersal: None,
            gate: None,
            budget_partition: None,
            host_a: None,
            host_b: None,
        }
    }
}

/// One host's figures on the `partition` workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct HostFigures {
    /// Requests to the host.
    pub requests: u64,
    /// Requests to the host that succeeded.
    pub successes: u64,
    /// Successful requests per request to the host.
    pub success_share: f64,
    /// Retries sent to the host: the ones the budget granted.
    pub retries: u64,
    /// Attempts to the host that the budget refused: retries (`budget-exhausted`) and, for a
    /// budget that refuses first attempts, those (`budget-refused-first-attempt`).
    pub refused: u64,
}

/// One strategy's results on one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultRow {
    /// The policy's name.
    pub policy: String,
    /// The budget's name, if any.
    pub budget: Option<String>,
    /// Successful requests per request.
    pub success_rate: f64,
    /// Attempts per request: 1 means no retries at all.
    pub load: f64,
    /// Retries per successful request; `None` if none succeeded.
    pub retries_per_success: Option<f64>,
    /// The largest share of all retries sent in any one window (10 ms by default).
    pub peak_window_share: f64,
    /// Median latency of successful requests, in ms.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency of successful requests, in ms.
    pub p99_ms: Option<f64>,
    /// `tail`: 99.9th percentile latency of successful requests, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p999_ms: Option<Option<f64>>,
    /// Requests.
    pub first_tries: u64,
    /// Attempts.
    pub attempts: u64,
    /// Successful requests.
    pub successes: u64,
    /// Requests given up, by reason.
    pub give_ups: BTreeMap<&'static str, u64>,
    /// Events the simulator processed for this row (its cost, for `--stats`).
    pub events: u64,
    /// `contention`: conditional writes per round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writes_per_round: Option<f64>,
    /// `contention`: when the last client finished, in ms, averaged over rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_ms: Option<f64>,
    /// `outage`: requests whose first attempt met the outage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met_outage: Option<u64>,
    /// `outage`: attempts reaching the server in the second after recovery.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_load: Option<u64>,
    /// `spike`/`ramp`: successes per second over the final 30 s, divided by the offered rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_goodput_ratio: Option<f64>,
    /// `spike`/`ramp`: time from the end of the trigger until goodput recovered, in ms;
    /// `null` if it never did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_ms: Option<Option<f64>>,
    /// `throttle`: requests served within their deadline, as a share of all requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_share: Option<f64>,
    /// `throttle`: attempts the server refused, per request served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_per_success: Option<f64>,
    /// `throttle`: retries that reached the server before the time it gave their client. It
    /// must be 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_retries: Option<u64>,
    /// `throttle`: what the clients added above the server's wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispersal: Option<&'static str>,
    /// `throttle`: whether the clients shared a gate for the destination.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<bool>,
    /// `partition`: whether the client held one budget for both hosts (`shared`) or one per
    /// host (`partitioned`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_partition: Option<&'static str>,
    /// `partition`: host A, down for the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_a: Option<HostFigures>,
    /// `partition`: host B, which fails each attempt independently at the failure rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_b: Option<HostFigures>,
}

/// The engine's reasons to give up that [`Metrics`] counts in slots, one of each kind.
const STOPS: [StopReason; 10] = [
    StopReason::Deadline,
    StopReason::AttemptLimit,
    StopReason::NotRetryable,
    StopReason::NotIdempotent,
    StopReason::WaitExceedsDeadline {
        wait: std::time::Duration::ZERO,
        remaining: std::time::Duration::ZERO,
    },
    StopReason::ServerWaitTooLong {
        asked: std::time::Duration::ZERO,
        limit: std::time::Duration::ZERO,
    },
    StopReason::BudgetExhausted,
    StopReason::BudgetRefusedFirstAttempt,
    StopReason::OuterLayerOwnsRecovery,
    StopReason::InvalidConfig,
];

/// How many reasons [`Metrics`] counts in slots.
const STOP_SLOTS: usize = STOPS.len();

/// `reason`'s slot in [`STOPS`], or `None` for a reason the engine added since.
#[inline]
fn stop_slot(reason: StopReason) -> Option<usize> {
    Some(match reason {
        StopReason::Deadline => 0,
        StopReason::AttemptLimit => 1,
        StopReason::NotRetryable => 2,
        StopReason::NotIdempotent => 3,
        StopReason::WaitExceedsDeadline { .. } => 4,
        StopReason::ServerWaitTooLong { .. } => 5,
        StopReason::BudgetExhausted => 6,
        StopReason::BudgetRefusedFirstAttempt => 7,
        StopReason::OuterLayerOwnsRecovery => 8,
        StopReason::InvalidConfig => 9,
        _ => return None,
    })
}

/// Below this many retries, sorting them all is as quick as anything.
const SORT_ALL_BELOW: usize = 1 << 14;

/// The coarse pass may always use this many buckets, however few the retries.
const MIN_BUCKETS: usize = 1 << 12;

/// The first coarse pass counts in buckets of about a sixteenth of the window.
const FIRST_PARTS: Nanos = 16;

/// Each further pass, over the times the one before could not rule out, counts in buckets this
/// many times finer...
const PARTS_STEP: Nanos = 16;

/// ... down to about this fraction of the window.
const LAST_PARTS: Nanos = 4_096;

/// The most retries of `times` (in any order, reordered here) within any window of `window`
/// nanoseconds, `[t, t + window)`.
///
/// Sorting every time and sliding the window over them is exact but, for millions of retries,
/// the costliest step of a run. So a coarse pass comes first: the times are counted in buckets
/// of `d` nanoseconds, the largest power of two at most `window / 16`, so that a window spans
/// `m = window / d` (16 to 31) of them. Any `m` buckets in a row fit in one window, so the
/// largest sum of `m` in a row is a count some window reaches; and a window that starts in
/// bucket `j` lies within buckets `j..=j + m + 1`, so the sum of those bounds it. Only the
/// buckets whose bound beats the reached count can hold a busier window: their times (and
/// those of the `m + 1` buckets after each) are moved to the front, and the answer is the
/// larger of the reached count and theirs. Their answer comes the same way, from buckets 16
/// times finer (then 256 times), where the bound is closer to the count, and the times left
/// after the finest pass are sorted and slid over. The answer is the exact one either way; the
/// saving is that only the times around the peak are sorted. Times spread over so long that
/// the buckets would outnumber a sixteenth of the retries are counted in wider buckets, up to
/// a window wide (`m` is then smaller, down to 1, and the bounds looser). With few retries, a
/// window under 16 ns (under the parts of a finer pass), or times spread so thinly that even
/// buckets a window wide would be too many, everything is sorted.
fn busiest(times: &mut [Nanos], window: Nanos) -> usize {
    busiest_in_parts(times, window, FIRST_PARTS)
}

/// [`busiest`], with a coarse pass of buckets of about `window / parts` first if it pays.
fn busiest_in_parts(times: &mut [Nanos], window: Nanos, parts: Nanos) -> usize {
    if times.len() >= SORT_ALL_BELOW
        && window >= parts
        && let Some(best) = busiest_coarse_first(times, window, parts)
    {
        return best;
    }
    times.sort_unstable();
    busiest_sorted(times, window)
}

/// [`busiest`] for times in order.
fn busiest_sorted(times: &[Nanos], window: Nanos) -> usize {
    let (mut start, mut best) = (0, 0);
    for end in 0..times.len() {
        while times[end] - times[start] >= window {
            start += 1;
        }
        best = best.max(end - start + 1);
    }
    best
}

/// [`busiest`] with a coarse pass of buckets of the largest power of two at most `window /
/// parts` nanoseconds, or wider ones (up to the window) if those would outnumber the room for
/// buckets; `None` if even buckets a window wide would.
fn busiest_coarse_first(times: &mut [Nanos], window: Nanos, parts: Nanos) -> Option<usize> {
    if u32::try_from(times.len()).is_err() {
        return None;
    }
    let (lo, hi) = times
        .iter()
        .fold((Nanos::MAX, 0), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let room = (times.len() / 16).max(MIN_BUCKETS) as u64;
    // Wider buckets until they fit: `m` stays at least 1, so the bounds below hold, only
    // looser; the next pass is as fine as it would have been.
    let mut shift = (window / parts).ilog2();
    while (hi - lo) >> shift >= room {
        shift += 1;
        if shift > window.ilog2() {
            return None;
        }
    }
    let m = usize::try_from(window >> shift).ok()?;
    let buckets = usize::try_from((hi - lo) >> shift).ok()? + 1;
    let bucket = |t: Nanos| ((t - lo) >> shift) as usize;
    let (reached, marked) = {
        let mut counts = vec![0u32; buckets];
        for &t in times.iter() {
            counts[bucket(t)] += 1;
        }
        // The sum of `len` buckets from `j` (fewer past the last), sliding.
        let counts = &counts;
        let sums = |len: usize| {
            let mut sum: u64 = counts[..len.min(buckets)]
                .iter()
                .map(|&c| u64::from(c))
                .sum();
            (0..buckets).map(move |j| {
                let here = sum;
                sum -= u64::from(counts[j]);
                if let Some(&next) = counts.get(j + len) {
                    sum += u64::from(next);
                }
                here
            })
        };
        let reached = sums(m).max().unwrap_or(0);
        // Bucket `j` is marked if some `j' <= j` with a bound above `reached` reaches it
        // (`j < j' + m + 2`): one pass, however wide the window is in buckets.
        let mut until = 0;
        let marked: Vec<bool> = sums(m + 2)
            .enumerate()
            .map(|(j, bound)| {
                if bound > reached {
                    until = j + m + 2;
                }
                j < until
            })
            .collect();
        (reached, marked)
    };
    if !marked.contains(&true) {
        return usize::try_from(reached).ok();
    }
    // The marked buckets' times to the front, in place.
    let mut front = 0;
    for i in 0..times.len() {
        if marked[bucket(times[i])] {
            times.swap(front, i);
            front += 1;
        }
    }
    drop(marked);
    let near = &mut times[..front];
    let inner = if parts < LAST_PARTS {
        // The times near the peak, in finer buckets: a bound over `m + 2` buckets is then
        // closer to the count of `m`, and fewer times are left to sort.
        busiest_in_parts(near, window, parts * PARTS_STEP)
    } else {
        near.sort_unstable();
        busiest_sorted(near, window)
    };
    Some(inner.max(usize::try_from(reached).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retries(metrics: &mut Metrics, times: &[Nanos]) {
        for &t in times {
            metrics.attempt(t, 2);
        }
    }

    #[test]
    fn peak_window_share_counts_the_busiest_window() {
        let times = [0, 1, 2, 100, 101, 300];
        for (window, share) in [
            (10, 0.5),
            (1_000, 1.0),
            (1, 1.0 / 6.0),
            (100, 0.5),
            (101, 4.0 / 6.0),
            (102, 5.0 / 6.0),
        ] {
            let mut ordered = Metrics::new(window);
            retries(&mut ordered, &times);
            assert_eq!(ordered.peak_window_share(), share, "window {window}");
            let mut unordered = Metrics::unordered(window, 0);
            let mut shuffled = times;
            shuffled.reverse();
            retries(&mut unordered, &shuffled);
            assert_eq!(unordered.peak_window_share(), share, "window {window}");
        }
    }

    #[test]
    fn streaming_and_sorting_agree_on_ties_and_random_times() {
        use stagger_core::{Rng, SeededRng};
        let mut rng = SeededRng::new(4);
        let mut times: Vec<Nanos> = (0..5_000).map(|_| rng.next_u64() % 20_000).collect();
        times.extend([7_000; 40]);
        let mut sorted = times.clone();
        sorted.sort_unstable();
        for window in [1, 3, 50, 1_000, 30_000] {
            let mut ordered = Metrics::new(window);
            retries(&mut ordered, &sorted);
            let mut unordered = Metrics::unordered(window, times.len());
            retries(&mut unordered, &times);
            assert_eq!(ordered.peak_window_share(), unordered.peak_window_share());
            assert_eq!(
                unordered.retry_times().map(<[Nanos]>::len),
                Some(times.len())
            );
            assert_eq!(ordered.retry_times(), None);
        }
    }

    /// The coarse pass gives the exact answer of sorting everything, on times bunched, spread,
    /// tied and at the edges of buckets, and is taken where it should be.
    #[test]
    fn the_coarse_pass_agrees_with_sorting_everything() {
        use stagger_core::{Rng, SeededRng};
        let mut rng = SeededRng::new(9);
        let n = 40_000;
        let mut sets: Vec<(&str, Vec<Nanos>)> = vec![
            (
                "uniform",
                (0..n).map(|_| rng.next_u64() % 5_000_000).collect(),
            ),
            (
                // A burst on a flat floor, as a herd's first wave.
                "burst",
                (0..n)
                    .map(|i| {
                        if i % 4 == 0 {
                            2_000_000 + rng.next_u64() % 30_000
                        } else {
                            rng.next_u64() % 9_000_000
                        }
                    })
                    .collect(),
            ),
            (
                "decaying",
                (0..n)
                    .map(|_| (-(1.0 - rng.next_f64()).ln() * 1e6) as Nanos)
                    .collect(),
            ),
            ("tied", vec![123_456; n]),
            (
                "bucket edges",
                (0..n).map(|i| (i as Nanos % 300) * 1_024).collect(),
            ),
        ];
        // Spread over a thousand windows of 1 ms, with bursts: the first pass counts in
        // buckets wider than a sixteenth of the window, down to a window wide for the widest.
        sets.push((
            "long, wider buckets",
            (0..n)
                .map(|i| {
                    if i % 5 == 0 {
                        (i as Nanos % 7) * 150_000_000 + rng.next_u64() % 3_000_000
                    } else {
                        rng.next_u64() % 1_000_000_000
                    }
                })
                .collect(),
        ));
        // Spread so thin that everything is sorted.
        sets.push((
            "sparse",
            (0..n).map(|i| i as Nanos * 1_000_000_007).collect(),
        ));
        // Two bunches one window apart but for a nanosecond, at the end of one bucket and at the
        // start of the last bucket a window from it can reach (`m + 1` buckets on), over a thin
        // floor that starts at 0, so that the buckets fall where this test puts them: for the
        // window of 2 090 000 ns the buckets are 65 536 ns wide and `m` is 31. Only a bound that
        // reaches `m + 1` buckets on sees that one window holds both.
        let (d, window) = (65_536, 2_090_000);
        let a = 500 * d + d - 1;
        let b = a + window - 1;
        assert_eq!((b - a) / d, 31, "the bunches are m + 1 buckets apart");
        let mut bunched: Vec<Nanos> = vec![0];
        bunched.extend((0..12_000).map(|_| rng.next_u64() % 100_000_000));
        bunched.extend([a; 3_000]);
        bunched.extend([b; 3_000]);
        sets.push(("bunches m + 1 buckets apart", bunched));
        let windows = [
            16, 17, 31, 1_000, 4_096, 65_537, 1_100_000, 1_500_000, 2_090_000, 10_000_000,
        ];
        for (name, times) in &sets {
            for window in windows {
                let mut sorted = times.clone();
                sorted.sort_unstable();
                let want = busiest_sorted(&sorted, window);
                let mut shuffled = times.clone();
                assert_eq!(
                    busiest(&mut shuffled, window),
                    want,
                    "{name}, window {window}"
                );
                // Each pass on its own, from the first to the finest.
                for parts in [FIRST_PARTS, 256, LAST_PARTS] {
                    if window < parts {
                        continue;
                    }
                    let mut again = times.clone();
                    let coarse = busiest_coarse_first(&mut again, window, parts);
                    assert!(
                        coarse.is_none_or(|got| got == want),
                        "{name}, window {window}, parts {parts}"
                    );
                    // Where the buckets are few enough, the coarse pass is what answered.
                    if parts == FIRST_PARTS && *name != "sparse" && window >= 1_000_000 {
                        assert!(coarse.is_some(), "{name}, window {window}: the coarse pass");
                    }
                }
            }
        }
    }

    #[test]
    fn give_ups_are_counted_by_the_name_of_their_reason() {
        for (slot, reason) in STOPS.iter().enumerate() {
            assert_eq!(stop_slot(*reason), Some(slot), "{reason:?}");
        }
        let names: std::collections::BTreeSet<_> = STOPS.iter().map(StopReason::name).collect();
        assert_eq!(names.len(), STOP_SLOTS, "one slot per reason");
        let mut m = Metrics::new(10);
        m.gave_up(StopReason::Deadline);
        m.gave_up(StopReason::WaitExceedsDeadline {
            wait: std::time::Duration::from_secs(3),
            remaining: std::time::Duration::from_secs(1),
        });
        m.gave_up(StopReason::Deadline);
        m.gave_up_as("unfinished", 4);
        assert_eq!(m.gave_up_for(StopReason::Deadline), 2);
        assert_eq!(m.gave_up_for(StopReason::BudgetExhausted), 0);
        let want: BTreeMap<&str, u64> = [
            ("deadline", 2),
            ("unfinished", 4),
            ("wait-exceeds-deadline", 1),
        ]
        .into();
        assert_eq!(m.give_ups(), want);
        assert_eq!(m.row("p".into(), None).give_ups, want);
    }

    #[test]
    fn first_tries_are_not_retries() {
        let mut m = Metrics::new(10);
        m.attempt(0, 1);
        m.attempt(5, 1);
        assert_eq!((m.attempts, m.retries), (2, 0));
        assert_eq!(m.peak_window_share(), 0.0);
    }
}

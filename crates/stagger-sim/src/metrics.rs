//! What a run measures, and the result row it reports.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;
use stagger_core::engine::StopReason;

use crate::queue::Nanos;

/// Counters and samples collected during one run of one strategy.
#[derive(Debug)]
pub struct Metrics {
    /// Requests started (first attempts made or refused).
    pub first_tries: u64,
    /// Attempts made, first ones included.
    pub attempts: u64,
    /// Requests that succeeded.
    pub successes: u64,
    /// When each retry was sent.
    pub retry_times: Vec<Nanos>,
    /// Latency of successful requests, in microseconds.
    pub latency_us: Histogram<u64>,
    /// Requests given up, by reason.
    pub give_ups: BTreeMap<&'static str, u64>,
    /// Events the run processed.
    pub events: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty metrics.
    #[must_use]
    pub fn new() -> Self {
        Self {
            first_tries: 0,
            attempts: 0,
            successes: 0,
            retry_times: Vec::new(),
            // Microseconds up to about 12 days, 3 significant digits; these bounds are valid.
            latency_us: Histogram::new_with_bounds(1, 1 << 40, 3)
                .expect("constant histogram bounds are valid"),
            give_ups: BTreeMap::new(),
            events: 0,
        }
    }

    /// An attempt was sent at `at`; `number` 1 is the first try.
    pub fn attempt(&mut self, at: Nanos, number: u32) {
        self.attempts += 1;
        if number > 1 {
            self.retry_times.push(at);
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
    pub fn gave_up(&mut self, reason: StopReason) {
        *self.give_ups.entry(reason.name()).or_default() += 1;
    }

    /// The largest share of all retries sent within any window of `window` nanoseconds.
    #[must_use]
    pub fn peak_window_share(&mut self, window: Nanos) -> f64 {
        let times = &mut self.retry_times;
        if times.is_empty() {
            return 0.0;
        }
        times.sort_unstable();
        let (mut start, mut best) = (0, 0);
        for end in 0..times.len() {
            while times[end] - times[start] >= window {
                start += 1;
            }
            best = best.max(end - start + 1);
        }
        best as f64 / times.len() as f64
    }

    /// The result row for strategy `policy` (+ `budget`), with the common metrics filled in.
    pub fn row(&mut self, policy: String, budget: Option<String>, window: Nanos) -> ResultRow {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let percentile = |h: &Histogram<u64>, q: f64| {
            (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1_000.0)
        };
        let retries = self.retry_times.len() as u64;
        ResultRow {
            policy,
            budget,
            success_rate: ratio(self.successes, self.first_tries),
            load: ratio(self.attempts, self.first_tries),
            retries_per_success: (self.successes > 0).then(|| ratio(retries, self.successes)),
            peak_window_share: self.peak_window_share(window),
            p50_ms: percentile(&self.latency_us, 0.5),
            p99_ms: percentile(&self.latency_us, 0.99),
            first_tries: self.first_tries,
            attempts: self.attempts,
            successes: self.successes,
            give_ups: self.give_ups.clone(),
            events: self.events,
            writes_per_round: None,
            completion_ms: None,
            met_outage: None,
            recovery_load: None,
            tail_goodput_ratio: None,
            recovery_ms: None,
        }
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_window_share_counts_the_busiest_window() {
        let mut m = Metrics::new();
        for t in [0, 1, 2, 100, 101, 300] {
            m.retry_times.push(t);
        }
        assert_eq!(m.peak_window_share(10), 0.5);
        assert_eq!(m.peak_window_share(1_000), 1.0);
    }
}

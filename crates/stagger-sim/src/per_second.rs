//! # Load over time, and a run seen second by second
//!
//! [`Load`] shapes the rate of open clients over a run: steady, a spike (the rate multiplied
//! for a window) or a ramp up and down, the load generators of Marc Brooker's "simple collapse
//! simulation" (2023). A time-varying rate is drawn exactly, by thinning a Poisson process at
//! the peak rate: a candidate arrival comes at the peak rate and is kept with probability
//! `rate(t) / peak`.
//!
//! A [`PerSecond`] is a run's row with its per-second series (goodput, offered rate, arrivals,
//! attempts, work in progress), the tail goodput ratio and, after a spike, the recovery time:
//! [`Composed::per_second`](crate::model::Composed::per_second) records one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::ResultRow;
use crate::queue::Nanos;

const SECOND: Nanos = 1_000_000_000;

/// The tail over which the tail goodput ratio is measured: the final 30 s.
pub const TAIL: Duration = Duration::from_secs(30);

/// Recovered means goodput at least this share of the offered rate...
pub const RECOVERY_SHARE: f64 = 0.9;

/// ...for this many consecutive seconds.
pub const RECOVERY_HOLD: usize = 5;

/// How the rate of open clients changes over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Load {
    /// The clients' rate throughout.
    #[default]
    Steady,
    /// The rate multiplied for a window ([`SpikeShape`]), and the clients' rate outside it.
    Spike(SpikeShape),
    /// Up from the clients' rate and down again ([`RampShape`]): Brooker's
    /// `RampUpDownLoadGenerator`.
    Ramp(RampShape),
}

/// A spike of the rate: `factor` times it in `[at, at + lasts)` (in a scenario file: `factor`,
/// `at`, `for`). `D` is how a time is written: a [`Duration`], or a file's text.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpikeShape<D = Duration> {
    /// The multiple, in (0, 1000].
    pub factor: f64,
    /// When it starts.
    pub at: D,
    /// How long it lasts (longer than 0).
    #[serde(rename = "for")]
    pub lasts: D,
}

/// A ramp of the rate: up from the clients' rate at time zero to `peak_factor` times it at
/// `peak_at`, and down at the same slope after it, to nothing (in a scenario file:
/// `peak_factor`, `peak_at`). `D` is how a time is written: a [`Duration`], or a file's text.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RampShape<D = Duration> {
    /// The peak as a multiple of the rate, in (0, 1000].
    pub peak_factor: f64,
    /// When the rate peaks (longer than 0).
    pub peak_at: D,
}

impl Load {
    /// The rate over time of one source whose base rate is `rate`.
    pub(crate) fn profile(self, rate: f64) -> Profile {
        match self {
            Self::Steady => Profile::Spike {
                base: rate,
                peak: rate,
                from: 0.0,
                until: 0.0,
            },
            Self::Spike(SpikeShape { factor, at, lasts }) => {
                let from = at.as_secs_f64();
                Profile::Spike {
                    base: rate,
                    peak: rate * factor,
                    from,
                    until: from + lasts.as_secs_f64(),
                }
            }
            Self::Ramp(RampShape {
                peak_factor,
                peak_at,
            }) => {
                let peak = rate * peak_factor;
                let at = peak_at.as_secs_f64();
                Profile::Ramp {
                    peak,
                    slope: if at > 0.0 { (peak - rate) / at } else { 0.0 },
                    at,
                }
            }
        }
    }

    /// When the trigger ends, for the recovery time: a spike's end (`None` for the others).
    #[must_use]
    pub fn trigger_end(self) -> Option<Duration> {
        match self {
            Self::Spike(SpikeShape { at, lasts, .. }) => Some(at.saturating_add(lasts)),
            _ => None,
        }
    }

    /// The multiple of the rate, named as a scenario file names it, for
    /// [`Composed::validate`](crate::model::Composed::validate).
    pub(crate) fn factor(self) -> Option<(&'static str, f64)> {
        match self {
            Self::Steady => None,
            Self::Spike(SpikeShape { factor, .. }) => Some(("clients.spike.factor", factor)),
            Self::Ramp(RampShape { peak_factor, .. }) => {
                Some(("clients.ramp.peak_factor", peak_factor))
            }
        }
    }
}

/// A source's rate over time, in requests a second, with `t` in seconds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Profile {
    /// `base`, and `peak` in `[from, until)`.
    Spike {
        base: f64,
        peak: f64,
        from: f64,
        until: f64,
    },
    /// `max(0, peak - slope |t - at|)`.
    Ramp { peak: f64, slope: f64, at: f64 },
}

impl Profile {
    /// The rate at `t` seconds.
    pub(crate) fn at(&self, t: f64) -> f64 {
        match *self {
            Self::Spike {
                base,
                peak,
                from,
                until,
            } => {
                if (from..until).contains(&t) {
                    peak
                } else {
                    base
                }
            }
            Self::Ramp { peak, slope, at } => (peak - slope * (t - at).abs()).max(0.0),
        }
    }

    /// The highest rate, which bounds the thinning.
    pub(crate) fn peak(&self) -> f64 {
        match *self {
            Self::Spike { base, peak, .. } => base.max(peak),
            Self::Ramp { peak, .. } => peak,
        }
    }

    /// Whether the rate changes over the run, so that arrivals are thinned.
    pub(crate) fn varies(&self) -> bool {
        match *self {
            Self::Spike {
                base,
                peak,
                from,
                until,
            } => base != peak && from < until,
            Self::Ramp { .. } => true,
        }
    }

    /// The highest mean rate over any `span` seconds of a run of `duration` seconds: the span
    /// that ends with the trigger (a spike), or the one centred on the peak (a ramp, whose
    /// rate falls away on both sides of it).
    pub(crate) fn busiest(&self, span: f64, duration: f64) -> f64 {
        let span = span.clamp(1e-9, duration.max(1e-9));
        let over = |end: f64| {
            let start = (end - span).max(0.0);
            self.between(start, end) / (end - start).max(1e-9)
        };
        match *self {
            Self::Spike { until, .. } => over(until.min(duration).max(span)).max(over(duration)),
            Self::Ramp { at, .. } => {
                let end = (at + span / 2.0).clamp(span, duration.max(span));
                over(end)
            }
        }
    }

    /// The requests expected in `[a, b)` seconds: the integral of the rate.
    pub(crate) fn between(&self, a: f64, b: f64) -> f64 {
        match *self {
            Self::Spike {
                base,
                peak,
                from,
                until,
            } => {
                let overlap = (b.min(until) - a.max(from)).max(0.0);
                base * (b - a) + (peak - base) * overlap
            }
            Self::Ramp { peak, slope, at } => {
                // Linear between the peak and where the rate reaches zero on either side: add
                // the trapezoids between those points.
                let reach = if slope > 0.0 {
                    peak / slope
                } else {
                    f64::INFINITY
                };
                let mut points = vec![a, b];
                points.extend(
                    [at - reach, at, at + reach]
                        .into_iter()
                        .filter(|p| *p > a && *p < b),
                );
                points.sort_by(f64::total_cmp);
                points
                    .windows(2)
                    .map(|w| (w[1] - w[0]) * (self.at(w[0]) + self.at(w[1])) / 2.0)
                    .sum()
            }
        }
    }
}

/// One run over time: the result row and the per-second series behind it. Entry `k` of each
/// series covers `[k s, (k + 1) s)`; the last may be a partial second.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerSecond {
    /// The result row, with `tail_goodput_ratio` (and, after a spike, `recovery_ms`) filled in.
    pub row: ResultRow,
    /// Successful requests whose success reached the client in each second.
    pub goodput: Vec<u64>,
    /// The offered rate averaged over each second, in requests per second.
    pub offered: Vec<f64>,
    /// Requests that arrived in each second.
    pub arrivals: Vec<u64>,
    /// Attempts sent in each second, first ones included.
    pub attempts: Vec<u64>,
    /// Attempts in progress at the dependency at the start of each second: with a service
    /// time that grows with them, the work it holds, abandoned attempts included; otherwise
    /// the attempts sent and not yet answered or timed out.
    pub in_flight: Vec<u64>,
}

impl PerSecond {
    /// Goodput per second, as for plots: `(start of the second in s, successes)`.
    #[must_use]
    pub fn goodput_series(&self) -> Vec<(f64, u64)> {
        self.goodput
            .iter()
            .enumerate()
            .map(|(k, &g)| (k as f64, g))
            .collect()
    }
}

/// Per-second counters of a run, and the successes in its tail.
pub(crate) struct Series {
    pub(crate) goodput: Vec<u64>,
    pub(crate) arrivals: Vec<u64>,
    pub(crate) attempts: Vec<u64>,
    pub(crate) in_flight: Vec<u64>,
    /// The next second whose work in progress is to be sampled.
    next_sample: usize,
    end: Nanos,
    tail_start: Nanos,
    tail_successes: u64,
}

impl Series {
    /// The counters of a run of `duration`.
    pub(crate) fn new(duration: Duration) -> Self {
        let end = crate::queue::nanos(duration);
        let seconds = usize::try_from(end.div_ceil(SECOND)).unwrap_or(usize::MAX);
        Self {
            goodput: vec![0; seconds],
            arrivals: vec![0; seconds],
            attempts: vec![0; seconds],
            in_flight: vec![0; seconds],
            next_sample: 0,
            end,
            tail_start: end.saturating_sub(crate::queue::nanos(TAIL)),
            tail_successes: 0,
        }
    }

    /// The memory the counters of a run of `duration` take.
    pub(crate) fn bytes(duration: Duration) -> f64 {
        duration.as_secs_f64().ceil() * (4 * size_of::<u64>() + size_of::<f64>()) as f64
    }

    fn bump(series: &mut [u64], now: Nanos) {
        if let Some(count) = usize::try_from(now / SECOND)
            .ok()
            .and_then(|k| series.get_mut(k))
        {
            *count += 1;
        }
    }

    /// Samples the work in progress, `in_flight`, for every second that has begun by `now`.
    pub(crate) fn sample(&mut self, now: Nanos, in_flight: u64) {
        while self.next_sample < self.in_flight.len()
            && (self.next_sample as u64).saturating_mul(SECOND) <= now
        {
            self.in_flight[self.next_sample] = in_flight;
            self.next_sample += 1;
        }
    }

    /// A request arrived at `now`.
    pub(crate) fn arrival(&mut self, now: Nanos) {
        Self::bump(&mut self.arrivals, now);
    }

    /// An attempt was sent at `now`.
    pub(crate) fn attempt(&mut self, now: Nanos) {
        Self::bump(&mut self.attempts, now);
    }

    /// A request's success reached its client at `now`: goodput if within the run.
    pub(crate) fn success(&mut self, now: Nanos) {
        if now < self.end {
            Self::bump(&mut self.goodput, now);
            if now >= self.tail_start {
                self.tail_successes += 1;
            }
        }
    }

    /// The per-second series of a run whose row is `row`, offered `requests_between(a, b)` requests in
    /// `[a, b)` seconds, with the trigger ending at `trigger_end` if there is one.
    pub(crate) fn into_per_second(
        self,
        mut row: ResultRow,
        duration: Duration,
        requests_between: impl Fn(f64, f64) -> f64,
        trigger_end: Option<Duration>,
    ) -> PerSecond {
        let seconds = self.goodput.len();
        let length = duration.as_secs_f64();
        let offered: Vec<f64> = (0..seconds)
            .map(|k| {
                let a = k as f64;
                let b = (a + 1.0).min(length);
                requests_between(a, b) / (b - a)
            })
            .collect();
        let tail = TAIL.as_secs_f64().min(length);
        // Divided by the mean offered rate over the same final window (for the ramp, not its
        // end rate, which would read a healthy system as 0.9).
        let offered_tail = requests_between(length - tail, length) / tail;
        row.tail_goodput_ratio = (offered_tail > 0.0 && tail > 0.0)
            .then(|| self.tail_successes as f64 / tail / offered_tail);
        row.recovery_ms = trigger_end.map(|trigger_end| {
            recovery_ms(
                &self.goodput,
                &offered,
                trigger_end,
                seconds_complete(duration),
            )
        });
        PerSecond {
            row,
            goodput: self.goodput,
            offered,
            arrivals: self.arrivals,
            attempts: self.attempts,
            in_flight: self.in_flight,
        }
    }
}

/// Whole seconds in `duration`: a partial last second does not count towards a recovery.
fn seconds_complete(duration: Duration) -> usize {
    usize::try_from(duration.as_secs()).unwrap_or(usize::MAX)
}

/// From `trigger_end` to the first whole second `k >= trigger_end` whose goodput, and that of
/// the [`RECOVERY_HOLD`] - 1 seconds after it, is at least [`RECOVERY_SHARE`] of the offered
/// rate, in ms; `None` if there is no such second among the first `complete` seconds.
fn recovery_ms(
    goodput: &[u64],
    offered: &[f64],
    trigger_end: Duration,
    complete: usize,
) -> Option<f64> {
    let first = usize::try_from(trigger_end.as_nanos().div_ceil(u128::from(SECOND))).ok()?;
    let last = complete.min(goodput.len()).min(offered.len());
    let good = |k: usize| goodput[k] as f64 >= RECOVERY_SHARE * offered[k];
    let mut run = 0;
    for k in first..last {
        if good(k) {
            run += 1;
            if run == RECOVERY_HOLD {
                let start = k + 1 - RECOVERY_HOLD;
                return Some((start as f64 - trigger_end.as_secs_f64()) * 1_000.0);
            }
        } else {
            run = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spike() -> Profile {
        Load::Spike(SpikeShape {
            factor: 2.0,
            at: Duration::from_secs(20),
            lasts: Duration::from_secs(5),
        })
        .profile(40.0)
    }

    fn ramp() -> Profile {
        Load::Ramp(RampShape {
            peak_factor: 2.0,
            peak_at: Duration::from_secs(25),
        })
        .profile(40.0)
    }

    #[test]
    fn the_load_integrates_exactly() {
        let spike = spike();
        assert_eq!(spike.between(0.0, 80.0), 40.0 * 80.0 + 40.0 * 5.0);
        assert_eq!(spike.between(19.5, 20.5), 60.0);
        let ramp = ramp();
        // 80 - 1.6 |t - 25|: up from 40 over 25 s (1 500), down to 0 over 50 s (2 000).
        assert_eq!(ramp.between(0.0, 80.0), 3_500.0);
        assert_eq!(ramp.between(50.0, 80.0), 500.0);
        assert_eq!(ramp.at(0.0), 40.0);
        assert_eq!(ramp.at(25.0), 80.0);
        assert_eq!(ramp.at(75.0), 0.0);
        assert_eq!(ramp.at(79.0), 0.0);
        assert_eq!(ramp.peak(), 80.0);
        // The busiest 10 s: the spike's 5 s and the 5 s before; the ramp's 10 s about its peak.
        assert_eq!(spike.busiest(10.0, 80.0), 60.0);
        assert_eq!(spike.busiest(1.0, 80.0), 80.0);
        assert_eq!(ramp.busiest(10.0, 80.0), 76.0);
        assert_eq!(ramp.busiest(1_000.0, 80.0), 3_500.0 / 80.0);
        // A steady load neither varies nor is thinned.
        let steady = Load::Steady.profile(40.0);
        assert!(!steady.varies() && spike.varies() && ramp.varies());
        assert_eq!(steady.between(0.0, 80.0), 3_200.0);
    }

    #[test]
    fn recovery_needs_five_good_seconds_in_a_row() {
        let offered = vec![40.0; 12];
        let goodput = [0, 0, 36, 36, 36, 36, 35, 40, 40, 40, 40, 40];
        let end = Duration::from_millis(1_500);
        assert_eq!(recovery_ms(&goodput, &offered, end, 12), Some(5_500.0));
        assert_eq!(recovery_ms(&goodput, &offered, end, 11), None);
    }
}

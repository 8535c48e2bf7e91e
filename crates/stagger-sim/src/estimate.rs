//! What a run will cost, worked out from its parameters before it starts.
//!
//! Each workload's [`Workload::estimate`](crate::Workload::estimate) counts the events its run
//! processes and the memory it holds at its peak, from the same parameters it allocates for:
//! the clients, the requests that arrive (`rate` x `duration`), the attempts the policy makes
//! at the server's failure rate, and the requests in flight at once (Little's law: arrival
//! rate x how long a request lives). Sizes are the `size_of` of the structures the run
//! allocates, plus the allocator's overhead per block ([`block`](crate::memory::block)).
//!
//! Where the model knows the answer in expectation (no budget, a server that fails
//! independently) the estimate is that expectation. Where it cannot know it (how much a budget
//! holds back, whether a server collapses) it takes the bound: every attempt the policy allows.
//! So a run takes at most about its estimate, and may take much less (a hedged run is counted
//! as sending every hedge its hedging allows). The one case that can take more is a budget
//! that refuses first attempts (`sre-adaptive`) on the `serial` workload, whose clients start
//! a new request at once after a refusal: a caller that must not overrun the estimate stops
//! the run at a multiple of it (`Workload::run_limited`).
//!
//! Memory is the peak of the data structures, not counting the process itself (its code,
//! stack and allocator arenas, which `stagger simulate` adds). Vectors that grow by doubling are
//! counted at the capacity they grow to, since that is what the address space holds.

use std::time::Duration;

use serde::Serialize;
use stagger_core::PolicyConfig;
use stagger_core::policy::PolicyKind;

use crate::strategy::{SimPolicy, Strategy};

/// What a run is expected to cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Estimate {
    /// Events the run processes, as [`ResultRow::events`](crate::ResultRow::events) counts
    /// them.
    pub events: u64,
    /// The most memory the run's data holds at once, in bytes.
    pub bytes: u64,
}

impl Estimate {
    /// An estimate of `events` events and `bytes` bytes, worked out in `f64`: each rounded up
    /// to a whole count, saturating ([`count`]).
    #[must_use]
    pub fn of(events: f64, bytes: f64) -> Self {
        Self {
            events: count(events),
            bytes: count(bytes),
        }
    }

    /// The cost of running `self`, then `next`: the events add up, the memory of the first
    /// is freed before the second starts.
    #[must_use]
    pub fn then(self, next: Self) -> Self {
        Self {
            events: self.events.saturating_add(next.events),
            bytes: self.bytes.max(next.bytes),
        }
    }
}

/// The most requests of a Poisson process with mean `mean` that are pending at its peak, for
/// memory: the mean, plus four standard deviations, plus one.
#[must_use]
pub fn peak(mean: f64) -> f64 {
    let mean = mean.max(0.0);
    mean + 4.0 * mean.sqrt() + 1.0
}

/// A count in `f64` as the estimate's `u64`, saturating.
#[must_use]
pub fn count(x: f64) -> u64 {
    if x.is_nan() {
        return u64::MAX;
    }
    x.max(0.0).ceil().min(u64::MAX as f64) as u64
}

/// The retries the estimate works out one by one; later ones repeat the last delay (every
/// policy's delays have reached their cap by then, or grow so slowly that the estimate only
/// overstates the attempts that fit in a given time).
const SPELLED_OUT: u32 = 4_096;

/// A strategy's retries, as the estimates need them: how many attempts it makes at most, and
/// the mean delay before each retry.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The most attempts a request makes, the first included.
    pub(crate) max_attempts: u64,
    /// `delays[k - 1]`: the mean delay before retry `k`, in nanoseconds.
    delays: Vec<f64>,
}

impl Plan {
    /// The plan of `strategy`'s policy. A budget is not modelled: it only removes retries.
    pub(crate) fn new(strategy: &Strategy) -> Self {
        let max_attempts = match strategy.policy {
            SimPolicy::Catalog(config) => u64::from(config.max_attempts().max(1)),
            // The 2015 simulator retries until it succeeds.
            SimPolicy::AwsDecorrelatedClamped { .. } => u64::from(u32::MAX),
        };
        let spelled = u32::try_from(max_attempts.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .min(SPELLED_OUT);
        let secs = |d: Duration| d.as_secs_f64() * 1e9;
        let delays = match strategy.policy {
            SimPolicy::Catalog(config) if config.kind() == PolicyKind::DecorrelatedJitter => {
                // `U(base, min(cap, 3 prev))`: the mean follows `(base + min(cap, 3 m)) / 2`;
                // the band's midpoint would overstate it more at every retry.
                let base = secs(config.bounds(1).min);
                let cap = secs(config.bounds(u32::MAX).max);
                decorrelated(base, cap, spelled, |m| (base + (3.0 * m).min(cap)) / 2.0)
            }
            SimPolicy::Catalog(config) => (1..=spelled)
                .map(|k| {
                    let b = config.bounds(k);
                    (secs(b.min) + secs(b.max)) / 2.0
                })
                .collect(),
            SimPolicy::AwsDecorrelatedClamped { base, cap } => {
                let (base, cap) = (secs(base), secs(cap));
                // `min(cap, U(base, 3 sleep))`, `sleep` from `base`.
                decorrelated(base, cap, spelled, |m| ((base + 3.0 * m) / 2.0).min(cap))
            }
        };
        Self {
            max_attempts,
            delays,
        }
    }

    /// This plan with every delay at least `floor` nanoseconds: a `Retry-After` the engine
    /// never undercuts.
    pub(crate) fn with_floor(mut self, floor: f64) -> Self {
        for d in &mut self.delays {
            *d = d.max(floor);
        }
        self
    }

    /// This plan with at most `n` attempts (at least one).
    pub(crate) fn at_most(mut self, n: u64) -> Self {
        self.max_attempts = self.max_attempts.min(n.max(1));
        self
    }

    /// For requests whose first attempt meets an outage of `down` nanoseconds at a uniformly
    /// random point, and whose attempts each fail after `rtt` while it lasts: the attempts
    /// they make, per nanosecond of arrivals (multiply by the arrival rate). A request that
    /// meets it with `tau` left makes the attempts sent before `tau`, and one more after it,
    /// which succeeds, if it has one left: integrated over `tau` in `(0, down]`, that is
    /// `sum_k max(0, down - s_k) + min(down, s_N)`, `s_k` the time attempt `k` is sent.
    pub(crate) fn outage_attempts(&self, rtt: f64, down: f64) -> f64 {
        let n = self.max_attempts;
        let mut total = 0.0;
        let mut last_sent = 0.0;
        for (k, sent) in self.send_times(rtt) {
            last_sent = sent;
            if sent >= down {
                // Attempt `k <= N` is sent after the outage: so is every later one.
                return total + down;
            }
            total += down - sent;
            if k as u32 > SPELLED_OUT && k < n {
                // The rest are evenly spaced: an arithmetic series, and `s_N` at its end.
                let step = rtt + self.delay(k);
                let left = (n - k) as f64;
                let fit = if step > 0.0 {
                    (((down - sent) / step).ceil() - 1.0).clamp(0.0, left)
                } else {
                    left
                };
                total += fit * (down - sent) - step * fit * (fit + 1.0) / 2.0;
                return total + down.min(sent + left * step);
            }
        }
        total + down.min(last_sent)
    }

    /// The mean delay before retry `k` (1-based), in nanoseconds.
    pub(crate) fn delay(&self, k: u64) -> f64 {
        let i = usize::try_from(k.saturating_sub(1)).unwrap_or(usize::MAX);
        self.delays
            .get(i)
            .or(self.delays.last())
            .copied()
            .unwrap_or(0.0)
    }

    /// The attempts a request makes in expectation when each fails independently with
    /// probability `failure`: `sum_{k=0}^{N-1} failure^k`.
    pub(crate) fn attempts(&self, failure: f64) -> f64 {
        let n = self.max_attempts as f64;
        if failure >= 1.0 {
            n
        } else {
            (1.0 - failure.powf(n)) / (1.0 - failure)
        }
    }

    /// How long a request lives in expectation, in nanoseconds, when each attempt takes `rtt`
    /// and fails independently with probability `failure`: every attempt's round trip and
    /// every retry's delay, weighted by the chance it happens.
    pub(crate) fn lifetime(&self, failure: f64, rtt: f64) -> f64 {
        let mut total = rtt;
        let mut reach = 1.0;
        let spelled = (self.delays.len() as u64).min(self.max_attempts.saturating_sub(1));
        for k in 1..=spelled {
            reach *= failure;
            if reach < 1e-12 {
                return total;
            }
            total += reach * (self.delay(k) + rtt);
        }
        // The rest repeat the last delay: a geometric tail.
        let left = self.max_attempts.saturating_sub(1 + spelled) as f64;
        let step = self.delay(spelled + 1) + rtt;
        if left > 0.0 {
            total += if failure >= 1.0 {
                left * step
            } else {
                reach * failure * (1.0 - failure.powf(left)) / (1.0 - failure) * step
            };
        }
        total
    }

    /// How long a request lives in expectation, counted up to `cap` nanoseconds at most (a
    /// request that lives longer counts as `cap`), when each attempt takes `rtt` and fails
    /// independently with probability `failure`. A request that ends at attempt `k` lives
    /// the round trips and delays before it, with probability `failure^(k-1)` times that of
    /// success (or 1 at the last attempt).
    pub(crate) fn lifetime_within(&self, failure: f64, rtt: f64, cap: f64) -> f64 {
        let mut total = 0.0;
        let mut reach = 1.0;
        for (k, sent) in self.send_times(rtt) {
            let ends = sent + rtt;
            if ends >= cap || reach < 1e-12 || k as u32 > SPELLED_OUT {
                // This attempt, or a later one, ends it past the cap (or the rest is
                // negligible): count them all at the cap, or at their end if it is sooner.
                return total + reach * ends.min(cap);
            }
            let last = k == self.max_attempts;
            let p_end = if last { reach } else { reach * (1.0 - failure) };
            total += p_end * ends;
            reach *= failure;
            if last {
                break;
            }
        }
        total
    }

    /// When attempt `k` (1-based) is sent, from the first, in nanoseconds, if every attempt
    /// fails after `rtt`: the round trips and the mean delays before it.
    pub(crate) fn send_times(&self, rtt: f64) -> impl Iterator<Item = (u64, f64)> + '_ {
        (1..=self.max_attempts).scan(0.0, move |at, k| {
            let sent = *at;
            *at += rtt + self.delay(k);
            Some((k, sent))
        })
    }

    /// Attempts and time spent if every attempt fails after `rtt` until `within` nanoseconds
    /// from the first have passed (or the attempts run out): `(attempts, time of the last)`.
    /// `within` of infinity means until the attempts run out.
    pub(crate) fn attempts_within(&self, rtt: f64, within: f64) -> (f64, f64) {
        let mut last = (0.0, 0.0);
        for (k, sent) in self.send_times(rtt) {
            if sent >= within {
                break;
            }
            last = (k as f64, sent);
            if k as u32 > SPELLED_OUT {
                // Past the spelled-out retries every cycle is the same: count the rest.
                let step = rtt + self.delay(k);
                let left = (self.max_attempts - k) as f64;
                let fit = if step > 0.0 {
                    ((within - sent) / step).ceil().max(0.0) - 1.0
                } else {
                    f64::INFINITY
                };
                let more = left.min(fit.max(0.0));
                return (k as f64 + more, sent + more * step);
            }
        }
        last
    }
}

/// The mean delays of a decorrelated jitter, following `next` from `base`.
fn decorrelated(base: f64, cap: f64, n: u32, next: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut m = base;
    (0..n)
        .map(|_| {
            m = next(m).min(cap.max(base));
            m
        })
        .collect()
}

/// A delay in nanoseconds as `f64`.
pub(crate) fn ns(d: Duration) -> f64 {
    d.as_nanos() as f64
}

#[cfg(test)]
mod tests {
    use stagger_core::AnyConfig;
    use stagger_core::policy::{Constant, DecorrelatedJitter, Exponential, Immediate};

    use super::*;

    fn plan(config: impl Into<AnyConfig>) -> Plan {
        Plan::new(&Strategy::policy(config.into()))
    }

    #[test]
    fn sequential_runs_add_events_and_keep_the_larger_memory() {
        let a = Estimate {
            events: 10,
            bytes: 500,
        };
        let b = Estimate {
            events: 5,
            bytes: 900,
        };
        assert_eq!(
            a.then(b),
            Estimate {
                events: 15,
                bytes: 900
            }
        );
    }

    #[test]
    fn attempts_follow_the_closed_form() {
        let p = plan(Immediate::new().with_max_attempts(4));
        assert_eq!(p.max_attempts, 4);
        assert!((p.attempts(0.5) - 1.875).abs() < 1e-12);
        assert_eq!(p.attempts(1.0), 4.0);
        assert_eq!(p.attempts(0.0), 1.0);
        // No delays: each attempt is a round trip.
        assert!((p.lifetime(0.5, 10.0) - 18.75).abs() < 1e-9);
        assert!((p.lifetime_within(0.5, 10.0, f64::INFINITY) - 18.75).abs() < 1e-9);
        // Counted up to 25: the attempts ending at 30 and 40 count as 25.
        let capped = 0.5 * 10.0 + 0.25 * 20.0 + 0.25 * 25.0;
        assert!((p.lifetime_within(0.5, 10.0, 25.0) - capped).abs() < 1e-9);
    }

    #[test]
    fn delays_are_the_schedule_and_repeat_after_the_last_spelled_out() {
        let p = plan(
            Exponential::new()
                .with_base(Duration::from_millis(100))
                .with_max_attempts(4),
        );
        assert_eq!(p.delay(1), 1e8);
        assert_eq!(p.delay(3), 4e8);
        // Always failing: every round trip and delay, 1 + 2 + 4 tenths of a second.
        assert!((p.lifetime(1.0, 0.0) - 7e8).abs() < 1.0);
        let sends: Vec<_> = p.send_times(1.0).collect();
        assert_eq!(
            sends,
            [(1, 0.0), (2, 1e8 + 1.0), (3, 3e8 + 2.0), (4, 7e8 + 3.0)]
        );
        assert_eq!(p.attempts_within(1.0, 2e8), (2.0, 1e8 + 1.0));
        assert_eq!(p.attempts_within(1.0, f64::INFINITY).0, 4.0);
        // A policy with no attempt limit: the cycles past the spelled-out ones are counted.
        let forever = plan(
            Constant::new()
                .with_base(Duration::from_millis(10))
                .with_max_attempts(u32::MAX),
        );
        let (attempts, _) = forever.attempts_within(0.0, 1e11);
        assert!((attempts - 10_000.0).abs() <= 1.0, "{attempts}");
    }

    #[test]
    fn outage_attempts_integrate_the_schedule() {
        // 3 attempts, 1 s apart (no round trip): a request meeting an outage of 10 s with
        // tau left makes 1 attempt and a successful one if tau <= 1 s, 2 and one more if
        // tau <= 2 s, else 3.
        let p = plan(
            Constant::new()
                .with_base(Duration::from_secs(1))
                .with_max_attempts(3),
        );
        let expected = 1e9 * 2.0 + 1e9 * 3.0 + 8e9 * 3.0;
        assert!((p.outage_attempts(0.0, 1e10) - expected).abs() < 1.0);
        // An outage shorter than the first delay: one failure and one success each.
        assert!((p.outage_attempts(0.0, 5e8) - 1e9).abs() < 1.0);
        // The floor of a Retry-After stretches the schedule; at most one attempt makes one.
        let floored = p.clone().with_floor(2e9);
        assert_eq!(floored.delay(1), 2e9);
        assert!((p.clone().at_most(1).outage_attempts(0.0, 1e10) - 1e10).abs() < 1.0);
        // Past the spelled-out retries the series is summed: no delay and a 1 ms round trip
        // make an attempt per ms of the outage left, up to the limit.
        let forever = plan(Immediate::new().with_max_attempts(u32::MAX));
        let a = forever.outage_attempts(1e6, 1e10);
        // sum over tau in (0, 10 s] of tau / 1 ms, plus the success after it.
        let expected = 1e10 * 1e10 / 2.0 / 1e6 + 1e10;
        assert!((a / expected - 1.0).abs() < 1e-3, "{a} vs {expected}");
    }

    #[test]
    fn decorrelated_jitter_grows_by_its_mean_not_its_band() {
        let p = plan(
            DecorrelatedJitter::new()
                .with_base(Duration::from_millis(10))
                .with_cap(Duration::from_secs(1)),
        );
        // U(10, 30) ms, then about U(10, 60) ms: means 20 and 35 ms.
        assert!((p.delay(1) - 2e7).abs() < 1.0, "{}", p.delay(1));
        assert!((p.delay(2) - 3.5e7).abs() < 1.0, "{}", p.delay(2));
        assert!(p.delay(60) <= 1e9);
    }
}

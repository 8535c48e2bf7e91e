//! Refusing a model before it runs: every parameter is checked against its limit
//! ([`crate::limits`]) and named as the user gave it, so that a bad scenario is a typed
//! [`SimError`] and never a panic or a run that cannot end.

use std::time::Duration;

use stagger_core::SeededRng;

use crate::dist::Delay;
use crate::error::SimError;
use crate::estimate::ns;
use crate::limits;
use crate::model::composed::{Composed, Layer};
use crate::model::parts::{BudgetScope, Clients, Limiter, Network, Replicas};
use crate::per_second::{Load, RampShape, SpikeShape};
use crate::strategy::Strategy;

impl Composed {
    /// Checks the parts.
    ///
    /// # Errors
    ///
    /// [`SimError::Invalid`] or [`SimError::TooLarge`] naming the parameter.
    pub fn validate(&self) -> Result<(), SimError> {
        let most = match self.clients {
            Clients::Fixed { .. } => Self::MAX_FIXED,
            _ => Self::MAX_SOURCES,
        };
        check_clients(self.clients.count(), most)?;
        if let Some(rate) = self.clients.rate() {
            let (most, allowed) = match self.clients {
                Clients::Serial { .. } => (limits::MAX_SERIAL_RATE, "in (0, 1e5] calls per second"),
                _ => (Self::MAX_RATE, limits::SOURCE_RATE_ALLOWED),
            };
            if !(rate.is_finite() && rate > 0.0 && rate <= most) {
                return Err(SimError::Invalid {
                    param: "rate",
                    allowed,
                });
            }
        }
        check_duration(self.duration)?;
        check_failure_rate(self.dependency.failure_rate)?;
        check_window(self.window)?;
        if let Some(hosts) = self.dependency.two_hosts
            && !(0.0..=1.0).contains(&hosts.share_down)
        {
            return Err(SimError::Invalid {
                param: "share_down",
                allowed: "a share in [0, 1]",
            });
        }
        if let Some(w) = self.dependency.outage {
            // The second after it, whose load is measured, must fit too.
            let end =
                w.at.saturating_add(w.lasts)
                    .saturating_add(Duration::from_secs(1));
            if w.lasts.is_zero() || end > self.duration {
                return Err(SimError::Invalid {
                    param: "outage",
                    allowed: "a window longer than 0 that ends at least 1 s before the end of \
                              the run's duration",
                });
            }
            if w.retry_after.is_some_and(|d| d > limits::MAX_DURATION) {
                return Err(SimError::Invalid {
                    param: "retry_after",
                    allowed: limits::AT_MOST_A_DAY,
                });
            }
        }
        if let Some(limiter) = self.dependency.limiter {
            validate_limiter(&limiter)?;
        }
        if self
            .deadline
            .is_some_and(|t| t.is_zero() || t > limits::MAX_DURATION)
        {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        self.validate_over_time()?;
        let n = self.clients.count() as f64;
        match self.clients {
            Clients::Open { .. } => {
                if self.requests() > Self::MAX_REQUESTS {
                    return Err(SimError::TooLarge {
                        what: "sources x rate x duration",
                        limit: format!("{:e} requests", Self::MAX_REQUESTS),
                    });
                }
                // A slowing service collapses: its requests cost several times more.
                if self.dependency.service.is_some()
                    && n * self.profile(self.clients.rate().unwrap_or(0.0)).peak()
                        * self.duration.as_secs_f64()
                        > limits::MAX_PEAK_REQUESTS
                {
                    return Err(SimError::TooLarge {
                        what: "peak rate x duration",
                        limit: format!("{:e} requests", limits::MAX_PEAK_REQUESTS),
                    });
                }
            }
            Clients::Serial { .. } => {
                // An attempt lasts its round trip and, with a pool, its service there.
                let rtt = mean_floor(&self.network)
                    + self
                        .dependency
                        .replicas
                        .map_or(0.0, |r| delay_floor(&r.service));
                if rtt < 1.0 {
                    return Err(SimError::Invalid {
                        param: "rtt",
                        allowed: "a round trip (with a pool, and its service) with a mean of \
                                  at least 1 ns",
                    });
                }
                if n * self.duration.as_nanos() as f64 / rtt > Self::MAX_SERIAL_ATTEMPTS {
                    return Err(SimError::TooLarge {
                        what: "clients x duration / mean round trip",
                        limit: format!("{:e} attempts", Self::MAX_SERIAL_ATTEMPTS),
                    });
                }
            }
            Clients::Fixed { .. } => {}
        }
        if matches!(self.clients, Clients::Serial { .. })
            && self.budget_scope == BudgetScope::PerRequest
        {
            return Err(SimError::Invalid {
                param: "budget_scope",
                allowed: "per-source or shared for serial clients (each serial client is one \
                          process with one request at a time)",
            });
        }
        Ok(())
    }

    /// Checks the load, the service, the attempt timeout and the drain.
    pub(crate) fn validate_over_time(&self) -> Result<(), SimError> {
        const DAY: Duration = limits::MAX_DURATION;
        // Named as a scenario file names them.
        if let Some((param, factor)) = self.load.factor() {
            if !matches!(self.clients, Clients::Open { .. }) {
                return Err(SimError::Invalid {
                    param: "clients.spike or clients.ramp",
                    allowed: "a spike or a ramp of open clients only",
                });
            }
            let least = if matches!(self.load, Load::Ramp(RampShape { .. })) {
                // A ramp rises to its peak: below 1 it would fall, then rise without end.
                1.0
            } else {
                0.0
            };
            if !(factor.is_finite()
                && factor >= least
                && factor > 0.0
                && factor <= limits::MAX_LOAD_FACTOR)
            {
                return Err(SimError::Invalid {
                    param,
                    allowed: if least > 0.0 {
                        "a multiple of the rate in [1, 1000]: the rate rises to the peak"
                    } else {
                        "a multiple of the rate in (0, 1000]"
                    },
                });
            }
        }
        match self.load {
            Load::Spike(SpikeShape { at, lasts, .. })
                if lasts.is_zero() || at.saturating_add(lasts) > self.duration =>
            {
                return Err(SimError::Invalid {
                    param: "clients.spike",
                    allowed: "a spike longer than 0 that ends within the run's duration",
                });
            }
            Load::Ramp(RampShape { peak_at, .. }) if peak_at.is_zero() || peak_at > DAY => {
                return Err(SimError::Invalid {
                    param: "clients.ramp.peak_at",
                    allowed: "longer than 0 and at most a day",
                });
            }
            _ => {}
        }
        if let Some(service) = self.dependency.service {
            if service.base > limits::MAX_SERVICE_TIME
                || service.per_in_flight > limits::MAX_SERVICE_TIME
            {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "a base and a per_in_flight time of at most an hour each",
                });
            }
            if !matches!(self.network, Network::OneWay(_)) {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "behind a one-way network (`network`, not `rtt`): the answer \
                              travels back once the work is done",
                });
            }
            if matches!(self.dependency.limiter, Some(Limiter::Concurrency(_))) {
                return Err(SimError::Invalid {
                    param: "dependency.service",
                    allowed: "without a concurrency_limit beside it (the limit has a service \
                              time of its own)",
                });
            }
        }
        if self
            .attempt_timeout
            .is_some_and(|t| t < limits::MIN_ATTEMPT_TIMEOUT || t > DAY)
        {
            return Err(SimError::Invalid {
                param: "attempt_timeout",
                allowed: limits::ATTEMPT_TIMEOUT_ALLOWED,
            });
        }
        if self.drain.is_some_and(|d| d > DAY) {
            return Err(SimError::Invalid {
                param: "drain",
                allowed: limits::AT_MOST_A_DAY,
            });
        }
        if self.fanout == 0 || self.fanout > Self::MAX_FANOUT {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: limits::FANOUT_ALLOWED,
            });
        }
        if self.fanout > 1 && self.dependency.outage.is_some() {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: "1 beside an outage (its success rate is that of the requests that \
                          met it, which a fan-out splits among sub-requests)",
            });
        }
        if self.fanout > 1 && matches!(self.clients, Clients::Serial { .. }) {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: "1 for serial clients (each paces one call at a time)",
            });
        }
        if let Some(pool) = self.dependency.replicas {
            validate_pool(&pool)?;
            // Each replica draws its pauses up to the last time it is used: bounded so that a
            // short pause_every over a long run is refused rather than drawn for hours.
            if !pool.pause.is_zero() {
                let span = ns(self.duration)
                    + self.drain_ns()
                    + self.deadline.map_or(ns(self.duration), ns);
                let pauses = f64::from(pool.count) * span / (ns(pool.pause_every) + ns(pool.pause));
                if pauses > Self::MAX_PAUSES {
                    return Err(SimError::TooLarge {
                        what: "replicas x (duration + drain + deadline) / (pause_every + pause)",
                        limit: format!("{:e} pauses", Self::MAX_PAUSES),
                    });
                }
            }
            let concurrency_limit =
                matches!(self.dependency.limiter, Some(Limiter::Concurrency(_)));
            let beside = if self.dependency.service.is_some() {
                Some("a pool without a service beside it (its service times are its own)")
            } else if concurrency_limit {
                Some("a pool without a concurrency_limit beside it (its concurrency is its own)")
            } else if self.dependency.two_hosts.is_some() {
                Some("a pool without two_hosts beside it")
            } else {
                None
            };
            if let Some(allowed) = beside {
                return Err(SimError::Invalid {
                    param: "dependency.replicas",
                    allowed,
                });
            }
        }
        Ok(())
    }

    /// Refuses invalid parts, an invalid policy (even if no request comes), invalid hedging,
    /// hedging with inner layers (a hedged request's attempts go to the dependency) and an
    /// inner layer's invalid policy.
    pub(crate) fn check(&self, strategy: &Strategy, inner: &[Layer]) -> Result<(), SimError> {
        self.validate()?;
        limits::check_layers(inner.len().saturating_add(1))?;
        strategy.policy.build(SeededRng::new(0))?;
        if let Some(hedging) = strategy.hedging {
            hedging.validate()?;
            if !inner.is_empty() {
                return Err(SimError::NotApplicable {
                    param: "hedge",
                    workload: "composed with inner layers",
                });
            }
        }
        for layer in inner {
            layer.policy.build(SeededRng::new(0))?;
        }
        Ok(())
    }
}

/// Checks a pool's parameters, under the names the file's keys give them.
pub(crate) fn validate_pool(pool: &Replicas) -> Result<(), SimError> {
    pool.validate_as([
        "dependency.replicas.count",
        "dependency.replicas.concurrency",
        "dependency.replicas.service",
        "dependency.replicas.pause",
        "dependency.replicas.pause_every",
    ])
}

pub(crate) fn validate_limiter(limiter: &Limiter) -> Result<(), SimError> {
    match *limiter {
        Limiter::Rate(l) => {
            check_limiter_rate(l.rate, l.burst)?;
        }
        Limiter::Concurrency(l) => {
            if l.limit == 0 {
                return Err(SimError::Invalid {
                    param: "limit_concurrency",
                    allowed: "at least 1",
                });
            }
            if l.service > limits::MAX_DURATION {
                return Err(SimError::Invalid {
                    param: "service",
                    allowed: limits::AT_MOST_A_DAY,
                });
            }
        }
    }
    if limiter.retry_after() > limits::MAX_DURATION {
        return Err(SimError::Invalid {
            param: "retry_after",
            allowed: limits::AT_MOST_A_DAY,
        });
    }
    Ok(())
}

/// Checks a rate limiter's rate (up to [`limits::MAX_LIMITER_RATE`]) and burst (up to
/// [`limits::MAX_LIMITER_BURST`]): the composed model's and the throttle workload's.
pub(crate) fn check_limiter_rate(rate: f64, burst: u32) -> Result<(), SimError> {
    if !(rate.is_finite() && rate > 0.0 && rate <= limits::MAX_LIMITER_RATE) {
        return Err(SimError::Invalid {
            param: "limit_rate",
            allowed: limits::LIMITER_RATE_ALLOWED,
        });
    }
    if burst == 0 || burst > limits::MAX_LIMITER_BURST {
        return Err(SimError::Invalid {
            param: "limit_burst",
            allowed: limits::LIMITER_BURST_ALLOWED,
        });
    }
    Ok(())
}

/// A lower bound on the mean round trip of `network`, in nanoseconds.
pub(crate) fn mean_floor(network: &Network) -> f64 {
    match network {
        Network::RoundTrip(d) => delay_floor(d),
        Network::OneWay(d) => 2.0 * delay_floor(d),
    }
}

/// A lower bound on a delay's mean.
pub(crate) fn delay_floor(delay: &Delay) -> f64 {
    match *delay {
        Delay::Constant { nanos } => nanos as f64,
        // E|X| >= |E X| and, for a normal, E|X| >= E|X - mean| = sd * sqrt(2 / pi).
        Delay::AbsNormal { mean, sd } => {
            (mean as f64).max(sd as f64 * (2.0 / std::f64::consts::PI).sqrt())
        }
        Delay::Exponential { mean } => mean as f64,
    }
}

/// Refuses, with [`SimError::EventLimit`], a run that has processed more than `max` events.
#[inline]
pub(crate) fn check_events(events: u64, max: u64) -> Result<(), SimError> {
    if events > max {
        Err(SimError::EventLimit { limit: max })
    } else {
        Ok(())
    }
}

/// Checks a failure probability.
pub(crate) fn check_failure_rate(x: f64) -> Result<(), SimError> {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(SimError::Invalid {
            param: "failure_rate",
            allowed: "a probability in [0, 1]",
        })
    }
}

/// Checks a number of clients.
pub(crate) fn check_clients(clients: u64, max: u64) -> Result<(), SimError> {
    if clients == 0 {
        return Err(SimError::Invalid {
            param: "clients",
            allowed: "at least 1",
        });
    }
    if clients > max {
        return Err(SimError::TooLarge {
            what: "clients",
            limit: max.to_string(),
        });
    }
    Ok(())
}

/// Checks a run's duration.
pub(crate) fn check_duration(d: Duration) -> Result<(), SimError> {
    if d.is_zero() || d > crate::limits::MAX_DURATION {
        return Err(SimError::Invalid {
            param: "duration",
            allowed: "longer than 0 and at most a day",
        });
    }
    Ok(())
}

/// Checks the window of the peak retry share.
pub(crate) fn check_window(window: Duration) -> Result<(), SimError> {
    if window.is_zero() {
        return Err(SimError::Invalid {
            param: "window",
            allowed: "longer than 0",
        });
    }
    Ok(())
}

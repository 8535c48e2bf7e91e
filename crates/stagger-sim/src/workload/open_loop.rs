//! # `open-loop`: open arrivals against independent failures
//!
//! The setup of Marc Brooker's "Fixing retries with token buckets and circuit breakers" (2022),
//! its simulator `retry_sim.py` (`mbrooker/simulator_example`). `clients` clients (default 100) each send requests as an independent Poisson
//! process at `rate` per second (default 10) for `duration` (default 10 s). Each attempt takes
//! one round trip drawn from `Exp(mean 10 ms)`, a single draw for the whole trip as published,
//! and the server fails it independently with probability `failure_rate` (default 0.5), with a
//! retryable error. Arrivals do not wait for earlier requests: the clients are *open*, so
//! retries add load on top of the offered rate instead of slowing the clients down.
//!
//! Each client holds its own budget (`Strategy::budget`), as in the published setup: a token
//! bucket or a breaker sees only its own client's calls. Arrivals stop at `duration`; the
//! requests in flight then run to completion, so every request counts whole.
//!
//! The metrics are the published ones: success rate = successes / first tries, and load =
//! attempts / first tries. With `N` immediate retries and no budget both have a closed form,
//! [`analytic`]: success `1 - x^(N+1)` and load `sum_{k=0..N} x^k` at failure probability `x`.
//! [`published_strategies`] lists the four strategies of the post: no retries, 3 retries, 3
//! retries with Brooker's per-client token bucket (`brooker`), and 3 retries with his retry
//! circuit breaker (`breaker`). W2's retries are immediate. Published: the bucket caps the extra
//! load near 14 % whatever the failure rate, the breaker trips early (hardly any retries above
//! 10 % failures), and with many small clients the bucket tends to "3 retries" while the
//! breaker tends to "no retries".
//!
//! "What is Backoff For?" (Brooker 2022) compares these open clients with the
//! serial ones of [`serial`](super::serial): with open clients, backoff barely changes the load.
//!
//! It runs on the composed model ([`Composed`]): open sources, a round trip drawn whole, a failure
//! probability, a budget per source ([`OpenLoop::composed`]).

use std::time::Duration;

use serde::Deserialize;
use stagger_core::AnyConfig;
use stagger_core::budget::BudgetKind;
use stagger_core::policy::{Immediate, NoRetry};

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::{Clients, Composed, Network};
use crate::model::{check_clients, check_duration, check_failure_rate, check_window};
use crate::strategy::Strategy;

/// The open-loop workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenLoop {
    /// Independent Poisson sources, each with its own budget (1 to [`OpenLoop::MAX_CLIENTS`]).
    pub clients: u64,
    /// Requests per second from each client, in (0, 1e6] ([`OpenLoop::MAX_RATE`]).
    pub rate: f64,
    /// How long requests arrive, longer than 0 and at most a day.
    pub duration: Duration,
    /// The server's independent failure probability per attempt, in [0, 1].
    pub failure_rate: f64,
    /// The round trip of one attempt (default `Exp(mean 10 ms)`).
    #[serde(skip)]
    pub rtt: Delay,
    /// The window of the peak retry share.
    pub window: Duration,
}

impl Default for OpenLoop {
    fn default() -> Self {
        Self {
            clients: 100,
            rate: 10.0,
            duration: Duration::from_secs(10),
            failure_rate: 0.5,
            rtt: Delay::Exponential { mean: 10_000_000 },
            window: Duration::from_millis(10),
        }
    }
}

impl OpenLoop {
    /// The most clients, [`limits::MAX_SOURCES`](crate::limits::MAX_SOURCES).
    pub const MAX_CLIENTS: u64 = crate::limits::MAX_SOURCES;
    /// The highest rate of one client, in requests a second, as of every open source:
    /// [`limits::MAX_SOURCE_RATE`](crate::limits::MAX_SOURCE_RATE).
    pub const MAX_RATE: f64 = crate::limits::MAX_SOURCE_RATE;
    /// The most requests a run may expect (`clients x rate x duration`),
    /// [`limits::MAX_REQUESTS`](crate::limits::MAX_REQUESTS).
    pub const MAX_REQUESTS: f64 = crate::limits::MAX_REQUESTS;
    /// The most events a run may process; a run that needs more (a policy with no attempt
    /// limit against a server that always fails, say) stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = crate::limits::MAX_EVENTS;
}

/// The strategies of Brooker's W2 post, by the names it uses: "no retries", "3 retries" (4
/// attempts, retried at once), "token bucket" (the same with the `brooker` budget per client)
/// and "circuit breaker" (the same with the `breaker` budget per client).
#[must_use]
pub fn published_strategies() -> Vec<(&'static str, Strategy)> {
    let three = Strategy::policy(AnyConfig::from(Immediate::new().with_max_attempts(4)));
    vec![
        (
            "no retries",
            Strategy::policy(AnyConfig::from(NoRetry::new())),
        ),
        ("3 retries", three),
        ("token bucket", three.with_budget(Some(BudgetKind::Brooker))),
        (
            "circuit breaker",
            three.with_budget(Some(BudgetKind::Breaker)),
        ),
    ]
}

/// W2's closed form for `retries` immediate retries (no budget) at failure probability `x`:
/// `(success, load)` = `(1 - x^(N+1), sum_{k=0..N} x^k)`.
#[must_use]
pub fn analytic(retries: u32, x: f64) -> (f64, f64) {
    let mut load = 0.0;
    let mut power = 1.0;
    for _ in 0..=retries {
        load += power;
        power *= x;
    }
    (1.0 - power, load)
}

/// The standard errors of the mean success and of the mean load that [`analytic`] predicts,
/// over `requests` independent requests with `retries` immediate retries at failure probability
/// `x`: from the binomial success and the truncated-geometric count of attempts
/// (`P(K = k) = x^(k-1) (1 - x)` for `k <= retries`, `P(K = retries + 1) = x^retries`). Zero
/// requests give infinite errors: nothing measured bounds nothing.
#[must_use]
pub fn standard_errors(retries: u32, x: f64, requests: u64) -> (f64, f64) {
    if requests == 0 {
        return (f64::INFINITY, f64::INFINITY);
    }
    let (p, mean) = analytic(retries, x);
    let mut second = 0.0;
    let mut power = 1.0;
    for k in 1..=u64::from(retries) + 1 {
        let prob = if k <= u64::from(retries) {
            power * (1.0 - x)
        } else {
            power
        };
        second += (k * k) as f64 * prob;
        power *= x;
    }
    let n = requests as f64;
    (
        (p * (1.0 - p) / n).sqrt(),
        ((second - mean * mean).max(0.0) / n).sqrt(),
    )
}

impl OpenLoop {
    /// This workload as the composed model runs it: open sources, one round trip per attempt,
    /// independent failures, a budget per source.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients = Clients::Open {
            sources: self.clients,
            rate: self.rate,
        };
        let mut model = Composed::new(clients, self.duration, Network::RoundTrip(self.rtt));
        model.dependency.failure_rate = self.failure_rate;
        model.window = self.window;
        model
    }
}

impl Workload for OpenLoop {
    const KIND: WorkloadKind = WorkloadKind::OpenLoop;

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        if !(self.rate.is_finite() && self.rate > 0.0 && self.rate <= Self::MAX_RATE) {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: crate::limits::SOURCE_RATE_ALLOWED,
            });
        }
        check_duration(self.duration)?;
        check_failure_rate(self.failure_rate)?;
        check_window(self.window)?;
        if self.clients as f64 * self.rate * self.duration.as_secs_f64() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "clients x rate x duration",
                limit: format!("{:e} requests", Self::MAX_REQUESTS),
            });
        }
        Ok(())
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

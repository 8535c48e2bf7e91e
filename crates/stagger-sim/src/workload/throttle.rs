//! # `throttle`: a 429 storm against a rate limiter
//!
//! A dependency behind a rate limiter tells every client it refuses the same thing: "retry in
//! 1 second". Each client's retry must never come earlier than that (the wait is a floor), and
//! must fit its deadline. What it adds above the floor ([`Dispersal`]) decides whether the
//! fleet comes back in step: a wave of retries at one instant wins one of the limiter's slots.
//!
//! Model, after a trial against nginx's `limit_req` at 5 requests/s, `burst=0`,
//! `limit_req_status 429` and `Retry-After: 1`, with 20 concurrent GETs and a 3 s deadline:
//!
//! - **Clients:** `clients` requests (default 20) that start together at time zero, or, with
//!   `rate` (and `duration`), requests arriving as a Poisson process at that rate. Each runs
//!   the strategy's policy with one end-to-end deadline (`timeout`, default 3 s) and the
//!   workload's dispersal (default [`Dispersal::default`]).
//! - **Network:** a constant one-way delay of 1 ms, the same for everyone, so any spread comes
//!   from the clients.
//! - **Server:** a rate limiter ([`RateLimiter`](crate::model::RateLimiter)): a token bucket of `limit_burst` tokens
//!   (default 1, nginx's `burst=0`: one request per `1 / limit_rate`) refilled at
//!   `limit_rate` per second (default 5). An admitted request is answered at once; a refused
//!   one gets a 429 whose `Retry-After` is `retry_after` (default 1 s), or the exact time until
//!   a token frees, either of them rounded up to whole seconds as the header's wire format
//!   forces ([`RetryAfterForm`]). With `limit_concurrency`, the server is a concurrency
//!   limiter instead ([`ConcurrencyLimit`]): at most that many requests in service at once,
//!   100 ms each, and a 503 with the `Retry-After` beyond.
//!
//! A 429 had no effect, so every client may retry it
//! ([`Failure::Throttled`](stagger_core::Failure::Throttled)); a 503 with a wait is
//! [`Failure::RetryAfter`](stagger_core::Failure::RetryAfter). The server remembers the time it
//! gave each client and counts every retry that arrives before it (`early_retries`): it must
//! be 0 for every strategy. The other figures: `served_share`, the requests served within their deadline;
//! `rejected_per_success`, the refused attempts per request served; and `peak_window_share`,
//! the busiest 10 ms's share of all retries. The ceiling for the defaults is 11 of 20 for any
//! client that never retries early: one request at time zero, then one per 200 ms slot from
//! 1 s until the deadline.
//!
//! It runs on the composed model ([`Composed`]): a fixed fleet (or one open source) of
//! one-shot clients, each with a budget of its own, a constant one-way network and the limiter
//! ([`Throttle::composed`]). A client hears the limiter's answer one network delay after its
//! attempt reaches it, as an event at that time, so a shared gate learns of a refusal only
//! then.

use std::time::Duration;

use serde::Deserialize;
use stagger_core::engine::Dispersal;

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::RetryAfterForm;
use crate::model::{BudgetScope, Clients, Composed, ConcurrencyLimit, Limiter, Network, RateLimit};
use crate::model::{check_clients, check_window};
use crate::queue::Nanos;
use crate::strategy::Strategy;

/// The throttle's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Throttle {
    /// Requests that start together (without `rate`), at least 1.
    pub clients: u64,
    /// Open arrivals: requests per second, over `duration`. `None` starts `clients` together.
    pub rate: Option<f64>,
    /// How long open arrivals go on.
    pub duration: Duration,
    /// Each request's end-to-end deadline.
    pub timeout: Duration,
    /// The rate limiter's rate, per second.
    pub limit_rate: f64,
    /// The rate limiter's tokens.
    pub limit_burst: u32,
    /// A concurrency limiter instead of the rate limiter, with this many requests in service.
    pub limit_concurrency: Option<u32>,
    /// The fixed wait a refusal tells.
    pub retry_after: Duration,
    /// How the wait is stated.
    #[serde(deserialize_with = "super::params::by_name")]
    pub retry_after_form: RetryAfterForm,
    /// What the clients add above the server's wait.
    #[serde(deserialize_with = "super::params::by_name")]
    pub dispersal: Dispersal,
    /// The window of the peak retry share.
    pub window: Duration,
    /// Whether the clients share one [`Gate`](stagger_core::gate::Gate) for the destination.
    pub gate: bool,
}

impl Default for Throttle {
    fn default() -> Self {
        Self {
            clients: 20,
            rate: None,
            duration: Duration::from_secs(10),
            timeout: Duration::from_secs(3),
            limit_rate: 5.0,
            limit_burst: 1,
            limit_concurrency: None,
            retry_after: Duration::from_secs(1),
            retry_after_form: RetryAfterForm::Fixed,
            dispersal: Dispersal::default(),
            window: Duration::from_millis(10),
            gate: false,
        }
    }
}

/// The policy of the nginx trial: full jitter, base 100 ms, cap 2 s, 4 attempts.
#[must_use]
pub fn trial_strategy() -> Strategy {
    use stagger_core::policy::ExponentialFullJitter;
    Strategy::policy(stagger_core::AnyConfig::from(
        ExponentialFullJitter::new()
            .with_base(Duration::from_millis(100))
            .with_cap(Duration::from_secs(2))
            .with_max_attempts(4),
    ))
}

/// The one-way network delay.
const ONE_WAY: Nanos = 1_000_000;

impl Throttle {
    /// The most requests a run may hold,
    /// [`limits::MAX_THROTTLE_REQUESTS`](crate::limits::MAX_THROTTLE_REQUESTS).
    pub const MAX_CLIENTS: u64 = crate::limits::MAX_THROTTLE_REQUESTS;

    /// How long a concurrency limiter (`limit_concurrency`) takes over each request it admits.
    pub const SERVICE: Duration = Duration::from_millis(100);

    fn requests(&self) -> u64 {
        match self.rate {
            Some(rate) => (rate * self.duration.as_secs_f64()).ceil() as u64,
            None => self.clients,
        }
    }

    /// This workload as the composed model runs it: a fixed population (or one open source
    /// at `rate`) of one-shot clients, each with a budget of its own, a constant one-way
    /// network, and the limiter in front of a dependency that serves whatever it admits.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let limiter = match self.limit_concurrency {
            Some(limit) => Limiter::Concurrency(ConcurrencyLimit {
                limit,
                service: Self::SERVICE,
                retry_after: self.retry_after,
                form: self.retry_after_form,
            }),
            None => Limiter::Rate(RateLimit {
                rate: self.limit_rate,
                burst: self.limit_burst,
                retry_after: self.retry_after,
                form: self.retry_after_form,
            }),
        };
        let clients = match self.rate {
            Some(rate) => Clients::one_source(rate),
            None => Clients::Fixed {
                count: self.clients,
            },
        };
        let network = Network::OneWay(Delay::Constant { nanos: ONE_WAY });
        let mut model = Composed::new(clients, self.duration, network);
        model.dependency.limiter = Some(limiter);
        model.deadline = Some(self.timeout);
        model.budget_scope = BudgetScope::PerRequest;
        model.dispersal = self.dispersal;
        model.gate = self.gate;
        model.window = self.window;
        model
    }
}

impl Workload for Throttle {
    const KIND: WorkloadKind = WorkloadKind::Throttle;

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.requests().max(1), Self::MAX_CLIENTS)?;
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        check_window(self.window)?;
        crate::model::check_duration(self.duration)?;
        if let Some(rate) = self.rate
            && !(rate.is_finite() && rate > 0.0 && rate <= crate::limits::MAX_SOURCE_RATE)
        {
            return Err(SimError::Invalid {
                param: "rate",
                allowed: crate::limits::SOURCE_RATE_ALLOWED,
            });
        }
        crate::model::check_limiter_rate(self.limit_rate, self.limit_burst)?;
        if self.limit_concurrency == Some(0) {
            return Err(SimError::Invalid {
                param: "limit_concurrency",
                allowed: "at least 1",
            });
        }
        if self.timeout.is_zero() || self.timeout > crate::limits::MAX_DURATION {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        if self.retry_after > crate::limits::MAX_DURATION {
            return Err(SimError::Invalid {
                param: "retry_after",
                allowed: crate::limits::AT_MOST_A_DAY,
            });
        }
        Ok(())
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

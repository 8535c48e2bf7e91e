//! # `serial`: closed-loop clients against independent failures
//!
//! The closed clients of Marc Brooker's "What is Backoff For?" (2022), the W3 setup of docs/scoreboard.md, on the
//! server of W2 ([`open_loop`](super::open_loop)). `clients` serial clients (default 100) each
//! have one call in flight and start calls at about `rate` a second (default 10), paced as the
//! source's `SerialClient` paces them ([`Clients::Serial`] says how): a client that spent
//! longer than its draw on a request starts the next at once. Requests start for `duration`
//! (default 10 s); the ones in flight then run to completion. Each attempt takes one round trip drawn from `Exp(mean 10 ms)`, and
//! the server fails it independently with probability `failure_rate` (default 0.5), with a
//! retryable error. Each client holds its own budget.
//!
//! Because a serial client only sends its next request once the previous one is over, time
//! spent backing off is time it does not spend sending first tries. Published: backoff barely
//! changes the amplification (attempts per request) of open clients, but cuts the total
//! attempts of serial clients sharply, mostly by delaying first tries. [`published_strategies`]
//! lists the post's two strategies: "no backoff" (3 immediate retries) and "backoff" (3 retries
//! waiting 0.1 s, doubling). Run them on [`OpenLoop`](super::open_loop::OpenLoop) for the open
//! clients' side of the comparison.
//!
//! A request that the budget refuses outright (only `sre-adaptive` refuses first attempts) ends
//! at once, and the client paces its next one as after any other.
//!
//! It runs on the composed model ([`Composed`]): serial clients, a round trip drawn whole, a
//! failure probability, a budget per client ([`Serial::composed`]).

use std::time::Duration;

use serde::Deserialize;
use stagger_core::AnyConfig;
use stagger_core::policy::{Exponential, Immediate};

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::check_clients;
use crate::model::{Clients, Composed, Network};
use crate::strategy::Strategy;

/// The serial workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Serial {
    /// Serial clients, one call in flight each (1 to [`Serial::MAX_CLIENTS`]).
    pub clients: u64,
    /// The rate at which each client starts calls, when its calls are quick enough, in calls a
    /// second (in (0, 1e5]).
    pub rate: f64,
    /// How long clients start new requests, longer than 0 and at most a day.
    pub duration: Duration,
    /// The server's independent failure probability per attempt, in [0, 1].
    pub failure_rate: f64,
    /// The round trip of one attempt (default `Exp(mean 10 ms)`); its mean must be positive.
    #[serde(skip)]
    pub rtt: Delay,
    /// The window of the peak retry share.
    pub window: Duration,
}

impl Default for Serial {
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

impl Serial {
    /// The most clients, [`limits::MAX_SOURCES`](crate::limits::MAX_SOURCES).
    pub const MAX_CLIENTS: u64 = crate::limits::MAX_SOURCES;
    /// The most attempts a run may need if every request were retried at once
    /// (`clients x duration / mean round trip`),
    /// [`limits::MAX_SERIAL_ATTEMPTS`](crate::limits::MAX_SERIAL_ATTEMPTS).
    pub const MAX_ATTEMPTS: f64 = crate::limits::MAX_SERIAL_ATTEMPTS;
    /// The most events a run may process before it stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = crate::limits::MAX_EVENTS;
}

/// The strategies of Brooker's W3 post: "no backoff" (4 attempts, retried at once) and
/// "backoff" (`exponential`, 4 attempts, 0.1 s doubling: 0.1, 0.2, 0.4 s).
#[must_use]
pub fn published_strategies() -> Vec<(&'static str, Strategy)> {
    let backoff = Exponential::new()
        .with_base(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_attempts(4);
    vec![
        (
            "no backoff",
            Strategy::policy(AnyConfig::from(Immediate::new().with_max_attempts(4))),
        ),
        ("backoff", Strategy::policy(AnyConfig::from(backoff))),
    ]
}

impl Serial {
    /// This workload as the composed model runs it: serial clients, one round trip per
    /// attempt, independent failures, a budget per client.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients = Clients::Serial {
            clients: self.clients,
            rate: self.rate,
        };
        let mut model = Composed::new(clients, self.duration, Network::RoundTrip(self.rtt));
        model.dependency.failure_rate = self.failure_rate;
        model.window = self.window;
        model
    }
}

impl Workload for Serial {
    const KIND: WorkloadKind = WorkloadKind::Serial;

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        // The rest (the rate, the round trip, the attempts a run may need) as the composed
        // model checks them.
        self.composed().validate()
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

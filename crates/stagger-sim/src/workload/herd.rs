//! # `herd`: the thundering herd
//!
//! Every client fails at the same instant, because the dependency it calls has just gone down,
//! and the dependency stays down longer than any policy's patience. Each client retries as its
//! policy says until it gives up. The question is how synchronised the retries are: the metric
//! is the largest share of all retries that fall in any one window (10 ms by default).
//!
//! Model: `clients` clients (default 1000) each send one request at time zero. The network is
//! a constant one-way delay (default 1 ms), the same for everyone, so any spread comes from the
//! policy alone. The server fails every attempt with a retryable error. The catalog's `constant` page reports that
//! `constant` puts about 14 % of all retries into a single 10 ms window on this workload: with
//! 7 retries per client, all synchronised, each wave holds 1/7 of them.
//!
//! The herd is a composition ([`Herd::composed`]): a fixed fleet, a constant one-way network,
//! a dependency that always fails. Its clients cannot affect one another, so the composed model
//! runs each to its end in turn ([`Composed::independent`]), from the same generators in the same
//! order as its event loop would: memory holds one client and every retry's time (for the peak
//! share), 8 bytes each, so 10 million clients at 8 attempts take about 540 MiB. A network that
//! varies (a scenario file may give one) runs through the event loop, every client at once.

use std::time::Duration;

use serde::Deserialize;

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::model::{Clients, Composed, Network, RunOptions};
use crate::strategy::Strategy;

/// The herd's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Herd {
    /// Clients that fail together (at least 1).
    pub clients: u64,
    /// The one-way network delay.
    #[serde(skip)]
    pub network: Delay,
    /// The window of the peak share.
    pub window: Duration,
}

impl Default for Herd {
    fn default() -> Self {
        Self {
            clients: 1_000,
            network: Delay::Constant { nanos: 1_000_000 },
            window: Duration::from_millis(10),
        }
    }
}

impl Herd {
    /// The most clients a herd runs.
    pub const MAX_CLIENTS: u64 = crate::limits::MAX_FIXED_CLIENTS;

    /// The most attempts a herd may make before it is stopped and refused: a policy with no
    /// attempt limit never gives up against a dependency that never recovers.
    pub const MAX_ATTEMPTS: u64 = crate::limits::MAX_INDEPENDENT_ATTEMPTS;

    /// This workload as the composed model runs it: a fixed fleet calling at time zero through
    /// the network, one way each, a dependency that fails every attempt (the run's duration
    /// only bounds when requests start, and every one starts at zero).
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients = Clients::Fixed {
            count: self.clients,
        };
        let mut model = Composed::new(
            clients,
            crate::limits::MAX_DURATION,
            Network::OneWay(self.network),
        );
        model.dependency.failure_rate = 1.0;
        model.window = self.window;
        model
    }
}

impl Workload for Herd {
    const KIND: WorkloadKind = WorkloadKind::Herd;

    /// The composed model's checks: the clients (up to [`Herd::MAX_CLIENTS`]) and the window.
    fn validate(&self) -> Result<(), SimError> {
        self.composed().validate()
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

impl Herd {
    /// Retries sent per `bucket` of time, from time zero to `until`: the herd's shape, for a
    /// plot.
    ///
    /// # Errors
    ///
    /// The parameters' or the policy's [`SimError`].
    pub fn retry_histogram(
        &self,
        strategy: &Strategy,
        seed: u64,
        bucket: Duration,
        until: Duration,
    ) -> Result<Vec<u64>, SimError> {
        self.composed()
            .retry_histogram(strategy, &RunOptions::seed(seed), bucket, until)
    }
}

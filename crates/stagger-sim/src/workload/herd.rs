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

use std::time::Duration;

use stagger_core::engine::Settings;
use stagger_core::{Failure, SeededRng};

use super::call::{Call, Next};
use super::{Overrides, Workload, WorkloadKind, check_clients, check_window};
use crate::dist::Delay;
use crate::error::SimError;
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::Strategy;

/// The herd's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Herd {
    /// Clients that fail together (at least 1).
    pub clients: u64,
    /// The one-way network delay.
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

/// The server's answer to client `c`'s latest attempt reaches it.
struct Answer(u32);

impl Herd {
    /// The most clients a herd runs.
    pub const MAX_CLIENTS: u64 = 10_000_000;

    /// The most attempts a herd may make before it is stopped and refused: a policy with no
    /// attempt limit never gives up against a dependency that never recovers.
    pub const MAX_ATTEMPTS: u64 = 100_000_000;
}

impl Workload for Herd {
    const KIND: WorkloadKind = WorkloadKind::Herd;

    const ACCEPTS: &'static [&'static str] = &["clients", "window"];

    fn set(&mut self, o: &Overrides) {
        self.clients = o.clients.unwrap_or(self.clients);
        self.window = o.window.unwrap_or(self.window);
    }

    fn validate(&self) -> Result<(), SimError> {
        check_clients(self.clients, Self::MAX_CLIENTS)?;
        check_window(self.window)?;
        Ok(())
    }

    fn run(&self, strategy: &Strategy, seed: u64) -> Result<ResultRow, SimError> {
        let mut metrics = self.simulate(strategy, seed)?;
        let window = nanos(self.window);
        Ok(metrics.row(
            strategy.policy.name(),
            strategy.budget.map(|b| b.to_string()),
            window,
        ))
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
        let metrics = self.simulate(strategy, seed)?;
        let bucket = nanos(bucket).max(1);
        let len = usize::try_from(until.as_nanos() / u128::from(bucket))
            .unwrap_or(0)
            .min(1 << 20);
        let mut counts = vec![0u64; len];
        for t in metrics.retry_times {
            if let Some(count) = usize::try_from(t / bucket)
                .ok()
                .and_then(|i| counts.get_mut(i))
            {
                *count += 1;
            }
        }
        Ok(counts)
    }

    fn simulate(&self, strategy: &Strategy, seed: u64) -> Result<Metrics, SimError> {
        self.validate()?;
        let mut world = SeededRng::new(seed);
        let mut net = world.fork();
        let mut metrics = Metrics::new();
        let clients = self.clients as usize;
        let mut calls = Vec::with_capacity(clients);
        let mut queue = EventQueue::with_capacity(clients);
        // Clients are independent (each holds its own budget, and the server answers every
        // attempt the same way), so an attempt's fate is known when it is sent: its answer is
        // scheduled directly, one event per attempt, and the next attempt is sent as soon as
        // the engine decides it, at the time the engine says.
        let mut send = |call: &mut Call,
                        at: Nanos,
                        c: u32,
                        metrics: &mut Metrics,
                        queue: &mut EventQueue<Answer>| {
            if call.begin(at, metrics).is_some() {
                let round_trip = self.network.sample(&mut net) + self.network.sample(&mut net);
                queue.push(at + round_trip, Answer(c));
            }
        };
        let shared = strategy.shared_unlimited();
        for c in 0..clients {
            let budget = match &shared {
                Some(unlimited) => unlimited.clone(),
                None => strategy.client_budget(world.fork()),
            };
            let mut call = Call::start(strategy, world.fork(), budget, Settings::new(), 0)?;
            metrics.first_try();
            send(&mut call, 0, c as u32, &mut metrics, &mut queue);
            calls.push(call);
        }
        while let Some((now, Answer(c))) = queue.pop() {
            metrics.events += 1;
            let call = &mut calls[c as usize];
            if let Next::RetryAt(at) = call.end(now, Err(Failure::Retryable), &mut metrics) {
                if metrics.attempts >= Self::MAX_ATTEMPTS {
                    return Err(SimError::TooLarge {
                        what: "attempts (a policy with no attempt limit never gives up here)",
                        limit: Self::MAX_ATTEMPTS.to_string(),
                    });
                }
                send(call, at, c, &mut metrics, &mut queue);
            }
        }
        Ok(metrics)
    }
}

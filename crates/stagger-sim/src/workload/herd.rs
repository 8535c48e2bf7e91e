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
//! Since the clients do not interact and the constant network draws nothing, each client is run
//! to its end in turn, from the same generators in the same order as if all ran at once through
//! the event queue (which a network that varies still needs): the figures are the same, and
//! memory holds one client and every retry's time (for the peak share), 8 bytes each, so 10
//! million clients at 8 attempts take about 540 MiB.

use std::time::Duration;

use stagger_core::engine::Settings;
use stagger_core::{Failure, SeededRng};

use super::call::{Call, Next};
use super::{
    Overrides, Workload, WorkloadKind, check_clients, check_events, check_window, refuse_hedging,
};
use crate::dist::Delay;
use crate::error::SimError;
use crate::estimate::{Estimate, Plan, count};
use crate::metrics::{Metrics, ResultRow};
use crate::queue::{EventQueue, Nanos, nanos};
use crate::strategy::{Strategy, client_budget_bytes};

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

    /// Every attempt fails, so each client makes every attempt its policy allows (a budget
    /// only holds some back), and each attempt is one event. One client at a time is in
    /// memory, with every retry's time; with a network that varies, every client at once,
    /// with the queue of their answers.
    fn estimate(&self, strategy: &Strategy) -> Estimate {
        let plan = Plan::new(strategy);
        let clients = self.clients as f64;
        // A run past `MAX_ATTEMPTS` is stopped there, with an error; its estimate says what it
        // would take to finish.
        let attempts = clients * plan.max_attempts as f64;
        let retries = self.reserved_retries(strategy) as f64;
        let times = retries * Metrics::STORED_RETRY_BYTES as f64 + Metrics::scratch_bytes(retries);
        let call = Call::bytes() as f64;
        let budget = client_budget_bytes(strategy);
        let bytes = match self.network {
            Delay::Constant { .. } => call + budget + times,
            _ => {
                let queue = EventQueue::<Answer>::bytes_per_pending();
                clients * (call + budget + queue) + times
            }
        };
        Estimate {
            events: count(attempts),
            bytes: count(bytes) + Metrics::fixed_bytes() as u64,
        }
    }

    fn run_within(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        refuse_hedging::<Self>(strategy)?;
        let mut metrics = self.simulate(strategy, seed, max_events)?;
        Ok(metrics.row(
            strategy.policy.name(),
            strategy.budget.map(|b| b.to_string()),
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
        let metrics = self.simulate(strategy, seed, u64::MAX)?;
        let bucket = nanos(bucket).max(1);
        let len = usize::try_from(until.as_nanos() / u128::from(bucket))
            .unwrap_or(0)
            .min(1 << 20);
        let mut counts = vec![0u64; len];
        for &t in metrics.retry_times().unwrap_or_default() {
            if let Some(count) = usize::try_from(t / bucket)
                .ok()
                .and_then(|i| counts.get_mut(i))
            {
                *count += 1;
            }
        }
        Ok(counts)
    }

    /// The retries' times are kept for the peak share, and their room reserved up front:
    /// every retry the policy allows, within the attempt limit.
    fn reserved_retries(&self, strategy: &Strategy) -> usize {
        let per_client = Plan::new(strategy).max_attempts.saturating_sub(1);
        let retries = self
            .clients
            .saturating_mul(per_client)
            .min(Self::MAX_ATTEMPTS);
        usize::try_from(retries).unwrap_or(usize::MAX)
    }

    fn simulate(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Metrics, SimError> {
        self.validate()?;
        let mut metrics = Metrics::unordered(nanos(self.window), self.reserved_retries(strategy));
        match self.network {
            Delay::Constant { nanos: one_way } => {
                self.one_at_a_time(one_way, strategy, seed, max_events, &mut metrics)?;
            }
            _ => self.all_at_once(strategy, seed, max_events, &mut metrics)?,
        }
        Ok(metrics)
    }

    /// With a constant network the clients do not interact: each holds its own budget (or
    /// shares the stateless "no budget"), the server answers every attempt the same way, and
    /// the network draws nothing. So each client is run to its end in turn, in the order
    /// [`Herd::all_at_once`] creates them and from the same generators, which gives the same
    /// attempts, retry times and give-ups with one client in memory instead of all of them.
    fn one_at_a_time(
        &self,
        one_way: Nanos,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
        metrics: &mut Metrics,
    ) -> Result<(), SimError> {
        let mut world = SeededRng::new(seed);
        // The network's generator, forked as in `all_at_once`; a constant draws nothing.
        let _net = world.fork();
        let round_trip = one_way + one_way;
        let shared = strategy.shared_unlimited();
        for _ in 0..self.clients {
            let budget = match &shared {
                Some(unlimited) => unlimited.clone(),
                None => strategy.client_budget(world.fork()),
            };
            let mut call = Call::start(strategy, world.fork(), budget, Settings::new(), 0)?;
            metrics.first_try();
            let mut at = 0;
            while call.begin(at, metrics).is_some() {
                let now = at + round_trip;
                metrics.events += 1;
                check_events(metrics.events, max_events)?;
                match call.end(now, Err(Failure::Retryable), metrics) {
                    Next::RetryAt(next) => {
                        Self::check_attempts(metrics)?;
                        at = next;
                    }
                    Next::Done => break,
                }
            }
        }
        Ok(())
    }

    /// Every client in memory at once, their answers in one queue in time order: needed when
    /// the network draws each delay from one generator, in the order the attempts are sent.
    fn all_at_once(
        &self,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
        metrics: &mut Metrics,
    ) -> Result<(), SimError> {
        let mut world = SeededRng::new(seed);
        let mut net = world.fork();
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
            send(&mut call, 0, c as u32, metrics, &mut queue);
            calls.push(call);
        }
        while let Some((now, Answer(c))) = queue.pop() {
            metrics.events += 1;
            check_events(metrics.events, max_events)?;
            let call = &mut calls[c as usize];
            if let Next::RetryAt(at) = call.end(now, Err(Failure::Retryable), metrics) {
                Self::check_attempts(metrics)?;
                send(call, at, c, metrics, &mut queue);
            }
        }
        Ok(())
    }

    /// Refuses a retry once the herd has made [`Herd::MAX_ATTEMPTS`] attempts.
    fn check_attempts(metrics: &Metrics) -> Result<(), SimError> {
        if metrics.attempts >= Self::MAX_ATTEMPTS {
            return Err(SimError::TooLarge {
                what: "attempts (a policy with no attempt limit never gives up here)",
                limit: Self::MAX_ATTEMPTS.to_string(),
            });
        }
        Ok(())
    }
}

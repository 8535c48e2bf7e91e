//! Clients that cannot affect one another, run one at a time to their end without the event
//! queue, drawing what the event loop would draw in the same order: the same figures in the
//! memory of one request, so that a herd of ten million fits.

use stagger_core::Failure;

use crate::dist::Delay;
use crate::error::SimError;
use crate::metrics::Metrics;
use crate::model::call::{Call, Next};
use crate::model::composed::{Composed, Layer};
use crate::model::parts::{BudgetScope, Clients, Network};
use crate::model::streams::Streams;
use crate::model::validate::check_events;
use crate::queue::{Nanos, nanos};
use crate::strategy::{PolicyTemplate, Strategy};

impl Composed {
    /// The round trip, if the requests of `strategy` cannot affect one another nor draw from a
    /// generator they share, so that each can be run to its end in turn, with no event queue:
    /// fixed clients, a constant network, a dependency of one host that always or never fails,
    /// with no outage and no limiter, no gate, no budget shared by all and no inner layers. A
    /// fleet that meets a dead dependency together (the canonical `herd`) is such a run: it
    /// holds one request at a time and every retry's time, where the event loop would hold
    /// every request.
    /// It draws what the event loop draws, in the same order, and gives the same figures; it
    /// counts one event per attempt (its answer), where the loop counts the request's start,
    /// each attempt's hops and each retry's send.
    #[must_use]
    pub fn independent(&self, strategy: &Strategy, inner: &[Layer]) -> Option<Nanos> {
        let x = self.dependency.failure_rate;
        let shared = self.budget_scope == BudgetScope::Shared && strategy.budget.is_some();
        if !matches!(self.clients, Clients::Fixed { .. })
            || !inner.is_empty()
            || !(x <= 0.0 || x >= 1.0)
            || self.dependency.outage.is_some()
            || self.dependency.limiter.is_some()
            || self.dependency.service.is_some()
            || self.dependency.two_hosts.is_some()
            || self.dependency.replicas.is_some()
            || self.fanout > 1
            || self.drain.is_some()
            || strategy.hedging.is_some()
            || self.gate
            || shared
        {
            return None;
        }
        match self.network {
            Network::RoundTrip(Delay::Constant { nanos }) => Some(nanos),
            Network::OneWay(Delay::Constant { nanos }) => Some(nanos.saturating_mul(2)),
            _ => None,
        }
    }

    /// Runs independent clients ([`Composed::independent`]) one after the other, each to its
    /// end, with the generators the event loop would give them, in its order: the stream of
    /// arrivals, network and failures first (which a constant network and a certain outcome
    /// never draw from), then each request's budget's (if it has its own) and its policy's.
    pub(crate) fn one_at_a_time(
        &self,
        round_trip: Nanos,
        strategy: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<Metrics, SimError> {
        let mut metrics = Metrics::unordered(nanos(self.window), self.reserved_retries(strategy));
        let mut world = Streams::new(seed).one_at_a_time();
        let shared = strategy.shared_unlimited();
        let template = PolicyTemplate::new(&strategy.policy)?;
        let settings = self.settings();
        let fails = self.dependency.failure_rate >= 1.0;
        for _ in 0..self.clients.count() {
            let budget = match &shared {
                Some(none) => none.clone(),
                None => strategy.client_budget(world.fork()),
            };
            let mut call = Call::start(template.start(world.fork()), budget, settings, 0);
            metrics.first_try();
            let mut at = 0;
            loop {
                // The loop asks whether the attempt may go now (`Call::pace`): a gate could hold
                // it, or a server's wait. Neither exists here (no gate, and no answer tells a
                // wait), so the answer is always yes, and asking would cost a tenth of the run.
                debug_assert!(matches!(call.pace(at), Ok(None)));
                let Some(remaining) = call.begin_timed(at, &mut metrics) else {
                    break;
                };
                // An attempt whose time runs out first times out, as in the loop: on a round
                // trip the answer wins a tie, on a one-way network the timeout (it was queued
                // first).
                let left = remaining.map_or(Nanos::MAX, nanos);
                let timed_out = match self.network {
                    Network::RoundTrip(_) => left < round_trip,
                    Network::OneWay(_) => left <= round_trip,
                };
                let now = at.saturating_add(if timed_out { left } else { round_trip });
                metrics.events += 1;
                check_events(metrics.events, max_events)?;
                let result = if timed_out {
                    Err(Failure::Timeout)
                } else if fails {
                    Err(Failure::Retryable)
                } else {
                    Ok(())
                };
                match call.end(now, result, &mut metrics) {
                    Next::RetryAt(next) => {
                        if metrics.attempts >= Self::MAX_INDEPENDENT_ATTEMPTS {
                            return Err(SimError::TooLarge {
                                what: "attempts (a policy with no attempt limit never gives up \
                                       here)",
                                limit: Self::MAX_INDEPENDENT_ATTEMPTS.to_string(),
                            });
                        }
                        at = next;
                    }
                    Next::Done => break,
                }
            }
        }
        Ok(metrics)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use stagger_core::engine::Settings;

    use crate::model::event_loop::Loop;
    use stagger_core::budget::BudgetKind;
    use stagger_core::{AnyConfig, Param, PolicyConfig, PolicyKind};

    use super::*;

    /// Independent clients run one at a time give the event loop's figures, event counts
    /// apart: the same generators in the same order, whatever the policy, the budget, the
    /// deadline, the network's shape and the outcome.
    #[test]
    fn one_at_a_time_is_the_event_loop_without_the_queue() {
        let capped = AnyConfig::from(PolicyKind::Constant)
            .set(Param::MaxAttempts(6))
            .expect("a valid limit");
        let strategies = [
            Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter)),
            Strategy::policy(AnyConfig::from(PolicyKind::DecorrelatedJitter))
                .with_budget(Some(BudgetKind::AwsStandard)),
            Strategy::policy(capped).with_budget(Some(BudgetKind::Brooker)),
        ];
        let mut compared = 0;
        for network in [
            Network::OneWay(Delay::Constant { nanos: 1_000_000 }),
            Network::RoundTrip(Delay::Constant { nanos: 3_000_000 }),
        ] {
            for failure_rate in [1.0, 0.0] {
                for deadline in [None, Some(Duration::from_millis(700))] {
                    // An attempt timeout shorter than the round trip, and one equal to it (a
                    // tie the timeout wins on a one-way network and loses on a round trip).
                    for (scope, attempt_timeout) in [
                        (BudgetScope::PerSource, None),
                        (BudgetScope::PerRequest, None),
                        (BudgetScope::PerSource, Some(Duration::from_millis(2))),
                        (BudgetScope::PerRequest, Some(Duration::from_millis(3))),
                    ] {
                        let mut model = Composed::new(
                            Clients::Fixed { count: 300 },
                            Duration::from_secs(60),
                            network,
                        );
                        model.dependency.failure_rate = failure_rate;
                        model.deadline = deadline;
                        model.attempt_timeout = attempt_timeout;
                        model.budget_scope = scope;
                        for (i, strategy) in strategies.iter().enumerate() {
                            let round_trip =
                                model.independent(strategy, &[]).expect("independent parts");
                            let mut alone = model
                                .one_at_a_time(round_trip, strategy, 7, u64::MAX)
                                .expect("runs");
                            let mut run = Loop::new(&model, strategy, &[], 7, true).expect("made");
                            run.go(u64::MAX).expect("runs");
                            let mut times = run.metrics().retry_times().expect("kept").to_vec();
                            let mut alone_times = alone.retry_times().expect("kept").to_vec();
                            times.sort_unstable();
                            alone_times.sort_unstable();
                            assert_eq!(times, alone_times, "strategy {i}");
                            let mut looped = run.row();
                            let mut row = alone.row(strategy.policy.name(), None);
                            // The timeouts fire where they should: 2 ms cuts every attempt
                            // (a tie on the one-way 2 ms trip, short of the 3 ms round trip),
                            // and 3 ms none (longer than the one-way trip, a tie the round
                            // trip's answer wins).
                            if failure_rate == 0.0 {
                                let fired = attempt_timeout == Some(Duration::from_millis(2));
                                let all = if fired { 0 } else { 300 };
                                assert_eq!(row.successes, all, "{network:?} {attempt_timeout:?}");
                            }
                            assert!(looped.events > row.events);
                            (looped.events, row.events, looped.budget) = (0, 0, None);
                            assert_eq!(
                                looped, row,
                                "strategy {i}, {network:?}, {deadline:?}, {attempt_timeout:?}"
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 96);
    }

    /// Parts through which clients could affect one another, or draw from a shared stream,
    /// run through the event loop.
    #[test]
    fn only_independent_parts_skip_the_queue() {
        let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Exponential));
        let herd = || {
            let mut m = Composed::new(
                Clients::Fixed { count: 10 },
                Duration::from_secs(60),
                Network::OneWay(Delay::Constant { nanos: 1_000 }),
            );
            m.dependency.failure_rate = 1.0;
            m
        };
        assert_eq!(herd().independent(&strategy, &[]), Some(2_000));
        let mut varied = herd();
        varied.network = Network::OneWay(Delay::Exponential { mean: 1_000 });
        let mut uncertain = herd();
        uncertain.dependency.failure_rate = 0.5;
        let mut gated = herd();
        gated.gate = true;
        let mut down = herd();
        down.dependency.outage = Some(crate::model::Window {
            at: Duration::from_secs(1),
            lasts: Duration::from_secs(2),
            retry_after: None,
        });
        let mut open = herd();
        open.clients = Clients::Open {
            sources: 1,
            rate: 10.0,
        };
        for model in [varied, uncertain, gated, down, open] {
            assert_eq!(model.independent(&strategy, &[]), None, "{model:?}");
        }
        let mut shared = herd();
        shared.budget_scope = BudgetScope::Shared;
        assert_eq!(shared.independent(&strategy, &[]), Some(2_000));
        let budgeted = strategy.with_budget(Some(BudgetKind::Brooker));
        assert_eq!(shared.independent(&budgeted, &[]), None);
        let layer = Layer {
            policy: crate::strategy::SimPolicy::Catalog(AnyConfig::from(PolicyKind::Immediate)),
            settings: Settings::new(),
        };
        assert_eq!(herd().independent(&strategy, &[layer]), None);
    }
}

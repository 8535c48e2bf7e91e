//! The sources of requests (open sources or serial clients): each one's generators and budget,
//! when its next request comes, and the budget a request holds.

use std::rc::Rc;

use stagger_core::budget::{AnyBudget, Budget, BudgetPerDestination};
use stagger_core::{Rng, SeededRng};

use crate::dist::exponential;
use crate::error::SimError;
use crate::model::SECOND;
use crate::model::composed::Composed;
use crate::model::hosts::HOSTS;
use crate::model::parts::{BudgetScope, Clients};
use crate::model::streams::{PoolStreams, SourceStreams, Streams};
use crate::per_second::Profile;
use crate::queue::{Nanos, nanos};
use crate::strategy::{SimBudget, Strategy};

/// One source or client: its generators and its budget.
pub(crate) struct Source {
    /// Open: the gaps between arrivals. Serial: the gaps between starts. A budget per request:
    /// the network's delays and the failures too.
    pub(crate) gaps: SeededRng,
    /// The network's delays and the failures; `None` when they come from `gaps`.
    pub(crate) server: Option<SeededRng>,
    /// One generator per request, forked in turn.
    pub(crate) policies: SeededRng,
    pub(crate) budget: SimBudget,
    /// With two hosts and a budget per host: the source's budgets, one per host.
    pub(crate) per_host: Option<Rc<BudgetPerDestination<AnyBudget>>>,
    /// Serial: when its latest request started (or was due to).
    pub(crate) last_start: Nanos,
}

/// A source's budget, and with two hosts and a budget per host its budgets, one per host.
pub(crate) type Budgets = (SimBudget, Option<Rc<BudgetPerDestination<AnyBudget>>>);

impl Source {
    #[inline]
    pub(crate) fn new(
        gaps: SeededRng,
        server: Option<SeededRng>,
        policies: SeededRng,
        (budget, per_host): Budgets,
    ) -> Self {
        Self {
            gaps,
            server,
            policies,
            budget,
            per_host,
            last_start: 0,
        }
    }

    #[inline]
    pub(crate) fn server(&mut self) -> &mut SeededRng {
        self.server.as_mut().unwrap_or(&mut self.gaps)
    }
}

/// The sources of a run, with their generators forked in [`Streams`]' order: when each one's
/// requests come, and the arrivals queued.
pub(crate) struct Sources {
    list: Vec<Source>,
    /// A budget per request: the strategy has one, so each request forks its own.
    budget_each: bool,
    /// The mean gap between a source's arrivals at its peak rate, in nanoseconds.
    mean_gap: f64,
    /// Each source's rate over time and its peak, when it varies: arrivals are then thinned.
    thinning: Option<(Profile, f64)>,
    /// When requests stop starting.
    end: Nanos,
    /// Arrival events queued.
    queued: u64,
}

impl Sources {
    /// The sources `model` has for `strategy`, forked from `streams`, and the pool's streams if
    /// the sources forked them (one open source in front of a pool).
    pub(crate) fn new(
        model: &Composed,
        strategy: &Strategy,
        streams: Streams,
    ) -> Result<(Self, Option<PoolStreams>), SimError> {
        let n = model.clients.count() as usize;
        // One source per request merges the open sources into one Poisson process of their
        // summed rate.
        let merged = match (model.clients, model.per_request()) {
            (Clients::Open { sources, .. }, true) => sources as f64,
            _ => 1.0,
        };
        let profile = model
            .clients
            .rate()
            .map(|rate| model.profile(rate * merged));
        let mean_gap = profile.map_or(f64::INFINITY, |p| SECOND as f64 / p.peak());
        let thinning = profile
            .filter(|p| matches!(model.clients, Clients::Open { .. }) && p.varies())
            .map(|p| (p, p.peak()));
        // With no budget, one "no budget" for all: it holds no state.
        let unlimited = strategy.shared_unlimited();
        let per_host = model
            .dependency
            .two_hosts
            .is_some_and(|h| h.budget_per_host);
        // A source's budget, and with a budget per host its set of them.
        let budget_of = |rng: SeededRng, first: Option<&Source>| -> Result<Budgets, SimError> {
            Ok(match (&unlimited, first, model.budget_scope) {
                (Some(none), _, _) => (none.clone(), None),
                (None, Some(first), BudgetScope::Shared) => {
                    (first.budget.clone(), first.per_host.clone())
                }
                (None, _, _) => match strategy.budget_config().filter(|_| per_host) {
                    Some(config) => {
                        let set = BudgetPerDestination::with(HOSTS.len(), rng, move |rng| {
                            config.build(rng)
                        })?;
                        (None, Some(Rc::new(set)))
                    }
                    None => (strategy.client_budget(rng), None),
                },
            })
        };
        let mut list: Vec<Source> = Vec::with_capacity(model.sources());
        let mut budget_each = false;
        // The pool's streams: after the tail's for one open source, apart otherwise.
        let mut pool_streams: Option<PoolStreams> = None;
        let of =
            |s: SourceStreams, budgets: Budgets| Source::new(s.gaps, s.server, s.policies, budgets);
        if model.per_request() {
            // Each request forks its budget (if there is one), its policy's and its spread's
            // from the source's policies.
            let (s, budget) = streams
                .per_request(unlimited.is_none() && model.budget_scope == BudgetScope::Shared);
            let budgets = match (&unlimited, budget) {
                (Some(none), _) => (none.clone(), None),
                (None, Some(rng)) => budget_of(rng, None)?,
                (None, None) => {
                    budget_each = true;
                    (None, None)
                }
            };
            list.push(of(s, budgets));
        } else {
            match model.clients {
                Clients::Open { sources: 1, .. } if model.dependency.replicas.is_some() => {
                    let (s, budget, pool) = streams.one_source_with_pool();
                    let budgets = budget_of(budget, None)?;
                    list.push(of(s, budgets));
                    pool_streams = Some(pool);
                }
                Clients::Open { sources: 1, .. } => {
                    let (s, budget) = streams.one_source();
                    let budgets = budget_of(budget, None)?;
                    list.push(of(s, budgets));
                }
                clients => {
                    let open = matches!(clients, Clients::Open { .. });
                    let mut streams = streams;
                    for _ in 0..n {
                        let (s, budget) = streams.next_source(open);
                        let budgets = budget_of(budget, list.first())?;
                        list.push(of(s, budgets));
                    }
                }
            }
        }
        let sources = Self {
            list,
            budget_each,
            mean_gap,
            thinning,
            end: nanos(model.duration),
            queued: 0,
        };
        Ok((sources, pool_streams))
    }

    /// The sources.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Source `c`.
    #[inline(always)]
    pub(crate) fn get(&mut self, c: u32) -> &mut Source {
        &mut self.list[c as usize]
    }

    /// The generator of the network's delays and the failures of source `c`.
    #[inline(always)]
    pub(crate) fn server(&mut self, c: usize) -> &mut SeededRng {
        self.list[c].server()
    }

    /// An arrival is queued.
    #[inline(always)]
    pub(crate) fn queued(&mut self) {
        self.queued += 1;
    }

    /// A queued arrival is taken from the queue.
    #[inline(always)]
    pub(crate) fn dequeued(&mut self) {
        self.queued -= 1;
    }

    /// Whether an arrival is queued.
    #[inline(always)]
    pub(crate) const fn any_queued(&self) -> bool {
        self.queued > 0
    }

    /// Open source `c`'s first arrival, if it comes before the end.
    pub(crate) fn first_arrival(&mut self, c: u32) -> Option<Nanos> {
        let gap = exponential(&mut self.list[c as usize].gaps, self.mean_gap) as Nanos;
        (gap < self.end).then_some(gap)
    }

    /// Open source `c`'s candidate arrival at `now`: whether it is kept (with a load that
    /// varies, with probability `rate(now) / peak`, drawn before the next candidate's gap),
    /// and the next one, if it comes before the end.
    #[inline]
    pub(crate) fn arrival(&mut self, c: u32, now: Nanos) -> (bool, Option<Nanos>) {
        let source = &mut self.list[c as usize];
        let mut kept = true;
        if let Some((profile, peak)) = &self.thinning {
            let t = now as f64 / SECOND as f64;
            kept = source.gaps.next_f64() * peak < profile.at(t);
        }
        let next = now.saturating_add(exponential(&mut source.gaps, self.mean_gap) as Nanos);
        (kept, (next < self.end).then_some(next))
    }

    /// When serial client `c`, whose request ended at `now`, starts its next one: a gap of
    /// `Exp(1 / rate)` after its last start, or at once if that has passed; `None` once no
    /// request starts any more.
    pub(crate) fn next_start(&mut self, c: u32, now: Nanos) -> Option<Nanos> {
        let source = &mut self.list[c as usize];
        let gap = exponential(&mut source.gaps, self.mean_gap) as Nanos;
        let at = source.last_start.saturating_add(gap).max(now);
        source.last_start = at;
        (at < self.end).then_some(at)
    }

    /// The budget a request of source `c` to host `host` (an index in [`HOSTS`]) holds: its
    /// own (forked now from the source's policies), its host's with a budget per host, or the
    /// source's.
    #[inline(always)]
    pub(crate) fn budget(&mut self, c: u32, host: usize, strategy: &Strategy) -> SimBudget {
        let source = &mut self.list[c as usize];
        if self.budget_each {
            strategy.client_budget(source.policies.fork())
        } else if let Some(set) = &source.per_host {
            Some(Rc::new(set.for_key(HOSTS[host])) as Rc<dyn Budget>)
        } else {
            source.budget.clone()
        }
    }
}

//! A source of requests (an open source or a serial client): its generators and its budget.

use std::rc::Rc;

use stagger_core::SeededRng;
use stagger_core::budget::{AnyBudget, BudgetPerDestination};

use crate::queue::Nanos;
use crate::strategy::SimBudget;

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

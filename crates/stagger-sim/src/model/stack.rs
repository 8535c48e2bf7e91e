//! The retry stack every request runs while a run goes: the strategy's policy and settings,
//! the inner layers below it, the gate in front of each budget, and the attempt latencies a
//! hedge at a quantile reads.

use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use stagger_core::SeededRng;
use stagger_core::engine::{HedgeDelay, Hedging, Settings};
use stagger_core::gate::{Gate, GatedBudget};
use stagger_core::sketch::LatencySketch;

use crate::error::SimError;
use crate::model::call::{Call, HedgedCall};
use crate::model::composed::{Composed, Layer};
use crate::model::hosts::HOSTS;
use crate::queue::Nanos;
use crate::strategy::{PolicyTemplate, SimBudget, Strategy};

/// The stack: the outermost layer (the strategy's), the inner ones, and the gate.
pub(crate) struct Stack<'a> {
    strategy: &'a Strategy,
    /// The strategy's policy, built once: each request runs a copy.
    template: PolicyTemplate,
    /// The engine's settings for each request.
    settings: Settings,
    /// The inner layers, outermost first.
    layers: &'a [Layer],
    /// The inner layers' budget: none.
    no_budget: SimBudget,
    /// The inner layers' policy generators, one per inner run in turn: a stream of its own,
    /// so that a stack whose inner layers never retry draws what its outer layer alone does.
    layer_rngs: SeededRng,
    gate: Option<Arc<Gate>>,
    /// Whether an attempt may have to wait before it goes: a gate, or a dependency that tells
    /// waits.
    may_wait: bool,
    /// The fleet's attempt latencies, for a hedge delay at a quantile.
    sketch: LatencySketch,
}

impl<'a> Stack<'a> {
    /// The stack of `strategy` with `layers` inside it, as `model` runs it; the inner layers
    /// draw from `layer_rngs`.
    pub(crate) fn new(
        model: &Composed,
        strategy: &'a Strategy,
        layers: &'a [Layer],
        layer_rngs: SeededRng,
    ) -> Result<Self, SimError> {
        Ok(Self {
            strategy,
            template: PolicyTemplate::new(&strategy.policy)?,
            settings: model.settings(),
            layers,
            no_budget: None,
            layer_rngs,
            gate: if model.gate {
                Some(Arc::new(Gate::new(HOSTS.len())?))
            } else {
                None
            },
            may_wait: model.gate || model.dependency.tells_waits(),
            sketch: LatencySketch::new(),
        })
    }

    /// The strategy.
    #[inline(always)]
    pub(crate) const fn strategy(&self) -> &'a Strategy {
        self.strategy
    }

    /// Whether an attempt may have to wait before it goes: only a gate or a server's wait can
    /// hold one back.
    #[inline(always)]
    pub(crate) const fn may_wait(&self) -> bool {
        self.may_wait
    }

    /// `budget` behind the gate for `key`, if the clients share one.
    #[inline(always)]
    pub(crate) fn gated(&self, budget: SimBudget, key: &'static str) -> SimBudget {
        match &self.gate {
            Some(gate) => Some(Rc::new(GatedBudget::new(budget, Arc::clone(gate), key))),
            None => budget,
        }
    }

    /// The outermost layer's run of a request from `now`, its policy drawing from `rng`.
    #[inline(always)]
    pub(crate) fn call(&self, rng: SeededRng, budget: SimBudget, now: Nanos) -> Call {
        Call::start(self.template.start(rng), budget, self.settings, now)
    }

    /// A hedged request's run from `now` by `hedging`, its policy drawing from `rng` and its
    /// spread above a server's wait from `spread`, with the delay measured so far for a delay
    /// at a quantile.
    pub(crate) fn hedged_call(
        &self,
        hedging: Hedging,
        rng: SeededRng,
        dispersal_rng: Option<SeededRng>,
        budget: SimBudget,
        now: Nanos,
    ) -> Result<HedgedCall, SimError> {
        let measured = match hedging.delay() {
            HedgeDelay::Quantile(q) => self.sketch.quantile(q),
            _ => None,
        };
        HedgedCall::start(
            self.template.start(rng),
            hedging,
            measured,
            dispersal_rng,
            budget,
            self.settings,
            now,
        )
    }

    /// The run of the layer at `depth` below the outermost (`None` below the innermost) that
    /// an attempt of the layer above starts at `now`: within the time that attempt has,
    /// `remaining`, and its own deadline if that is sooner, as an executor's attempt is raced
    /// against it.
    #[inline]
    pub(crate) fn inner(
        &mut self,
        depth: usize,
        remaining: Option<Duration>,
        now: Nanos,
    ) -> Result<Option<Call>, SimError> {
        let Some(layer) = self.layers.get(depth) else {
            return Ok(None);
        };
        let mut settings = layer.settings;
        if let Some(left) = remaining {
            let within = settings.timeout().map_or(left, |own| own.min(left));
            settings = settings.with_timeout(within);
        }
        let mut call = Call::start(
            layer.policy.running(self.layer_rngs.fork())?,
            self.no_budget.clone(),
            settings,
            now,
        );
        call.nest();
        Ok(Some(call))
    }

    /// A generator for an inner run's spread above a server's wait, from the inner layers'
    /// stream.
    #[inline]
    pub(crate) fn layer_rng(&mut self) -> SeededRng {
        self.layer_rngs.fork()
    }

    /// An attempt took `latency`: a hedge at a quantile reads it.
    #[inline]
    pub(crate) fn measured(&mut self, latency: Nanos) {
        self.sketch.record(Duration::from_nanos(latency));
    }
}

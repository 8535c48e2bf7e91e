//! [`Hooks`]: the parts a retry is driven with, gathered in one type.

use std::fmt;

use std::sync::Arc;

use stagger_core::Clock;
use stagger_core::budget::{Budget, PerDestination, Unlimited};
use stagger_core::gate::{Gate, GatedBudget, GatedPerDestination};

use crate::classify::{ByKind, Classifier, ClassifyOk};
use crate::clock::DefaultClock;
use crate::notify::Notify;
use crate::operation::Operation;
use crate::sleep::DefaultSleeper;

/// The parts a retry is driven with, beside its policy and settings: the error classifier `C`,
/// the value classifier `V`, the sleeper `S`, the clock `K`, the budget `B` and the hook `N`.
///
/// The builders replace one part at a time ([`classify`](crate::Retry::classify),
/// [`classify_ok`](crate::Retry::classify_ok), [`sleeper`](crate::Retry::sleeper),
/// [`clock`](crate::Retry::clock), [`budget`](crate::Retry::budget),
/// [`notify`](crate::Retry::notify)), so this type is rarely written out; gathering the parts
/// in one parameter keeps the executors' types, and the compiler's messages about them, short.
///
/// The defaults: errors classify themselves ([`ByKind`]), every `Ok` is a success (`()`),
/// the async default sleeper and clock (tokio's with the `tokio` feature), no budget
/// ([`Unlimited`]) and no hook (`()`).
#[derive(Clone, Copy, Default)]
pub struct Hooks<C = ByKind, V = (), S = DefaultSleeper, K = DefaultClock, B = Unlimited, N = ()> {
    pub(crate) classifier: C,
    pub(crate) ok: V,
    pub(crate) sleeper: S,
    pub(crate) clock: K,
    pub(crate) budget: B,
    pub(crate) notify: N,
}

impl<C, V, S, K, B, N> fmt::Debug for Hooks<C, V, S, K, B, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("classifier", &std::any::type_name::<C>())
            .field("ok", &std::any::type_name::<V>())
            .field("sleeper", &std::any::type_name::<S>())
            .field("clock", &std::any::type_name::<K>())
            .field("budget", &std::any::type_name::<B>())
            .field("notify", &std::any::type_name::<N>())
            .finish()
    }
}

impl<S, K> Hooks<ByKind, (), S, K> {
    /// The default hooks with this sleeper and clock.
    pub(crate) const fn with_time(sleeper: S, clock: K) -> Self {
        Self {
            classifier: ByKind,
            ok: (),
            sleeper,
            clock,
            budget: Unlimited,
            notify: (),
        }
    }
}

/// Writes the methods that replace one part of a [`Hooks`]: each takes the new part and keeps
/// the others.
macro_rules! replace_part {
    ($($(#[$doc:meta])* fn $method:ident($part:ident: $T:ident) -> Hooks<$($P:ident),*>
        keeps $($kept:ident),*;)*) => {$(
        $(#[$doc])*
        pub(crate) fn $method<$T>(self, $part: $T) -> Hooks<$($P),*> {
            let Self { $($kept,)* .. } = self;
            Hooks { $part, $($kept),* }
        }
    )*};
}

impl<C, V, S, K, B, N> Hooks<C, V, S, K, B, N> {
    replace_part! {
        /// These hooks with another error classifier.
        fn classifier(classifier: C2) -> Hooks<C2, V, S, K, B, N>
            keeps ok, sleeper, clock, budget, notify;
        /// These hooks with another value classifier.
        fn ok(ok: V2) -> Hooks<C, V2, S, K, B, N> keeps classifier, sleeper, clock, budget, notify;
        /// These hooks with another sleeper.
        fn sleeper(sleeper: S2) -> Hooks<C, V, S2, K, B, N> keeps classifier, ok, clock, budget, notify;
        /// These hooks with another clock.
        fn clock(clock: K2) -> Hooks<C, V, S, K2, B, N> keeps classifier, ok, sleeper, budget, notify;
        /// These hooks with another budget.
        fn budget(budget: B2) -> Hooks<C, V, S, K, B2, N> keeps classifier, ok, sleeper, clock, notify;
        /// These hooks with another retry hook.
        fn notify(notify: N2) -> Hooks<C, V, S, K, B, N2> keeps classifier, ok, sleeper, clock, budget;
    }

    /// These hooks with their budget replaced by what `f` makes of it.
    pub(crate) fn map_budget<B2>(self, f: impl FnOnce(B) -> B2) -> Hooks<C, V, S, K, B2, N> {
        let Self {
            classifier,
            ok,
            sleeper,
            clock,
            budget,
            notify,
        } = self;
        Hooks {
            classifier,
            ok,
            sleeper,
            clock,
            budget: f(budget),
            notify,
        }
    }
}

/// The hooks of one request of a layer whose hooks are `H`: the same parts, with the budget
/// for the request's destination ([`PerDestination`]).
#[cfg(feature = "tower")]
pub(crate) type PerRequest<H> = Hooks<
    <H as HookSet>::Classifier,
    <H as HookSet>::Ok,
    <H as HookSet>::Sleeper,
    <H as HookSet>::Clock,
    <<H as HookSet>::Budget as PerDestination>::Budget,
    <H as HookSet>::Notify,
>;

/// The hooks of a request to the destination `key` names, from a layer's hooks.
#[cfg(feature = "tower")]
#[inline]
pub(crate) fn per_request<H>(hooks: &H, key: impl FnOnce() -> Arc<str>) -> PerRequest<H>
where
    H: HookSet + Clone,
    H::Budget: PerDestination,
{
    let hooks = hooks.clone().into_parts();
    let budget = hooks.budget.for_destination(key);
    hooks.budget(budget)
}

/// What a run's budget is made of, from the budget its front end holds: the budget itself, or
/// for a front end behind a gate ([`Gated`]), a [`GatedBudget`] under the run's destination.
/// The executors ask for it once per run, when it starts; implemented by every [`Budget`] and
/// by [`Gated`] alone.
pub trait RunBudget: sealed::RunBudget {
    /// The budget of one run.
    type Budget: Budget;

    /// The budget of one run.
    #[doc(hidden)]
    fn for_run(self) -> Self::Budget;
}

impl<B: Budget> RunBudget for B {
    type Budget = B;

    #[inline(always)]
    fn for_run(self) -> B {
        self
    }
}

/// A budget `B` behind a [`Gate`]: what `.gate(gate)` makes of the budget set before it, on
/// every front end. Each run's budget is a [`GatedBudget`] under the run's destination: the
/// executors' [`destination`](crate::Retry::destination) (one key for all runs that name
/// none), or each request's host and port in the HTTP layers, whose budget `B` is a
/// [`PerDestination`] ([`GatedPerDestination`] hands each request its own).
#[derive(Clone, Debug)]
pub struct Gated<B> {
    budgets: GatedPerDestination<B>,
    /// An executor's destination, if it names one.
    destination: Option<Arc<str>>,
}

impl<B> Gated<B> {
    /// `budget` behind `gate`.
    pub(crate) fn new(gate: Arc<Gate>, budget: B) -> Self {
        Self {
            budgets: GatedPerDestination::new(gate, budget),
            destination: None,
        }
    }

    /// The same, for a run to the destination `key` names.
    pub(crate) fn to(&mut self, key: Arc<str>) {
        self.destination = Some(key);
    }
}

impl<B: Budget> RunBudget for Gated<B> {
    type Budget = GatedBudget<B>;

    #[inline]
    fn for_run(self) -> GatedBudget<B> {
        // One key, shared, for every run of a gate that names no destination.
        static UNNAMED: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
        let key = self
            .destination
            .unwrap_or_else(|| Arc::clone(UNNAMED.get_or_init(|| Arc::from(""))));
        self.budgets.into_budget(key)
    }
}

impl<D: PerDestination> PerDestination for Gated<D> {
    type Budget = GatedBudget<D::Budget>;

    #[inline]
    fn for_destination(&self, key: impl FnOnce() -> Arc<str>) -> Self::Budget {
        self.budgets.for_destination(key)
    }
}

/// Names the parts of a [`Hooks`], so that the executors' types need one parameter for all
/// of them. Implemented by [`Hooks`] alone.
pub trait HookSet: sealed::Sealed {
    /// The error classifier.
    type Classifier;
    /// The value classifier.
    type Ok;
    /// The sleeper.
    type Sleeper;
    /// The clock.
    type Clock;
    /// The budget.
    type Budget;
    /// The retry hook.
    type Notify;

    /// The parts, apart.
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn into_parts(
        self,
    ) -> Hooks<Self::Classifier, Self::Ok, Self::Sleeper, Self::Clock, Self::Budget, Self::Notify>;

    /// The parts, borrowed.
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    fn parts(
        &self,
    ) -> Hooks<
        &Self::Classifier,
        &Self::Ok,
        &Self::Sleeper,
        &Self::Clock,
        &Self::Budget,
        &Self::Notify,
    >;
}

impl<C, V, S, K, B, N> sealed::Sealed for Hooks<C, V, S, K, B, N> {}

impl<C, V, S, K, B, N> HookSet for Hooks<C, V, S, K, B, N> {
    type Classifier = C;
    type Ok = V;
    type Sleeper = S;
    type Clock = K;
    type Budget = B;
    type Notify = N;

    #[inline(always)]
    fn into_parts(self) -> Self {
        self
    }

    #[inline(always)]
    fn parts(&self) -> Hooks<&C, &V, &S, &K, &B, &N> {
        Hooks {
            classifier: &self.classifier,
            ok: &self.ok,
            sleeper: &self.sleeper,
            clock: &self.clock,
            budget: &self.budget,
            notify: &self.notify,
        }
    }
}

/// Hooks fit to drive the operation `O`: an error classifier of its errors, a value classifier
/// of its values, a clock, a budget and a hook of both. Every [`Hooks`] whose parts fit is one;
/// the executors' bounds say `H: HooksFor<O>` rather than each part's.
pub trait HooksFor<O: Operation>:
    HookSet<
        Classifier: Classifier<O::Error>,
        Ok: ClassifyOk<O::Value>,
        Clock: Clock,
        Budget: RunBudget,
        Notify: Notify<O::Value, O::Error>,
    >
{
}

impl<O, H> HooksFor<O> for H
where
    O: Operation,
    H: HookSet,
    H::Classifier: Classifier<O::Error>,
    H::Ok: ClassifyOk<O::Value>,
    H::Clock: Clock,
    H::Budget: RunBudget,
    H::Notify: Notify<O::Value, O::Error>,
{
}

mod sealed {
    /// Keeps [`HookSet`](super::HookSet) implemented by [`Hooks`](super::Hooks) alone.
    pub trait Sealed {}

    /// Keeps [`RunBudget`](super::RunBudget) implemented by the budgets and
    /// [`Gated`](super::Gated) alone.
    pub trait RunBudget {}

    impl<B: super::Budget> RunBudget for B {}
    impl<B> RunBudget for super::Gated<B> {}
}

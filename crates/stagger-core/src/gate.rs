//! [`Gate`]: one shared pacer per destination, so that calls told "not before T" come back one
//! at a time.
//!
//! A rate limiter that refuses a fleet tells each client the same time. Dispersing each client's
//! retry at random above that time ([`Dispersal`](crate::engine::Dispersal)) avoids a single
//! wave, but arrivals at random still leave slots empty and collide in others. A gate shared by
//! every call to one destination (an `Arc<Gate>`, like a budget) does better: once any call to
//! it is throttled, every other call to it, first attempts included, waits for a slot of its
//! own, and the slots are paced.
//!
//! Pacing learns the destination's rate from what it answers: the first spacing is a quarter
//! of the server's wait; a call served in its turn shortens it by a tenth (never below 1/64 of
//! the wait), a call throttled in its turn doubles it (to at least a quarter, at most all of
//! the wait), and a straggler of the first wave, sent before the pacing began, leaves it alone.
//! A server that asks for a longer wait than before closes the gate for that long. A
//! destination that stops throttling is forgotten one server wait after its last slot. The set
//! of destinations is bounded: a gate holds at most `capacity` of them and forgets the one idle
//! longest to make room, so a flood of distinct hosts cannot grow its memory (the same bounded
//! table as [`BudgetPerDestination`](crate::budget::BudgetPerDestination)'s).
//!
//! Time comes from the caller's `now`, as for a budget: a gate is deterministic under a manual
//! clock and in the simulator. It binds to the timeline of the first run's clock
//! ([`Gate::bind`]): a run whose clock is on another timeline is refused before its first
//! attempt, rather than paced against times it cannot compare with its own.
//!
//! A run meets the gate through its budget. Two types put a gate in front of budgets, one per
//! request and one per layer: a [`GatedBudget`] is one request's budget behind the gate, under its
//! destination's key, and a [`GatedPerDestination`] is what a layer serving many destinations
//! holds, handing each request a [`GatedBudget`] under the request's own key (a [`PerDestination`],
//! like every set of budgets by destination). The engine asks a [`GatedBudget`] for a slot before
//! each attempt ([`Run::ready`](crate::engine::Run::ready)), which it answers with a [`Slot`] (the
//! type of [`Budget::slot`]), tells it of every server wait and success, and hands back a slot it
//! will not use. Every front end takes one with `.gate(gate)`: the executors key it by their
//! `.destination(key)`, the tower layer and the reqwest middleware by each request's host and port. The simulator's
//! `throttle` workload measures it (`stagger simulate --workload throttle --gate`).
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::budget::Slot;
//! use stagger_core::gate::Gate;
//! use stagger_core::Timestamp;
//!
//! let gate = Gate::new(64)?;
//! let t0 = Timestamp::ZERO;
//! assert_eq!(gate.slot("api.example", t0, None), Slot::Now); // nothing known: go
//! gate.throttled("api.example", t0, Duration::from_secs(1), true); // a 429, "1 second"
//! // Every later call waits for a slot of its own, a quarter of a second apart.
//! let at = |ms| Timestamp::from_duration(Duration::from_millis(ms));
//! assert_eq!(gate.slot("api.example", t0, None), Slot::At(at(1_000)));
//! assert_eq!(gate.slot("api.example", t0, None), Slot::At(at(1_250)));
//! // A slot past the caller's deadline is not taken.
//! assert_eq!(gate.slot("api.example", t0, Some(at(1_400))), Slot::PastDeadline(at(1_500)));
//! // Other destinations are not held up.
//! assert_eq!(gate.slot("cdn.example", t0, None), Slot::Now);
//! # Ok::<(), stagger_core::ConfigError>(())
//! ```

use std::cell::Cell;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::budget::{Budget, PerDestination, Slot, Spent};
use crate::clock::{Timeline, TimelineBinding, Timestamp};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::keyed::Keyed;

/// What the gate knows of one destination.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// No call before this time: the latest wait a server gave before pacing began.
    closed_until: Timestamp,
    /// The latest slot handed out.
    last_slot: Option<Timestamp>,
    /// The time between slots.
    spacing: Duration,
    /// The server's latest wait: the longest spacing, and how long an idle entry is kept.
    asked: Duration,
    /// The last time the entry was used.
    touched: Timestamp,
}

impl Entry {
    /// The time after which the entry is of no use: one server wait after its last slot.
    fn idle_after(&self) -> Timestamp {
        self.last_slot
            .unwrap_or(self.closed_until)
            .max(self.closed_until)
            .saturating_add(self.asked)
    }
}

/// One pacer per destination, shared by every call to any of them. See the [module
/// docs](self).
pub struct Gate {
    table: Mutex<Keyed<Entry>>,
    /// The timeline of the times in the table.
    timeline: TimelineBinding,
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let capacity = self.table().capacity();
        f.debug_struct("Gate")
            .field("capacity", &capacity)
            .field("table", &self.table)
            .field("timeline", &self.timeline)
            .finish()
    }
}

/// The first spacing is this fraction of the server's wait.
const FIRST_SPACING: u32 = 4;
/// A call served in its slot shortens the spacing to this many tenths.
///
/// (Shortening by a fifth and lengthening by a quarter on a refusal, instead of doubling,
/// served more in the simulator under open arrivals, but fewer against the real rate limiter
/// of the loopback tests, whose timing jitters by milliseconds: it kept the spacing just under
/// the limiter's for longer.)
const SHORTEN_TENTHS: u32 = 9;
/// The spacing never falls below the server's wait divided by this.
const MIN_SPACING_DIVISOR: u32 = 64;

impl Gate {
    /// The most destinations a gate may hold. Making room scans the table, under the lock.
    pub const MAX_CAPACITY: usize = crate::limits::MAX_DESTINATIONS;

    /// A gate that remembers up to `capacity` destinations (1 to [`Gate::MAX_CAPACITY`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for a capacity of 0 or above the maximum.
    pub fn new(capacity: usize) -> Result<Self, ConfigError> {
        Ok(Self {
            table: Mutex::new(Keyed::new("capacity", capacity)?),
            timeline: TimelineBinding::new(),
        })
    }

    fn table(&self) -> MutexGuard<'_, Keyed<Entry>> {
        // Every update leaves the table valid, so a poisoned lock is safe to reuse.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Binds the gate to the timeline of the runs that use it: the first run's, for good.
    /// The executors call it once per run through [`Budget::bind`] on [`GatedBudget`]; a caller of
    /// [`slot`](Gate::slot) and the others directly passes times of one timeline itself.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TimelineMismatch`] if the gate already keeps times of another timeline.
    pub fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        self.bind_with(timeline, || Ok(()))
    }

    /// Binds the gate to `timeline` together with what `behind` binds (the budget behind the
    /// gate), all or nothing: a run refused by either binds neither. Otherwise a run whose
    /// budget refuses its timeline would leave a fresh gate bound to that timeline, and every
    /// later run on the right clock would be refused for good.
    ///
    /// A bound gate never changes, so it is checked first, without a lock: bound to
    /// `timeline`, only `behind` is left to bind; bound to another, nothing is. An unbound gate
    /// is bound under one lock of the process, taken only by a gate's first runs, so that no
    /// other run can bind it between `behind` and the gate: `behind` binds first, and the
    /// gate only if `behind` accepted. The lock is taken once per thread: a budget behind the
    /// gate that is itself behind a gate binds under the same lock.
    fn bind_with(
        &self,
        timeline: Timeline,
        behind: impl FnOnce() -> Result<(), ConfigError>,
    ) -> Result<(), ConfigError> {
        match self.timeline.bound() {
            Some(bound) if bound == timeline => behind(),
            Some(_) => self.timeline.bind(timeline),
            None => first_binding(|| {
                if self.timeline.bound().is_none_or(|bound| bound == timeline) {
                    behind()?;
                }
                // Unbound until now, under the lock: binding it cannot fail, but for a gate
                // bound meanwhile to another timeline, whose error this is.
                self.timeline.bind(timeline)
            }),
        }
    }

    /// The destinations the gate holds now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table().len()
    }

    /// Whether the gate holds no destination.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.table().is_empty()
    }

    /// When a call to `key` asked for at `now` may be sent: now, at a slot reserved for it, or
    /// not before a time past `deadline` (then nothing is reserved, and the caller gives up).
    pub fn slot(&self, key: &str, now: Timestamp, deadline: Option<Timestamp>) -> Slot {
        self.take_slot(key, now, deadline).0
    }

    /// [`slot`](Gate::slot), and whether the destination was being paced: whether the call,
    /// once sent, is sent in its turn, as [`throttled`](Gate::throttled) and
    /// [`served`](Gate::served) want to know of its answer.
    pub fn take_slot(
        &self,
        key: &str,
        now: Timestamp,
        deadline: Option<Timestamp>,
    ) -> (Slot, bool) {
        let mut table = self.table();
        let Some(entry) = table.get_mut(key) else {
            return (Slot::Now, false);
        };
        if now >= entry.idle_after() {
            table.remove(key);
            return (Slot::Now, false);
        }
        let next = entry
            .last_slot
            .map_or(entry.closed_until, |last| {
                last.saturating_add(entry.spacing)
            })
            .max(entry.closed_until);
        if now >= next {
            entry.last_slot = Some(now);
            entry.touched = now;
            return (Slot::Now, true);
        }
        if deadline.is_some_and(|d| next >= d) {
            return (Slot::PastDeadline(next), true);
        }
        entry.last_slot = Some(next);
        entry.touched = now;
        (Slot::At(next), true)
    }

    /// A call to `key` was told at `now` not to come back before `wait` has passed (a 429 or
    /// 503 with a server wait). `in_turn`: the call was sent in a slot of this gate's pacing.
    /// A call sent before the pacing began, whose refusal comes back after (a straggler of
    /// the first wave), says nothing of the spacing and leaves it alone.
    pub fn throttled(&self, key: &str, now: Timestamp, wait: Duration, in_turn: bool) {
        let mut table = self.table();
        // A destination idle for a whole server wait starts afresh.
        if table.get(key).is_some_and(|e| now >= e.idle_after()) {
            table.remove(key);
        }
        if let Some(entry) = table.get_mut(key) {
            let until = now.saturating_add(wait);
            entry.touched = now;
            match entry.last_slot {
                // Throttled in its slot: the slots are too close. A server that now asks for a
                // longer wait than before closes the gate for that long.
                Some(_) if in_turn => {
                    entry.spacing = entry
                        .spacing
                        .saturating_mul(2)
                        .max(wait / FIRST_SPACING)
                        .min(wait);
                    if wait > entry.asked {
                        entry.closed_until = entry.closed_until.max(until);
                    }
                }
                // A straggler: only a longer wait than before tells the gate something.
                Some(_) => {
                    if wait > entry.asked {
                        entry.closed_until = entry.closed_until.max(until);
                    }
                }
                // Not paced yet: the first refusals of a wave close the gate until the latest.
                None => entry.closed_until = entry.closed_until.max(until),
            }
            entry.asked = wait;
            return;
        }
        // A full table forgets the destination idle longest: any may go, so there is room.
        table.insert(
            key,
            |e| e.touched,
            |_| true,
            || Entry {
                closed_until: now.saturating_add(wait),
                last_slot: None,
                spacing: wait / FIRST_SPACING,
                asked: wait,
                touched: now,
            },
        );
    }

    /// Whether the gate has closed for `key` past `at` since: a server asked for a longer wait
    /// after the slot at `at` was reserved.
    fn closed_after(&self, key: &str, at: Timestamp) -> bool {
        self.table()
            .get(key)
            .is_some_and(|entry| entry.closed_until > at)
    }

    /// The slot reserved for a call to `key` at `at` ([`Slot::At`]) will not be used: if no
    /// later slot was handed out since, the next caller may have it.
    pub fn release(&self, key: &str, at: Timestamp) {
        if let Some(entry) = self.table().get_mut(key)
            && entry.last_slot == Some(at)
        {
            entry.last_slot = Some(Timestamp::from_duration(
                at.since_origin().saturating_sub(entry.spacing),
            ));
        }
    }

    /// A call to `key` was served at `now`: if the destination is paced and the call was sent
    /// in its turn (`in_turn`, as for [`throttled`](Gate::throttled)), its slots come a little
    /// closer.
    pub fn served(&self, key: &str, now: Timestamp, in_turn: bool) {
        if let Some(entry) = self.table().get_mut(key)
            && entry.last_slot.is_some()
            && in_turn
        {
            // Divided first, so that a huge spacing cannot overflow; never below the floor.
            let shorter = entry.spacing / 10 * SHORTEN_TENTHS;
            entry.spacing = shorter.max(entry.asked / MIN_SPACING_DIVISOR);
            entry.touched = now;
        }
    }
}

/// Runs `bind` under the lock of gates' first bindings ([`Gate::bind_with`]), taken once per
/// thread: a binding under way on this thread (a gate behind a gate) already holds it.
fn first_binding<T>(bind: impl FnOnce() -> T) -> T {
    static FIRST_BINDINGS: Mutex<()> = Mutex::new(());
    thread_local! {
        static HELD: Cell<bool> = const { Cell::new(false) };
    }
    /// Marks the lock held by this thread while it lives, even through a panic.
    struct Held;
    impl Drop for Held {
        fn drop(&mut self) {
            HELD.with(|held| held.set(false));
        }
    }
    if HELD.with(Cell::get) {
        return bind();
    }
    // Nothing is kept under the lock, so a poisoned one is safe to reuse.
    let _lock = FIRST_BINDINGS.lock().unwrap_or_else(|e| e.into_inner());
    HELD.with(|held| held.set(true));
    let _held = Held;
    bind()
}

/// A budget with a gate in front: the calls of a run to one destination (`key`) are paced by
/// a [`Gate`] shared with every other call, and `B` decides their retries as before.
///
/// The engine asks the gate for a slot before each attempt, tells it of every server wait
/// (capped at the longest wait the run honours) and of every success, and gives back a slot it
/// will not use. A run with a gate is still told the server's wait for its own retry, and its
/// [`Dispersal`](crate::engine::Dispersal) still disperses it: the gate only holds an attempt
/// later, never sends one sooner.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use stagger_core::budget::Unlimited;
/// use stagger_core::engine::{Ready, Run, Settings};
/// use stagger_core::gate::{Gate, GatedBudget};
/// use stagger_core::policy::Immediate;
/// use stagger_core::{PolicyConfig, SeededRng, Timestamp};
///
/// let gate = Arc::new(Gate::new(64)?);
/// let t0 = Timestamp::ZERO;
/// // One call to "api" is told to come back in a second...
/// gate.throttled("api", t0, Duration::from_secs(1), true);
/// // ...so another one waits for a slot before its first attempt.
/// let budget = GatedBudget::new(Unlimited, Arc::clone(&gate), "api");
/// let policy = Immediate::new().build(SeededRng::new(1))?;
/// let mut run = Run::with_budget(policy, budget, Settings::new(), t0);
/// assert_eq!(run.ready(t0), Ready::Wait(Duration::from_secs(1)));
/// let t1 = Timestamp::from_duration(Duration::from_secs(1));
/// assert_eq!(run.ready(t1), Ready::Go);
/// assert_eq!(run.begin(t1).map(|a| a.number), Ok(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A `GatedBudget` belongs to one run: it remembers the slot it reserved for the run's next
/// attempt, and hands it back if the run ends, or is dropped, before the attempt. Make one per call
/// (the executors' `.gate(gate).destination(key)` and the HTTP layers do, and [`GatedPerDestination`] does
/// for a layer); share the [`Gate`]. So that two runs cannot share one by mistake, it is neither
/// `Clone` nor `Sync`.
///
/// A slot handed back goes to the next caller only if no later slot was handed out since;
/// otherwise it is a slot the destination does not get.
pub struct GatedBudget<B> {
    budget: B,
    gate: Arc<Gate>,
    key: Arc<str>,
    /// What the run holds of the gate.
    turn: Cell<Turn>,
}

/// What one run holds of a gate, for its next attempt.
#[derive(Clone, Copy, Debug, Default)]
struct Turn {
    /// Whether the gate was asked for the attempt's slot.
    asked: bool,
    /// The slot reserved for it, until it begins.
    reserved: Option<Timestamp>,
    /// Whether the run's latest attempt was sent in its turn: its slot was given while the
    /// destination was paced.
    in_turn: bool,
}

impl<B> GatedBudget<B> {
    /// `budget`, with the calls to `key` paced by `gate`.
    pub fn new(budget: B, gate: Arc<Gate>, key: impl Into<Arc<str>>) -> Self {
        Self {
            budget,
            gate,
            key: key.into(),
            turn: Cell::new(Turn::default()),
        }
    }

    /// The destination's key.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The budget behind the gate.
    #[must_use]
    pub fn budget(&self) -> &B {
        &self.budget
    }

    /// Hands the reserved slot, if any, back to the gate: the attempt it was for is not made.
    fn give_back(&self) {
        let mut turn = self.turn.get();
        if let Some(at) = turn.reserved.take() {
            self.gate.release(&self.key, at);
        }
        turn.asked = false;
        self.turn.set(turn);
    }
}

impl<B> Drop for GatedBudget<B> {
    fn drop(&mut self) {
        // The run is gone before the attempt its slot was for.
        self.give_back();
    }
}

impl<B> fmt::Debug for GatedBudget<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatedBudget")
            .field("key", &self.key)
            .field("budget", &std::any::type_name::<B>())
            .finish_non_exhaustive()
    }
}

impl<B: Budget> Budget for GatedBudget<B> {
    #[inline]
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        // All or nothing: a run refused by the budget leaves the gate unbound, and one refused
        // by the gate leaves the budget unbound.
        self.gate.bind_with(timeline, || self.budget.bind(timeline))
    }
    #[inline]
    fn admit(&self, now: Timestamp) -> bool {
        self.budget.admit(now)
    }
    #[inline]
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
        self.budget.try_retry(now, failure)
    }
    #[inline]
    fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
        self.budget.retry_abandoned(granted, spent);
    }
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        self.gate.served(&self.key, now, self.turn.get().in_turn);
        self.budget.on_success(now, last_retry);
    }
    #[inline]
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        self.budget.on_failure(now, failure);
    }
    fn server_wait(&self, now: Timestamp, wait: Duration) {
        self.gate
            .throttled(&self.key, now, wait, self.turn.get().in_turn);
        self.budget.server_wait(now, wait);
    }
    #[inline]
    fn paces(&self) -> bool {
        true
    }
    fn slot(&self, now: Timestamp, limit: Option<Timestamp>) -> Slot {
        // The gate decides; a budget behind it that paces too is not asked (one pacer a call).
        let turn = self.turn.get();
        if turn.asked {
            match turn.reserved {
                // Asked again at the slot, and the server has since asked for a longer wait
                // than the slot allows for: not that slot, but the next after the new wait.
                Some(at) if now >= at && self.gate.closed_after(&self.key, at) => self.give_back(),
                Some(at) if now < at => return Slot::At(at),
                // The same attempt asks again (a service not ready at once): its turn stands.
                _ => return Slot::Now,
            }
        }
        let (slot, in_turn) = self.gate.take_slot(&self.key, now, limit);
        self.turn.set(Turn {
            asked: true,
            reserved: match slot {
                Slot::At(at) => Some(at),
                _ => None,
            },
            in_turn,
        });
        slot
    }
    fn slot_taken(&self) {
        let turn = self.turn.get();
        self.turn.set(Turn {
            asked: false,
            reserved: None,
            in_turn: turn.in_turn,
        });
    }
    fn slot_unused(&self) {
        self.give_back();
    }
}

/// A gate in front of the budgets `D` hands out, for a layer that serves many destinations: each
/// request's budget is a [`GatedBudget`], behind the one gate under the request's own key. The
/// per-layer counterpart of [`GatedBudget`], as
/// [`BudgetPerDestination`](crate::budget::BudgetPerDestination) is of a budget.
#[derive(Clone, Debug)]
pub struct GatedPerDestination<D> {
    gate: Arc<Gate>,
    budgets: D,
}

impl<D> GatedPerDestination<D> {
    /// The budgets of `budgets`, each behind `gate`.
    pub fn new(gate: Arc<Gate>, budgets: D) -> Self {
        Self { gate, budgets }
    }
}

impl<D> GatedPerDestination<D> {
    /// The budget of the one run to the destination `key` names: `budgets` itself, behind the
    /// gate (an executor's run, whose budget is its own).
    pub fn into_budget(self, key: Arc<str>) -> GatedBudget<D> {
        GatedBudget::new(self.budgets, self.gate, key)
    }
}

impl<D: PerDestination> PerDestination for GatedPerDestination<D> {
    type Budget = GatedBudget<D::Budget>;

    fn for_destination(&self, key: impl FnOnce() -> Arc<str>) -> Self::Budget {
        let key = key();
        let budget = self.budgets.for_destination(|| Arc::clone(&key));
        GatedBudget::new(budget, Arc::clone(&self.gate), key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Timestamp {
        Timestamp::from_duration(Duration::from_millis(ms))
    }

    #[test]
    fn a_run_refused_by_the_budget_leaves_a_fresh_gate_unbound() {
        use crate::budget::{Ratio, RatioBudget};
        let (a, b) = (Timeline::unique(), Timeline::unique());
        // A budget shared with runs on timeline A, and a gate no run has used yet.
        let budget = Arc::new(RatioBudget::new(Ratio::FINAGLE).unwrap());
        budget.bind(a).unwrap();
        let gate = Arc::new(Gate::new(8).unwrap());
        // A run on timeline B is refused by the budget: it must not bind the gate either.
        let on_b = GatedBudget::new(Arc::clone(&budget), Arc::clone(&gate), "api");
        assert_eq!(
            on_b.bind(b),
            Err(ConfigError::TimelineMismatch { bound: a, given: b })
        );
        assert_eq!(gate.timeline.bound(), None, "the gate is still unbound");
        // So a run on A, the budget's timeline, may use both.
        let on_a = GatedBudget::new(Arc::clone(&budget), Arc::clone(&gate), "api");
        assert_eq!(on_a.bind(a), Ok(()));
        assert_eq!(gate.timeline.bound(), Some(a));
        // And the other way round: a gate bound to A refuses a run on B before its budget, a
        // fresh one, is bound to B.
        let fresh = Arc::new(RatioBudget::new(Ratio::FINAGLE).unwrap());
        let refused = GatedBudget::new(Arc::clone(&fresh), Arc::clone(&gate), "api");
        assert!(refused.bind(b).is_err());
        assert_eq!(fresh.bind(a), Ok(()), "the fresh budget was left unbound");
    }

    #[test]
    fn per_destination_budgets_behind_one_gate_bind_all_or_nothing() {
        use crate::budget::{BudgetPerDestination, Ratio};
        use crate::rng::SeededRng;
        let (a, b) = (Timeline::unique(), Timeline::unique());
        let budgets =
            Arc::new(BudgetPerDestination::new(Ratio::FINAGLE, 8, SeededRng::new(1)).unwrap());
        let gate = Arc::new(Gate::new(8).unwrap());
        let layer = GatedPerDestination::new(Arc::clone(&gate), Arc::clone(&budgets));
        // The budget of "x" is bound to A by a run that does not use the gate.
        budgets.for_key("x").bind(a).unwrap();
        // A request to "x" on B is refused, and leaves the gate unbound...
        assert!(layer.for_destination(|| "x".into()).bind(b).is_err());
        assert_eq!(gate.timeline.bound(), None);
        // ...so requests to "y" on A, and then to "x" on A, are served.
        assert_eq!(layer.for_destination(|| "y".into()).bind(a), Ok(()));
        assert_eq!(layer.for_destination(|| "x".into()).bind(a), Ok(()));
        // A request to a new destination on B is refused by the gate, and leaves that
        // destination's budget unbound.
        assert!(layer.for_destination(|| "z".into()).bind(b).is_err());
        assert_eq!(budgets.for_key("z").bind(a), Ok(()));
    }

    /// A budget whose binding tells `entered` it has begun, then waits a while for word on
    /// `wait_for`: a run held inside its binding, so that another may try to pass it.
    struct Held {
        binding: TimelineBinding,
        entered: std::sync::mpsc::SyncSender<()>,
        wait_for: Option<Mutex<std::sync::mpsc::Receiver<()>>>,
    }

    impl Budget for Held {
        fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
            let bound = self.binding.bind(timeline);
            let _ = self.entered.try_send(());
            if let Some(wait_for) = &self.wait_for {
                let _ = wait_for
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_millis(200));
            }
            bound
        }
        fn try_retry(&self, _: Timestamp, _: &Failure) -> Option<Spent> {
            Some(Spent(0))
        }
    }

    #[test]
    fn a_first_run_on_another_timeline_cannot_slip_in_while_the_first_binds() {
        use std::sync::mpsc::sync_channel;
        let (a, b) = (Timeline::unique(), Timeline::unique());
        let gate = Arc::new(Gate::new(8).unwrap());
        let (first_entered, first_in) = sync_channel(1);
        let (second_entered, second_in) = sync_channel(1);
        let first = Held {
            binding: TimelineBinding::new(),
            entered: first_entered,
            wait_for: Some(Mutex::new(second_in)),
        };
        let second = Held {
            binding: TimelineBinding::new(),
            entered: second_entered,
            wait_for: None,
        };
        let (first, second) = (
            GatedBudget::new(first, Arc::clone(&gate), "x"),
            GatedBudget::new(second, Arc::clone(&gate), "y"),
        );
        // The first run, on A, is held while it binds its budget; a run on B then tries.
        let on_a = std::thread::spawn(move || first.bind(a));
        first_in.recv().unwrap();
        let on_b = std::thread::spawn(move || (second.bind(b), second));
        assert_eq!(on_a.join().unwrap(), Ok(()));
        let (refused, second) = on_b.join().unwrap();
        assert!(refused.is_err());
        assert_eq!(gate.timeline.bound(), Some(a));
        // Refused, the run on B bound nothing: its budget did not bind B while the gate was
        // still unbound.
        assert_eq!(second.budget().binding.bound(), None);
    }

    #[test]
    fn a_gate_behind_a_gate_binds_without_waiting_for_itself() {
        let gate = Arc::new(Gate::new(8).unwrap());
        let inner = GatedBudget::new(crate::budget::Unlimited, Arc::clone(&gate), "a");
        let outer = GatedBudget::new(inner, Arc::clone(&gate), "a");
        let timeline = Timeline::unique();
        assert_eq!(outer.bind(timeline), Ok(()));
        assert_eq!(gate.bind(timeline), Ok(()));
        assert!(gate.bind(Timeline::unique()).is_err());
    }

    #[test]
    fn slots_are_paced_learn_from_answers_and_expire() {
        let gate = Gate::new(4).unwrap();
        gate.throttled("a", ms(0), Duration::from_secs(1), true);
        gate.throttled("a", ms(5), Duration::from_secs(1), true);
        // The wave's latest refusal closes the gate.
        assert_eq!(gate.slot("a", ms(10), None), Slot::At(ms(1_005)));
        assert_eq!(gate.slot("a", ms(10), None), Slot::At(ms(1_255)));
        // Served in its slot: the next comes a tenth sooner.
        gate.served("a", ms(1_256), true);
        assert_eq!(gate.slot("a", ms(1_256), None), Slot::At(ms(1_480)));
        // Throttled in its slot: the spacing doubles, to at least a quarter of the server's
        // wait and at most all of it.
        gate.throttled("a", ms(1_481), Duration::from_secs(1), true);
        assert_eq!(gate.slot("a", ms(1_481), None), Slot::At(ms(1_930)));
        // A call after the next slot goes at once and takes it.
        assert_eq!(gate.slot("a", ms(2_500), None), Slot::Now);
        // One server wait after the last slot, the destination is forgotten.
        assert_eq!(gate.slot("a", ms(3_500), None), Slot::Now);
        assert!(gate.is_empty());
    }

    #[test]
    fn a_straggler_of_the_first_wave_leaves_the_spacing_alone() {
        let gate = Gate::new(4).unwrap();
        gate.throttled("a", ms(0), Duration::from_secs(1), true);
        assert_eq!(gate.slot("a", ms(10), None), Slot::At(ms(1_000)));
        // A refusal of a call sent before the pacing began comes back late: the next slot is
        // still a quarter of the wait on, not more.
        gate.throttled("a", ms(300), Duration::from_secs(1), false);
        assert_eq!(gate.slot("a", ms(310), None), Slot::At(ms(1_250)));
        // A success out of turn does not shorten it either.
        gate.served("a", ms(320), false);
        assert_eq!(gate.slot("a", ms(330), None), Slot::At(ms(1_500)));
        // In its turn, a refusal doubles it.
        gate.throttled("a", ms(1_001), Duration::from_secs(1), true);
        assert_eq!(gate.slot("a", ms(1_002), None), Slot::At(ms(2_000)));
    }

    #[test]
    fn the_set_of_destinations_is_bounded() {
        let gate = Gate::new(3).unwrap();
        for (i, host) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            gate.throttled(host, ms(i as u64), Duration::from_secs(60), true);
        }
        assert_eq!(gate.len(), 3);
        // The two idle longest were forgotten.
        assert_eq!(gate.slot("a", ms(10), None), Slot::Now);
        assert_eq!(gate.slot("b", ms(10), None), Slot::Now);
        assert!(matches!(gate.slot("e", ms(10), None), Slot::At(_)));
        assert!(Gate::new(0).is_err());
        assert!(Gate::new(Gate::MAX_CAPACITY + 1).is_err());
    }

    #[test]
    fn huge_waits_saturate() {
        let gate = Gate::new(1).unwrap();
        gate.throttled("a", Timestamp::MAX, Duration::MAX, true);
        gate.throttled("a", Timestamp::MAX, Duration::MAX, true);
        assert_eq!(
            gate.slot("a", ms(0), Some(ms(1))),
            Slot::PastDeadline(Timestamp::MAX)
        );
        gate.served("a", Timestamp::MAX, true);
        // Paced, with a near-maximal spacing: a success must not overflow it.
        let gate = Gate::new(1).unwrap();
        gate.throttled("a", ms(0), Duration::MAX / 2, true);
        assert!(matches!(gate.slot("a", ms(0), None), Slot::At(_)));
        gate.served("a", ms(1), true);
        gate.throttled("a", ms(2), Duration::MAX, true);
        gate.served("a", ms(3), true);
        // The longest wait closed the gate for good: saturated, not wrapped round to now.
        assert!(matches!(
            gate.slot("a", ms(4), Some(ms(10))),
            Slot::PastDeadline(t) if t >= ms(2).saturating_add(Duration::MAX / 2)
        ));
        gate.release("a", Timestamp::MAX);
        gate.release("a", Timestamp::ZERO);
        assert!(matches!(gate.slot("a", ms(5), None), Slot::At(_)));
    }

    #[test]
    fn the_spacing_has_a_floor_a_longer_wait_closes_and_an_idle_entry_starts_afresh() {
        let gate = Gate::new(1).unwrap();
        gate.throttled("a", ms(0), Duration::from_secs(1), true);
        assert_eq!(gate.slot("a", ms(0), None), Slot::At(ms(1_000)));
        for i in 0..300 {
            gate.served("a", ms(1_000 + i), true);
        }
        // 1/64 of the wait at least: no wave of callers at one instant.
        let floor = Timestamp::from_nanos(1_015_625_000);
        assert_eq!(gate.slot("a", ms(1_000), None), Slot::At(floor));
        // The server now asks for 30 s: nobody comes back before.
        gate.throttled("a", ms(1_020), Duration::from_secs(30), true);
        assert!(matches!(gate.slot("a", ms(1_020), None), Slot::At(t) if t >= ms(31_020)));
        // Idle for a whole wait after its last slot, a new storm starts from its own refusals.
        let later = ms(200_000);
        gate.throttled("a", later, Duration::from_secs(1), true);
        assert_eq!(gate.slot("a", later, None), Slot::At(ms(201_000)));
    }
}

//! A request in flight: its engine run (retried through layers, or hedged), and what the
//! dependency side needs to know of it.

use stagger_core::engine::{StopReason, Stopped};
use stagger_core::{Failure, SeededRng};

use crate::model::call::{Call, HedgedCall};
use crate::model::event::Id;
use crate::queue::Nanos;

/// A request in flight: its engine run, its source, whether its first attempt met the
/// outage, and the earliest time a limiter's wait lets its next attempt reach the dependency.
pub(crate) struct Request {
    /// The engine's run: retried, or hedged.
    pub(crate) run: Driven,
    pub(crate) source: u32,
    pub(crate) met: bool,
    pub(crate) not_before: Nanos,
    /// When the client heard the latest refusal: an attempt sent before then (a hedge already
    /// in flight) was not told to wait, so it is never early.
    pub(crate) told_at: Nanos,
    /// Attempts sent to the dependency.
    pub(crate) sent: u32,
    /// Whether an attempt of the request has reached the dependency behind the limiter.
    pub(crate) reached: bool,
    /// With two hosts: whether the request goes to host A, the one that is down.
    pub(crate) to_down: bool,
    /// With two hosts: the generator of the request's answers ([`TwoHosts`]).
    pub(crate) answers: SeededRng,
}

/// How a request's attempts are driven. A hedged run is boxed: most runs retry, and a request
/// that retries stays the size it was.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Driven {
    /// One attempt at a time, through the layers of the stack.
    Retried {
        /// The outermost layer's run.
        call: Call,
        /// The runs of the inner layers in progress, outermost first: each makes its attempts
        /// inside one attempt of the layer above.
        inner: Vec<Call>,
        /// The attempt awaited, if one is.
        pending: Option<Id>,
        /// When it was sent.
        sent_at: Nanos,
        /// A round trip's time back from the dependency, held while a concurrency limiter
        /// serves the attempt.
        trip: Nanos,
    },
    /// Attempts beside those in flight.
    Hedged(Box<HedgedRequest>),
}

/// A hedged request's run, the attempts it awaits, and when it asked to be woken.
pub(crate) struct HedgedRequest {
    pub(crate) call: HedgedCall,
    pub(crate) flying: Vec<Flying>,
    pub(crate) wake: Option<Nanos>,
    /// With a pool, the replicas its attempts went to, sorted.
    pub(crate) used: Vec<u32>,
}

/// An attempt of a hedged request in flight.
pub(crate) struct Flying {
    pub(crate) id: Id,
    pub(crate) number: u32,
    pub(crate) sent: Nanos,
    /// As [`Driven::Retried`]'s `trip`.
    pub(crate) trip: Nanos,
}

impl Request {
    /// A request of source `source` driven by `run`, to host A if `to_down`, its answers drawn
    /// from `answers` (with two hosts), before any attempt.
    #[inline(always)]
    pub(crate) fn new(run: Driven, source: u32, to_down: bool, answers: SeededRng) -> Self {
        Self {
            run,
            source,
            met: false,
            not_before: 0,
            told_at: 0,
            sent: 0,
            reached: false,
            to_down,
            answers,
        }
    }

    /// The innermost run in progress of a retried request: the one whose attempt comes next.
    #[inline]
    pub(crate) fn top(&mut self) -> Option<&mut Call> {
        match &mut self.run {
            Driven::Retried { call, inner, .. } => Some(inner.last_mut().unwrap_or(call)),
            Driven::Hedged(_) => None,
        }
    }

    /// Whether the request awaits attempt `id`.
    #[inline]
    pub(crate) fn awaits(&self, id: Id) -> bool {
        match &self.run {
            Driven::Retried { pending, .. } => *pending == Some(id),
            Driven::Hedged(h) => h.flying.iter().any(|f| f.id == id),
        }
    }

    /// When attempt `id` was sent (0 if the request no longer awaits it).
    #[inline]
    pub(crate) fn sent_at(&self, id: Id) -> Nanos {
        match &self.run {
            Driven::Retried { sent_at, .. } => *sent_at,
            Driven::Hedged(h) => h.flying.iter().find(|f| f.id == id).map_or(0, |f| f.sent),
        }
    }

    /// Holds the time back of attempt `id` while a concurrency limiter serves it.
    #[inline]
    pub(crate) fn set_trip(&mut self, id: Id, back: Nanos) {
        match &mut self.run {
            Driven::Retried { trip, .. } => *trip = back,
            Driven::Hedged(h) => {
                if let Some(f) = h.flying.iter_mut().find(|f| f.id == id) {
                    f.trip = back;
                }
            }
        }
    }

    /// The time back of attempt `id` held by [`Request::set_trip`].
    #[inline]
    pub(crate) fn trip(&self, id: Id) -> Nanos {
        match &self.run {
            Driven::Retried { trip, .. } => *trip,
            Driven::Hedged(h) => h.flying.iter().find(|f| f.id == id).map_or(0, |f| f.trip),
        }
    }
}

/// How a run in a request's stack ended.
pub(crate) enum Ended {
    Succeeded { latency: Nanos },
    GaveUp(Stopped),
}

/// The failure an inner layer's end shows the layer above, as stagger's `RetryError` classifies
/// it: the last failure the inner run met (a 429's wait included), or, if it sent nothing, a
/// throttle when its budget refused the first attempt and a rejection otherwise. (Every
/// simulated call is idempotent, so nothing becomes permanent for that reason.)
pub(crate) fn failure_of(stopped: &Stopped) -> Failure {
    match stopped.summary.last_failure {
        Some(failure) => failure,
        None if stopped.reason == StopReason::BudgetRefusedFirstAttempt => Failure::Throttled(None),
        None => Failure::Rejected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request in flight holds one, and each event carries one: their sizes are what
    /// the outage at size spends its memory and its copies on (docs/simulator-costs.md), so they
    /// may shrink but not grow unnoticed. `cargo test -p stagger-sim --lib sizes --
    /// --nocapture` prints the table that page quotes.
    #[test]
    fn a_request_and_an_event_stay_within_their_sizes() {
        use stagger_core::engine::Run;

        use crate::strategy::{RunningPolicy, SimBudget};
        let sizes = [
            ("Request", size_of::<Request>(), 408),
            ("Call", size_of::<Call>(), 320),
            (
                "Run<RunningPolicy, SimBudget>",
                size_of::<Run<RunningPolicy, SimBudget>>(),
                312,
            ),
            ("RunningPolicy", size_of::<RunningPolicy>(), 104),
            ("Event", size_of::<crate::model::event::Event>(), 24),
        ];
        for (name, size, most) in sizes {
            eprintln!("{name}: {size} bytes");
            assert!(size <= most, "{name} is {size} bytes, more than {most}");
        }
        assert_eq!(size_of::<crate::model::event::Event>(), 24);
    }
}

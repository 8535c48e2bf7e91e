//! The event queue's vocabulary: what happens ([`Event`]), to which attempt ([`Id`]), and
//! what a dependency answered ([`Outcome`], carried split as [`Kind`] and a wait so that an
//! event stays 24 bytes).

use crate::model::composed::Composed;
use crate::queue::Nanos;

/// What an attempt's answer says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// A failure drawn from the failure probability.
    Failed,
    /// The dependency was down.
    Down,
    /// The rate limiter refused it with this wait, in nanoseconds (a 429).
    Throttled(Nanos),
    /// The concurrency limiter refused it with this wait (a 503).
    Busy(Nanos),
}

/// An attempt's id, unique among the attempts whose events may still be queued: a counter
/// that wraps after 2^32 attempts, far more than a run's [`Composed::MAX_EVENTS`] allow.
pub(crate) type Id = u32;

const _: () = assert!(Composed::MAX_EVENTS < (1 << 32));

/// The attempts of a run: the next one's id, those sent and still awaited, and those on their
/// way to the dependency (one-way network), awaited or not: each still reaches it, and counts
/// there.
#[derive(Default)]
pub(crate) struct Attempts {
    next_id: Id,
    awaited: u64,
    travelling: u64,
}

impl Attempts {
    /// An attempt is sent: its id.
    #[inline(always)]
    pub(crate) fn sent(&mut self) -> Id {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.awaited += 1;
        id
    }

    /// `n` attempts are no longer awaited: answered, timed out or abandoned.
    #[inline(always)]
    pub(crate) fn settled(&mut self, n: u64) {
        self.awaited -= n;
    }

    /// The attempts awaited.
    #[inline(always)]
    pub(crate) const fn awaited(&self) -> u64 {
        self.awaited
    }

    /// An attempt sets out for the dependency (one-way network).
    #[inline(always)]
    pub(crate) fn set_out(&mut self) {
        self.travelling += 1;
    }

    /// An attempt reached the dependency (one-way network).
    #[inline(always)]
    pub(crate) fn reached(&mut self) {
        self.travelling -= 1;
    }

    /// Whether an attempt is on its way to the dependency.
    #[inline(always)]
    pub(crate) const fn any_travelling(&self) -> bool {
        self.travelling > 0
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Event {
    /// Source `c`'s next request starts (for open sources with a load that varies, a
    /// candidate arrival of the thinned process).
    Arrival(u32),
    /// The request in slot `r` sends its next attempt.
    Send(u32),
    /// Attempt `id` of the request in slot `r` reaches the dependency (one-way network).
    Arrive(u32, Id),
    /// The answer to attempt `id` of the request in slot `r` comes back: its kind and wait
    /// ([`Outcome::split`], which keeps an event to 24 bytes).
    Answer(u32, Id, Kind, Nanos),
    /// Attempt `id` of the request in slot `r` leaves a concurrency limiter or the service,
    /// served, with the dependency's answer.
    Served(u32, Id, Kind, Nanos),
    /// Attempt `id`'s time runs out.
    Timeout(u32, Id),
    /// Replica `replica` of the pool finishes attempt `id` of the request in slot `r`, which
    /// then answers `kind`.
    Done(u32, u32, Id, Kind),
    /// The hedged request in slot `r` asked to be woken now.
    Wake(u32),
}

/// An [`Outcome`] without its wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ok,
    Failed,
    Down,
    Throttled,
    Busy,
}

impl Outcome {
    /// Its kind and its wait (0 for none), as an event carries them.
    #[inline]
    pub(crate) const fn split(self) -> (Kind, Nanos) {
        match self {
            Self::Ok => (Kind::Ok, 0),
            Self::Failed => (Kind::Failed, 0),
            Self::Down => (Kind::Down, 0),
            Self::Throttled(wait) => (Kind::Throttled, wait),
            Self::Busy(wait) => (Kind::Busy, wait),
        }
    }

    /// The outcome an event carries as `kind` and `wait`.
    #[inline]
    pub(crate) const fn join(kind: Kind, wait: Nanos) -> Self {
        match kind {
            Kind::Ok => Self::Ok,
            Kind::Failed => Self::Failed,
            Kind::Down => Self::Down,
            Kind::Throttled => Self::Throttled(wait),
            Kind::Busy => Self::Busy(wait),
        }
    }
}

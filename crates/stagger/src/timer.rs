//! The timer the async drivers wait on for a time on the run's clock (the deadline, an
//! attempt's expiry, the next hedge), and the guard against a timer that fires early.
//!
//! A sleeper's timer is not the run's clock: it may fire before the time it was armed for (a
//! coarse timer, a test's fake one). Both drivers
//! ([`RetryOutcomeFuture`](crate::future::RetryOutcomeFuture) and the hedging one) therefore read the
//! clock when the timer fires, arm it again for the rest, and count such early fires in a
//! poll, to yield rather than spin on a timer that keeps firing at once. That arming and that
//! guard are written here once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use stagger_core::{Clock, Timestamp};

use crate::sleep::Sleeper;

/// The early fires a poll tolerates before it yields.
const EARLY_FIRES_BEFORE_YIELDING: u32 = 3;

/// The times a timer fired before its time in one poll of a driver.
pub(crate) struct EarlyFires(u32);

impl EarlyFires {
    /// None yet: made at the start of each poll.
    pub(crate) const fn new() -> Self {
        Self(0)
    }

    /// The timer fired before its time: `Ready` to wait on it again, or, after more early fires
    /// in this poll than [`EARLY_FIRES_BEFORE_YIELDING`], `Pending` with the task woken, so
    /// that a timer that keeps firing at once makes the task yield rather than spin.
    #[inline]
    pub(crate) fn fired_early(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.0 += 1;
        if self.0 > EARLY_FIRES_BEFORE_YIELDING {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(())
    }
}

/// Arms `timer` with `sleeper` for `at`, from `from`, a time just read on the run's clock.
#[inline]
pub(crate) fn arm<Sl: Sleeper>(
    mut timer: Pin<&mut Option<Sl::Sleep>>,
    sleeper: &Sl,
    from: Timestamp,
    at: Timestamp,
) {
    timer.set(Some(sleeper.sleep(at.saturating_duration_since(from))));
}

/// Polls `timer` for `at` (the run's deadline, or the attempt's expiry), arming it on first
/// use: ready with the time once `at` has passed on `clock`; pending for ever without one. A
/// timer that fires early is re-armed for the rest; one that keeps firing at once makes the
/// task yield rather than spin ([`EarlyFires`]).
///
/// `since` is a time just read for the attempt (its start): a timer armed for the first time
/// is armed from it, without another clock read, so that an attempt reads the clock twice,
/// before and after, deadline or not. It fires no earlier than `at`, and late by no more than
/// the time between that reading and the arming.
pub(crate) fn poll_until<Sl: Sleeper, K: Clock>(
    mut timer: Pin<&mut Option<Sl::Sleep>>,
    at: Option<Timestamp>,
    mut since: Option<Timestamp>,
    sleeper: &Sl,
    clock: &K,
    early_fires: &mut EarlyFires,
    cx: &mut Context<'_>,
) -> Poll<Timestamp> {
    let Some(at) = at else {
        return Poll::Pending;
    };
    loop {
        let fired = match timer.as_mut().as_pin_mut() {
            Some(sleep) => {
                ready!(sleep.poll(cx));
                true
            }
            None => match since.take() {
                Some(start) if start < at => {
                    arm(timer.as_mut(), sleeper, start, at);
                    continue;
                }
                _ => false,
            },
        };
        let now = clock.now();
        if now >= at {
            return Poll::Ready(now);
        }
        arm(timer.as_mut(), sleeper, now, at);
        if fired {
            ready!(early_fires.fired_early(cx));
        }
    }
}

//! Detecting that an executor runs inside another executor's attempt.
//!
//! Every executor marks the thread while it runs (or polls) an attempt. Code that the attempt
//! calls, on the same thread or inside the same async task on any runtime, sees the mark. An
//! executor started there is nested: by default it makes one attempt and leaves recovery to the
//! outer layer (see [`Nested`](crate::engine::Nested)).

use std::cell::Cell;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether the current thread is inside some executor's attempt.
#[inline]
pub(crate) fn inside_an_attempt() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Marks the current thread as inside an attempt until the guard is dropped.
#[inline]
pub(crate) fn enter() -> Guard {
    DEPTH.with(|d| d.set(d.get().wrapping_add(1)));
    Guard(())
}

/// Clears the mark of [`enter`] when dropped, even if the attempt panics.
pub(crate) struct Guard(());

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().wrapping_sub(1)));
    }
}

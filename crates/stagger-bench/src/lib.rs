//! Benchmarks comparing `stagger` with peer retry/backoff crates.
//!
//! This crate is not published. The benches live in `benches/` (run with `cargo bench -p
//! stagger-bench`) and the measurements that are not benches in `examples/`; the one helper
//! they share is here.

use std::future::IntoFuture;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// The minimal executor: polls `future` once with a no-op waker. Every future the benches and
/// the examples time completes on its first poll (its sleeps are immediately ready), so a
/// `Pending` is a bug in them, not something to wait for.
///
/// # Panics
///
/// If the future is pending on its first poll.
pub fn block_on<F: IntoFuture>(future: F) -> F::Output {
    let mut future = pin!(future.into_future());
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a future pended on the no-op executor"),
    }
}

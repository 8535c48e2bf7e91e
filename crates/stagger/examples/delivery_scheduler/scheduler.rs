//! One pass of the scheduler: make every due attempt and record what comes next.
//!
//! `run_once` takes `now` as an argument and never reads a clock or sleeps, so the same pass
//! runs under the wall clock (`run-loop`), at a time given on the command line (`--now`), or
//! in a test.

use crate::schedule::{Decision, after_failure};
use crate::sender::Sender;
use crate::store::{Attempt, Outcome, Store};

/// Makes every attempt due at `now_ms`, one after the other, and records each outcome before
/// the next attempt starts.
pub(crate) async fn run_once(
    store: &Store,
    sender: &Sender,
    now_ms: u64,
) -> rusqlite::Result<Vec<Attempt>> {
    let mut attempts = Vec::new();
    for delivery in store.due(now_ms)? {
        let attempt = delivery.attempts + 1;
        let (first_failure_ms, outcome, error) = match sender.post(&delivery, attempt).await {
            Ok(()) => (delivery.first_failure_ms, Outcome::Delivered, None),
            Err(error) => {
                let first = delivery.first_failure_ms.unwrap_or(now_ms);
                let outcome = match after_failure(&delivery.id, attempt, first, now_ms) {
                    Decision::RetryAt(at) => Outcome::RetryAt(at),
                    Decision::GiveUp(why) => Outcome::GaveUp(why),
                };
                (Some(first), outcome, Some(error))
            }
        };
        let done = Attempt {
            id: delivery.id,
            attempt,
            first_failure_ms,
            outcome,
            error,
        };
        store.record(&done)?;
        attempts.push(done);
    }
    Ok(attempts)
}

//! The executors meet the library's limits (`stagger::limits`, the core's) as a configuration
//! file does: a hedging of a fixed delay past a day is refused, typed, before any attempt.

#![cfg(feature = "tokio")]

use std::time::Duration;

use stagger::Failure;
use stagger::engine::{Hedging, StopReason};
use stagger::limits::MAX_HEDGE_DELAY;
use stagger::policy::NoRetry;

#[tokio::test(start_paused = true)]
async fn a_hedge_delay_of_a_day_runs_and_one_past_it_is_refused_before_any_attempt() {
    assert_eq!(MAX_HEDGE_DELAY, stagger_core::limits::MAX_HEDGE_DELAY);
    let run = |delay: Duration| {
        stagger::retry(NoRetry::new(), |_| async { Ok::<_, Failure>(()) })
            .classify(|f: &Failure| *f)
            .hedge(Hedging::fixed(delay, 2))
            .outcome()
    };
    let day = run(MAX_HEDGE_DELAY).await;
    assert!(day.result.is_ok());
    assert_eq!(day.summary.attempts, 1);
    let past = run(MAX_HEDGE_DELAY + Duration::from_nanos(1)).await;
    assert_eq!(past.summary.attempts, 0);
    assert_eq!(past.result.unwrap_err().reason(), StopReason::InvalidConfig);
}

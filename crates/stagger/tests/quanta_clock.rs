//! `QuantaClock` (the `quanta` feature) as the clock of a real blocking retry with a deadline:
//! its time agrees with the operating system's monotonic clock, and the deadline it measures
//! stops the run when the operating system's clock says it should.

#![cfg(feature = "quanta")]

use std::time::Duration;

use stagger::Failure;
use stagger::blocking;
use stagger::clock::{Clock, MonotonicClock, QuantaClock};
use stagger::engine::StopReason;
use stagger::policy::Constant;

#[test]
fn quanta_time_agrees_with_the_monotonic_clock_over_real_waits() {
    // Both clocks are on the process timeline: at any instant, the quanta clock reads what the
    // operating system's does, within the calibration's error.
    let os = MonotonicClock::new();
    let tsc = QuantaClock::calibrated();
    assert_eq!(tsc.timeline(), os.timeline());
    let start = os.now();
    let slack = Duration::from_millis(1);
    let mut last = tsc.now();
    for _ in 0..5 {
        #[allow(clippy::disallowed_methods)] // A real wait is what is measured.
        std::thread::sleep(Duration::from_millis(20));
        // Bracketed by two reads of the operating system's clock, so that a preemption between
        // the reads widens the bracket instead of failing the test.
        let before = os.now();
        let t = tsc.now();
        let after = os.now();
        assert!(t >= last, "time went backwards: {last:?} then {t:?}");
        last = t;
        assert!(
            t <= after.saturating_add(slack),
            "quanta {t} after the OS clock's {after}"
        );
        assert!(
            t.saturating_add(slack) >= before,
            "quanta {t} before the OS clock's {before}"
        );
        assert!(
            t.saturating_duration_since(start) >= Duration::from_millis(20),
            "{t} is less than 20 ms after {start}"
        );
    }
}

#[test]
fn a_deadline_on_quanta_time_ends_a_real_blocking_run_on_time() {
    let os = MonotonicClock::new();
    let start = os.now();
    #[allow(clippy::disallowed_methods)] // The executor's real sleep, as users run it.
    let outcome = blocking::retry(
        Constant::new()
            .with_base(Duration::from_millis(10))
            .with_max_attempts(1_000),
        |_| Err::<(), _>(Failure::Retryable),
    )
    .classify(|f: &Failure| *f)
    .clock(QuantaClock::new())
    .timeout(Duration::from_millis(100))
    .call();
    let elapsed = os.now().saturating_duration_since(start);
    let error = outcome.unwrap_err();
    // The run stops when the next 10 ms wait would outlast what is left of the 100 ms, as the
    // quanta clock measured it; the operating system's clock agrees that about 90 ms or more
    // have passed, and no more than the deadline and a wait (with room for a slow machine).
    match error.reason() {
        StopReason::WaitExceedsDeadline { wait, remaining } => {
            assert_eq!(wait, Duration::from_millis(10));
            assert!(remaining < wait, "{remaining:?}");
        }
        other => assert_eq!(other, StopReason::Deadline),
    }
    assert!(elapsed >= Duration::from_millis(80), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(300), "{elapsed:?}");
    assert!(error.summary().attempts >= 5, "{:?}", error.summary());
}

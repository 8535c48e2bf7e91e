//! A gate shared by the calls to one destination, in the executors: once one call is told to
//! wait, the others wait for paced slots of their own, first attempts included, inside their
//! deadlines.

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use stagger::Failure;
use stagger::clock::{Clock, ManualClock, Timestamp};
use stagger::engine::StopReason;
use stagger::gate::Gate;
use stagger::policy::Immediate;

fn ms(ms: u64) -> Timestamp {
    Timestamp::from_duration(Duration::from_millis(ms))
}

#[test]
fn calls_to_a_throttled_destination_wait_for_paced_slots_and_others_do_not() {
    let clock = ManualClock::new();
    let gate = Arc::new(Gate::new(8).unwrap());
    let sent = RefCell::new(Vec::new());
    // One call that is refused once with "1 second", then served.
    let call = |name: &'static str, replies: Vec<Result<(), Failure>>, key: &str| {
        let mut replies = replies.into_iter();
        let sleeps = clock.clone();
        stagger::blocking::retry(Immediate::new().with_max_attempts(3), |_| {
            sent.borrow_mut().push((name, clock.now()));
            replies.next().unwrap()
        })
        .classify(|f: &Failure| *f)
        .settings(
            stagger::engine::Settings::new().with_dispersal(stagger::engine::Dispersal::Floor),
        )
        .clock(clock.clone())
        .sleeper(move |d: Duration| sleeps.advance(d))
        .gate(Arc::clone(&gate))
        .destination(key)
        .call()
    };
    let throttled = Err(Failure::Throttled(Some(Duration::from_secs(1))));
    // `a` is refused at 0 and told 1 s; its own retry takes the first slot, at 1 s.
    let a = call("a", vec![throttled, Ok(())], "api");
    assert!(a.is_ok());
    // Back at 0.1 s: `b`'s first attempt waits for the next slot, a quarter of the wait later
    // than the one before, shortened by a tenth after `a` was served in its slot.
    clock.advance_to(ms(100));
    assert!(call("b", vec![Ok(())], "api").is_ok());
    // Another destination is not held up.
    clock.advance_to(ms(1_300));
    assert!(call("c", vec![Ok(())], "cdn").is_ok());
    assert_eq!(
        sent.into_inner(),
        [
            ("a", ms(0)),
            ("a", ms(1_000)),
            ("b", ms(1_225)),
            ("c", ms(1_300))
        ]
    );
}

#[test]
fn a_slot_past_the_deadline_ends_the_run_at_once_without_a_call() {
    let clock = ManualClock::new();
    let gate = Arc::new(Gate::new(8).unwrap());
    gate.throttled("api", Timestamp::ZERO, Duration::from_secs(5), true);
    let mut calls = 0;
    let result = stagger::blocking::retry(Immediate::new(), |_| {
        calls += 1;
        Ok::<(), Failure>(())
    })
    .classify(|f: &Failure| *f)
    .timeout(Duration::from_secs(1))
    .clock(clock.clone())
    .sleeper(|_: Duration| panic!("no wait that cannot end in time"))
    .gate(Arc::clone(&gate))
    .destination("api")
    .call();
    assert_eq!(calls, 0);
    let error = result.unwrap_err();
    assert!(
        matches!(error.reason(), StopReason::WaitExceedsDeadline { .. }),
        "{:?}",
        error.reason()
    );
    assert_eq!(error.summary().attempts, 0);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_async_executor_waits_for_its_slot_too() {
    let gate = Arc::new(Gate::new(8).unwrap());
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    gate.throttled("api", clock.now(), Duration::from_secs(2), true);
    let result = stagger::retry(Immediate::new(), |_| async {
        Ok::<_, Failure>(clock.now())
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .gate(Arc::clone(&gate))
    .destination("api")
    .await;
    assert_eq!(
        result.unwrap(),
        Timestamp::from_duration(Duration::from_secs(2))
    );
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_it_waits_for_its_slot_gives_the_slot_back() {
    use stagger::budget::Slot;
    let gate = Arc::new(Gate::new(8).unwrap());
    let clock = Stopwatch::start(stagger::clock::TokioClock::new());
    gate.throttled("api", clock.now(), Duration::from_secs(1), true);
    let call = stagger::retry(Immediate::new(), |_| async { Ok::<_, Failure>(()) })
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .gate(Arc::clone(&gate))
        .destination("api");
    // The caller gives up on it after half a second, in its wait for the slot at 1 s.
    let cut = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(cut.is_err());
    // The slot at 1 s is free again for the next call.
    assert_eq!(
        gate.slot("api", clock.now(), None),
        Slot::At(Timestamp::from_duration(Duration::from_secs(1)))
    );
}

#[test]
fn the_wait_for_a_slot_is_reported_as_waited() {
    let clock = ManualClock::new();
    let gate = Arc::new(Gate::new(8).unwrap());
    gate.throttled("api", Timestamp::ZERO, Duration::from_secs(2), true);
    let sleeps = clock.clone();
    let outcome = stagger::blocking::retry(Immediate::new(), |_| Ok::<(), Failure>(()))
        .classify(|f: &Failure| *f)
        .clock(clock.clone())
        .sleeper(move |d: Duration| sleeps.advance(d))
        .gate(Arc::clone(&gate))
        .destination("api")
        .call_outcome();
    assert!(outcome.result.is_ok());
    assert_eq!(outcome.summary.waited, Duration::from_secs(2));
    assert_eq!(outcome.summary.elapsed, Duration::from_secs(2));
}

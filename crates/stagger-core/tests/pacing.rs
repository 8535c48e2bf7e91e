//! A gate in the engine: a run with a [`GatedBudget`] asks for one slot per attempt, waits
//! for it, gives up at once when it comes too late, hands back a slot (and a grant) it will not
//! use, counts the wait, and passes on no server wait longer than it honours.

use std::sync::Arc;
use std::time::Duration;

use stagger_core::budget::{Budget, TokenBucket, TokenBucketBudget};
use stagger_core::budget::{Slot, Unlimited};
use stagger_core::engine::{Dispersal, Ready, Run, Settings, StopReason};
use stagger_core::gate::{Gate, GatedBudget};
use stagger_core::policy::Immediate;
use stagger_core::{Failure, PolicyConfig, SeededRng, Timestamp};

fn ms(ms: u64) -> Timestamp {
    Timestamp::from_duration(Duration::from_millis(ms))
}

const SECOND: Duration = Duration::from_secs(1);

fn gated_run<B: Budget>(
    gate: &Arc<Gate>,
    budget: B,
    settings: Settings,
    now: Timestamp,
) -> Run<impl stagger_core::Policy, GatedBudget<B>> {
    let policy = Immediate::new()
        .with_max_attempts(4)
        .build(SeededRng::new(1))
        .unwrap();
    let settings = settings.with_dispersal(Dispersal::Floor);
    Run::with_budget(
        policy,
        GatedBudget::new(budget, Arc::clone(gate), "api"),
        settings,
        now,
    )
}

#[test]
fn one_slot_per_attempt_however_often_the_driver_asks() {
    let gate = Arc::new(Gate::new(4).unwrap());
    gate.throttled("api", ms(0), SECOND, true);
    let mut run = gated_run(&gate, Unlimited, Settings::new(), ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Wait(SECOND));
    // Asked again before the slot (a sleeper that woke early), at it, and after it (a tower
    // service that was not ready at once): the same slot, not a new one.
    assert_eq!(run.ready(ms(400)), Ready::Wait(Duration::from_millis(600)));
    assert_eq!(run.ready(ms(1_000)), Ready::Go);
    assert_eq!(run.ready(ms(1_010)), Ready::Go);
    assert!(run.begin(ms(1_010)).is_ok());
    // The next caller's slot is one spacing (a quarter of the wait) after the only one taken.
    assert_eq!(gate.slot("api", ms(1_010), None), Slot::At(ms(1_250)));
    // The wait for the slot counts as waited.
    assert_eq!(run.summary(ms(1_010)).waited, SECOND);
}

#[test]
fn a_slot_that_is_not_used_goes_back_and_so_does_the_grant() {
    let gate = Arc::new(Gate::new(4).unwrap());
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap();
    let mut run = gated_run(&gate, &bucket, Settings::new(), ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Go);
    assert!(run.begin(ms(0)).is_ok());
    // Refused with "1 second": the gate closes, and the retry is granted (5 tokens).
    let retry = run.failed(ms(5), Failure::Throttled(Some(SECOND))).unwrap();
    assert_eq!(retry.delay, SECOND);
    assert_eq!(bucket.tokens(), 5.0);
    // Another call takes the first slot; this run's retry gets the next.
    assert_eq!(gate.slot("api", ms(10), None), Slot::At(ms(1_005)));
    assert_eq!(
        run.ready(ms(1_005)),
        Ready::Wait(Duration::from_millis(250))
    );
    // The run is cancelled in its wait (a future dropped): the 5 tokens go back, and the slot
    // with the run's gated budget.
    run.cancel();
    assert_eq!(bucket.tokens(), 10.0);
    drop(run);
    assert_eq!(gate.slot("api", ms(1_100), None), Slot::At(ms(1_255)));
}

#[test]
fn a_slot_past_the_deadline_ends_the_run_at_once_and_refunds_the_retry() {
    let gate = Arc::new(Gate::new(4).unwrap());
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap();
    let settings = Settings::new().with_timeout(Duration::from_millis(1_500));
    let mut run = gated_run(&gate, &bucket, settings, ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Go);
    assert!(run.begin(ms(0)).is_ok());
    assert!(run.failed(ms(0), Failure::Throttled(Some(SECOND))).is_ok());
    // Four other calls take the slots at 1 s, 1.25 s, 1.5 s and 1.75 s...
    for _ in 0..4 {
        assert!(matches!(gate.slot("api", ms(1), None), Slot::At(_)));
    }
    // ...so this run's next slot is past its deadline: it gives up now, not at the deadline.
    let Ready::GiveUp(stopped) = run.ready(ms(1_000)) else {
        panic!("the run must give up");
    };
    assert_eq!(
        stopped.reason,
        StopReason::WaitExceedsDeadline {
            wait: SECOND,
            remaining: Duration::from_millis(500)
        }
    );
    assert_eq!(bucket.tokens(), 10.0, "the retry was not sent");
}

#[test]
fn a_hostile_server_wait_shuts_the_destination_no_longer_than_the_run_honours() {
    let gate = Arc::new(Gate::new(4).unwrap());
    let settings = Settings::new().with_max_server_wait(Duration::from_secs(60));
    let mut run = gated_run(&gate, Unlimited, settings, ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Go);
    assert!(run.begin(ms(0)).is_ok());
    // "Come back in a year": the run gives up, and the gate is closed for a minute at most.
    let year = Duration::from_secs(365 * 24 * 3600);
    let stopped = run
        .failed(ms(0), Failure::Throttled(Some(year)))
        .unwrap_err();
    assert!(matches!(
        stopped.reason,
        StopReason::ServerWaitTooLong { .. }
    ));
    assert_eq!(gate.slot("api", ms(1), None), Slot::At(ms(60_000)));
    // A run that honours less than that waits for no slot beyond it: it gives up at once.
    let short = Settings::new().with_max_server_wait(Duration::from_secs(10));
    let mut other = gated_run(&gate, Unlimited, short, ms(2));
    assert!(matches!(
        other.ready(ms(2)),
        Ready::GiveUp(stopped) if matches!(stopped.reason, StopReason::ServerWaitTooLong { .. })
    ));
}

#[test]
fn a_budget_that_does_not_pace_is_never_held() {
    // The same run without a gate: ready at once, whatever came before.
    let policy = Immediate::new().build(SeededRng::new(1)).unwrap();
    let mut run = Run::new(policy, Settings::new(), ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Go);
    assert!(run.begin(ms(0)).is_ok());
    let retry = run.failed(ms(0), Failure::Retryable).unwrap();
    assert_eq!(run.ready(ms(0).saturating_add(retry.delay)), Ready::Go);
}

#[test]
fn a_run_that_ends_before_its_slot_gives_it_back_at_once() {
    let gate = Arc::new(Gate::new(4).unwrap());
    gate.throttled("api", ms(0), SECOND, true);
    let settings = Settings::new().with_timeout(Duration::from_millis(1_100));
    let mut run = gated_run(&gate, Unlimited, settings, ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Wait(SECOND));
    // The sleeper overslept past the deadline: the run ends without its attempt, and the
    // slot at 1 s is free for the next caller while the run is still around.
    assert!(run.begin(ms(1_200)).is_err());
    assert_eq!(gate.slot("api", ms(1_200), None), Slot::Now);
    // A driver that abandons the run before its attempt gives the slot back too.
    let mut other = gated_run(&gate, Unlimited, Settings::new(), ms(1_200));
    assert!(matches!(other.ready(ms(1_200)), Ready::Wait(_)));
    let _ = other.abandon(ms(1_201), StopReason::NotRetryable);
    assert_eq!(gate.slot("api", ms(1_201), None), Slot::At(ms(1_450)));
}

#[test]
fn a_run_sent_before_the_pacing_began_does_not_widen_the_slots() {
    let gate = Arc::new(Gate::new(4).unwrap());
    // A run's first attempt goes before anyone is throttled...
    let mut late = gated_run(&gate, Unlimited, Settings::new(), ms(0));
    assert_eq!(late.ready(ms(0)), Ready::Go);
    assert!(late.begin(ms(0)).is_ok());
    // ...another call is throttled and the gate starts to pace...
    gate.throttled("api", ms(5), SECOND, true);
    assert_eq!(gate.slot("api", ms(6), None), Slot::At(ms(1_005)));
    // ...and then the first run's refusal comes back, slowly: the slots stay a quarter of the
    // wait apart, as a refusal in a slot would not leave them.
    assert!(
        late.failed(ms(400), Failure::Throttled(Some(SECOND)))
            .is_ok()
    );
    assert_eq!(gate.slot("api", ms(401), None), Slot::At(ms(1_255)));
}

#[test]
fn a_first_attempt_the_budget_refuses_gives_its_slot_back() {
    /// A budget that refuses every first attempt, behind the gate.
    struct Refusing;
    impl Budget for Refusing {
        fn admit(&self, _: Timestamp) -> bool {
            false
        }
        fn try_retry(&self, _: Timestamp, _: &Failure) -> Option<stagger_core::budget::Spent> {
            None
        }
    }
    let gate = Arc::new(Gate::new(4).unwrap());
    gate.throttled("api", ms(0), SECOND, true);
    let mut run = gated_run(&gate, Refusing, Settings::new(), ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Wait(SECOND));
    let stopped = run.begin(ms(1_000)).unwrap_err();
    assert_eq!(stopped.reason, StopReason::BudgetRefusedFirstAttempt);
    // The slot at 1 s was not used: the next caller has it.
    assert_eq!(gate.slot("api", ms(1_000), None), Slot::Now);
}

#[test]
fn a_longer_server_wait_moves_a_slot_already_reserved() {
    let gate = Arc::new(Gate::new(4).unwrap());
    gate.throttled("api", ms(0), SECOND, true);
    let mut run = gated_run(&gate, Unlimited, Settings::new(), ms(0));
    assert_eq!(run.ready(ms(0)), Ready::Wait(SECOND));
    // Meanwhile another call is told "a minute": the slot at 1 s would meet a certain 429.
    gate.throttled("api", ms(500), Duration::from_secs(60), true);
    let Ready::Wait(rest) = run.ready(ms(1_000)) else {
        panic!("the run must wait for the longer wait");
    };
    assert!(ms(1_000).saturating_add(rest) >= ms(60_500), "{rest:?}");
    // Both waits count as waited, once each.
    assert_eq!(run.summary(ms(1_000)).waited, SECOND + rest);
}

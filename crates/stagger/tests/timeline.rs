//! One timeline for everything runs share: a gate or a budget used by calls that start at
//! different times, each on a default clock made for it, behaves as if one clock timed them
//! all; and a run whose clock is on another timeline than the shared object's is refused
//! before it sends anything.
//!
//! The async tests run on tokio's paused clock, so a minute passes at once and every time is
//! exact; the last two run on real clocks, scaled down to seconds. (Paused time against real
//! clocks is `paused_time.rs`.)

#![cfg(feature = "tokio")]

#[path = "support/stopwatch.rs"]
mod stopwatch;
use stopwatch::Stopwatch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use stagger::budget::{Breaker, Budget, BudgetConfig, Ratio, SreAdaptive, TokenBucket};
use stagger::clock::{Clock, ManualClock, MonotonicClock, Timeline, Timestamp, TokioClock};
use stagger::engine::{Dispersal, Settings, StopReason};
use stagger::gate::Gate;
use stagger::policy::Immediate;
use stagger::rng::SeededRng;
use stagger::{ConfigError, Failure};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The time since `start` on the process timeline, read as the executors' default clocks
/// read it.
fn since(start: Timestamp) -> Duration {
    TokioClock::new().now().saturating_duration_since(start)
}

type Log = Arc<Mutex<Vec<(&'static str, Duration)>>>;

/// A call to "api" that runs `first` on its first attempt and is then told to wait a second;
/// its retry is served. Meanwhile, a second call starts just after the refusal. Both use the
/// executor's default clock, made for each run. Returns when each call's attempts were sent,
/// and how the second call ended.
async fn a_late_call_after_a_throttle_that_took(
    first: Duration,
) -> (Vec<(&'static str, Duration)>, Result<(), StopReason>) {
    let gate = Arc::new(Gate::new(8).unwrap());
    let log: Log = Arc::default();
    let start = TokioClock::new().now();
    let slow = {
        let log = Arc::clone(&log);
        stagger::retry(Immediate::new().with_max_attempts(2), move |attempt| {
            log.lock().unwrap().push(("slow", since(start)));
            async move {
                if attempt.number == 1 {
                    tokio::time::sleep(first).await;
                    Err(Failure::Throttled(Some(Duration::from_secs(1))))
                } else {
                    Ok(())
                }
            }
        })
        .classify(|f: &Failure| *f)
        .settings(Settings::new().with_dispersal(Dispersal::Floor))
        .gate(Arc::clone(&gate))
        .destination("api")
    };
    let slow = tokio::spawn(std::future::IntoFuture::into_future(slow));
    tokio::time::sleep(first + Duration::from_millis(1)).await;
    let late = {
        let log = Arc::clone(&log);
        stagger::retry(Immediate::new().with_max_attempts(1), move |_| {
            log.lock().unwrap().push(("late", since(start)));
            async { Ok::<(), Failure>(()) }
        })
        .classify(|f: &Failure| *f)
        .gate(Arc::clone(&gate))
        .destination("api")
        .await
    };
    slow.await.unwrap().unwrap();
    let sent = log.lock().unwrap().clone();
    (sent, late.map_err(|e| e.reason()))
}

#[tokio::test(start_paused = true)]
async fn a_call_throttled_after_a_minute_holds_a_later_call_for_the_wait_the_server_asked() {
    let (sent, late) = a_late_call_after_a_throttle_that_took(secs(60.0)).await;
    assert_eq!(late, Ok(()));
    // The server asked at 60 s for a second. The late call, asking at 60.001 s, takes the
    // first slot, at 61 s: it waits 0.999 s. (Before one timeline, its clock started at
    // 60.001 s, and it waited until 121 s.) The slow call's retry, asking at 61 s, takes the
    // next, 225 ms later: a quarter of the wait, shortened by a tenth once the late call was
    // served in its slot.
    assert_eq!(
        sent,
        [
            ("slow", secs(0.0)),
            ("late", secs(61.0)),
            ("slow", secs(61.225))
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_throttle_reported_after_a_360_s_attempt_does_not_shut_out_later_callers() {
    // 361 s is past the longest server wait a run honours (300 s): read on a clock that
    // started with the late call, the gate's closing time looked like such a wait, and the
    // late call gave up at once with `ServerWaitTooLong` without sending anything.
    let (sent, late) = a_late_call_after_a_throttle_that_took(secs(360.0)).await;
    assert_eq!(late, Ok(()));
    assert_eq!(
        sent,
        [
            ("slow", secs(0.0)),
            ("late", secs(361.0)),
            ("slow", secs(361.225))
        ]
    );
}

/// How one request of [`budget_scenario`] ended: its number, whether it succeeded, its
/// attempts, and why it stopped if it failed.
type Ending = (usize, bool, u32, Option<StopReason>);

/// Requests that start at different times, sharing `budget`, each timed by a clock that
/// `clock` makes for it; every attempt takes 100 ms, and each failure is a refusal that had no
/// effect on the server ([`Failure::Rejected`]):
/// - ten in the first five seconds, refused every time (up to three attempts);
/// - five from 30 s to 30.8 s, served at once;
/// - five from 32 s to 36 s, refused once, then served.
///
/// Returns how each ended, in order of their numbers.
async fn budget_scenario<B, K>(budget: Arc<B>, clock: impl Fn() -> K) -> Vec<Ending>
where
    B: Budget + Send + Sync + 'static,
    K: Clock + Send + Sync + Clone + 'static,
{
    let starts: Vec<(f64, u32)> = (0..10)
        .map(|i| (f64::from(i) * 0.5, u32::MAX))
        .chain((0..5).map(|i| (30.0 + f64::from(i) * 0.2, 0)))
        .chain((0..5).map(|i| (32.0 + f64::from(i), 1)))
        .collect();
    let mut tasks = Vec::new();
    for (number, &(at, failures)) in starts.iter().enumerate() {
        let budget = Arc::clone(&budget);
        let clock = clock();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(secs(at)).await;
            let outcome = stagger::retry(
                Immediate::new().with_max_attempts(3),
                |attempt| async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if attempt.number <= failures {
                        Err(Failure::Rejected)
                    } else {
                        Ok(())
                    }
                },
            )
            .classify(|f: &Failure| *f)
            .clock(clock)
            .budget(budget)
            .outcome()
            .await;
            (
                number,
                outcome.result.is_ok(),
                outcome.summary.attempts,
                outcome.result.err().map(|e| e.reason()),
            )
        }));
    }
    let mut endings = Vec::new();
    for task in tasks {
        endings.push(task.await.unwrap());
    }
    endings
}

/// Runs [`budget_scenario`] twice on fresh budgets from `make`: once with a default clock made
/// for each request (what `stagger::retry` does when no clock is given), once with one clock
/// shared by every request, the reference. Returns both.
async fn per_request_clocks_and_one_clock<B>(make: impl Fn() -> B) -> (Vec<Ending>, Vec<Ending>)
where
    B: Budget + Send + Sync + 'static,
{
    let separate = budget_scenario(Arc::new(make()), TokioClock::new).await;
    let one = Stopwatch::start(TokioClock::new());
    let reference = budget_scenario(Arc::new(make()), move || one.clone()).await;
    (separate, reference)
}

/// Whether the budget refused some of the first ten requests an attempt.
fn the_first_burst_was_refused(endings: &[Ending]) -> bool {
    endings[..10].iter().any(|e| {
        matches!(
            e.3,
            Some(StopReason::BudgetExhausted | StopReason::BudgetRefusedFirstAttempt)
        )
    })
}

/// Whether every request from 30 s on was served, those refused once after one retry: the
/// budget had forgotten the first burst, which left its window 25 s before.
fn the_later_requests_were_served(endings: &[Ending]) -> bool {
    endings[10..15]
        .iter()
        .all(|&(_, ok, attempts, _)| ok && attempts == 1)
        && endings[15..]
            .iter()
            .all(|&(_, ok, attempts, _)| ok && attempts == 2)
}

#[tokio::test(start_paused = true)]
async fn a_ratio_budget_shared_across_time_behaves_as_under_one_clock() {
    // A reserve of 10 retries per 10 s, and no share of requests: the first burst spends the
    // reserve; the later requests find it full again.
    let ratio = Ratio::FINAGLE
        .with_ttl(Duration::from_secs(10))
        .with_min_per_sec(1)
        .with_percent(0.0);
    let (separate, reference) =
        per_request_clocks_and_one_clock(|| ratio.build(SeededRng::new(1)).unwrap()).await;
    assert_eq!(separate, reference);
    assert!(the_first_burst_was_refused(&reference), "{reference:?}");
    assert!(the_later_requests_were_served(&reference), "{reference:?}");
}

#[tokio::test(start_paused = true)]
async fn an_sre_throttle_shared_across_time_behaves_as_under_one_clock() {
    // Refusals are no accepts: the first burst makes the throttle refuse attempts locally;
    // 25 s later, its window holds none of them.
    let sre = SreAdaptive::new()
        .with_k(1.5)
        .with_window(Duration::from_secs(10));
    let (separate, reference) =
        per_request_clocks_and_one_clock(|| sre.build(SeededRng::new(7)).unwrap()).await;
    assert_eq!(separate, reference);
    assert!(the_first_burst_was_refused(&reference), "{reference:?}");
    assert!(the_later_requests_were_served(&reference), "{reference:?}");
}

#[tokio::test(start_paused = true)]
async fn a_windowed_breaker_shared_across_time_behaves_as_under_one_clock() {
    // Tripped by the first burst; closed again once its failures have left the window, and
    // kept closed by the successes at 30 s.
    let breaker = Breaker::new()
        .with_threshold(0.5)
        .with_window(Some(Duration::from_secs(10)));
    let (separate, reference) =
        per_request_clocks_and_one_clock(|| breaker.build(SeededRng::new(1)).unwrap()).await;
    assert_eq!(separate, reference);
    assert!(the_first_burst_was_refused(&reference), "{reference:?}");
    assert!(the_later_requests_were_served(&reference), "{reference:?}");
}

#[tokio::test(start_paused = true)]
async fn a_token_bucket_shared_across_time_behaves_as_under_one_clock() {
    // The bucket keeps no time, so it accepts runs of any timeline; it is here so that every
    // shared budget of the catalog is checked the same way.
    let bucket = TokenBucket::AWS_STANDARD.with_capacity(20.0);
    let (separate, reference) =
        per_request_clocks_and_one_clock(|| bucket.build(SeededRng::new(1)).unwrap()).await;
    assert_eq!(separate, reference);
    assert!(the_first_burst_was_refused(&reference), "{reference:?}");
}

// ---------------------------------------------------------------------------------------------
// Another timeline is refused.

// Real time: under paused time the default clock is on the paused runtime's timeline.
#[tokio::test]
async fn a_gate_bound_to_a_manual_clock_refuses_a_run_on_the_process_timeline() {
    let gate = Arc::new(Gate::new(8).unwrap());
    let manual = ManualClock::new();
    let first = stagger::retry(Immediate::new(), |_| async { Ok::<_, Failure>(()) })
        .classify(|f: &Failure| *f)
        .clock(manual.clone())
        .gate(Arc::clone(&gate))
        .destination("api")
        .await;
    assert!(first.is_ok());
    // A second run on the default clock: its times are not the manual clock's.
    let mut sent = 0;
    let second = stagger::retry(Immediate::new(), |_| {
        sent += 1;
        async { Ok::<_, Failure>(()) }
    })
    .classify(|f: &Failure| *f)
    .gate(Arc::clone(&gate))
    .destination("api")
    .await
    .unwrap_err();
    assert_eq!(sent, 0, "nothing is sent");
    assert_eq!(second.reason(), StopReason::InvalidConfig);
    assert_eq!(
        second.config_error(),
        Some(&ConfigError::TimelineMismatch {
            bound: manual.timeline(),
            given: Timeline::PROCESS,
        })
    );
    assert!(
        second.to_string().contains("timeline"),
        "the message says what is wrong: {second}"
    );
    // Runs on the manual clock, and its clones, still use it.
    let again = stagger::retry(Immediate::new(), |_| async { Ok::<_, Failure>(()) })
        .classify(|f: &Failure| *f)
        .clock(manual.clone())
        .gate(gate)
        .destination("api")
        .await;
    assert!(again.is_ok());
}

#[test]
fn a_budget_bound_to_the_process_timeline_refuses_a_blocking_run_on_a_manual_clock() {
    let ratio = Arc::new(Ratio::FINAGLE.budget().unwrap());
    let ok = stagger::blocking::retry(Immediate::new(), |_| Ok::<_, Failure>(()))
        .classify(|f: &Failure| *f)
        .budget(Arc::clone(&ratio))
        .call();
    assert!(ok.is_ok());
    let mut sent = 0;
    let refused = stagger::blocking::retry(Immediate::new(), |_| {
        sent += 1;
        Ok::<_, Failure>(())
    })
    .classify(|f: &Failure| *f)
    .clock(ManualClock::new())
    .budget(Arc::clone(&ratio))
    .call()
    .unwrap_err();
    assert_eq!(sent, 0);
    assert!(matches!(
        refused.config_error(),
        Some(ConfigError::TimelineMismatch { bound, .. }) if *bound == Timeline::PROCESS
    ));
}

#[tokio::test(start_paused = true)]
async fn clocks_with_origins_of_their_own_cannot_share_a_budget() {
    // What every default clock was before one timeline: a clock that starts with its run. Two
    // such clocks are two timelines, so the second run is refused rather than counted in the
    // window at the wrong time.
    let ratio = Arc::new(Ratio::FINAGLE.budget().unwrap());
    let run = |clock: Stopwatch<TokioClock>| {
        stagger::retry(Immediate::new(), |_| async { Ok::<_, Failure>(()) })
            .classify(|f: &Failure| *f)
            .clock(clock)
            .budget(Arc::clone(&ratio))
    };
    let first = Stopwatch::start(TokioClock::new());
    assert!(run(first.clone()).await.is_ok());
    tokio::time::sleep(secs(60.0)).await;
    let second = run(Stopwatch::start(TokioClock::new())).await.unwrap_err();
    assert!(matches!(
        second.config_error(),
        Some(ConfigError::TimelineMismatch { bound, given })
            if *bound == first.timeline() && *given != first.timeline()
    ));
    // A clone of the first clock is the first clock's timeline.
    assert!(run(first).await.is_ok());
}

#[tokio::test]
async fn one_gate_shared_by_an_async_and_a_blocking_executor_on_one_manual_clock() {
    let clock = ManualClock::new();
    let gate = Arc::new(Gate::new(8).unwrap());
    // The async call is refused at 60 s and told to wait a second.
    clock.advance(secs(60.0));
    let refused = stagger::retry(Immediate::new().with_max_attempts(1), |_| async {
        Err::<(), _>(Failure::Throttled(Some(Duration::from_secs(1))))
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .gate(Arc::clone(&gate))
    .destination("api")
    .await
    .unwrap_err();
    assert_eq!(refused.reason(), StopReason::AttemptLimit);
    // A blocking call 10 ms later waits for the slot at 61 s; its sleeper moves the clock.
    clock.advance(Duration::from_millis(10));
    let sleeps = clock.clone();
    let mut sent = Vec::new();
    stagger::blocking::retry(Immediate::new(), |_| {
        sent.push(clock.now());
        Ok::<_, Failure>(())
    })
    .classify(|f: &Failure| *f)
    .clock(clock.clone())
    .sleeper(move |d: Duration| sleeps.advance(d))
    .gate(gate)
    .destination("api")
    .call()
    .unwrap();
    assert_eq!(sent, [Timestamp::from_duration(secs(61.0))]);
}

// ---------------------------------------------------------------------------------------------
// Real clocks, scaled down.

/// An async call on tokio's clock is refused after running 2 s, and told to wait a second; a
/// blocking call on the operating system's clock starts just after, through the same gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_gate_shared_by_an_async_and_a_blocking_executor_on_real_clocks() {
    let gate = Arc::new(Gate::new(8).unwrap());
    let first = Duration::from_secs(2);
    let refused_at = Arc::new(Mutex::new(None));
    let async_call = {
        let refused_at = Arc::clone(&refused_at);
        stagger::retry(Immediate::new().with_max_attempts(1), move |_| {
            let refused_at = Arc::clone(&refused_at);
            async move {
                tokio::time::sleep(first).await;
                *refused_at.lock().unwrap() = Some(MonotonicClock::new().now());
                Err::<(), _>(Failure::Throttled(Some(Duration::from_secs(1))))
            }
        })
        .classify(|f: &Failure| *f)
        .gate(Arc::clone(&gate))
        .destination("api")
    };
    let refused = async_call.await.unwrap_err();
    assert_eq!(refused.reason(), StopReason::AttemptLimit);
    let refused_at = refused_at.lock().unwrap().expect("the attempt ran");
    let gate_for_blocking = Arc::clone(&gate);
    let sent_at = tokio::task::spawn_blocking(move || {
        let mut sent_at = None;
        stagger::blocking::retry(Immediate::new().with_max_attempts(1), |_| {
            sent_at = Some(MonotonicClock::new().now());
            Ok::<_, Failure>(())
        })
        .classify(|f: &Failure| *f)
        .gate(gate_for_blocking)
        .destination("api")
        .call()
        .unwrap();
        sent_at.expect("sent")
    })
    .await
    .unwrap();
    let waited = sent_at.saturating_duration_since(refused_at);
    // Never before the second the server asked for; and not the 3 s that a clock starting
    // with the blocking run would have read off the gate. The upper bound leaves room for a
    // loaded machine.
    assert!(waited >= Duration::from_millis(990), "{waited:?}");
    assert!(waited < Duration::from_millis(2_500), "{waited:?}");
}

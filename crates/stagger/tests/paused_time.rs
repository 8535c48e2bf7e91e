//! tokio's paused time is not the process timeline: a gate (or budget) shared by a run on a
//! paused runtime and a run on a real clock refuses whichever comes second, before it sends
//! anything, rather than compare virtual times with real ones. The runs of one paused runtime,
//! on any of its threads and after `resume`, keep sharing it.
//!
//! Each test builds its runtimes itself, one after another, as a test binary's `static` gate
//! would meet them.

#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use stagger::clock::{Clock, Timeline, TokioClock};
use stagger::engine::StopReason;
use stagger::gate::Gate;
use stagger::policy::Immediate;
use stagger::{ConfigError, Failure};
use tokio::runtime::{Builder, Runtime};

/// Used by a run on paused time first, then by runs on real clocks.
static PAUSED_FIRST: LazyLock<Arc<Gate>> = LazyLock::new(|| Arc::new(Gate::new(8).unwrap()));
/// Used by a run on a real clock first, then by a run on paused time.
static REAL_FIRST: LazyLock<Arc<Gate>> = LazyLock::new(|| Arc::new(Gate::new(8).unwrap()));

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// The real-clock runtimes: a current-thread one that never paused, and a multi-thread one.
fn real() -> [Runtime; 2] {
    [
        Builder::new_current_thread().enable_time().build().unwrap(),
        Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap(),
    ]
}

/// How a call ended: served, or why it stopped and the configuration error, if any.
type Ended = Result<(), (StopReason, Option<ConfigError>)>;

/// One call to "api" through `gate` on tokio's clock, counting its attempts in `sent`.
async fn call(gate: &Arc<Gate>, sent: &Arc<AtomicU32>) -> Ended {
    let sent = Arc::clone(sent);
    stagger::retry(Immediate::new().with_max_attempts(1), move |_| {
        sent.fetch_add(1, Ordering::SeqCst);
        async { Ok::<(), Failure>(()) }
    })
    .classify(|f: &Failure| *f)
    .gate(Arc::clone(gate))
    .destination("api")
    .await
    .map_err(|e| (e.reason(), e.config_error().cloned()))
}

/// Asserts that `ended` is a refusal for a clock on `given` by a gate bound to another
/// timeline, and returns that timeline.
fn refused(ended: &Ended, given: impl Fn(Timeline) -> bool) -> Timeline {
    match ended {
        Err((
            StopReason::InvalidConfig,
            Some(ConfigError::TimelineMismatch { bound, given: g }),
        )) if given(*g) && bound != g => *bound,
        other => panic!("not refused for its timeline: {other:?}"),
    }
}

#[test]
fn a_gate_used_on_paused_time_refuses_runs_on_real_clocks() {
    let gate = &*PAUSED_FIRST;
    let sent = Arc::new(AtomicU32::new(0));
    // Two hours of virtual time pass at once, then a call is throttled for a second.
    let paused_timeline = paused().block_on(async {
        tokio::time::sleep(Duration::from_secs(7_200)).await;
        assert_eq!(call(gate, &sent).await, Ok(()));
        gate.throttled("api", TokioClock::new().now(), Duration::from_secs(1), true);
        TokioClock::new().timeline()
    });
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    // A call on a real clock would read the gate's slot two hours ahead of its own time.
    for runtime in real() {
        let ended = runtime.block_on(call(gate, &sent));
        let bound = refused(&ended, |given| given == Timeline::PROCESS);
        assert_eq!(bound, paused_timeline);
    }
    assert_ne!(paused_timeline, Timeline::PROCESS);
    // So would a blocking call on the operating system's clock.
    let mut blocking_sent = 0;
    let blocking = stagger::blocking::retry(Immediate::new(), |_| {
        blocking_sent += 1;
        Ok::<(), Failure>(())
    })
    .classify(|f: &Failure| *f)
    .gate(Arc::clone(gate))
    .destination("api")
    .call()
    .map_err(|e| (e.reason(), e.config_error().cloned()));
    refused(&blocking, |given| given == Timeline::PROCESS);
    assert_eq!(
        (sent.load(Ordering::SeqCst), blocking_sent),
        (1, 0),
        "nothing sent"
    );
}

#[test]
fn a_gate_used_on_a_real_clock_refuses_a_run_on_paused_time() {
    let gate = &*REAL_FIRST;
    let sent = Arc::new(AtomicU32::new(0));
    let [current_thread, multi_thread] = real();
    assert_eq!(current_thread.block_on(call(gate, &sent)), Ok(()));
    assert_eq!(multi_thread.block_on(call(gate, &sent)), Ok(()));
    assert_eq!(sent.load(Ordering::SeqCst), 2);
    // Paused, with no time advanced yet: still not the operating system's clock.
    let ended = paused().block_on(call(gate, &sent));
    let bound = refused(&ended, |given| given != Timeline::PROCESS);
    assert_eq!(bound, Timeline::PROCESS);
    // And after virtual time has run ahead.
    let ended = paused().block_on(async {
        tokio::time::sleep(Duration::from_secs(7_200)).await;
        call(gate, &sent).await
    });
    refused(&ended, |given| given != Timeline::PROCESS);
    assert_eq!(sent.load(Ordering::SeqCst), 2, "nothing sent");
}

#[test]
fn the_runs_of_one_paused_runtime_share_its_timeline_on_every_thread_and_after_resume() {
    let gate = Arc::new(Gate::new(8).unwrap());
    let sent = Arc::new(AtomicU32::new(0));
    let timeline = paused().block_on(async {
        let timeline = TokioClock::new().timeline();
        assert_ne!(timeline, Timeline::PROCESS);
        assert_eq!(call(&gate, &sent).await, Ok(()));
        // Another task of the runtime.
        let (task_gate, task_sent) = (Arc::clone(&gate), Arc::clone(&sent));
        let task = tokio::spawn(async move { call(&task_gate, &task_sent).await });
        assert_eq!(task.await.unwrap(), Ok(()));
        // A blocking task reads the runtime's paused clock too, on another thread: a blocking
        // executor there, on tokio's clock, shares the gate.
        let blocking_gate = Arc::clone(&gate);
        let blocking = tokio::task::spawn_blocking(move || {
            let timeline = TokioClock::new().timeline();
            let ended = stagger::blocking::retry(Immediate::new(), |_| Ok::<(), Failure>(()))
                .classify(|f: &Failure| *f)
                .clock(TokioClock::new())
                .gate(blocking_gate)
                .destination("api")
                .call()
                .map_err(|e| e.reason());
            (timeline, ended)
        });
        assert_eq!(blocking.await.unwrap(), (timeline, Ok(())));
        // Resumed after an hour of virtual time, the clock moves again, an hour off the
        // operating system's: still the runtime's timeline.
        tokio::time::advance(Duration::from_secs(3_600)).await;
        tokio::time::resume();
        assert_eq!(TokioClock::new().timeline(), timeline);
        assert_eq!(call(&gate, &sent).await, Ok(()));
        timeline
    });
    assert_eq!(sent.load(Ordering::SeqCst), 3);
    // Another paused runtime keeps other times: another timeline, refused by the gate.
    let (other, ended) =
        paused().block_on(async { (TokioClock::new().timeline(), call(&gate, &sent).await) });
    assert_ne!(other, timeline);
    assert_eq!(refused(&ended, |given| given == other), timeline);
}

#[tokio::test]
async fn a_current_thread_runtime_that_never_paused_is_on_the_process_timeline() {
    for _ in 0..1_000 {
        assert_eq!(TokioClock::new().timeline(), Timeline::PROCESS);
    }
}

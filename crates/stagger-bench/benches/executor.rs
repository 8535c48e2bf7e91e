//! Cost of the retry executors, for stagger and for peer crates.
//!
//! Every benchmark runs the same workload: an operation that fails 7 times with a retryable error,
//! then succeeds (8 attempts). One timed iteration is one whole run, from building the policy or
//! backoff to the final result, so construction is counted once per run for everyone.
//!
//! - `async_loop`: per-attempt CPU cost of the async executor. A constant 1 ms delay (so the
//!   delay is non-zero and the sleeper really is called) and a no-op sleeper whose future is
//!   immediately ready, polled once on a minimal executor ([`block_on`], no runtime).
//! - `blocking_loop`: the same for the blocking executor, with a no-op sleeper.
//! - `zero_delay_wall_time`: wall time of one run with 7 zero-delay retries on a real
//!   current-thread tokio runtime with its time driver, each crate with its tokio sleeper.
//!
//! In the first two groups divan times one run (8 attempts) and reports `ItemsCount(8)`, so its
//! throughput column is attempts per second; the time per attempt is the time per run divided by
//! 8. The third group reports the time per run.
//!
//! Run with `cargo bench -p stagger-bench --bench executor`.

use std::cell::Cell;
use std::future::{Ready, ready};
use std::time::Duration;

use divan::Bencher;
use divan::counter::ItemsCount;
use stagger_bench::block_on;

fn main() {
    divan::main();
}

/// Failed attempts before the one that succeeds.
const FAILURES: u32 = 7;
/// Attempts per run, including the successful one.
const ATTEMPTS: u32 = FAILURES + 1;
/// The constant delay of the CPU-cost groups: non-zero, so every executor calls its sleeper.
const DELAY: Duration = Duration::from_millis(1);

/// The error of a failed attempt (retryable for every crate).
#[derive(Debug)]
struct Transient;

/// The operation: fails `FAILURES` times, then returns the number of calls.
///
/// Interior mutability so that every crate's closure (including tower's `Clone` service) can
/// share it by reference. The call count goes through `black_box` on every attempt, so the
/// compiler cannot know which attempt succeeds: without it, LLVM folds the fully inlined loops
/// (backoff's, the hand-written ones) into a closed form and a whole run takes ~2 ns.
struct Flaky {
    calls: Cell<u32>,
    failures: u32,
}

impl Flaky {
    fn new() -> Self {
        Self {
            calls: Cell::new(0),
            failures: divan::black_box(FAILURES),
        }
    }

    /// One attempt.
    #[inline]
    fn attempt(&self) -> Result<u32, Transient> {
        let calls = divan::black_box(self.calls.get() + 1);
        self.calls.set(calls);
        if calls <= self.failures {
            Err(Transient)
        } else {
            Ok(calls)
        }
    }
}

/// Times `run`, one whole retry run against a fresh [`Flaky`], after checking once (untimed)
/// that it makes exactly `ATTEMPTS` attempts and succeeds on the last.
fn bench_runs<E>(bencher: Bencher, mut run: impl FnMut(&Flaky) -> Result<u32, E>) {
    let flaky = Flaky::new();
    let checked = run(&flaky);
    assert!(
        matches!(checked, Ok(ATTEMPTS)) && flaky.calls.get() == ATTEMPTS,
        "a run must make {ATTEMPTS} attempts and succeed on the last"
    );
    bencher.bench_local(|| run(&Flaky::new()));
}

/// Like [`bench_runs`], counting `ATTEMPTS` items per run (divan then reports attempts/s).
fn bench_attempts<E>(bencher: Bencher, run: impl FnMut(&Flaky) -> Result<u32, E>) {
    bench_runs(bencher.counter(ItemsCount::new(ATTEMPTS)), run);
}

/// The no-op async sleeper: its future is immediately ready.
#[inline]
fn noop_sleep(_: Duration) -> Ready<()> {
    ready(())
}

/// A stagger clock stopped at its origin. The peers read no clock in these loops (backoff's
/// `Constant` neither), so stagger's executor is measured without one too.
#[derive(Clone, Copy, Debug)]
struct FixedClock;

impl stagger::clock::Clock for FixedClock {
    #[inline]
    fn now(&self) -> stagger::clock::Timestamp {
        stagger::clock::Timestamp::ZERO
    }
    // No budget or gate is shared in these loops, so no timeline is compared.
    #[inline]
    fn timeline(&self) -> stagger::clock::Timeline {
        stagger::clock::Timeline::PROCESS
    }
}

/// Builds stagger's constant policy with a fresh `SeededRng` per run (`seed` counts the runs).
fn stagger_constant(delay: Duration, seed: &mut u64) -> impl stagger::policy::Policy {
    use stagger::policy::PolicyConfig as _;
    *seed += 1;
    stagger::policy::Constant::new()
        .with_base(delay)
        .with_max_attempts(ATTEMPTS)
        .build(stagger::rng::SeededRng::new(*seed))
        .expect("valid bench policy")
}

/// A tower retry policy: retries up to `retries` errors, waiting `sleep(delay)` before each.
#[derive(Clone, Copy)]
struct TowerTimes<S> {
    retries: u32,
    delay: Duration,
    sleep: S,
}

impl<Req: Clone, Res, E, S, Fut> tower::retry::Policy<Req, Res, E> for TowerTimes<S>
where
    S: Fn(Duration) -> Fut,
    Fut: Future<Output = ()>,
{
    type Future = Fut;

    #[inline]
    fn retry(&mut self, _req: &mut Req, result: &mut Result<Res, E>) -> Option<Fut> {
        if result.is_err() && self.retries > 0 {
            self.retries -= 1;
            Some((self.sleep)(self.delay))
        } else {
            None
        }
    }

    #[inline]
    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        Some(req.clone())
    }
}

/// Per-attempt CPU cost of the async executors: 1 ms constant delay, no-op sleeper, no runtime.
#[divan::bench_group]
mod async_loop {
    use std::future::{Ready, ready};
    use std::time::Duration;

    use backon::Retryable as _;
    use divan::Bencher;
    use stagger::Failure;
    use stagger::clock::MonotonicClock;
    use tower::ServiceExt as _;

    use crate::{
        ATTEMPTS, DELAY, FAILURES, FixedClock, TowerTimes, Transient, bench_attempts, block_on,
        noop_sleep, stagger_constant,
    };

    /// stagger's async executor: `Constant` (1 ms, 8 attempts) built per run with a new
    /// `SeededRng`, a closure classifier returning `Retryable`, the no-op sleeper and
    /// [`FixedClock`]. Includes the engine's per-attempt bookkeeping (attempt limit, deadline and
    /// budget checks, summary) and the nesting mark around every attempt. Also one OS clock read
    /// per run: `stagger::retry` creates its default clock (`TokioClock::new()`) before
    /// `.clock(...)` replaces it.
    #[divan::bench]
    fn stagger(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            block_on(
                stagger::retry(policy, |_attempt| ready(flaky.attempt()))
                    .classify(|_: &Transient| Failure::Retryable)
                    .sleeper(noop_sleep)
                    .clock(FixedClock),
            )
        });
    }

    /// As `stagger`, with the real `MonotonicClock` (created per run) instead of the fixed one:
    /// the cost of reading `Instant::now()` twice per attempt.
    #[divan::bench]
    fn stagger_monotonic_clock(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            block_on(
                stagger::retry(policy, |_attempt| ready(flaky.attempt()))
                    .classify(|_: &Transient| Failure::Retryable)
                    .sleeper(noop_sleep)
                    .clock(MonotonicClock::new()),
            )
        });
    }

    /// As `stagger_monotonic_clock`, with an end-to-end deadline (a minute, never reached):
    /// the clock is read before and after each attempt, since the time left must be exact.
    #[divan::bench]
    fn stagger_monotonic_clock_deadline(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            block_on(
                stagger::retry(policy, |_attempt| ready(flaky.attempt()))
                    .classify(|_: &Transient| Failure::Retryable)
                    .sleeper(noop_sleep)
                    .clock(MonotonicClock::new())
                    .timeout(Duration::from_secs(60)),
            )
        });
    }

    /// backon's `Retryable`: `ConstantBuilder` (1 ms, 7 retries), `.sleep(noop)`, the default
    /// `when` (retry every error).
    #[divan::bench]
    fn backon(bencher: Bencher) {
        bench_attempts(bencher, |flaky| {
            let backoff = backon::ConstantBuilder::new()
                .with_delay(DELAY)
                .with_max_times(FAILURES as usize);
            block_on((|| ready(flaky.attempt())).retry(backoff).sleep(noop_sleep))
        });
    }

    /// backoff's `future::Retry::new` (the public constructor behind `future::retry`, which
    /// only exists with a runtime's sleeper) with a no-op `future::Sleeper`, a no-op notify and
    /// `backoff::Constant` (1 ms; unbounded, as the crate's constant backoff has no attempt
    /// limit). Errors are wrapped as `backoff::Error::transient`.
    #[divan::bench]
    fn backoff(bencher: Bencher) {
        /// The no-op sleeper, as a `backoff::future::Sleeper`.
        struct NoopSleeper;

        impl backoff::future::Sleeper for NoopSleeper {
            type Sleep = Ready<()>;

            #[inline]
            fn sleep(&self, _: Duration) -> Ready<()> {
                ready(())
            }
        }

        bench_attempts(bencher, |flaky| {
            block_on(backoff::future::Retry::new(
                NoopSleeper,
                backoff::backoff::Constant::new(DELAY),
                |_: Transient, _: Duration| {},
                || ready(flaky.attempt().map_err(backoff::Error::transient)),
            ))
        });
    }

    /// tower's `retry::Retry` middleware around a `service_fn`, driven by `ServiceExt::oneshot`.
    /// The policy ([`TowerTimes`]) retries 7 errors, returning the no-op sleeper's future for
    /// the 1 ms delay; the request is `()`. Includes tower's clone of the policy and service per
    /// call and `poll_ready` before every retry.
    #[divan::bench]
    fn tower(bencher: Bencher) {
        bench_attempts(bencher, |flaky| {
            let policy = TowerTimes {
                retries: FAILURES,
                delay: DELAY,
                sleep: noop_sleep,
            };
            let service = tower::service_fn(|()| ready(flaky.attempt()));
            block_on(tower::retry::Retry::new(policy, service).oneshot(()))
        });
    }

    /// The floor: an `async` loop with an attempt limit, awaiting the operation and the no-op
    /// sleeper (1 ms) between attempts.
    #[divan::bench]
    fn hand_written(bencher: Bencher) {
        bench_attempts(bencher, |flaky| {
            let max_attempts = divan::black_box(ATTEMPTS);
            block_on(async {
                let mut attempt = 1;
                loop {
                    match ready(flaky.attempt()).await {
                        Ok(value) => return Ok(value),
                        Err(error) if attempt >= max_attempts => return Err(error),
                        Err(_) => {
                            noop_sleep(DELAY).await;
                            attempt += 1;
                        }
                    }
                }
            })
        });
    }
}

/// Per-attempt CPU cost of the blocking executors: no-op sleeper where the crate accepts one.
#[divan::bench_group]
mod blocking_loop {
    use std::time::Duration;

    use backon::BlockingRetryable as _;
    use divan::Bencher;
    use stagger::Failure;

    use crate::{
        ATTEMPTS, DELAY, FAILURES, FixedClock, Transient, bench_attempts, stagger_constant,
    };

    /// stagger's blocking executor: `Constant` (1 ms, 8 attempts) built per run with a new
    /// `SeededRng`, a closure classifier returning `Retryable`, the no-op sleeper `|_d| {}` and
    /// [`FixedClock`]. Also one OS clock read per run: `stagger::blocking::retry` creates its
    /// default clock (`MonotonicClock::new()`) before `.clock(...)` replaces it.
    #[divan::bench]
    fn stagger(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            stagger::blocking::retry(policy, |_attempt| flaky.attempt())
                .classify(|_: &Transient| Failure::Retryable)
                .sleeper(|_d: Duration| {})
                .clock(FixedClock)
                .call()
        });
    }

    /// As `stagger`, with the default `MonotonicClock`: one `Instant::now()` per attempt.
    #[divan::bench]
    fn stagger_monotonic_clock(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            stagger::blocking::retry(policy, |_attempt| flaky.attempt())
                .classify(|_: &Transient| Failure::Retryable)
                .sleeper(|_d: Duration| {})
                .clock(stagger::clock::MonotonicClock::new())
                .call()
        });
    }

    /// As `stagger_monotonic_clock`, with an end-to-end deadline (a minute, never reached):
    /// two clock reads per attempt.
    #[divan::bench]
    fn stagger_monotonic_clock_deadline(bencher: Bencher) {
        let mut seed = 0;
        bench_attempts(bencher, |flaky| {
            let policy = stagger_constant(DELAY, &mut seed);
            stagger::blocking::retry(policy, |_attempt| flaky.attempt())
                .classify(|_: &Transient| Failure::Retryable)
                .sleeper(|_d: Duration| {})
                .clock(stagger::clock::MonotonicClock::new())
                .timeout(Duration::from_secs(60))
                .call()
        });
    }

    /// backon's `BlockingRetryable`: `ConstantBuilder` (1 ms, 7 retries), `.sleep(|_| {})`.
    #[divan::bench]
    fn backon(bencher: Bencher) {
        bench_attempts(bencher, |flaky| {
            let backoff = backon::ConstantBuilder::new()
                .with_delay(DELAY)
                .with_max_times(FAILURES as usize);
            (|| flaky.attempt())
                .retry(backoff)
                .sleep(|_: Duration| {})
                .call()
        });
    }

    /// backoff's `retry`, which always sleeps with `thread::sleep` (no custom sleeper), so the
    /// delay is `backoff::Constant` with ZERO: `thread::sleep(Duration::ZERO)` returns without a
    /// syscall on Unix. It calls `reset()` first. Errors are wrapped as `Error::transient`.
    #[divan::bench]
    fn backoff(bencher: Bencher) {
        bench_attempts(bencher, |flaky| {
            backoff::retry(backoff::backoff::Constant::new(Duration::ZERO), || {
                flaky.attempt().map_err(backoff::Error::transient)
            })
        });
    }

    /// The floor: a loop with an attempt limit, calling the no-op sleeper (1 ms) between
    /// attempts.
    #[divan::bench]
    fn hand_written(bencher: Bencher) {
        let sleep = |d: Duration| {
            divan::black_box(d);
        };
        bench_attempts(bencher, |flaky| {
            let max_attempts = divan::black_box(ATTEMPTS);
            let mut attempt = 1;
            loop {
                match flaky.attempt() {
                    Ok(value) => return Ok(value),
                    Err(error) if attempt >= max_attempts => return Err(error),
                    Err(_) => {
                        sleep(DELAY);
                        attempt += 1;
                    }
                }
            }
        });
    }
}

/// Wall time of one run with 7 zero-delay retries on a current-thread tokio runtime (time
/// driver enabled), each crate with its tokio sleeper. The runtime is built once per bench;
/// every run is one `block_on`. Few samples of one run each: a peer run takes milliseconds.
#[divan::bench_group(sample_count = 60, sample_size = 1)]
mod zero_delay_wall_time {
    use std::future::ready;
    use std::time::Duration;

    use backon::Retryable as _;
    use divan::Bencher;
    use stagger::Failure;
    use stagger::policy::PolicyConfig as _;
    use tower::ServiceExt as _;

    use crate::{ATTEMPTS, FAILURES, TowerTimes, Transient, bench_runs};

    /// Current-thread runtime with the time driver.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("tokio runtime")
    }

    /// stagger: `Immediate` (8 attempts) built per run, the defaults `TokioSleeper` and
    /// `TokioClock`, a closure classifier. A zero delay skips the sleeper entirely.
    #[divan::bench]
    fn stagger(bencher: Bencher) {
        let rt = runtime();
        let mut seed = 0;
        bench_runs(bencher, |flaky| {
            seed += 1;
            let policy = stagger::policy::Immediate::new()
                .with_max_attempts(ATTEMPTS)
                .build(stagger::rng::SeededRng::new(seed))
                .expect("valid bench policy");
            rt.block_on(
                stagger::retry(policy, |_attempt| ready(flaky.attempt()))
                    .classify(|_: &Transient| Failure::Retryable),
            )
        });
    }

    /// backon: `ConstantBuilder` (zero delay, 7 retries) with its default sleeper,
    /// `TokioSleeper` (`tokio::time::sleep`).
    #[divan::bench]
    fn backon(bencher: Bencher) {
        let rt = runtime();
        bench_runs(bencher, |flaky| {
            let backoff = backon::ConstantBuilder::new()
                .with_delay(Duration::ZERO)
                .with_max_times(FAILURES as usize);
            rt.block_on((|| ready(flaky.attempt())).retry(backoff))
        });
    }

    /// tower: the [`TowerTimes`] policy (7 retries) returning `tokio::time::sleep(ZERO)`.
    #[divan::bench]
    fn tower(bencher: Bencher) {
        let rt = runtime();
        bench_runs(bencher, |flaky| {
            let policy = TowerTimes {
                retries: FAILURES,
                delay: Duration::ZERO,
                sleep: tokio::time::sleep,
            };
            let service = tower::service_fn(|()| ready(flaky.attempt()));
            rt.block_on(tower::retry::Retry::new(policy, service).oneshot(()))
        });
    }

    /// tokio-retry: `Retry::start` with `FixedInterval::new(ZERO).take(7)` (`sleep_until`).
    #[divan::bench]
    fn tokio_retry(bencher: Bencher) {
        let rt = runtime();
        bench_runs(bencher, |flaky| {
            let strategy =
                tokio_retry::strategy::FixedInterval::new(Duration::ZERO).take(FAILURES as usize);
            rt.block_on(tokio_retry::Retry::start(strategy, || {
                ready(flaky.attempt())
            }))
        });
    }
}

//! What the real clock costs an attempt, measured outside the bench harness: the executor
//! bench's run (a constant 1 ms delay, 7 failures then a success, a no-op sleeper) timed in a
//! plain loop of many runs, for stagger with a stopped clock, with `MonotonicClock`, and with
//! `MonotonicClock` and a deadline, and with the TSC-based `QuantaClock` and a deadline,
//! beside backon's loop, one `Instant::now()` and one `QuantaClock` read. Trials are
//! interleaved and the median of each is printed, in ns per attempt.
//!
//! `cargo run --release -p stagger-bench --example clock_reads`

#![allow(clippy::disallowed_methods)] // Wall time is what is measured here.
#![allow(clippy::print_stdout)] // The table is the program's output.

use std::future::ready;
use std::hint::black_box;
use std::time::{Duration, Instant};

use backon::{BlockingRetryable as _, Retryable as _};
use stagger::Failure;
use stagger::clock::{Clock, MonotonicClock, QuantaClock, Timestamp};
use stagger::policy::Constant;
use stagger_bench::block_on;

const ATTEMPTS: u32 = 8;
const RUNS: u32 = 100_000;
const TRIALS: usize = 9;

#[derive(Clone, Copy)]
struct Stopped;

impl Clock for Stopped {
    fn now(&self) -> Timestamp {
        Timestamp::ZERO
    }
    // No budget or gate is shared in these loops, so no timeline is compared.
    fn timeline(&self) -> stagger::clock::Timeline {
        stagger::clock::Timeline::PROCESS
    }
}

fn policy() -> Constant {
    Constant::new()
        .with_base(Duration::from_millis(1))
        .with_max_attempts(ATTEMPTS)
}

/// One attempt of an operation that fails until its eighth call.
fn attempt(calls: &mut u32) -> Result<u32, Failure> {
    *calls = black_box(*calls + 1);
    if *calls < ATTEMPTS {
        Err(Failure::Retryable)
    } else {
        Ok(*calls)
    }
}

fn blocking<K: Clock + Clone>(clock: K, deadline: bool) -> u32 {
    let mut calls = 0;
    let retry = stagger::blocking::retry(policy(), |_| attempt(&mut calls))
        .classify(|f: &Failure| *f)
        .sleeper(|_: Duration| {})
        .clock(clock);
    let retry = if deadline {
        retry.timeout(Duration::from_secs(60))
    } else {
        retry
    };
    retry.call().unwrap()
}

fn asynchronous<K: Clock + Clone + Send + Sync + 'static>(clock: K, deadline: bool) -> u32 {
    let calls = std::cell::Cell::new(0);
    let retry = stagger::retry(policy(), |_| {
        let mut n = calls.get();
        let result = attempt(&mut n);
        calls.set(n);
        ready(result)
    })
    .classify(|f: &Failure| *f)
    .sleeper(|_: Duration| ready(()))
    .clock(clock);
    let retry = if deadline {
        retry.timeout(Duration::from_secs(60))
    } else {
        retry
    };
    block_on(retry).unwrap()
}

fn backon_blocking() -> u32 {
    let mut calls = 0;
    let backoff = backon::ConstantBuilder::new()
        .with_delay(Duration::from_millis(1))
        .with_max_times(ATTEMPTS as usize - 1);
    (|| attempt(&mut calls))
        .retry(backoff)
        .sleep(|_| {})
        .call()
        .unwrap()
}

fn backon_async() -> u32 {
    let calls = std::cell::Cell::new(0);
    let backoff = backon::ConstantBuilder::new()
        .with_delay(Duration::from_millis(1))
        .with_max_times(ATTEMPTS as usize - 1);
    block_on(
        (|| {
            let mut n = calls.get();
            let result = attempt(&mut n);
            calls.set(n);
            ready(result)
        })
        .retry(backoff)
        .sleep(|_| ready(())),
    )
    .unwrap()
}

/// A measured case: its name and one run.
type Case = (&'static str, Box<dyn Fn() -> u32>);

/// ns per attempt of `RUNS` runs of `run`.
fn per_attempt(run: &dyn Fn() -> u32) -> f64 {
    let start = Instant::now();
    for _ in 0..RUNS {
        assert_eq!(black_box(run()), ATTEMPTS);
    }
    start.elapsed().as_nanos() as f64 / f64::from(RUNS * ATTEMPTS)
}

fn main() {
    let cases: Vec<Case> = vec![
        (
            "blocking, stopped clock",
            Box::new(|| blocking(Stopped, false)),
        ),
        (
            "blocking, MonotonicClock",
            Box::new(|| blocking(MonotonicClock::new(), false)),
        ),
        (
            "blocking, MonotonicClock and a deadline",
            Box::new(|| blocking(MonotonicClock::new(), true)),
        ),
        (
            "blocking, QuantaClock and a deadline",
            Box::new(|| blocking(QuantaClock::new(), true)),
        ),
        ("blocking, backon", Box::new(backon_blocking)),
        (
            "async, stopped clock",
            Box::new(|| asynchronous(Stopped, false)),
        ),
        (
            "async, MonotonicClock",
            Box::new(|| asynchronous(MonotonicClock::new(), false)),
        ),
        (
            "async, MonotonicClock and a deadline",
            Box::new(|| asynchronous(MonotonicClock::new(), true)),
        ),
        (
            "async, QuantaClock and a deadline",
            Box::new(|| asynchronous(QuantaClock::new(), true)),
        ),
        ("async, backon", Box::new(backon_async)),
        (
            "one QuantaClock read (per read, not per attempt)",
            Box::new(|| {
                let clock = QuantaClock::calibrated();
                for _ in 0..ATTEMPTS {
                    black_box(clock.now());
                }
                ATTEMPTS
            }),
        ),
        (
            "one Instant::now() (per read, not per attempt)",
            Box::new(|| {
                for _ in 0..ATTEMPTS {
                    black_box(Instant::now());
                }
                ATTEMPTS
            }),
        ),
    ];
    let mut figures = vec![Vec::new(); cases.len()];
    for _ in 0..TRIALS {
        for (i, (_, run)) in cases.iter().enumerate() {
            figures[i].push(per_attempt(run.as_ref()));
        }
    }
    println!("| ns per attempt (median of {TRIALS} interleaved trials of {RUNS} runs) | ns |");
    println!("|---|---|");
    for ((name, _), mut runs) in cases.iter().zip(figures) {
        runs.sort_by(f64::total_cmp);
        println!("| {name} | {:.1} |", runs[TRIALS / 2]);
    }
}

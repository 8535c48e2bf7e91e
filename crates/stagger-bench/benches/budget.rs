//! Cost of a retry budget: one deposit (a request) plus one withdrawal (a retry), for stagger's
//! budgets and tower's `TpsBudget`, uncontended and with two threads sharing one budget.
//!
//! tower's `TpsBudget` is Finagle's ratio budget and reads the clock itself on every call;
//! stagger's budgets take `now` from the engine, which has already read it for the attempt. So
//! stagger is measured three times: with `now` fixed (what the budget itself costs), with a
//! clock read per call (`MonotonicClock`, what a caller without a `now` at hand pays), and with
//! the TSC-based `QuantaClock` of the `quanta` feature read per call.
//!
//! Run with `cargo bench -p stagger-bench --bench budget`.

use std::time::Duration;

use divan::Bencher;
use stagger::Failure;
use stagger::budget::{
    Breaker, BreakerBudget, Budget, GrpcThrottle, GrpcThrottleBudget, Ratio, RatioBudget,
    SreAdaptive, SreAdaptiveBudget, TokenBucket, TokenBucketBudget,
};
use stagger::clock::{Clock, MonotonicClock, QuantaClock, Timestamp};
use stagger::rng::SeededRng;
use tower::retry::budget::{Budget as _, TpsBudget};

fn main() {
    divan::main();
}

/// The ratio budget at Finagle's defaults, with a generous percentage so that withdrawals
/// keep succeeding (the cost of a refusal is not what is measured).
fn finagle() -> RatioBudget {
    RatioBudget::new(Ratio::FINAGLE.with_percent(1.0)).expect("valid bench budget")
}

fn tower_tps() -> TpsBudget {
    TpsBudget::new(Duration::from_secs(10), 10, 1.0)
}

/// stagger's `finagle` ratio budget, `now` fixed.
#[divan::bench(threads = [1, 2])]
fn stagger_finagle(bencher: Bencher) {
    let budget = finagle();
    bencher.bench(|| {
        budget.admit(Timestamp::ZERO);
        divan::black_box(budget.try_retry(Timestamp::ZERO, &Failure::Retryable))
    });
}

/// stagger's `finagle` ratio budget, reading `clock` for every call.
fn finagle_reading(bencher: Bencher, clock: impl Clock + Sync) {
    let budget = finagle();
    bencher.bench(|| {
        budget.admit(clock.now());
        divan::black_box(budget.try_retry(clock.now(), &Failure::Retryable))
    });
}

/// stagger's `finagle` ratio budget, reading a monotonic clock for every call.
#[divan::bench(threads = [1, 2])]
fn stagger_finagle_with_clock(bencher: Bencher) {
    finagle_reading(bencher, MonotonicClock::new());
}

/// stagger's `finagle` ratio budget, reading the TSC-based `QuantaClock` for every call.
#[divan::bench(threads = [1, 2])]
fn stagger_finagle_with_quanta_clock(bencher: Bencher) {
    finagle_reading(bencher, QuantaClock::calibrated());
}

/// stagger's `aws-standard` token bucket: a withdrawal (a retry) and a refund (its success).
#[divan::bench(threads = [1, 2])]
fn stagger_token_bucket(bencher: Bencher) {
    let budget = TokenBucketBudget::new(TokenBucket::AWS_STANDARD).expect("valid bench budget");
    bencher.bench(|| {
        let spent = budget.try_retry(Timestamp::ZERO, &Failure::Retryable);
        budget.on_success(Timestamp::ZERO, spent);
        divan::black_box(spent)
    });
}

/// tower's `TpsBudget` (ttl 10 s, 10 per second, 100 %): `deposit` then `withdraw`.
#[divan::bench(threads = [1, 2])]
fn tower_tps_budget(bencher: Bencher) {
    let budget = tower_tps();
    bencher.bench(|| {
        budget.deposit();
        divan::black_box(budget.withdraw())
    });
}

/// stagger's `grpc-throttle`: a success (deposit) and a retry check (withdrawal).
#[divan::bench(threads = [1, 2])]
fn stagger_grpc_throttle(bencher: Bencher) {
    let budget = GrpcThrottleBudget::new(GrpcThrottle::DEFAULT).expect("valid bench budget");
    bencher.bench(|| {
        budget.on_success(Timestamp::ZERO, None);
        divan::black_box(budget.try_retry(Timestamp::ZERO, &Failure::Retryable))
    });
}

/// stagger's `sre-adaptive`: a first attempt (admit) and a retry, both counted and checked,
/// then an accepted success. Every call accepted, so no draw is needed.
#[divan::bench(threads = [1, 2])]
fn stagger_sre_adaptive(bencher: Bencher) {
    let budget = SreAdaptiveBudget::new(SreAdaptive::DEFAULT, SeededRng::new(1)).expect("valid");
    bencher.bench(|| {
        budget.admit(Timestamp::ZERO);
        let spent = budget.try_retry(Timestamp::ZERO, &Failure::Retryable);
        budget.on_success(Timestamp::ZERO, spent);
        divan::black_box(spent)
    });
}

/// stagger's `breaker` (cumulative): a success recorded, then a retry check.
#[divan::bench(threads = [1, 2])]
fn stagger_breaker(bencher: Bencher) {
    let budget = BreakerBudget::new(Breaker::DEFAULT).expect("valid bench budget");
    bencher.bench(|| {
        budget.on_success(Timestamp::ZERO, None);
        divan::black_box(budget.try_retry(Timestamp::ZERO, &Failure::Retryable))
    });
}

/// stagger's `breaker`, windowed over 60 s: a success recorded, then a retry check.
#[divan::bench(threads = [1, 2])]
fn stagger_breaker_windowed(bencher: Bencher) {
    let config = Breaker::DEFAULT.with_window(Some(Duration::from_secs(60)));
    let budget = BreakerBudget::new(config).expect("valid bench budget");
    bencher.bench(|| {
        budget.on_success(Timestamp::ZERO, None);
        divan::black_box(budget.try_retry(Timestamp::ZERO, &Failure::Retryable))
    });
}

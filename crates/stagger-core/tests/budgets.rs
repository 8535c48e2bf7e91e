//! Retry budgets: their closed-form steady states (anchors W6), their arithmetic under
//! contention, and their place in the engine.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;
use stagger_core::budget::{
    AnyBudget, Budget, BudgetKind, GrpcThrottle, GrpcThrottleBudget, Ratio, RatioBudget, Spent,
    TokenBucket, TokenBucketBudget,
};
use stagger_core::engine::{Run, Settings, StopReason, Verdict};
use stagger_core::policy::Constant;
use stagger_core::{ConfigError, Failure, PolicyConfig, SeededRng, Timestamp};

fn at_secs(s: f64) -> Timestamp {
    Timestamp::from_duration(Duration::from_secs_f64(s))
}

fn granted(budget: &impl Budget, now: Timestamp, failure: Failure, tries: usize) -> usize {
    (0..tries)
        .filter(|_| budget.try_retry(now, &failure).is_some())
        .count()
}

#[test]
fn aws_standard_allows_100_retries_from_full_in_a_hard_outage_and_50_if_all_time_out() {
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD).unwrap();
    assert_eq!(
        granted(&bucket, Timestamp::ZERO, Failure::Retryable, 1000),
        100
    );
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD).unwrap();
    assert_eq!(
        granted(&bucket, Timestamp::ZERO, Failure::Timeout, 1000),
        50
    );
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_2026).unwrap();
    assert_eq!(
        granted(&bucket, Timestamp::ZERO, Failure::Retryable, 1000),
        35
    ); // 500 / 14
}

#[test]
fn aws_refunds_the_last_cost_after_a_retried_success_and_earns_one_otherwise() {
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD).unwrap();
    let now = Timestamp::ZERO;
    let spent = bucket.try_retry(now, &Failure::Timeout).unwrap();
    assert_eq!((spent, bucket.tokens()), (Spent(10_000), 490.0));
    bucket.on_success(now, Some(spent));
    assert_eq!(bucket.tokens(), 500.0);
    let spent = bucket.try_retry(now, &Failure::Retryable).unwrap();
    bucket.on_success(now, None);
    assert_eq!(bucket.tokens(), 496.0); // -5 + 1
    let _ = spent;
    for _ in 0..10 {
        bucket.on_success(now, None);
    }
    assert_eq!(bucket.tokens(), 500.0, "capped at the capacity");
}

#[test]
fn brookers_bucket_allows_4_retries_from_full_then_one_per_ten_calls() {
    let bucket = TokenBucketBudget::new(TokenBucket::BROOKER).unwrap();
    let now = Timestamp::ZERO;
    // A retry needs more than 1 token: 5 -> 4 -> 3 -> 2 -> 1 (then 1 is not > 1).
    assert_eq!(granted(&bucket, now, Failure::Retryable, 100), 4);
    // In a 100 % outage with 100 calls, each followed by as many retries as allowed.
    let bucket = TokenBucketBudget::new(TokenBucket::BROOKER).unwrap();
    let mut retries = 0;
    for _ in 0..100 {
        bucket.admit(now);
        retries += granted(&bucket, now, Failure::Retryable, 3);
    }
    // 5 initial + 100 * 0.1 deposited, a retry needs > 1 token: about 14 (anchors W2).
    assert!((13..=14).contains(&retries), "{retries}");
}

#[test]
fn grpc_throttle_stops_after_5_net_failures_and_resumes_with_successes() {
    let throttle = GrpcThrottleBudget::new(GrpcThrottle::DEFAULT).unwrap();
    let now = Timestamp::ZERO;
    for failures in 1..=5 {
        throttle.on_failure(now, &Failure::Retryable);
        let allowed = throttle.try_retry(now, &Failure::Retryable).is_some();
        assert_eq!(allowed, failures < 5, "after {failures} failures");
    }
    // 5.0 tokens: one success (+0.1) makes 5.1 > 5.
    throttle.on_success(now, None);
    assert!(throttle.try_retry(now, &Failure::Retryable).is_some());
    // Permanent failures do not count.
    throttle.on_failure(now, &Failure::Permanent);
    assert!(throttle.try_retry(now, &Failure::Retryable).is_some());
}

#[test]
fn grpc_throttle_drifts_down_above_about_9_1_percent_failures() {
    for (failure_percent, ends_open) in [(8u32, true), (11, false)] {
        let throttle = GrpcThrottleBudget::new(GrpcThrottle::DEFAULT).unwrap();
        let now = Timestamp::ZERO;
        // Failures spread evenly through the stream, one every 100 / p attempts.
        for i in 0..10_000u32 {
            if (i * failure_percent) % 100 < failure_percent {
                throttle.on_failure(now, &Failure::Retryable);
            } else {
                throttle.on_success(now, None);
            }
        }
        let open = throttle.try_retry(now, &Failure::Retryable).is_some();
        assert_eq!(open, ends_open, "{failure_percent} % failures");
    }
}

#[test]
fn grpc_throttle_validates_as_a6_does() {
    let bad = |c: GrpcThrottle| GrpcThrottleBudget::new(c).unwrap_err().param();
    assert_eq!(
        bad(GrpcThrottle::DEFAULT.with_max_tokens(0.0)),
        Some("max_tokens")
    );
    assert_eq!(
        bad(GrpcThrottle::DEFAULT.with_max_tokens(1000.5)),
        Some("max_tokens")
    );
    assert_eq!(
        bad(GrpcThrottle::DEFAULT.with_token_ratio(0.0)),
        Some("token_ratio")
    );
    assert_eq!(
        bad(GrpcThrottle::DEFAULT.with_token_ratio(0.0009)),
        Some("token_ratio")
    );
    assert_eq!(
        bad(GrpcThrottle::DEFAULT.with_token_ratio(f64::NAN)),
        Some("token_ratio")
    );
    assert!(GrpcThrottleBudget::new(GrpcThrottle::DEFAULT.with_max_tokens(1000.0)).is_ok());
}

#[test]
fn finagle_allows_about_0_2_r_plus_10_retries_per_second_at_total_failure() {
    for rate in [10u32, 100, 1000] {
        let budget = RatioBudget::new(Ratio::FINAGLE).unwrap();
        let mut granted_total = 0u64;
        let seconds = 60;
        let mut granted_last_30 = 0u64;
        for second in 0..seconds {
            for i in 0..rate {
                let now = at_secs(f64::from(second) + f64::from(i) / f64::from(rate));
                budget.admit(now);
                // Each failed request asks for up to 2 retries.
                let g = granted(&budget, now, Failure::Retryable, 2) as u64;
                granted_total += g;
                if second >= 30 {
                    granted_last_30 += g;
                }
            }
        }
        let per_second = granted_last_30 as f64 / 30.0;
        let expected = 0.2 * f64::from(rate) + 10.0;
        assert!(
            (per_second - expected).abs() <= 0.05 * expected + 1.0,
            "R = {rate}: {per_second} retries/s, expected about {expected}"
        );
        assert!(granted_total > 0);
    }
}

#[test]
fn finagle_ratio_arithmetic_is_exact_60_percent_is_60_percent() {
    for (percent, expected) in [(0.6, 60), (0.2, 20), (0.0, 0), (1.0, 100), (2.5, 250)] {
        let budget =
            RatioBudget::new(Ratio::FINAGLE.with_min_per_sec(0).with_percent(percent)).unwrap();
        for _ in 0..100 {
            budget.admit(Timestamp::ZERO);
        }
        assert_eq!(
            granted(&budget, Timestamp::ZERO, Failure::Retryable, 1000),
            expected,
            "{percent}"
        );
    }
}

#[test]
fn finagle_deposits_expire_after_the_ttl() {
    let budget = RatioBudget::new(Ratio::FINAGLE.with_min_per_sec(0)).unwrap();
    for _ in 0..100 {
        budget.admit(at_secs(0.0));
    }
    assert!(
        budget
            .try_retry(at_secs(5.0), &Failure::Retryable)
            .is_some()
    );
    assert!(
        budget
            .try_retry(at_secs(10.5), &Failure::Retryable)
            .is_none()
    );
}

#[test]
fn budgets_refuse_bad_parameters_by_name() {
    let check =
        |r: Result<(), ConfigError>, name: &str| assert_eq!(r.unwrap_err().param(), Some(name));
    check(Ratio::FINAGLE.with_percent(-0.1).validate(), "percent");
    check(Ratio::FINAGLE.with_percent(f64::NAN).validate(), "percent");
    check(Ratio::FINAGLE.with_ttl(Duration::ZERO).validate(), "ttl");
    check(
        TokenBucket::AWS_STANDARD.with_capacity(0.0).validate(),
        "capacity",
    );
    check(
        TokenBucket::AWS_STANDARD
            .with_costs(f64::INFINITY, 1.0, 1.0)
            .validate(),
        "retry_cost",
    );
    check(
        TokenBucket::AWS_STANDARD
            .with_success_reward(-1.0)
            .validate(),
        "success_reward",
    );
    assert_eq!(
        "nope".parse::<BudgetKind>().unwrap_err().param(),
        Some("budget")
    );
}

#[test]
fn shared_budgets_never_grant_more_than_their_arithmetic_and_lose_no_count() {
    // 4 threads race for one AWS bucket: exactly 100 grants in all.
    let bucket = Arc::new(TokenBucketBudget::new(TokenBucket::AWS_STANDARD).unwrap());
    let grants: usize = (0..4)
        .map(|_| {
            let bucket = bucket.clone();
            thread::spawn(move || granted(&*bucket, Timestamp::ZERO, Failure::Retryable, 10_000))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .sum();
    assert_eq!(grants, 100);
    assert_eq!(bucket.tokens(), 0.0);

    // 4 threads deposit 1000 requests each into one finagle budget at 20 %: exactly 800 + floor.
    let ratio = Arc::new(RatioBudget::new(Ratio::FINAGLE.with_min_per_sec(1)).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let ratio = ratio.clone();
            thread::spawn(move || {
                let mut g = 0;
                for _ in 0..1000 {
                    ratio.admit(Timestamp::ZERO);
                    g += granted(&*ratio, Timestamp::ZERO, Failure::Retryable, 1);
                }
                g
            })
        })
        .collect();
    let grants: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let leftover = granted(&*ratio, Timestamp::ZERO, Failure::Retryable, 10_000);
    assert_eq!(
        grants + leftover,
        800 + 10,
        "20 % of 4000 requests, plus 1/s x 10 s"
    );

    // Successes and failures from 4 threads on a gRPC throttle: no update lost.
    let throttle =
        Arc::new(GrpcThrottleBudget::new(GrpcThrottle::DEFAULT.with_max_tokens(1000.0)).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let t = throttle.clone();
            thread::spawn(move || {
                for _ in 0..100 {
                    t.on_failure(Timestamp::ZERO, &Failure::Retryable);
                }
                for _ in 0..500 {
                    t.on_success(Timestamp::ZERO, None);
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    // 1000 - 400 failures, then +0.1 x 2000 successes, order-independent below the cap.
    assert_eq!(throttle.tokens(), 800.0);
}

#[test]
fn the_engine_stops_with_budget_exhausted_and_refunds_through_the_receipt() {
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(12.0)).unwrap();
    let policy = Constant::new()
        .with_base(Duration::ZERO)
        .with_max_attempts(10)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::with_budget(policy, &bucket, Settings::new(), Timestamp::ZERO);
    let mut retries = 0;
    let stopped = loop {
        run.begin(Timestamp::ZERO).unwrap();
        match run.end(Timestamp::ZERO, Err(Failure::Retryable)) {
            Verdict::Retry(_) => retries += 1,
            Verdict::Stop(s) => break s,
            Verdict::Success(_) => unreachable!(),
        }
    };
    assert_eq!((retries, stopped.reason), (2, StopReason::BudgetExhausted));

    // A retried success refunds its last retry's cost.
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD).unwrap();
    let policy = Constant::new()
        .with_base(Duration::ZERO)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::with_budget(policy, &bucket, Settings::new(), Timestamp::ZERO);
    run.begin(Timestamp::ZERO).unwrap();
    assert!(matches!(
        run.end(Timestamp::ZERO, Err(Failure::Timeout)),
        Verdict::Retry(_)
    ));
    assert_eq!(bucket.tokens(), 490.0);
    run.begin(Timestamp::ZERO).unwrap();
    assert!(matches!(
        run.end(Timestamp::ZERO, Ok(())),
        Verdict::Success(_)
    ));
    assert_eq!(bucket.tokens(), 500.0);
}

#[test]
fn every_named_budget_builds_fresh_allows_a_retry_and_has_a_page() {
    for kind in BudgetKind::ALL {
        let budget = AnyBudget::new(kind, SeededRng::new(1)).unwrap();
        assert!(budget.admit(Timestamp::ZERO), "{kind} admits a first call");
        budget.on_success(Timestamp::ZERO, None);
        assert!(
            budget
                .try_retry(Timestamp::ZERO, &Failure::Retryable)
                .is_some(),
            "{kind}: a fresh, healthy budget allows a retry"
        );
        assert!(kind.page().contains("##"), "{kind} has a page");
        assert_eq!(kind.name().parse::<BudgetKind>().unwrap(), kind);
    }
}

#[test]
fn grpc_token_ratio_keeps_its_third_decimal() {
    let throttle = GrpcThrottleBudget::new(
        GrpcThrottle::DEFAULT
            .with_max_tokens(10.0)
            .with_token_ratio(1.005),
    )
    .unwrap();
    for _ in 0..3 {
        throttle.on_failure(Timestamp::ZERO, &Failure::Retryable);
    }
    throttle.on_success(Timestamp::ZERO, None);
    assert_eq!(throttle.tokens(), 8.005);
    // 0.0015 is 0.001 once its fourth decimal is ignored; 0.0009 is nothing.
    assert!(GrpcThrottleBudget::new(GrpcThrottle::DEFAULT.with_token_ratio(0.0015)).is_ok());
}

#[test]
fn the_engine_reports_a_refused_first_attempt_as_its_own_outcome() {
    // sre-adaptive with nothing ever accepted: after enough requests it refuses locally.
    let budget = stagger_core::budget::SreAdaptiveBudget::new(
        stagger_core::budget::SreAdaptive::DEFAULT,
        SeededRng::new(3),
    )
    .unwrap();
    let mut refused = 0;
    for i in 0..1000u64 {
        let now = Timestamp::from_nanos(i * 1_000_000);
        let policy = Constant::new()
            .with_max_attempts(1)
            .build(SeededRng::new(i))
            .unwrap();
        let mut run = Run::with_budget(policy, &budget, Settings::new(), now);
        match run.begin(now) {
            Ok(_) => {
                let _ = run.end(now, Err(Failure::Throttled(None)));
            }
            Err(stopped) => {
                assert_eq!(stopped.reason, StopReason::BudgetRefusedFirstAttempt);
                assert_eq!(stopped.summary.attempts, 0);
                refused += 1;
            }
        }
    }
    assert!(refused > 900, "{refused}");
}

proptest! {
    /// A token bucket's balance stays within [0, capacity], and grants exactly what it can pay.
    #[test]
    fn token_bucket_balance_stays_in_bounds(
        capacity in 1.0f64..1000.0,
        cost in 0.0f64..50.0,
        ops in proptest::collection::vec(0u8..4, 0..400),
    ) {
        let config = TokenBucket::AWS_STANDARD.with_capacity(capacity).with_costs(cost, cost, cost);
        let bucket = TokenBucketBudget::new(config).unwrap();
        let now = Timestamp::ZERO;
        for op in ops {
            let before = bucket.tokens();
            match op {
                0 => {
                    let granted = bucket.try_retry(now, &Failure::Retryable).is_some();
                    let cost_m = (cost * 1000.0).round() / 1000.0;
                    prop_assert_eq!(granted, before >= cost_m);
                }
                1 => bucket.on_success(now, None),
                2 => bucket.on_success(now, Some(Spent(5_000))),
                _ => { bucket.admit(now); }
            }
            let after = bucket.tokens();
            // Tokens are kept in thousandths: the capacity is rounded to one.
            prop_assert!((0.0..=capacity + 0.001).contains(&after));
        }
    }

    /// Every decision of a ratio budget matches a shadow model that counts the events in the
    /// window directly.
    #[test]
    fn ratio_decisions_match_a_shadow_model(
        percent in 0.0f64..3.0,
        min_per_sec in 0u32..20,
        events in proptest::collection::vec((any::<bool>(), 0u64..40_000), 0..300),
    ) {
        let budget = RatioBudget::new(Ratio::FINAGLE.with_percent(percent).with_min_per_sec(min_per_sec)).unwrap();
        let mut events = events;
        events.sort_by_key(|e| e.1);
        // Ten slots of one second: an event counts while its slot is among the last ten.
        let mut log: Vec<(bool, u64)> = Vec::new();
        let ppm = (percent * 1e6).round() as u128;
        for (deposit, ms) in events {
            let now = Timestamp::from_nanos(ms * 1_000_000);
            let slot = ms / 1000;
            let live = |d: bool| log.iter().filter(|(k, t)| *k == d && slot - t / 1000 < 10).count() as u128;
            if deposit {
                budget.admit(now);
                log.push((true, ms));
            } else {
                let allowed = u128::from(min_per_sec) * 10 + live(true) * ppm / 1_000_000;
                let expect = live(false) < allowed;
                let granted = budget.try_retry(now, &Failure::Retryable).is_some();
                prop_assert_eq!(granted, expect, "at {} ms", ms);
                if granted {
                    log.push((false, ms));
                }
            }
        }
    }

    /// A ratio budget never grants more than its floor plus its percentage of the window's
    /// requests.
    #[test]
    fn ratio_never_over_grants(
        percent in 0.0f64..3.0,
        min_per_sec in 0u32..20,
        events in proptest::collection::vec((any::<bool>(), 0u64..20_000), 0..300),
    ) {
        let budget = RatioBudget::new(Ratio::FINAGLE.with_percent(percent).with_min_per_sec(min_per_sec)).unwrap();
        let mut events = events;
        events.sort_by_key(|e| e.1);
        let (mut deposits, mut grants) = (0u64, 0u64);
        for (deposit, ms) in events {
            let now = Timestamp::from_nanos(ms * 1_000_000);
            if deposit {
                budget.admit(now);
                deposits += 1;
            } else if budget.try_retry(now, &Failure::Retryable).is_some() {
                grants += 1;
            }
        }
        // The floor renews as withdrawals expire: over 20 s, in at most three windows.
        let cap = 3 * u64::from(min_per_sec) * 10 + (deposits as f64 * percent).floor() as u64;
        prop_assert!(grants <= cap, "{} > {}", grants, cap);
    }
}

// ---------------------------------------------------------------------------------------------
// A retry is paid for when it is sent: a granted retry that never is goes back to the budget.

/// How a run ends after its first attempt failed and its retry was granted.
#[derive(Clone, Copy, Debug)]
enum Unsent {
    /// The driver is dropped during the wait (a cancelled future, a dropped request), and
    /// cancels the run.
    Dropped,
    /// The next attempt would begin at or after the deadline (a sleeper that overslept).
    Overslept,
    /// The driver ends the run before the attempt (the service failed to get ready).
    Abandoned,
}

/// One run of `budget`: a first attempt that fails, a retry granted, and then `unsent`.
fn grant_and_not_send(budget: &dyn Budget, now: Timestamp, unsent: Unsent) {
    let policy = Constant::new()
        .with_base(Duration::from_millis(100))
        .with_max_attempts(3)
        .build(SeededRng::new(0))
        .unwrap();
    let settings = Settings::new().with_timeout(Duration::from_secs(1));
    let mut run = Run::with_budget(policy, budget, settings, now);
    run.begin(now).unwrap();
    let Verdict::Retry(_) = run.end(now, Err(Failure::Retryable)) else {
        panic!("the budget grants the retry");
    };
    match unsent {
        Unsent::Dropped => {
            run.cancel();
            run.cancel(); // twice is harmless
        }
        Unsent::Overslept => {
            let late = now.saturating_add(Duration::from_secs(2));
            assert_eq!(run.begin(late).unwrap_err().reason, StopReason::Deadline);
        }
        Unsent::Abandoned => {
            let stopped = run.abandon(now, StopReason::NotRetryable);
            assert_eq!(stopped.summary.attempts, 1);
        }
    }
}

/// The same first attempt, failing, with no retry asked for: what the budget must look like
/// after a retry it granted was not sent.
fn fail_without_retry(budget: &dyn Budget, now: Timestamp) {
    let policy = Constant::new()
        .with_max_attempts(1)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::with_budget(policy, budget, Settings::new(), now);
    run.begin(now).unwrap();
    assert!(matches!(
        run.end(now, Err(Failure::Retryable)),
        Verdict::Stop(_)
    ));
}

/// For every budget kind: a retry granted and not sent leaves the budget exactly as a run
/// that never asked for it, whichever way it was not sent; `fingerprint` reads the state.
fn every_unsent_retry_is_handed_back<B: Budget>(
    make: impl Fn() -> B,
    fingerprint: impl Fn(&B, Timestamp) -> String,
) {
    let now = at_secs(5.0);
    for unsent in [Unsent::Dropped, Unsent::Overslept, Unsent::Abandoned] {
        let (abandoned, reference) = (make(), make());
        for _ in 0..3 {
            grant_and_not_send(&abandoned, now, unsent);
            fail_without_retry(&reference, now);
        }
        assert_eq!(
            fingerprint(&abandoned, now),
            fingerprint(&reference, now),
            "{unsent:?}"
        );
    }
}

#[test]
fn a_token_bucket_gets_back_every_retry_that_was_not_sent() {
    // 10 tokens at 5 a retry: three unsent retries would leave none, and refuse the next.
    let config = TokenBucket::AWS_STANDARD.with_capacity(10.0);
    every_unsent_retry_is_handed_back(
        || TokenBucketBudget::new(config).unwrap(),
        |b, now| format!("{} {}", b.tokens(), granted(b, now, Failure::Retryable, 10)),
    );
    let bucket = TokenBucketBudget::new(config).unwrap();
    grant_and_not_send(&bucket, Timestamp::ZERO, Unsent::Dropped);
    assert_eq!(bucket.tokens(), 10.0);
}

#[test]
fn a_ratio_budget_gets_back_every_retry_that_was_not_sent() {
    // A floor of 1 retry a second over 1 s: one unsent retry would leave the next request none.
    let config = Ratio::FINAGLE
        .with_ttl(Duration::from_secs(1))
        .with_min_per_sec(1)
        .with_percent(1.0);
    every_unsent_retry_is_handed_back(
        || RatioBudget::new(config).unwrap(),
        |b, now| granted(b, now, Failure::Retryable, 100).to_string(),
    );
}

#[test]
fn the_sre_throttle_uncounts_every_retry_that_was_not_sent() {
    use stagger_core::budget::{SreAdaptive, SreAdaptiveBudget};
    every_unsent_retry_is_handed_back(
        || SreAdaptiveBudget::new(SreAdaptive::DEFAULT, SeededRng::new(7)).unwrap(),
        |b, now| format!("{:?}", b.counts(now)),
    );
}

#[test]
fn budgets_that_charge_nothing_for_a_grant_are_left_as_they_are() {
    use stagger_core::budget::{Breaker, BreakerBudget};
    every_unsent_retry_is_handed_back(
        || GrpcThrottleBudget::new(GrpcThrottle::DEFAULT).unwrap(),
        |b, _| b.tokens().to_string(),
    );
    every_unsent_retry_is_handed_back(
        || {
            // Healthy so far, so that it grants retries.
            let breaker = BreakerBudget::new(Breaker::DEFAULT).unwrap();
            (0..100).for_each(|_| breaker.on_success(at_secs(5.0), None));
            breaker
        },
        |b, now| format!("{:?}", b.counts(now)),
    );
}

#[test]
fn any_budget_and_shared_handles_forward_the_hand_back() {
    let spec = TokenBucket::AWS_STANDARD.with_capacity(10.0);
    let any = Arc::new(AnyBudget::TokenBucket(
        TokenBucketBudget::new(spec).unwrap(),
    ));
    let optional = Some(Arc::clone(&any));
    grant_and_not_send(&optional, Timestamp::ZERO, Unsent::Dropped);
    grant_and_not_send(&any, Timestamp::ZERO, Unsent::Overslept);
    let AnyBudget::TokenBucket(bucket) = &*any else {
        unreachable!()
    };
    assert_eq!(bucket.tokens(), 10.0);
}

#[test]
fn a_sent_retry_stays_paid_for() {
    let bucket = TokenBucketBudget::new(TokenBucket::AWS_STANDARD.with_capacity(10.0)).unwrap();
    let policy = Constant::new()
        .with_max_attempts(3)
        .build(SeededRng::new(0))
        .unwrap();
    let mut run = Run::with_budget(policy, &bucket, Settings::new(), Timestamp::ZERO);
    run.begin(Timestamp::ZERO).unwrap();
    assert!(matches!(
        run.end(Timestamp::ZERO, Err(Failure::Retryable)),
        Verdict::Retry(_)
    ));
    run.begin(at_secs(0.1)).unwrap();
    run.cancel(); // the driver is dropped during the retry itself: it was sent
    assert_eq!(bucket.tokens(), 5.0);
}

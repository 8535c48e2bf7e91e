//! The `tail` workload: replicas that pause now and then make a long tail, and a timeout per
//! attempt cuts it at a small extra load. Figures measured on the model at its defaults
//! (`stagger simulate --workload tail --policy immediate --max-attempts 3 --seed N`, with and
//! without `--attempt-timeout 50ms`, seeds 1 to 3): p99.9 from about 960-990 ms to about
//! 97-106 ms, at 1.018 to 1.023 attempts per request; the margins below are wide of those.

use std::time::Duration;

use stagger_core::AnyConfig;
use stagger_core::policy::{Exponential, Immediate};
use stagger_sim::workload::tail::Tail;
use stagger_sim::{Overrides, ResultRow, SimError, Strategy, Workload, WorkloadKind};

fn retrying() -> Strategy {
    Strategy::policy(AnyConfig::from(Immediate::new().with_max_attempts(3)))
}

fn run(attempt_timeout: Option<Duration>, strategy: &Strategy, seed: u64) -> ResultRow {
    let o = Overrides {
        attempt_timeout,
        ..Overrides::default()
    };
    WorkloadKind::Tail
        .run(&o, strategy, seed)
        .expect("a valid run")
}

fn p999(row: &ResultRow) -> f64 {
    row.p999_ms.flatten().expect("some requests succeeded")
}

#[test]
fn an_attempt_timeout_cuts_the_tail_by_a_large_factor_at_a_small_extra_load() {
    let cut = Some(Duration::from_millis(50));
    for seed in 1..=3 {
        let plain = run(None, &retrying(), seed);
        let timed = run(cut, &retrying(), seed);
        // Without the timeout, the 99.9th percentile is a request that met a pause of 1 s.
        assert!(p999(&plain) > 800.0, "seed {seed}: {plain:?}");
        assert_eq!(plain.load, 1.0, "seed {seed}: nothing is retried");
        // With it, the request is cut at 50 ms and served elsewhere.
        assert!(p999(&timed) < 150.0, "seed {seed}: {timed:?}");
        assert!(
            p999(&plain) / p999(&timed) > 5.0,
            "seed {seed}: {} against {}",
            p999(&plain),
            p999(&timed)
        );
        assert!(
            timed.p99_ms.unwrap() < plain.p99_ms.unwrap() / 3.0,
            "seed {seed}"
        );
        // The price: a few percent more attempts, and hardly a request lost.
        assert!(
            timed.load > 1.005 && timed.load < 1.05,
            "seed {seed}: {}",
            timed.load
        );
        assert!(timed.success_rate > 0.999, "seed {seed}");
        // The median does not move.
        let (a, b) = (plain.p50_ms.unwrap(), timed.p50_ms.unwrap());
        assert!((a - b).abs() < 1.0, "seed {seed}: {a} against {b}");
    }
}

#[test]
fn a_backoff_with_a_small_base_cuts_the_tail_too() {
    let backoff = Strategy::policy(AnyConfig::from(
        Exponential::new()
            .with_base(Duration::from_millis(1))
            .with_max_attempts(3),
    ));
    let plain = run(None, &backoff, 1);
    let timed = run(Some(Duration::from_millis(50)), &backoff, 1);
    assert!(p999(&plain) > 5.0 * p999(&timed), "{plain:?} {timed:?}");
}

#[test]
fn the_same_seed_gives_the_same_row() {
    let o = Overrides {
        attempt_timeout: Some(Duration::from_millis(50)),
        duration: Some(Duration::from_secs(5)),
        ..Overrides::default()
    };
    let a = WorkloadKind::Tail.run(&o, &retrying(), 9).unwrap();
    assert_eq!(a, WorkloadKind::Tail.run(&o, &retrying(), 9).unwrap());
    assert_ne!(a, WorkloadKind::Tail.run(&o, &retrying(), 10).unwrap());
}

#[test]
fn bad_overrides_are_typed_errors_and_foreign_ones_not_applicable() {
    let s = retrying();
    let d = Overrides::default();
    let param = |o: Overrides| WorkloadKind::Tail.run(&o, &s, 1).unwrap_err().param();
    for (o, name) in [
        (
            Overrides {
                load: Some(1.5),
                ..d
            },
            "load",
        ),
        (
            Overrides {
                replicas: Some(0),
                ..d
            },
            "replicas",
        ),
        (
            Overrides {
                concurrency: Some(0),
                ..d
            },
            "concurrency",
        ),
        (
            Overrides {
                attempt_timeout: Some(Duration::ZERO),
                ..d
            },
            "attempt_timeout",
        ),
        (
            Overrides {
                pause_every: Some(Duration::ZERO),
                ..d
            },
            "pause_every",
        ),
        (
            Overrides {
                clients: Some(5),
                ..d
            },
            "clients",
        ),
        (
            Overrides {
                failure_rate: Some(0.5),
                ..d
            },
            "failure_rate",
        ),
    ] {
        assert_eq!(param(o), Some(name), "{o:?}");
    }
    // Huge sizes are refused by the workload's own bound, or left to the estimate.
    let huge = Overrides {
        replicas: Some(10_000),
        concurrency: Some(10_000),
        ..d
    };
    assert!(matches!(
        WorkloadKind::Tail.estimate(&huge, &s),
        Err(SimError::TooLarge { .. })
    ));
    let big = Tail {
        replicas: 400,
        ..Tail::default()
    };
    big.validate().expect("1e7 requests at most");
    assert!(big.estimate(&s).events > 20_000_000);
    // The new overrides are the tail's own: another workload refuses them.
    let foreign = Overrides {
        attempt_timeout: Some(Duration::from_millis(50)),
        ..d
    };
    for kind in [WorkloadKind::OpenLoop, WorkloadKind::Throttle] {
        assert_eq!(
            kind.run(&foreign, &s, 1).unwrap_err(),
            SimError::NotApplicable {
                param: "attempt_timeout",
                workload: kind.name(),
            }
        );
    }
}

/// The Tail at Scale's claim, read by the board's check on the board's own `tail` section: a
/// hedge deferred to the fast path's 95th percentile cuts p99.9 tenfold for a little more load.
#[test]
fn a_deferred_hedge_cuts_the_tail_as_published() {
    use stagger_sim::scoreboard::{Claim, Scoreboard, tail_section};
    let (tail, delay, _) = tail_section(1).unwrap();
    let mut board = Scoreboard::empty(1);
    board.tail = tail;
    board.tail_delay = Some(delay);
    let finding = Claim::HedgeCutsTail.check(&board);
    assert!(finding.reproduced, "{}", finding.ours);
}

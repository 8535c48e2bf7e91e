//! The herd and the outage: the claims of the catalog's page for `constant`, measured by
//! running the model and read by the board's own checks.

use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::scoreboard::{Claim, Labelled, Scoreboard, constant_patience, margins};
use stagger_sim::workload::outage::Outage;
use stagger_sim::{Overrides, Strategy, WorkloadKind};

fn run(kind: WorkloadKind, policy: PolicyKind, seed: u64) -> stagger_sim::ResultRow {
    kind.run(
        &Overrides::default(),
        &Strategy::policy(AnyConfig::from(policy)),
        seed,
    )
    .unwrap()
}

/// A board holding `kind`'s rows of `policies` at `seed`, labelled as the board labels them.
fn board(kind: WorkloadKind, policies: &[PolicyKind], seed: u64) -> Scoreboard {
    let rows = policies
        .iter()
        .map(|&p| {
            let label = Strategy::policy(AnyConfig::from(p)).policy.name();
            Labelled::new(label, run(kind, p, seed))
        })
        .collect();
    let mut board = Scoreboard::empty(seed);
    match kind {
        WorkloadKind::Herd => board.herd = rows,
        WorkloadKind::Outage => board.outage = rows,
        other => panic!("no claim of the constant page is read on {other}"),
    }
    board
}

#[test]
fn constant_puts_a_seventh_of_its_retries_in_one_window_and_full_jitter_disperses() {
    use PolicyKind::{Constant, Exponential, ExponentialFullJitter};
    for seed in 1..=3 {
        let board = board(
            WorkloadKind::Herd,
            &[Constant, Exponential, ExponentialFullJitter],
            seed,
        );
        let finding = Claim::HerdSynchronised.check(&board);
        assert!(finding.reproduced, "seed {seed}: {}", finding.ours);
    }
    // The arithmetic behind it: each client's 8 attempts make 7 retries, and constant's come
    // at the same offsets for every client, so each retry's window holds exactly a seventh.
    let constant = run(WorkloadKind::Herd, Constant, 1);
    assert_eq!(constant.peak_window_share, margins::HERD_PEAK_SHARE);
    assert_eq!(constant.load, 8.0);
}

#[test]
fn on_a_thirty_second_outage_constant_rarely_succeeds_and_exponential_far_more_often() {
    use PolicyKind::{Constant, Exponential};
    let board = board(WorkloadKind::Outage, &[Constant, Exponential], 1);
    // The board's verdict: not reproduced, because constant's patience (its delays' sum) is
    // a little over 2% of the outage, and the requests that meet its last patience's worth
    // succeed.
    let finding = Claim::OutageConstantRarelySucceeds.check(&board);
    assert!(!finding.reproduced, "{}", finding.ours);
    let constant = &board.outage[0].row;
    let exponential = &board.outage[1].row;
    assert!(constant.met_outage.unwrap() > 2_000);
    let patience = constant_patience().as_secs_f64() / Outage::default().down_for.as_secs_f64();
    assert!(
        patience > margins::CONSTANT_SUCCEEDS_UNDER,
        "the patience alone is past the page's figure: {patience}"
    );
    // What does hold: exponential succeeds far more often.
    assert!(
        exponential.success_rate > margins::FAR_MORE_OFTEN * constant.success_rate,
        "{} vs {}",
        exponential.success_rate,
        constant.success_rate
    );
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    for kind in [WorkloadKind::Herd, WorkloadKind::Outage] {
        let a = serde_json::to_string(&run(kind, PolicyKind::ExponentialFullJitter, 7)).unwrap();
        let b = serde_json::to_string(&run(kind, PolicyKind::ExponentialFullJitter, 7)).unwrap();
        let c = serde_json::to_string(&run(kind, PolicyKind::ExponentialFullJitter, 8)).unwrap();
        assert_eq!(a, b, "{kind}");
        assert_ne!(a, c, "{kind}");
    }
}

#[test]
fn impossible_simulations_are_refused_by_name() {
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    let zero = Overrides {
        clients: Some(0),
        ..Overrides::default()
    };
    assert_eq!(
        WorkloadKind::Herd
            .run(&zero, &strategy, 1)
            .unwrap_err()
            .param(),
        Some("clients")
    );
    let rate = Overrides {
        rate: Some(-1.0),
        ..Overrides::default()
    };
    assert_eq!(
        WorkloadKind::Outage
            .run(&rate, &strategy, 1)
            .unwrap_err()
            .param(),
        Some("rate")
    );
    let wrong = Overrides {
        rounds: Some(3),
        ..Overrides::default()
    };
    assert_eq!(
        WorkloadKind::Herd
            .run(&wrong, &strategy, 1)
            .unwrap_err()
            .param(),
        Some("rounds")
    );
}

#[test]
fn a_retry_after_floor_stretches_patience_and_no_retry_comes_sooner() {
    use stagger_core::engine::Dispersal;
    // Constant makes 7 retries. Under a 2 s Retry-After with the floor alone, each waits 2 s
    // instead of 100 ms, so a request survives an outage it met in its last 14 s: about 14/30
    // of those that met it. Under the default dispersal each wait is drawn from 2 s to 4 s,
    // 3 s on average: about 21/30.
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    let plain = run(WorkloadKind::Outage, PolicyKind::Constant, 1);
    for (dispersal, mean_wait) in [(Dispersal::Floor, 2.0), (Dispersal::UniformAsked, 3.0)] {
        let throttled = Overrides {
            retry_after: Some(std::time::Duration::from_secs(2)),
            dispersal: Some(dispersal),
            ..Overrides::default()
        };
        let row = WorkloadKind::Outage.run(&throttled, &strategy, 1).unwrap();
        let expected = 7.0 * mean_wait / 30.0;
        assert!(
            (row.success_rate - expected).abs() < 0.03,
            "{dispersal:?}: {} vs {expected}",
            row.success_rate
        );
        assert!(row.success_rate > 2.0 * plain.success_rate);
        // A successful request that retried waited at least 2 s per retry: the slowest took
        // at least 7 x 2 s.
        assert!(row.p99_ms.unwrap() >= 7.0 * 2_000.0, "{:?}", row.p99_ms);
    }
}

#[test]
fn a_deadline_bounds_every_successful_request_and_is_reported_as_the_reason() {
    let timeout = std::time::Duration::from_secs(3);
    let bounded = Overrides {
        timeout: Some(timeout),
        ..Overrides::default()
    };
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    let row = WorkloadKind::Outage.run(&bounded, &strategy, 1).unwrap();
    let unbounded = run(WorkloadKind::Outage, PolicyKind::ExponentialFullJitter, 1);
    assert!(row.p99_ms.unwrap() <= 3_000.0, "{:?}", row.p99_ms);
    assert!(
        unbounded.p99_ms.unwrap() > 3_000.0,
        "{:?}",
        unbounded.p99_ms
    );
    let stopped_by_deadline = row.give_ups.get("deadline").copied().unwrap_or(0)
        + row
            .give_ups
            .get("wait-exceeds-deadline")
            .copied()
            .unwrap_or(0);
    assert!(stopped_by_deadline > 1_000, "{:?}", row.give_ups);
    assert!(row.success_rate < unbounded.success_rate);
}

#[test]
fn every_override_is_refused_where_it_does_not_apply() {
    use std::time::Duration;
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    let all = Overrides {
        clients: Some(1),
        rounds: Some(1),
        failure_rate: Some(0.5),
        duration: Some(Duration::from_secs(60)),
        rate: Some(1.0),
        window: Some(Duration::from_millis(10)),
        timeout: Some(Duration::from_secs(1)),
        retry_after: Some(Duration::from_secs(1)),
        limit_rate: Some(5.0),
        limit_burst: Some(1),
        limit_concurrency: Some(1),
        retry_after_form: Some(stagger_sim::model::RetryAfterForm::Exact),
        dispersal: Some(stagger_core::engine::Dispersal::Floor),
        gate: Some(true),
        budget_partition: Some(stagger_sim::workload::partition::BudgetPartition::Partitioned),
        attempt_timeout: Some(Duration::from_millis(50)),
        load: Some(0.5),
        replicas: Some(2),
        concurrency: Some(2),
        pause: Some(Duration::from_secs(1)),
        pause_every: Some(Duration::from_secs(10)),
        fanout: Some(2),
    };
    assert_eq!(all.given().len(), 22, "every field is listed");
    assert!(Overrides::default().given().is_empty());
    // The herd takes clients and window only: each other override is named when refused.
    for param in all.given() {
        let mut one = Overrides::default();
        match param {
            "clients" => one.clients = all.clients,
            "rounds" => one.rounds = all.rounds,
            "failure_rate" => one.failure_rate = all.failure_rate,
            "duration" => one.duration = all.duration,
            "rate" => one.rate = all.rate,
            "window" => one.window = all.window,
            "timeout" => one.timeout = all.timeout,
            "retry_after" => one.retry_after = all.retry_after,
            "limit_rate" => one.limit_rate = all.limit_rate,
            "limit_burst" => one.limit_burst = all.limit_burst,
            "limit_concurrency" => one.limit_concurrency = all.limit_concurrency,
            "retry_after_form" => one.retry_after_form = all.retry_after_form,
            "dispersal" => one.dispersal = all.dispersal,
            "gate" => one.gate = all.gate,
            "budget_partition" => one.budget_partition = all.budget_partition,
            "attempt_timeout" => one.attempt_timeout = all.attempt_timeout,
            "load" => one.load = all.load,
            "replicas" => one.replicas = all.replicas,
            "concurrency" => one.concurrency = all.concurrency,
            "pause" => one.pause = all.pause,
            "pause_every" => one.pause_every = all.pause_every,
            "fanout" => one.fanout = all.fanout,
            other => panic!("unexpected override {other}"),
        }
        let result = WorkloadKind::Herd.run(&one, &strategy, 1);
        if matches!(param, "clients" | "window") {
            assert!(result.is_ok(), "{param}");
        } else {
            assert_eq!(result.unwrap_err().param(), Some(param));
        }
    }
}

#[test]
fn an_outage_that_does_not_fit_in_the_run_is_refused() {
    use stagger_sim::Workload;
    use stagger_sim::workload::outage::Outage;
    use std::time::Duration;
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    for (duration, ok) in [(45, false), (46, true)] {
        let o = Overrides {
            duration: Some(Duration::from_secs(duration)),
            ..Overrides::default()
        };
        let result = WorkloadKind::Outage.run(&o, &strategy, 1);
        assert_eq!(result.is_ok(), ok, "{duration} s");
    }
    // Run directly, with parameters never validated by a caller: still refused.
    let direct = Outage {
        down_for: Duration::from_secs(3_600),
        ..Outage::default()
    };
    assert_eq!(
        direct.run(&strategy, 1).unwrap_err().param(),
        Some("duration")
    );
    let huge = Overrides {
        rate: Some(1e6),
        duration: Some(Duration::from_secs(3_600)),
        ..Overrides::default()
    };
    assert!(WorkloadKind::Outage.run(&huge, &strategy, 1).is_err());
    let zero = Overrides {
        timeout: Some(Duration::ZERO),
        ..Overrides::default()
    };
    assert_eq!(
        WorkloadKind::Outage
            .run(&zero, &strategy, 1)
            .unwrap_err()
            .param(),
        Some("timeout")
    );
}

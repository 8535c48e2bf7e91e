//! The herd and the outage: seed 000's claims, measured by running the model.

use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::{Overrides, Strategy, WorkloadKind};

fn run(kind: WorkloadKind, policy: PolicyKind, seed: u64) -> stagger_sim::ResultRow {
    kind.run(
        &Overrides::default(),
        &Strategy::policy(AnyConfig::from(policy)),
        seed,
    )
    .unwrap()
}

#[test]
fn constant_puts_a_seventh_of_its_retries_in_one_window_and_full_jitter_disperses() {
    let constant = run(WorkloadKind::Herd, PolicyKind::Constant, 1);
    assert!(
        (constant.peak_window_share - 1.0 / 7.0).abs() < 1e-9,
        "{}",
        constant.peak_window_share
    );
    let exponential = run(WorkloadKind::Herd, PolicyKind::Exponential, 1);
    assert!(
        (exponential.peak_window_share - 1.0 / 7.0).abs() < 1e-9,
        "just as synchronised"
    );
    let jitter = run(WorkloadKind::Herd, PolicyKind::ExponentialFullJitter, 1);
    assert!(
        jitter.peak_window_share < 0.03,
        "{}",
        jitter.peak_window_share
    );
    assert_eq!(constant.load, 8.0);
}

#[test]
fn on_a_thirty_second_outage_constant_rarely_succeeds_and_exponential_far_more_often() {
    let constant = run(WorkloadKind::Outage, PolicyKind::Constant, 1);
    let exponential = run(WorkloadKind::Outage, PolicyKind::Exponential, 1);
    assert!(constant.met_outage.unwrap() > 2_000);
    assert!(constant.success_rate < 0.05, "{}", constant.success_rate);
    assert!(
        exponential.success_rate > 3.0 * constant.success_rate,
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

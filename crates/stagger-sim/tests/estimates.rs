//! Each workload's estimate against its run: the events a run processes are within twice its
//! estimate (the most `stagger simulate` lets a run overrun it), on every workload, for the
//! catalog's policies at their defaults and with budgets; the memory follows the structures
//! that the parameters size.

use std::time::Duration;

use stagger_core::budget::BudgetKind;
use stagger_core::{AnyConfig, PolicyConfig, PolicyKind};
use stagger_sim::dist::Delay;
use stagger_sim::workload::herd::Herd;
use stagger_sim::workload::outage::Outage;
use stagger_sim::{Estimate, Overrides, SimError, Strategy, Workload, WorkloadKind};

/// Small runs of every workload.
fn small() -> Vec<(WorkloadKind, Overrides)> {
    let d = Overrides::default();
    vec![
        (
            WorkloadKind::Herd,
            Overrides {
                clients: Some(500),
                ..d
            },
        ),
        (
            WorkloadKind::Outage,
            Overrides {
                rate: Some(50.0),
                timeout: Some(Duration::from_secs(2)),
                ..d
            },
        ),
        (
            WorkloadKind::Outage,
            Overrides {
                rate: Some(50.0),
                retry_after: Some(Duration::from_secs(2)),
                ..d
            },
        ),
        (
            WorkloadKind::Contention,
            Overrides {
                clients: Some(30),
                rounds: Some(3),
                ..d
            },
        ),
        (
            WorkloadKind::OpenLoop,
            Overrides {
                clients: Some(50),
                duration: Some(Duration::from_secs(2)),
                failure_rate: Some(0.7),
                ..d
            },
        ),
        (
            WorkloadKind::Serial,
            Overrides {
                clients: Some(30),
                duration: Some(Duration::from_secs(2)),
                failure_rate: Some(0.6),
                ..d
            },
        ),
        (WorkloadKind::Spike, d),
        (WorkloadKind::Throttle, d),
        (
            WorkloadKind::Throttle,
            Overrides {
                rate: Some(40.0),
                limit_concurrency: Some(3),
                gate: Some(true),
                ..d
            },
        ),
        (
            WorkloadKind::Ramp,
            Overrides {
                rate: Some(20.0),
                ..d
            },
        ),
        (
            WorkloadKind::Partition,
            Overrides {
                duration: Some(Duration::from_secs(5)),
                ..d
            },
        ),
        (
            WorkloadKind::Partition,
            Overrides {
                duration: Some(Duration::from_secs(5)),
                failure_rate: Some(0.6),
                budget_partition: Some(
                    stagger_sim::workload::partition::BudgetPartition::Partitioned,
                ),
                ..d
            },
        ),
        (
            WorkloadKind::Tail,
            Overrides {
                duration: Some(Duration::from_secs(2)),
                pause_every: Some(Duration::from_secs(5)),
                ..d
            },
        ),
        (
            WorkloadKind::Tail,
            Overrides {
                duration: Some(Duration::from_secs(2)),
                pause_every: Some(Duration::from_secs(5)),
                attempt_timeout: Some(Duration::from_millis(20)),
                ..d
            },
        ),
    ]
}

fn estimate(kind: WorkloadKind, o: &Overrides, s: &Strategy) -> Estimate {
    kind.estimate(o, s).expect("valid parameters")
}

#[test]
fn no_run_overruns_twice_its_estimated_events() {
    let budgets = [
        None,
        Some(BudgetKind::Brooker),
        Some(BudgetKind::SreAdaptive),
    ];
    for (kind, o) in small() {
        for policy in PolicyKind::ALL {
            for budget in budgets {
                let s = Strategy::policy(AnyConfig::from(policy)).with_budget(budget);
                let e = estimate(kind, &o, &s);
                let row = kind.run(&o, &s, 1).expect("a valid run");
                assert!(
                    row.events <= 2 * e.events + 1_000,
                    "{kind} {policy} {budget:?}: {} events, estimated {}",
                    row.events,
                    e.events
                );
                // Without a budget the estimate is the expectation; for contention, the
                // bound that no backoff comes near. (For spike and ramp it is a collapse,
                // which a server that keeps up stays far below.)
                let floor = match kind {
                    WorkloadKind::Contention => Some(0.2),
                    WorkloadKind::Spike | WorkloadKind::Ramp => None,
                    _ => Some(0.5),
                };
                if let Some(floor) = floor
                    && budget.is_none()
                    && row.events > 2_000
                {
                    let ratio = row.events as f64 / e.events as f64;
                    assert!(ratio >= floor, "{kind} {policy}: {ratio:.2}");
                }
            }
        }
    }
}

#[test]
fn a_run_stops_past_its_event_limit() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    for (kind, o) in small() {
        let events = kind.run(&o, &s, 1).expect("a valid run").events;
        let err = kind.run_within(&o, &s, 1, events / 2).unwrap_err();
        assert_eq!(err, SimError::EventLimit { limit: events / 2 }, "{kind}");
        assert_eq!(
            kind.run_within(&o, &s, 1, events).expect("within").events,
            events
        );
    }
}

#[test]
fn the_herd_estimate_counts_every_attempt_with_one_client_in_memory() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Exponential));
    let herd = |clients| Herd {
        clients,
        ..Herd::default()
    };
    let million = herd(1_000_000).estimate(&s);
    let ten = herd(10_000_000).estimate(&s);
    // 8 attempts per client, one event each.
    assert_eq!((million.events, ten.events), (8_000_000, 80_000_000));
    // The retries' times, 8 bytes each, and little else: 10 million clients fit in 2 GiB.
    assert!(
        ten.bytes > 70_000_000 * 8 && ten.bytes < 600 << 20,
        "{ten:?}"
    );
    assert!(ten.bytes / million.bytes >= 9, "{million:?} {ten:?}");
    // A network that varies needs every client at once, and the estimate says so.
    let varied = Herd {
        network: Delay::Exponential { mean: 1_000_000 },
        ..herd(1_000_000)
    }
    .estimate(&s);
    assert!(varied.bytes > million.bytes + 1_000_000 * 200, "{varied:?}");
    // A policy that never gives up never ends here: the estimate says so, and the run is
    // stopped rather than run.
    let forever = Strategy::policy(
        AnyConfig::from(PolicyKind::Constant)
            .set(stagger_core::Param::MaxAttempts(u32::MAX))
            .expect("a valid limit"),
    );
    assert!(herd(1_000).estimate(&forever).events > 4_000_000_000_000);
}

#[test]
fn the_outage_holds_the_requests_in_flight_not_all_requests() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Exponential));
    let outage = |rate: f64, secs| Outage {
        rate,
        duration: Duration::from_secs(secs),
        ..Outage::default()
    };
    let short = outage(1_000.0, 60).estimate(&s);
    let long = outage(1_000.0, 6_000).estimate(&s);
    // A hundred times the requests: a hundred times the events (almost all before or
    // after the outage, one attempt each), the same memory.
    let ratio = long.events as f64 / short.events as f64;
    assert!((10.0..100.0).contains(&ratio), "{short:?} {long:?}");
    assert!(long.bytes < short.bytes + (1 << 20), "{short:?} {long:?}");
    // Ten times the rate: ten times the requests in flight.
    let busy = outage(10_000.0, 60).estimate(&s);
    let grown = busy.bytes as f64 / short.bytes as f64;
    assert!((4.0..=20.0).contains(&grown), "{short:?} {busy:?}");
}

#[test]
fn invalid_parameters_and_policies_are_refused_by_the_estimate_as_by_the_run() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Constant));
    let too_many = Overrides {
        clients: Some(Herd::MAX_CLIENTS + 1),
        ..Overrides::default()
    };
    assert!(matches!(
        WorkloadKind::Herd.estimate(&too_many, &s),
        Err(SimError::TooLarge { .. })
    ));
    let bad = Strategy::policy(
        AnyConfig::from(PolicyKind::Immediate)
            .set(stagger_core::Param::MaxAttempts(0))
            .expect("checked when built"),
    );
    assert!(matches!(
        WorkloadKind::Spike.estimate(&Overrides::default(), &bad),
        Err(SimError::Config(_))
    ));
    let rounds = Overrides {
        rounds: Some(3),
        ..Overrides::default()
    };
    assert_eq!(
        WorkloadKind::Herd
            .estimate(&rounds, &s)
            .unwrap_err()
            .param(),
        Some("rounds")
    );
}

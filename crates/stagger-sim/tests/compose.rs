//! The composed model on compositions no canonical workload makes: its estimate bounds its
//! runs, a run is reproducible to the byte, and bad parts are refused by name.

use std::time::Duration;

use stagger_core::budget::BudgetKind;
use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::SimError;
use stagger_sim::Strategy;
use stagger_sim::dist::Delay;
use stagger_sim::model::RetryAfterForm;
use stagger_sim::model::RunOptions;
use stagger_sim::model::{
    BudgetScope, Clients, Composed, ConcurrencyLimit, Dependency, Limiter, Load, Network,
    RateLimit, Replicas, Service, TwoHosts, Window,
};
use stagger_sim::model::{RampShape, SpikeShape};

fn base(clients: Clients) -> Composed {
    let rtt = Network::RoundTrip(Delay::Exponential { mean: 10_000_000 });
    let mut model = Composed::new(clients, Duration::from_secs(20), rtt);
    model.dependency.failure_rate = 0.3;
    model
}

fn window(at: u64, lasts: u64, retry_after: Option<Duration>) -> Option<Window> {
    Some(Window {
        at: Duration::from_secs(at),
        lasts: Duration::from_secs(lasts),
        retry_after,
    })
}

/// A rate limit of `rate` a second and `burst`, refusing with a fixed 1 s.
fn rate_limit(rate: f64, burst: u32) -> Option<Limiter> {
    Some(Limiter::Rate(RateLimit {
        rate,
        burst,
        retry_after: Duration::from_secs(1),
        form: RetryAfterForm::Fixed,
    }))
}

/// A concurrency limit of `limit`, each served for `service`, refusing with a fixed 1 s.
fn concurrency_limit(limit: u32, service: Duration) -> Option<Limiter> {
    Some(Limiter::Concurrency(ConcurrencyLimit {
        limit,
        service,
        retry_after: Duration::from_secs(1),
        form: RetryAfterForm::Fixed,
    }))
}

/// Compositions across the canonical workloads' parts.
fn compositions() -> Vec<(&'static str, Composed)> {
    let open = Clients::Open {
        sources: 20,
        rate: 5.0,
    };
    let serial = Clients::Serial {
        clients: 20,
        rate: 5.0,
    };
    let fleet = Clients::Fixed { count: 200 };
    let one_way = Network::OneWay(Delay::Constant { nanos: 1_000_000 });
    vec![
        (
            "open, failures and an outage",
            Composed {
                dependency: Dependency {
                    outage: window(5, 5, None),
                    ..base(open).dependency
                },
                ..base(open)
            },
        ),
        (
            "serial through an outage with Retry-After, one way",
            Composed {
                network: one_way,
                dependency: Dependency {
                    failure_rate: 0.0,
                    outage: window(5, 5, Some(Duration::from_secs(1))),
                    limiter: None,
                    service: None,
                    two_hosts: None,
                    replicas: None,
                },
                ..base(serial)
            },
        ),
        (
            "open behind a rate limiter, a deadline, a shared budget",
            Composed {
                dependency: Dependency {
                    limiter: rate_limit(50.0, 5),
                    ..base(open).dependency
                },
                deadline: Some(Duration::from_secs(4)),
                budget_scope: BudgetScope::Shared,
                ..base(open)
            },
        ),
        (
            "a fleet behind a concurrency limiter, gated, through an outage",
            Composed {
                network: one_way,
                dependency: Dependency {
                    failure_rate: 0.1,
                    outage: window(0, 2, None),
                    limiter: concurrency_limit(20, Duration::from_millis(50)),
                    service: None,
                    two_hosts: None,
                    replicas: None,
                },
                deadline: Some(Duration::from_secs(10)),
                gate: true,
                ..base(fleet)
            },
        ),
        (
            "open, one client per request",
            Composed {
                budget_scope: BudgetScope::PerRequest,
                ..base(open)
            },
        ),
        (
            "serial to two hosts, host B behind a rate limiter, a budget per host, a deadline",
            Composed {
                network: one_way,
                dependency: Dependency {
                    limiter: rate_limit(40.0, 4),
                    two_hosts: two_hosts(0.3, true),
                    ..base(serial).dependency
                },
                deadline: Some(Duration::from_secs(3)),
                ..base(serial)
            },
        ),
        (
            "a gated fleet to two hosts through host B's outage",
            Composed {
                network: one_way,
                dependency: Dependency {
                    outage: window(0, 2, None),
                    two_hosts: two_hosts(0.5, false),
                    ..base(fleet).dependency
                },
                gate: true,
                ..base(fleet)
            },
        ),
        (
            "serial clients to paused replicas behind a rate limiter, one way, timed",
            Composed {
                network: one_way,
                dependency: Dependency {
                    limiter: rate_limit(60.0, 5),
                    replicas: pool(4, 2, 500),
                    ..base(serial).dependency
                },
                deadline: Some(Duration::from_secs(2)),
                attempt_timeout: Some(Duration::from_millis(100)),
                ..base(serial)
            },
        ),
        (
            "open sources fanning out to paused replicas behind a rate limiter",
            Composed {
                dependency: Dependency {
                    limiter: rate_limit(250.0, 20),
                    replicas: pool(10, 4, 1_000),
                    ..base(open).dependency
                },
                fanout: 3,
                deadline: Some(Duration::from_secs(3)),
                ..base(open)
            },
        ),
    ]
}

/// A pool of `count` replicas serving `concurrency` attempts each, `Exp(mean 10 ms)` apiece,
/// that pause for `pause_ms` about every 5 s.
fn pool(count: u32, concurrency: u32, pause_ms: u64) -> Option<Replicas> {
    Some(Replicas {
        count,
        concurrency,
        service: Delay::Exponential { mean: 10_000_000 },
        pause: Duration::from_millis(pause_ms),
        pause_every: Duration::from_secs(5),
    })
}

fn two_hosts(share_down: f64, budget_per_host: bool) -> Option<TwoHosts> {
    Some(TwoHosts {
        share_down,
        budget_per_host,
    })
}

#[test]
fn the_estimate_bounds_every_compositions_run() {
    for (name, model) in compositions() {
        model.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        for policy in PolicyKind::ALL {
            for budget in [None, Some(BudgetKind::Brooker)] {
                let s = Strategy::policy(AnyConfig::from(policy)).with_budget(budget);
                let e = model.estimate(&s, &[]);
                let row = model
                    .run(&s, &RunOptions::seed(1))
                    .unwrap_or_else(|err| panic!("{name}: {err}"));
                assert!(
                    row.events <= 2 * e.events + 1_000,
                    "{name} {policy} {budget:?}: {} events, estimated {}",
                    row.events,
                    e.events
                );
                assert!(row.first_tries > 0, "{name}");
            }
        }
    }
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter))
        .with_budget(Some(BudgetKind::AwsStandard));
    for (name, model) in compositions() {
        let json =
            |seed| serde_json::to_string(&model.run(&s, &RunOptions::seed(seed)).unwrap()).unwrap();
        assert_eq!(json(7), json(7), "{name}");
        assert_ne!(json(7), json(8), "{name}");
    }
}

#[test]
fn every_composition_keeps_the_limiters_time_and_reports_its_parts() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    for (name, model) in compositions() {
        let row = model.run(&s, &RunOptions::seed(1)).unwrap();
        assert_eq!(
            row.met_outage.is_some(),
            model.dependency.outage.is_some(),
            "{name}"
        );
        match model.dependency.limiter {
            Some(_) => {
                assert_eq!(row.early_retries, Some(0), "{name}");
                assert!(row.rejected_per_success.unwrap() > 0.0, "{name}");
            }
            None => assert_eq!(row.served_share, None, "{name}"),
        }
    }
}

#[test]
fn bad_parts_are_refused_by_name() {
    let open = base(Clients::Open {
        sources: 2,
        rate: 1.0,
    });
    let param = |model: Composed| match model.validate() {
        Err(SimError::Invalid { param, .. }) => param,
        other => panic!("{other:?}"),
    };
    let late = Composed {
        dependency: Dependency {
            outage: window(15, 10, None),
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(late), "outage");
    let empty_bucket = Composed {
        dependency: Dependency {
            limiter: rate_limit(5.0, 0),
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(empty_bucket), "limit_burst");
    let no_room = Composed {
        dependency: Dependency {
            limiter: concurrency_limit(0, Duration::from_millis(1)),
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(no_room), "limit_concurrency");
    let never = Composed {
        deadline: Some(Duration::ZERO),
        ..open
    };
    assert_eq!(param(never), "timeout");
    let flood = Composed {
        clients: Clients::Open {
            sources: 100_000,
            rate: 1e6,
        },
        ..open
    };
    assert!(matches!(flood.validate(), Err(SimError::TooLarge { .. })));
    let hedged = Strategy::policy(AnyConfig::from(PolicyKind::Immediate)).with_hedging(Some(
        stagger_core::engine::Hedging::fixed(Duration::from_millis(5), 2),
    ));
    // Hedged attempts go to the dependency: no inner layers under them.
    let layer = stagger_sim::model::Layer {
        policy: stagger_sim::SimPolicy::Catalog(AnyConfig::from(PolicyKind::Immediate)),
        settings: stagger_core::engine::Settings::new(),
    };
    assert!(open.run(&hedged, &RunOptions::seed(1)).is_ok());
    assert!(matches!(
        open.run(
            &hedged,
            &RunOptions::seed(1).max_events(u64::MAX).layers(&[layer])
        ),
        Err(SimError::NotApplicable { param: "hedge", .. })
    ));
    // The parts over time.
    let service = Some(Service {
        base: Duration::from_millis(10),
        per_in_flight: Duration::from_millis(1),
    });
    let served_round_trip = Composed {
        dependency: Dependency {
            service,
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(served_round_trip), "dependency.service");
    let slow = Composed {
        network: one_way(1_000_000),
        dependency: Dependency {
            service: Some(Service {
                base: Duration::from_secs(3_601),
                per_in_flight: Duration::ZERO,
            }),
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(slow), "dependency.service");
    let spike = |factor: f64, lasts: u64| {
        Load::Spike(SpikeShape {
            factor,
            at: Duration::from_secs(5),
            lasts: Duration::from_secs(lasts),
        })
    };
    let fleet = base(Clients::Fixed { count: 10 });
    assert_eq!(
        param(Composed {
            load: spike(2.0, 1),
            ..fleet
        }),
        "clients.spike or clients.ramp"
    );
    assert_eq!(
        param(Composed {
            load: spike(0.0, 1),
            ..open
        }),
        "clients.spike.factor"
    );
    assert_eq!(
        param(Composed {
            load: spike(2.0, 0),
            ..open
        }),
        "clients.spike"
    );
    assert_eq!(
        param(Composed {
            load: Load::Ramp(RampShape {
                peak_factor: 2.0,
                peak_at: Duration::ZERO
            }),
            ..open
        }),
        "clients.ramp.peak_at"
    );
    // A spike that ends after the run, and a ramp that would fall from its "peak".
    assert_eq!(
        param(Composed {
            load: Load::Spike(SpikeShape {
                factor: 2.0,
                at: Duration::from_secs(15),
                lasts: Duration::from_secs(10),
            }),
            ..open
        }),
        "clients.spike"
    );
    assert_eq!(
        param(Composed {
            load: Load::Ramp(RampShape {
                peak_factor: 0.5,
                peak_at: Duration::from_secs(5)
            }),
            ..open
        }),
        "clients.ramp.peak_factor"
    );
    assert_eq!(
        param(Composed {
            attempt_timeout: Some(Duration::ZERO),
            ..open
        }),
        "attempt_timeout"
    );
    assert_eq!(
        param(Composed {
            drain: Some(Duration::from_secs(86_401)),
            ..open
        }),
        "drain"
    );
}

fn one_way(nanos: u64) -> Network {
    Network::OneWay(Delay::Constant { nanos })
}

#[test]
fn a_budget_per_request_merges_open_sources_and_is_refused_for_serial_clients() {
    let open = Composed {
        budget_scope: BudgetScope::PerRequest,
        ..base(Clients::Open {
            sources: 20,
            rate: 5.0,
        })
    };
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter))
        .with_budget(Some(BudgetKind::AwsStandard));
    // 20 sources x 5 a second x 20 s: 2000 requests expected, within 4 standard deviations.
    let requests = open.run(&s, &RunOptions::seed(1)).unwrap().first_tries as f64;
    assert!(
        (requests - 2_000.0).abs() < 4.0 * 2_000f64.sqrt(),
        "{requests}"
    );
    let serial = Composed {
        budget_scope: BudgetScope::PerRequest,
        ..base(Clients::Serial {
            clients: 3,
            rate: 5.0,
        })
    };
    assert!(matches!(
        serial.validate(),
        Err(SimError::Invalid {
            param: "budget_scope",
            ..
        })
    ));
}

#[test]
fn a_huge_deadline_behind_a_limiter_is_stopped_by_its_limit_not_by_the_allocator() {
    use stagger_sim::Workload;
    use stagger_sim::workload::throttle::Throttle;
    let storm = Throttle {
        rate: Some(10_000.0),
        timeout: Duration::from_secs(86_400),
        ..Throttle::default()
    };
    let s = stagger_sim::workload::throttle::trial_strategy();
    assert_eq!(
        storm.run_within(&s, 1, 1_000),
        Err(SimError::EventLimit { limit: 1_000 })
    );
}

#[test]
fn an_outer_deadline_bounds_the_layers_inside_it() {
    use stagger_core::engine::{Nested, Settings};
    use stagger_sim::SimPolicy;
    use stagger_sim::model::Layer;
    let mut down = base(Clients::Open {
        sources: 5,
        rate: 10.0,
    });
    down.dependency.failure_rate = 1.0;
    down.deadline = Some(Duration::from_secs(1));
    let inner = Layer {
        policy: SimPolicy::Catalog(AnyConfig::from(
            stagger_core::policy::Constant::new()
                .with_base(Duration::from_secs(1))
                .with_max_attempts(10),
        )),
        settings: Settings::new().with_nested(Nested::Retry),
    };
    let outer = Strategy::policy(AnyConfig::from(PolicyKind::Immediate));
    let row = down
        .run(
            &outer,
            &RunOptions::seed(1).max_events(u64::MAX).layers(&[inner]),
        )
        .unwrap();
    // The inner layer's retry would wait 1 s, which the outer attempt does not have: one
    // attempt per inner run, and the outer layer's retries stop at its deadline too.
    assert!(row.load <= 3.0, "{row:?}");
    assert!(row.first_tries > 0);
}

#[test]
fn a_concurrency_limiter_on_a_round_trip_still_answers_after_the_trip() {
    let mut served = base(Clients::Open {
        sources: 5,
        rate: 10.0,
    });
    served.network = Network::RoundTrip(Delay::Constant { nanos: 100_000_000 });
    served.dependency = Dependency {
        failure_rate: 0.0,
        outage: None,
        limiter: concurrency_limit(1_000, Duration::from_millis(1)),
        service: None,
        two_hosts: None,
        replicas: None,
    };
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Immediate));
    let row = served.run(&s, &RunOptions::seed(1)).unwrap();
    let p50 = row.p50_ms.unwrap();
    assert!((100.0..=102.0).contains(&p50), "{p50}");
}

#[test]
fn behind_a_limiter_only_admitted_attempts_count_as_reaching_the_dependency() {
    let mut m = Composed::new(
        Clients::Open {
            sources: 1,
            rate: 100.0,
        },
        Duration::from_secs(20),
        one_way(1_000_000),
    );
    m.dependency.outage = window(5, 5, None);
    m.dependency.limiter = rate_limit(2.0, 1);
    m.deadline = Some(Duration::from_secs(30));
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    let row = m.run(&s, &RunOptions::seed(1)).unwrap();
    // 2 a second get through: the second after the outage sees at most 3 of them.
    assert!(row.recovery_load.unwrap() <= 3, "{row:?}");
    assert!(row.met_outage.unwrap() > 0, "{row:?}");
}

#[test]
fn a_stack_whose_inner_layers_leave_recovery_to_the_outer_one_is_the_outer_one_alone() {
    use stagger_core::engine::Settings;
    use stagger_sim::SimPolicy;
    use stagger_sim::model::Layer;
    // Jittered delays above a server's wait: every generator the outer layer draws from.
    let mut throttling = Composed::new(
        Clients::Open {
            sources: 4,
            rate: 25.0,
        },
        Duration::from_secs(20),
        one_way(1_000_000),
    );
    throttling.dependency.failure_rate = 0.2;
    throttling.dependency.outage = window(5, 5, Some(Duration::from_secs(1)));
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    let inner = Layer {
        policy: SimPolicy::Catalog(AnyConfig::from(PolicyKind::ExponentialFullJitter)),
        settings: Settings::new(),
    };
    let alone = throttling.run(&s, &RunOptions::seed(3)).unwrap();
    let stacked = throttling
        .run(
            &s,
            &RunOptions::seed(3)
                .max_events(u64::MAX)
                .layers(&[inner, inner]),
        )
        .unwrap();
    assert_eq!(
        serde_json::to_string(&alone).unwrap(),
        serde_json::to_string(&stacked).unwrap()
    );
}

#[test]
fn an_inner_layers_waits_count_in_the_memory_a_stack_needs() {
    use stagger_core::engine::{Nested, Settings};
    use stagger_sim::SimPolicy;
    use stagger_sim::model::Layer;
    // 100 000 requests a second for 3 s, each held 20 s by its inner layer's one retry: every
    // request is in flight at once (measured at about 500 MB of RSS).
    let mut down = Composed::new(
        Clients::Open {
            sources: 1,
            rate: 100_000.0,
        },
        Duration::from_secs(3),
        Network::RoundTrip(Delay::Constant { nanos: 10_000_000 }),
    );
    down.dependency.failure_rate = 1.0;
    let outer = Strategy::policy(AnyConfig::from(
        stagger_core::policy::Immediate::new().with_max_attempts(1),
    ));
    let patient = Layer {
        policy: SimPolicy::Catalog(AnyConfig::from(
            stagger_core::policy::Constant::new()
                .with_base(Duration::from_secs(20))
                .with_max_attempts(2),
        )),
        settings: Settings::new().with_nested(Nested::Retry),
    };
    let alone = down.estimate(&outer, &[]);
    let stacked = down.estimate(&outer, &[patient]);
    assert!(stacked.bytes > 200 << 20, "{stacked:?}");
    assert!(stacked.bytes > 20 * alone.bytes, "{stacked:?} {alone:?}");
}

/// Hedging runs on the composed model, with any part: here through an outage, behind a flaky
/// dependency. A hedged run is reproducible, sends no more attempts per request than its
/// hedging allows, and sends hedges (more attempts than the same requests without hedging
/// while the dependency answers slowly).
#[test]
fn hedged_requests_run_through_any_part() {
    let mut model = Composed::new(
        Clients::Open {
            sources: 4,
            rate: 50.0,
        },
        Duration::from_secs(20),
        Network::OneWay(Delay::Exponential { mean: 5_000_000 }),
    );
    model.dependency.failure_rate = 0.2;
    model.dependency.outage = window(5, 3, None);
    model.deadline = Some(Duration::from_secs(2));
    let plain = Strategy::policy(AnyConfig::from(PolicyKind::Immediate));
    let hedged = plain.with_hedging(Some(stagger_core::engine::Hedging::fixed(
        Duration::from_millis(8),
        3,
    )));
    let row = model.run(&hedged, &RunOptions::seed(3)).unwrap();
    assert_eq!(row, model.run(&hedged, &RunOptions::seed(3)).unwrap());
    assert_eq!(row.policy, "hedge-8msx3");
    assert!(row.attempts <= 3 * row.first_tries, "{row:?}");
    let unhedged = model.run(&plain, &RunOptions::seed(3)).unwrap();
    assert_eq!(row.first_tries, unhedged.first_tries);
    // The failure rate and the outage are answered at once: only the slow answers draw
    // hedges, so the hedged load sits between one attempt per request and three.
    assert!(row.load > 1.05 && row.load < 3.0, "{row:?}");
    assert!(row.met_outage.is_some_and(|m| m > 0), "{row:?}");
}

/// A spike of the load composes with the other parts: open sources whose rate doubles for a
/// window, a flaky dependency behind a rate limiter. The per-second series counts what arrived, at the
/// rate offered.
#[test]
fn a_spike_composes_with_a_limiter_and_failures() {
    let mut model = Composed::new(
        Clients::Open {
            sources: 2,
            rate: 20.0,
        },
        Duration::from_secs(40),
        Network::OneWay(Delay::Exponential { mean: 2_000_000 }),
    );
    model.load = Load::Spike(SpikeShape {
        factor: 3.0,
        at: Duration::from_secs(10),
        lasts: Duration::from_secs(5),
    });
    model.dependency.failure_rate = 0.1;
    model.dependency.limiter = rate_limit(60.0, 10);
    let strategy = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    let per_second = model
        .per_second(&strategy, &RunOptions::seed(2).max_events(u64::MAX))
        .unwrap();
    let row = &per_second.row;
    assert_eq!(per_second.arrivals.iter().sum::<u64>(), row.first_tries);
    // Attempts sent after the run's last second are in the row, not in a second.
    let counted: u64 = per_second.attempts.iter().sum();
    assert!(
        counted <= row.attempts && counted + 20 > row.attempts,
        "{counted} {row:?}"
    );
    // 40 a second in all, 120 during the spike.
    assert_eq!(per_second.offered[5], 40.0);
    assert_eq!(per_second.offered[12], 120.0);
    let during: u64 = per_second.arrivals[10..15].iter().sum();
    let before: u64 = per_second.arrivals[0..5].iter().sum();
    assert!(during > 2 * before, "{during} {before}");
    // The limiter refuses some of the spike, and the tail is served again.
    assert!(row.rejected_per_success.is_some_and(|r| r > 0.0), "{row:?}");
    assert!(row.tail_goodput_ratio.is_some_and(|r| r > 0.8), "{row:?}");
    assert!(row.recovery_ms.is_some());
    // A run's row is its per-second series'.
    assert_eq!(&model.run(&strategy, &RunOptions::seed(2)).unwrap(), row);
}

/// An attempt's timeout cuts it wherever its answer is held: a round trip through a
/// concurrency limiter that serves for a second answers after the timeout, so no attempt
/// succeeds; and a hedge already in flight when a limiter refuses its sibling is not an early
/// retry, since nobody told it to wait.
#[test]
fn timeouts_cut_served_attempts_and_hedges_in_flight_are_not_early() {
    let mut served = Composed::new(
        Clients::Open {
            sources: 1,
            rate: 20.0,
        },
        Duration::from_secs(5),
        Network::RoundTrip(Delay::Constant { nanos: 10_000_000 }),
    );
    served.dependency.limiter = concurrency_limit(100, Duration::from_secs(1));
    served.attempt_timeout = Some(Duration::from_millis(100));
    let retrying = Strategy::policy(AnyConfig::from(PolicyKind::Immediate));
    let row = served.run(&retrying, &RunOptions::seed(1)).unwrap();
    assert!(row.first_tries > 50, "{row:?}");
    assert_eq!(row.successes, 0, "{row:?}");
    served.attempt_timeout = Some(Duration::from_millis(1_500));
    assert_eq!(
        served
            .run(&retrying, &RunOptions::seed(1))
            .unwrap()
            .success_rate,
        1.0
    );

    let mut limited = base(Clients::Open {
        sources: 2,
        rate: 50.0,
    });
    limited.dependency.limiter = rate_limit(20.0, 5);
    let hedged = Strategy::policy(AnyConfig::from(PolicyKind::Immediate)).with_hedging(Some(
        stagger_core::engine::Hedging::fixed(Duration::from_millis(2), 3),
    ));
    let row = limited.run(&hedged, &RunOptions::seed(1)).unwrap();
    assert!(row.rejected_per_success.is_some_and(|r| r > 0.5), "{row:?}");
    assert_eq!(row.early_retries, Some(0), "{row:?}");
}

#[test]
fn two_hosts_compose_with_any_part_and_every_strategy_meets_the_same_requests() {
    let aws = || Strategy::policy(stagger_core::Preset::AWS_STANDARD.config());
    let hedged = aws().with_hedging(Some(stagger_core::engine::Hedging::fixed(
        Duration::from_millis(20),
        3,
    )));
    let strategies = [
        aws(),
        aws().with_budget(Some(BudgetKind::AwsStandard)),
        hedged,
        hedged.with_budget(Some(BudgetKind::AwsStandard)),
    ];
    let open = Clients::Open {
        sources: 4,
        rate: 25.0,
    };
    let models = [
        ("open", base(open)),
        (
            "open behind a concurrency limiter, with an attempt timeout",
            Composed {
                network: one_way(1_000_000),
                dependency: Dependency {
                    limiter: concurrency_limit(3, Duration::from_millis(30)),
                    ..base(open).dependency
                },
                attempt_timeout: Some(Duration::from_millis(500)),
                ..base(open)
            },
        ),
    ];
    for (name, model) in models {
        let mut seen_a = None;
        for per_host in [false, true] {
            let model = Composed {
                dependency: Dependency {
                    two_hosts: two_hosts(0.5, per_host),
                    ..model.dependency
                },
                ..model
            };
            for s in &strategies {
                let row = model
                    .run(s, &RunOptions::seed(3))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let (a, b) = (row.host_a.unwrap(), row.host_b.unwrap());
                let mode = if per_host { "partitioned" } else { "shared" };
                assert_eq!(row.budget_partition, Some(mode), "{name}");
                // Every strategy, with or without a budget, hedged or not, in either mode: the
                // same requests to host A.
                assert_eq!(*seen_a.get_or_insert(a.requests), a.requests, "{name}");
                assert_eq!(a.requests + b.requests, row.first_tries, "{name}");
                // Host A is down: it never answers well.
                assert_eq!(a.successes, 0, "{name}");
                assert_eq!(b.successes, row.successes, "{name}");
                let refused = ["budget-exhausted", "budget-refused-first-attempt"]
                    .iter()
                    .map(|r| row.give_ups.get(*r).copied().unwrap_or(0))
                    .sum::<u64>();
                assert_eq!(a.refused + b.refused, refused, "{name}");
                assert_eq!(
                    a.retries + b.retries,
                    row.attempts - row.first_tries,
                    "{name}"
                );
                if s.budget.is_none() {
                    assert_eq!(refused, 0, "{name}");
                }
            }
        }
    }
}

#[test]
fn a_pool_takes_a_spike_and_hedges_and_its_pauses_make_the_tail() {
    let open = Clients::Open {
        sources: 1,
        rate: 800.0,
    };
    let paused = Composed {
        network: Network::RoundTrip(Delay::Constant { nanos: 0 }),
        dependency: Dependency {
            replicas: pool(4, 4, 1_000),
            ..Dependency::HEALTHY
        },
        load: Load::Spike(SpikeShape {
            factor: 1.5,
            at: Duration::from_secs(5),
            lasts: Duration::from_secs(2),
        }),
        deadline: Some(Duration::from_secs(2)),
        ..base(open)
    };
    let steady = Composed {
        dependency: Dependency {
            replicas: pool(4, 4, 0),
            ..paused.dependency
        },
        ..paused
    };
    let once = Strategy::policy(AnyConfig::from(PolicyKind::NoRetry));
    let hedged = Strategy::policy(AnyConfig::from(PolicyKind::Immediate)).with_hedging(Some(
        stagger_core::engine::Hedging::fixed(Duration::from_millis(50), 2),
    ));
    let body = steady.run(&once, &RunOptions::seed(1)).unwrap();
    let tail = paused.run(&once, &RunOptions::seed(1)).unwrap();
    let cut = paused.run(&hedged, &RunOptions::seed(1)).unwrap();
    // Without pauses the pool at half its capacity (a spike to three quarters) serves
    // everything at about its service time; pauses make a tail of hundreds of milliseconds.
    assert_eq!((body.success_rate, body.load), (1.0, 1.0));
    assert!(body.p999_ms.flatten().unwrap() < 150.0, "{body:?}");
    assert!(tail.p999_ms.flatten().unwrap() > 300.0, "{tail:?}");
    // A hedge after 50 ms goes to another replica and cuts the tail, for a few extra attempts.
    assert!(
        cut.p999_ms.flatten().unwrap() < tail.p999_ms.flatten().unwrap() / 2.0,
        "{cut:?} {tail:?}"
    );
    assert!(cut.load > 1.0 && cut.load < 1.2, "{cut:?}");
    assert_eq!(cut, paused.run(&hedged, &RunOptions::seed(1)).unwrap());
}

#[test]
fn serial_clients_need_an_attempt_that_takes_time_which_a_pool_gives_without_a_network() {
    let serial = Clients::Serial {
        clients: 5,
        rate: 20.0,
    };
    let instant = Composed {
        network: Network::RoundTrip(Delay::Constant { nanos: 0 }),
        ..base(serial)
    };
    // Without a network or a server an attempt takes no time: a serial client's attempts would
    // have no bound.
    assert!(matches!(
        instant.validate(),
        Err(SimError::Invalid { param: "rtt", .. })
    ));
    // A pool's service is the time an attempt takes.
    let pooled = Composed {
        dependency: Dependency {
            replicas: pool(2, 2, 0),
            ..Dependency::HEALTHY
        },
        ..instant
    };
    pooled.validate().unwrap();
    let row = pooled
        .run(
            &Strategy::policy(AnyConfig::from(PolicyKind::NoRetry)),
            &RunOptions::seed(1),
        )
        .unwrap();
    assert_eq!(row.success_rate, 1.0);
    // Five clients paced at 20 a second for the run, each request a service of Exp(10 ms).
    let paced = 5.0 * 20.0 * pooled.duration.as_secs_f64();
    let requests = row.first_tries as f64;
    assert!(requests > 0.8 * paced && requests <= paced + 5.0, "{row:?}");
    assert!(row.p50_ms.unwrap() > 3.0, "{row:?}");
}

#[test]
fn a_fan_out_counts_requests_in_the_per_second_series_and_is_refused_beside_an_outage() {
    let spiky = |fanout| Composed {
        network: Network::OneWay(Delay::Constant { nanos: 1_000_000 }),
        dependency: Dependency::HEALTHY,
        load: Load::Spike(SpikeShape {
            factor: 2.0,
            at: Duration::from_secs(10),
            lasts: Duration::from_secs(5),
        }),
        duration: Duration::from_secs(50),
        fanout,
        ..base(Clients::Open {
            sources: 1,
            rate: 40.0,
        })
    };
    let s = Strategy::policy(AnyConfig::from(PolicyKind::Immediate));
    let one = spiky(1).run(&s, &RunOptions::seed(1)).unwrap();
    let three = spiky(3).run(&s, &RunOptions::seed(1)).unwrap();
    assert_eq!(three.success_rate, 1.0);
    // Goodput against the offered rate, both in requests: about 1 either way (it was about
    // 3 when the series counted sub-requests).
    let (a, b) = (
        one.tail_goodput_ratio.unwrap(),
        three.tail_goodput_ratio.unwrap(),
    );
    assert!(
        (0.8..1.25).contains(&a) && (0.8..1.25).contains(&b),
        "{a} {b}"
    );
    let with_outage = Composed {
        dependency: Dependency {
            outage: window(5, 5, None),
            ..Dependency::HEALTHY
        },
        load: Load::Steady,
        ..spiky(2)
    };
    assert!(matches!(
        with_outage.validate(),
        Err(SimError::Invalid {
            param: "fanout",
            ..
        })
    ));
}

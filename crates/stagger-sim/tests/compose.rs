//! The composed model on compositions no canonical workload makes: its estimate bounds its
//! runs, a run is reproducible to the byte, and bad parts are refused by name.

use std::time::Duration;

use stagger_core::budget::BudgetKind;
use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::SimError;
use stagger_sim::Strategy;
use stagger_sim::compose::{
    BudgetScope, Clients, Composed, Dependency, Limiter, LimiterKind, Network, Window,
};
use stagger_sim::dist::Delay;
use stagger_sim::workload::throttle::RetryAfterForm;

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

fn limiter(kind: LimiterKind) -> Option<Limiter> {
    Some(Limiter {
        kind,
        retry_after: Duration::from_secs(1),
        form: RetryAfterForm::Fixed,
    })
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
                },
                ..base(serial)
            },
        ),
        (
            "open behind a rate limiter, a deadline, a shared budget",
            Composed {
                dependency: Dependency {
                    limiter: limiter(LimiterKind::Rate {
                        rate: 50.0,
                        burst: 5,
                    }),
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
                    limiter: limiter(LimiterKind::Concurrency {
                        limit: 20,
                        service: Duration::from_millis(50),
                    }),
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
    ]
}

#[test]
fn the_estimate_bounds_every_compositions_run() {
    for (name, model) in compositions() {
        model.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        for policy in PolicyKind::ALL {
            for budget in [None, Some(BudgetKind::Brooker)] {
                let s = Strategy::policy(AnyConfig::from(policy)).with_budget(budget);
                let e = model.estimate(&s);
                let row = model
                    .run(&s, 1)
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
        let json = |seed| serde_json::to_string(&model.run(&s, seed).unwrap()).unwrap();
        assert_eq!(json(7), json(7), "{name}");
        assert_ne!(json(7), json(8), "{name}");
    }
}

#[test]
fn every_composition_keeps_the_limiters_time_and_reports_its_parts() {
    let s = Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter));
    for (name, model) in compositions() {
        let row = model.run(&s, 1).unwrap();
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
            limiter: limiter(LimiterKind::Rate {
                rate: 5.0,
                burst: 0,
            }),
            ..open.dependency
        },
        ..open
    };
    assert_eq!(param(empty_bucket), "limit_burst");
    let no_room = Composed {
        dependency: Dependency {
            limiter: limiter(LimiterKind::Concurrency {
                limit: 0,
                service: Duration::from_millis(1),
            }),
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
    assert!(matches!(
        open.run(&hedged, 1),
        Err(SimError::NotApplicable { param: "hedge", .. })
    ));
}

//! Every limit of `stagger_sim::limits`, met by each workload that reads it and by the composed
//! model (which scenario files drive): each accepts the limit itself and refuses just past it,
//! naming the same parameter with the same kind of error. (The CLI's flags and scenario files
//! are checked against the same constants in `crates/stagger-cli/tests/limits.rs`.)

use std::time::Duration;

use stagger_core::engine::Hedging;
use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::dist::Delay;
use stagger_sim::limits::{self, MAX_DURATION};
use stagger_sim::model::RampShape;
use stagger_sim::model::RetryAfterForm;
use stagger_sim::model::RunOptions;
use stagger_sim::model::{
    Clients, Composed, ConcurrencyLimit, Dependency, Layer, Limiter, Load, Network, RateLimit,
    Replicas, Service, Window,
};
use stagger_sim::workload::contention::Contention;
use stagger_sim::workload::herd::Herd;
use stagger_sim::workload::open_loop::OpenLoop;
use stagger_sim::workload::outage::Outage;
use stagger_sim::workload::partition::Partition;
use stagger_sim::workload::serial::Serial;
use stagger_sim::workload::spike;
use stagger_sim::workload::tail::Tail;
use stagger_sim::workload::throttle::Throttle;
use stagger_sim::{Overrides, SimError, SimPolicy, Strategy, Workload, WorkloadKind};

const NS: Duration = Duration::from_nanos(1);
const D: Overrides = Overrides {
    clients: None,
    rounds: None,
    failure_rate: None,
    duration: None,
    rate: None,
    window: None,
    timeout: None,
    retry_after: None,
    limit_rate: None,
    limit_burst: None,
    limit_concurrency: None,
    retry_after_form: None,
    dispersal: None,
    gate: None,
    budget_partition: None,
    attempt_timeout: None,
    load: None,
    replicas: None,
    concurrency: None,
    pause: None,
    pause_every: None,
    fanout: None,
};

fn strategy() -> Strategy {
    Strategy::policy(AnyConfig::from(PolicyKind::Immediate))
}

/// Whether `kind` at its defaults with `o` is accepted, as `stagger simulate` checks it before
/// a run (without running it).
fn workload(kind: WorkloadKind, o: Overrides) -> Result<(), SimError> {
    kind.estimate(&o, &strategy()).map(drop)
}

/// `result` is a refusal of `param` with [`SimError::Invalid`].
#[track_caller]
fn invalid(result: Result<(), SimError>, param: &str) {
    match result {
        Err(SimError::Invalid { param: p, .. }) if p == param => {}
        other => panic!("expected `{param}` refused, got {other:?}"),
    }
}

/// `result` is a refusal with [`SimError::TooLarge`] stating `limit`.
#[track_caller]
fn too_large(result: Result<(), SimError>, limit: &str) {
    match result {
        Err(SimError::TooLarge { limit: l, .. }) if l == limit => {}
        other => panic!("expected a size past {limit} refused, got {other:?}"),
    }
}

/// One open source at `rate` for `duration`, through a constant round trip.
fn open(rate: f64, duration: Duration) -> Composed {
    Composed::new(
        Clients::Open { sources: 1, rate },
        duration,
        Network::RoundTrip(Delay::Constant { nanos: 1_000_000 }),
    )
}

#[test]
fn the_workloads_constants_are_the_central_ones() {
    assert_eq!(Composed::MAX_SOURCES, limits::MAX_SOURCES);
    assert_eq!(Composed::MAX_FIXED, limits::MAX_FIXED_CLIENTS);
    assert_eq!(Composed::MAX_RATE, limits::MAX_SOURCE_RATE);
    assert_eq!(Composed::MAX_REQUESTS, limits::MAX_REQUESTS);
    assert_eq!(Composed::MAX_EVENTS, limits::MAX_EVENTS);
    assert_eq!(Composed::MAX_FANOUT, limits::MAX_FANOUT);
    assert_eq!(Herd::MAX_CLIENTS, limits::MAX_FIXED_CLIENTS);
    assert_eq!(OpenLoop::MAX_CLIENTS, limits::MAX_SOURCES);
    assert_eq!(Serial::MAX_CLIENTS, limits::MAX_SOURCES);
    assert_eq!(OpenLoop::MAX_RATE, limits::MAX_SOURCE_RATE);
    for requests in [
        OpenLoop::MAX_REQUESTS,
        Outage::MAX_REQUESTS,
        Partition::MAX_REQUESTS,
        Tail::MAX_REQUESTS,
    ] {
        assert_eq!(requests, limits::MAX_REQUESTS);
    }
    assert_eq!(spike::MAX_REQUESTS, limits::MAX_PEAK_REQUESTS);
    for events in [
        OpenLoop::MAX_EVENTS,
        Serial::MAX_EVENTS,
        Partition::MAX_EVENTS,
        Tail::MAX_EVENTS,
    ] {
        assert_eq!(events, limits::MAX_EVENTS);
    }
    assert_eq!(Tail::MAX_FANOUT, limits::MAX_FANOUT);
    assert_eq!(Tail::MAX_REPLICAS, limits::MAX_REPLICAS);
    assert_eq!(Tail::MAX_CONCURRENCY, limits::MAX_REPLICA_CONCURRENCY);
    assert_eq!(Throttle::MAX_CLIENTS, limits::MAX_THROTTLE_REQUESTS);
    assert_eq!(Contention::MAX_CLIENTS, limits::MAX_CONTENTION_CLIENTS);
    assert_eq!(Contention::MAX_ROUNDS, limits::MAX_CONTENTION_ROUNDS);
    assert_eq!(Contention::MAX_WORK, limits::MAX_CONTENTION_WORK);
    assert_eq!(
        limits::MAX_HEDGE_DELAY,
        stagger_core::limits::MAX_HEDGE_DELAY
    );
}

#[test]
fn a_day_bounds_every_time_span_of_every_workload_and_of_the_composed_model() {
    assert_eq!(MAX_DURATION, Duration::from_secs(86_400));
    let day = Some(MAX_DURATION);
    let past = Some(MAX_DURATION + NS);
    // `duration`: each workload that takes it, with the other sizes small enough for a day.
    let small = |kind: WorkloadKind| match kind {
        WorkloadKind::OpenLoop => Overrides {
            rate: Some(0.01),
            ..D
        },
        WorkloadKind::Serial => Overrides {
            clients: Some(1),
            ..D
        },
        WorkloadKind::Outage
        | WorkloadKind::Partition
        | WorkloadKind::Spike
        | WorkloadKind::Ramp => Overrides {
            rate: Some(10.0),
            ..D
        },
        WorkloadKind::Tail => Overrides {
            load: Some(0.001),
            ..D
        },
        _ => D,
    };
    for kind in [
        WorkloadKind::Outage,
        WorkloadKind::OpenLoop,
        WorkloadKind::Serial,
        WorkloadKind::Spike,
        WorkloadKind::Ramp,
        WorkloadKind::Throttle,
        WorkloadKind::Partition,
        WorkloadKind::Tail,
    ] {
        let at = Overrides {
            duration: day,
            ..small(kind)
        };
        assert_eq!(workload(kind, at), Ok(()), "{kind}");
        invalid(
            workload(
                kind,
                Overrides {
                    duration: past,
                    ..at
                },
            ),
            "duration",
        );
    }
    // The other spans a workload takes.
    type With = fn(Option<Duration>) -> Overrides;
    let spans: [(WorkloadKind, &str, With); 7] = [
        (WorkloadKind::Outage, "retry_after", |d| Overrides {
            retry_after: d,
            ..D
        }),
        (WorkloadKind::Throttle, "timeout", |d| Overrides {
            timeout: d,
            ..D
        }),
        (WorkloadKind::Throttle, "retry_after", |d| Overrides {
            retry_after: d,
            ..D
        }),
        (WorkloadKind::Tail, "timeout", |d| Overrides {
            timeout: d,
            load: Some(0.001),
            ..D
        }),
        (WorkloadKind::Tail, "attempt_timeout", |d| Overrides {
            attempt_timeout: d,
            load: Some(0.001),
            ..D
        }),
        (WorkloadKind::Tail, "pause", |d| Overrides {
            pause: d,
            load: Some(0.001),
            ..D
        }),
        (WorkloadKind::Tail, "pause_every", |d| Overrides {
            pause_every: d,
            load: Some(0.001),
            ..D
        }),
    ];
    for (kind, param, with) in spans {
        assert_eq!(workload(kind, with(day)), Ok(()), "{kind} {param}");
        invalid(workload(kind, with(past)), param);
    }
    // The composed model's, as a scenario file sets them.
    let model = open(1.0, Duration::from_secs(10));
    type Set = fn(&mut Composed, Duration);
    let parts: [(&str, Set); 4] = [
        ("timeout", |m, d| m.deadline = Some(d)),
        ("attempt_timeout", |m, d| m.attempt_timeout = Some(d)),
        ("drain", |m, d| m.drain = Some(d)),
        ("clients.ramp.peak_at", |m, d| {
            m.load = Load::Ramp(RampShape {
                peak_factor: 2.0,
                peak_at: d,
            })
        }),
    ];
    for (param, set) in parts {
        let mut at = model;
        set(&mut at, MAX_DURATION);
        assert_eq!(at.validate(), Ok(()), "{param}");
        let mut beyond = model;
        set(&mut beyond, MAX_DURATION + NS);
        invalid(beyond.validate(), param);
    }
    let limited = |retry_after: Duration, service: Duration| Composed {
        dependency: Dependency {
            limiter: Some(Limiter::Concurrency(ConcurrencyLimit {
                limit: 1,
                service,
                retry_after,
                form: RetryAfterForm::Fixed,
            })),
            ..Dependency::HEALTHY
        },
        network: Network::OneWay(Delay::Constant { nanos: 1_000_000 }),
        ..model
    };
    assert_eq!(limited(MAX_DURATION, MAX_DURATION).validate(), Ok(()));
    invalid(limited(MAX_DURATION + NS, NS).validate(), "retry_after");
    invalid(limited(NS, MAX_DURATION + NS).validate(), "service");
    let down = |retry_after: Duration| Composed {
        dependency: Dependency {
            outage: Some(Window {
                at: Duration::from_secs(1),
                lasts: Duration::from_secs(1),
                retry_after: Some(retry_after),
            }),
            ..Dependency::HEALTHY
        },
        ..model
    };
    assert_eq!(down(MAX_DURATION).validate(), Ok(()));
    invalid(down(MAX_DURATION + NS).validate(), "retry_after");
}

#[test]
fn an_attempt_timeout_is_at_least_a_millisecond_everywhere() {
    let ms = Some(limits::MIN_ATTEMPT_TIMEOUT);
    let under = Some(limits::MIN_ATTEMPT_TIMEOUT - NS);
    let tail = |t| Overrides {
        attempt_timeout: t,
        ..D
    };
    assert_eq!(workload(WorkloadKind::Tail, tail(ms)), Ok(()));
    invalid(workload(WorkloadKind::Tail, tail(under)), "attempt_timeout");
    let model = |t| Composed {
        attempt_timeout: t,
        ..open(1.0, Duration::from_secs(10))
    };
    assert_eq!(model(ms).validate(), Ok(()));
    invalid(model(under).validate(), "attempt_timeout");
    // The spike's client timeout, which no flag sets, is the composed model's attempt timeout.
    let mut spike = spike::Spike::default();
    spike.server.timeout = MAX_DURATION;
    assert_eq!(Workload::validate(&spike), Ok(()));
    spike.server.timeout = MAX_DURATION + NS;
    invalid(Workload::validate(&spike), "attempt_timeout");
    spike.server.timeout = limits::MIN_ATTEMPT_TIMEOUT;
    assert_eq!(Workload::validate(&spike), Ok(()));
    spike.server.timeout = limits::MIN_ATTEMPT_TIMEOUT - NS;
    invalid(Workload::validate(&spike), "attempt_timeout");
}

#[test]
fn one_open_source_sends_at_most_a_million_requests_a_second_in_every_workload() {
    let most = limits::MAX_SOURCE_RATE;
    let over = most * (1.0 + 1e-9);
    let ms = Some(Duration::from_millis(1));
    // The open-loop workload's clients are open sources, as a scenario's are.
    let open_loop = |rate| Overrides {
        clients: Some(1),
        rate: Some(rate),
        duration: ms,
        ..D
    };
    assert_eq!(workload(WorkloadKind::OpenLoop, open_loop(most)), Ok(()));
    invalid(workload(WorkloadKind::OpenLoop, open_loop(over)), "rate");
    for kind in [WorkloadKind::Partition, WorkloadKind::Throttle] {
        let at = |rate| Overrides {
            rate: Some(rate),
            duration: Some(Duration::from_millis(10)),
            ..D
        };
        assert_eq!(workload(kind, at(most)), Ok(()), "{kind}");
        invalid(workload(kind, at(over)), "rate");
    }
    // The outage runs 46 s at least: its rate is accepted, its requests are too many.
    too_large(
        workload(
            WorkloadKind::Outage,
            Overrides {
                rate: Some(most),
                ..D
            },
        ),
        "1e7 requests",
    );
    invalid(
        workload(
            WorkloadKind::Outage,
            Overrides {
                rate: Some(over),
                ..D
            },
        ),
        "rate",
    );
    assert_eq!(open(most, Duration::from_millis(1)).validate(), Ok(()));
    invalid(open(over, Duration::from_millis(1)).validate(), "rate");
    // A serial client's pace.
    let serial = |rate| Overrides {
        clients: Some(1),
        rate: Some(rate),
        duration: ms,
        ..D
    };
    assert_eq!(
        workload(WorkloadKind::Serial, serial(limits::MAX_SERIAL_RATE)),
        Ok(())
    );
    invalid(
        workload(
            WorkloadKind::Serial,
            serial(limits::MAX_SERIAL_RATE * (1.0 + 1e-9)),
        ),
        "rate",
    );
}

#[test]
fn every_workload_of_open_sources_offers_at_most_1e7_requests() {
    assert_eq!(limits::MAX_REQUESTS, 1e7);
    let secs = |s: f64| Some(Duration::from_secs_f64(s));
    let cases: [(WorkloadKind, Overrides, Overrides); 3] = [
        (
            WorkloadKind::OpenLoop,
            Overrides {
                clients: Some(10),
                rate: Some(1e5),
                duration: secs(10.0),
                ..D
            },
            Overrides {
                clients: Some(10),
                rate: Some(1e5),
                duration: secs(10.001),
                ..D
            },
        ),
        (
            WorkloadKind::Outage,
            Overrides {
                rate: Some(2e5),
                duration: secs(50.0),
                ..D
            },
            Overrides {
                rate: Some(2e5),
                duration: secs(50.001),
                ..D
            },
        ),
        (
            WorkloadKind::Partition,
            Overrides {
                rate: Some(1e6),
                duration: secs(10.0),
                ..D
            },
            Overrides {
                rate: Some(1e6),
                duration: secs(10.001),
                ..D
            },
        ),
    ];
    for (kind, at, past) in cases {
        assert_eq!(workload(kind, at), Ok(()), "{kind}");
        too_large(workload(kind, past), "1e7 requests");
    }
    // The tail's arrivals: 0.5 x 10 x 10 / 10 ms = 5000 a second.
    let tail = |s: f64| Overrides {
        load: Some(0.5),
        replicas: Some(10),
        concurrency: Some(10),
        duration: secs(s),
        ..D
    };
    assert_eq!(workload(WorkloadKind::Tail, tail(1_999.0)), Ok(()));
    too_large(workload(WorkloadKind::Tail, tail(2_001.0)), "1e7 requests");
    // Scenario files' open sources.
    let sources = |duration: f64| Composed {
        clients: Clients::Open {
            sources: 10,
            rate: 1e5,
        },
        ..open(1.0, Duration::from_secs_f64(duration))
    };
    assert_eq!(sources(10.0).validate(), Ok(()));
    too_large(sources(10.001).validate(), "1e7 requests");
}

#[test]
fn a_slowing_service_is_offered_at_most_2e6_requests_at_its_peak_in_the_workloads_and_files() {
    assert_eq!(limits::MAX_PEAK_REQUESTS, 2e6);
    // The spike and the ramp double their rate: 12 500 a second, 25 000 at the peak, for 80 s.
    for kind in [WorkloadKind::Spike, WorkloadKind::Ramp] {
        let rate = |r| Overrides { rate: Some(r), ..D };
        assert_eq!(workload(kind, rate(12_500.0)), Ok(()), "{kind}");
        too_large(workload(kind, rate(12_500.01)), "2e6 requests");
    }
    // The same server in a scenario file: the composed model bounds it alike.
    let served = |rate: f64, load: Load| {
        let mut model = spike::Spike {
            rate,
            ..spike::Spike::default()
        }
        .composed();
        model.load = load;
        model
    };
    let doubled = spike::Spike::default().composed().load;
    assert_eq!(served(12_500.0, doubled).validate(), Ok(()));
    too_large(served(12_500.01, doubled).validate(), "2e6 requests");
    // Steady, the peak is the rate: 25 000 a second for 80 s.
    assert_eq!(served(25_000.0, Load::Steady).validate(), Ok(()));
    too_large(served(25_000.01, Load::Steady).validate(), "2e6 requests");
    // Without a service, the bound is the usual 1e7.
    let mut plain = served(25_000.01, Load::Steady);
    plain.dependency.service = None;
    plain.network = Network::OneWay(Delay::Constant { nanos: 1_000_000 });
    plain.attempt_timeout = None;
    assert_eq!(plain.validate(), Ok(()));
    let _ = Service {
        base: limits::MAX_SERVICE_TIME,
        per_in_flight: Duration::ZERO,
    };
}

#[test]
fn fan_out_pools_and_limiters_have_one_bound_for_the_workloads_and_files() {
    let tail = |o: Overrides| {
        workload(
            WorkloadKind::Tail,
            Overrides {
                load: Some(0.001),
                duration: Some(Duration::from_secs(1)),
                ..o
            },
        )
    };
    let fanout = |n| Overrides {
        fanout: Some(n),
        ..D
    };
    assert_eq!(tail(fanout(limits::MAX_FANOUT)), Ok(()));
    invalid(tail(fanout(limits::MAX_FANOUT + 1)), "fanout");
    let composed_fanout = |n| Composed {
        fanout: n,
        ..open(1.0, Duration::from_secs(1))
    };
    assert_eq!(composed_fanout(limits::MAX_FANOUT).validate(), Ok(()));
    invalid(composed_fanout(limits::MAX_FANOUT + 1).validate(), "fanout");

    let pool = |count: u32, concurrency: u32| Composed {
        dependency: Dependency {
            replicas: Some(Replicas {
                count,
                concurrency,
                service: Delay::Exponential { mean: 10_000_000 },
                pause: Duration::ZERO,
                pause_every: Duration::from_secs(99),
            }),
            ..Dependency::HEALTHY
        },
        ..open(1.0, Duration::from_secs(1))
    };
    let (count, concurrency) = (limits::MAX_REPLICAS, limits::MAX_REPLICA_CONCURRENCY);
    assert_eq!(pool(count, concurrency).validate(), Ok(()));
    invalid(pool(count + 1, 1).validate(), "dependency.replicas.count");
    invalid(
        pool(1, concurrency + 1).validate(),
        "dependency.replicas.concurrency",
    );
    let sized = |replicas, concurrency| Overrides {
        replicas: Some(replicas),
        concurrency: Some(concurrency),
        ..D
    };
    assert_eq!(tail(sized(count, concurrency)), Ok(()));
    invalid(tail(sized(count + 1, 1)), "replicas");
    invalid(tail(sized(1, concurrency + 1)), "concurrency");

    let throttle = |rate: f64, burst: u32| {
        workload(
            WorkloadKind::Throttle,
            Overrides {
                limit_rate: Some(rate),
                limit_burst: Some(burst),
                ..D
            },
        )
    };
    let limited = |rate: f64, burst: u32| Composed {
        dependency: Dependency {
            limiter: Some(Limiter::Rate(RateLimit {
                rate,
                burst,
                retry_after: Duration::from_secs(1),
                form: RetryAfterForm::Fixed,
            })),
            ..Dependency::HEALTHY
        },
        ..open(1.0, Duration::from_secs(1))
    };
    let (rate, burst) = (limits::MAX_LIMITER_RATE, limits::MAX_LIMITER_BURST);
    assert_eq!(throttle(rate, burst), Ok(()));
    assert_eq!(limited(rate, burst).validate(), Ok(()));
    for result in [
        throttle(rate * 1.001, 1),
        limited(rate * 1.001, 1).validate(),
    ] {
        invalid(result, "limit_rate");
    }
    for result in [throttle(1.0, burst + 1), limited(1.0, burst + 1).validate()] {
        invalid(result, "limit_burst");
    }
}

#[test]
fn clients_have_one_bound_for_each_kind_in_the_workloads_and_files() {
    let clients = |kind: WorkloadKind, n: u64| {
        workload(
            kind,
            Overrides {
                clients: Some(n),
                duration: match kind {
                    WorkloadKind::Herd | WorkloadKind::Contention => None,
                    _ => Some(Duration::from_millis(1)),
                },
                rate: match kind {
                    WorkloadKind::OpenLoop => Some(0.001),
                    _ => None,
                },
                rounds: match kind {
                    WorkloadKind::Contention => Some(1),
                    _ => None,
                },
                ..D
            },
        )
    };
    let cases = [
        (WorkloadKind::Herd, limits::MAX_FIXED_CLIENTS),
        (WorkloadKind::OpenLoop, limits::MAX_SOURCES),
        (WorkloadKind::Serial, limits::MAX_SOURCES),
        (WorkloadKind::Throttle, limits::MAX_THROTTLE_REQUESTS),
    ];
    for (kind, most) in cases {
        assert_eq!(clients(kind, most), Ok(()), "{kind}");
        too_large(clients(kind, most + 1), &most.to_string());
    }
    assert_eq!(
        clients(WorkloadKind::Contention, limits::MAX_CONTENTION_CLIENTS),
        Ok(())
    );
    invalid(
        clients(WorkloadKind::Contention, limits::MAX_CONTENTION_CLIENTS + 1),
        "clients",
    );
    // A scenario file's clients: fixed ones as the herd's, open and serial ones as sources.
    let composed = |clients: Clients| Composed {
        clients,
        ..open(1.0, Duration::from_millis(1))
    };
    let fixed = |count| composed(Clients::Fixed { count });
    assert_eq!(fixed(limits::MAX_FIXED_CLIENTS).validate(), Ok(()));
    too_large(
        fixed(limits::MAX_FIXED_CLIENTS + 1).validate(),
        &limits::MAX_FIXED_CLIENTS.to_string(),
    );
    let sources = |sources| {
        composed(Clients::Open {
            sources,
            rate: 0.001,
        })
    };
    assert_eq!(sources(limits::MAX_SOURCES).validate(), Ok(()));
    too_large(
        sources(limits::MAX_SOURCES + 1).validate(),
        &limits::MAX_SOURCES.to_string(),
    );
}

#[test]
fn a_retry_stack_has_at_most_sixteen_layers() {
    let model = open(1.0, Duration::from_millis(500));
    let layer = Layer {
        policy: SimPolicy::Catalog(AnyConfig::from(PolicyKind::NoRetry)),
        settings: stagger_core::engine::Settings::new(),
    };
    let inner = vec![layer; limits::MAX_LAYERS as usize];
    let most = &inner[..limits::MAX_LAYERS as usize - 1];
    assert!(
        model
            .run(
                &strategy(),
                &RunOptions::seed(1).max_events(u64::MAX).layers(most)
            )
            .is_ok()
    );
    assert!(matches!(
        model.run(&strategy(), &RunOptions::seed(1).max_events(u64::MAX).layers(&inner)),
        Err(SimError::TooLarge { limit, .. }) if limit == "16"
    ));
    assert!(limits::check_layers(limits::MAX_LAYERS as usize).is_ok());
    assert!(limits::check_layers(limits::MAX_LAYERS as usize + 1).is_err());
}

#[test]
fn a_simulated_hedge_waits_at_most_a_day_as_the_librarys() {
    let model = open(1.0, Duration::from_millis(500));
    let hedged = |delay: Duration| strategy().with_hedging(Some(Hedging::fixed(delay, 2)));
    assert!(
        model
            .run(&hedged(limits::MAX_HEDGE_DELAY), &RunOptions::seed(1))
            .is_ok()
    );
    match model.run(&hedged(limits::MAX_HEDGE_DELAY + NS), &RunOptions::seed(1)) {
        Err(SimError::Config(e)) => assert_eq!(e.param(), Some("hedge_delay"), "{e}"),
        other => panic!("{other:?}"),
    }
}

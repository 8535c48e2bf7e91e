//! W2 and W3 (Brooker 2022): the open-loop and serial workloads, measured by running the model.
//!
//! Run with `--nocapture` to see the measured tables.

use std::time::Duration;

use stagger_sim::limits;
use stagger_sim::scoreboard::{Claim, Labelled, Scoreboard, SweepPoint};
use stagger_sim::workload::open_loop::{self, OpenLoop};
use stagger_sim::workload::serial::{self, Serial};
use stagger_sim::{Overrides, ResultRow, SimError, Strategy, Workload, WorkloadKind};

const SEED: u64 = 2022;

fn strategy(list: &[(&'static str, Strategy)], name: &str) -> Strategy {
    list.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap()
}

fn open(o: Overrides, strategy: &Strategy, seed: u64) -> ResultRow {
    WorkloadKind::OpenLoop.run(&o, strategy, seed).unwrap()
}

fn at(x: f64) -> Overrides {
    Overrides {
        failure_rate: Some(x),
        ..Overrides::default()
    }
}

#[test]
fn the_analytic_form_is_right() {
    assert_eq!(open_loop::analytic(0, 0.3), (1.0 - 0.3, 1.0));
    let (s, l) = open_loop::analytic(3, 0.5);
    assert!(
        (s - 0.9375).abs() < 1e-12 && (l - 1.875).abs() < 1e-12,
        "{s} {l}"
    );
}

fn w2_table(label: &str, o: Overrides, xs: &[f64]) -> Vec<(f64, Vec<(&'static str, ResultRow)>)> {
    let strategies = open_loop::published_strategies();
    eprintln!("W2 {label} (seed {SEED}): success / load");
    eprintln!("   x  | no retries     | 3 retries      | token bucket   | circuit breaker");
    let mut table = Vec::new();
    for &x in xs {
        let rows: Vec<_> = strategies
            .iter()
            .map(|(name, s)| {
                (
                    *name,
                    open(
                        Overrides {
                            failure_rate: Some(x),
                            ..o
                        },
                        s,
                        SEED,
                    ),
                )
            })
            .collect();
        let cells: Vec<String> = rows
            .iter()
            .map(|(_, r)| format!("{:.3} / {:.3}", r.success_rate, r.load))
            .collect();
        eprintln!(" {x:.2} | {}", cells.join("  | "));
        table.push((x, rows));
    }
    table
}

fn load_of(rows: &[(&'static str, ResultRow)], name: &str) -> f64 {
    rows.iter().find(|(n, _)| *n == name).unwrap().1.load
}

const XS: [f64; 8] = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9];

/// The table as the board's sweep points, each row labelled `prefix` and its strategy.
fn points(table: &[(f64, Vec<(&'static str, ResultRow)>)], prefix: &str) -> Vec<SweepPoint> {
    table
        .iter()
        .map(|(x, rows)| SweepPoint {
            x: *x,
            results: rows
                .iter()
                .map(|(name, row)| Labelled::new(format!("{prefix}{name}"), row.clone()))
                .collect(),
        })
        .collect()
}

/// `claim`, read by the board's check on `board`, holds.
fn holds(claim: Claim, board: &Scoreboard) {
    let finding = claim.check(board);
    eprintln!("{claim:?}: {}", finding.ours);
    assert!(finding.reproduced, "{claim:?}: {}", finding.ours);
}

/// Published: with N immediate retries, success `1 - x^(N+1)` and load `sum x^k`; the token
/// bucket caps the extra load near 14 %; the breaker trips early. Read by the board's checks
/// on the whole sweep: the closed form within the sampling error of about 10 000 requests
/// (100 clients x 10 per second x 10 s) at each failure rate, and the bucket's cap at each.
#[test]
fn the_closed_form_the_buckets_cap_and_the_breakers_trip_hold_on_the_sweep() {
    let table = w2_table(
        "defaults: 100 clients x 10/s x 10 s",
        Overrides::default(),
        &XS,
    );
    for (x, rows) in &table {
        for (name, row) in rows {
            assert!(
                row.first_tries > 9_000 && row.first_tries < 11_000,
                "x = {x}, {name}: {}",
                row.first_tries
            );
        }
        assert_eq!(load_of(rows, "no retries"), 1.0, "x = {x}");
    }
    let mut board = Scoreboard::empty(SEED);
    board.open_loop = points(&table, "");
    holds(Claim::RetriesClosedForm, &board);
    holds(Claim::BucketCapsLoad, &board);
    holds(Claim::BreakerTripsEarly, &board);
    // Each client's bucket allows 4 retries from its initial 5 tokens (a retry needs more than
    // 1), plus 0.1 per call: the cap is reached, not merely unapproached.
    let (_, high) = table.last().unwrap();
    assert!(
        load_of(high, "token bucket") > 1.10,
        "the bucket does spend its tokens at x = 0.9"
    );
}

/// Published: with many small clients the bucket tends to "3 retries", the breaker to "none".
/// Read by the board's check: the share of the extra load of "3 retries" (in the same setup)
/// that each keeps, `(load - 1) / (load of 3 retries - 1)`, from the fewest clients to the most.
#[test]
fn with_many_small_clients_the_bucket_tends_to_retries_and_the_breaker_to_none() {
    use stagger_sim::scoreboard::{W2_CLIENTS, W2_TOTAL_RATE, w2_shape};
    // As Brooker's `run_sims_clients` sets it up: the same 100 requests a second in all, over
    // few clients and over many.
    let xs = [0.05, 0.1, 0.3, 0.5, 0.9];
    let shape = |clients: u64| Overrides {
        clients: Some(clients),
        rate: Some(W2_TOTAL_RATE / clients as f64),
        ..Overrides::default()
    };
    let (few, many) = (W2_CLIENTS[0], W2_CLIENTS[W2_CLIENTS.len() - 1]);
    let big = w2_table("few big clients", shape(few), &xs);
    let small = w2_table("many small clients", shape(many), &xs);
    let share = |rows: &[(&'static str, ResultRow)], name: &str| {
        (load_of(rows, name) - 1.0) / (load_of(rows, "3 retries") - 1.0)
    };
    eprintln!("share of the extra load of 3 retries kept, few big -> many small clients:");
    for ((x, big), (_, small)) in big.iter().zip(&small) {
        let (b_big, b_small) = (share(big, "token bucket"), share(small, "token bucket"));
        let (c_big, c_small) = (
            share(big, "circuit breaker"),
            share(small, "circuit breaker"),
        );
        eprintln!(
            "  x = {x:.2}: token bucket {b_big:.3} -> {b_small:.3}; circuit breaker {c_big:.3} -> {c_small:.3}"
        );
        // A budget never retries more than "3 retries", nor less than not at all.
        for s in [b_big, b_small, c_big, c_small] {
            assert!((-1e-9..=1.0 + 1e-9).contains(&s), "x = {x}: {s}");
        }
    }
    let mut board = Scoreboard::empty(SEED);
    board.many_small = points(&big, &format!("{}, ", w2_shape(few)));
    for (point, small) in board
        .many_small
        .iter_mut()
        .zip(points(&small, &format!("{}, ", w2_shape(many))))
    {
        point.results.extend(small.results);
    }
    holds(Claim::ManySmallClients, &board);
}

/// W3: backoff barely changes the load of open clients, and cuts the attempts of serial ones.
#[test]
fn backoff_barely_changes_open_clients_and_cuts_serial_attempts() {
    let strategies = serial::published_strategies();
    let (plain, backoff) = (
        strategy(&strategies, "no backoff"),
        strategy(&strategies, "backoff"),
    );
    let o = at(0.5);
    let open_plain = open(o, &plain, SEED);
    let open_backoff = open(o, &backoff, SEED);
    let serial_plain = WorkloadKind::Serial.run(&o, &plain, SEED).unwrap();
    let serial_backoff = WorkloadKind::Serial.run(&o, &backoff, SEED).unwrap();
    eprintln!("W3 at x = 0.5 (seed {SEED}): first tries / attempts / load / success");
    for (label, r) in [
        ("open, no backoff", &open_plain),
        ("open, backoff", &open_backoff),
        ("serial, no backoff", &serial_plain),
        ("serial, backoff", &serial_backoff),
    ] {
        eprintln!(
            "  {label:20} {:7} {:7} {:.3} {:.4}",
            r.first_tries, r.attempts, r.load, r.success_rate
        );
    }
    eprintln!(
        "W3 sweep (seed {SEED}): attempts, open no backoff / backoff | serial no backoff / backoff"
    );
    for x in [0.1, 0.3, 0.5, 0.7, 0.9] {
        let attempts =
            |kind: WorkloadKind, s: &Strategy| kind.run(&at(x), s, SEED).unwrap().attempts;
        eprintln!(
            "  x = {x:.1}: {:6} / {:6} | {:6} / {:6}",
            attempts(WorkloadKind::OpenLoop, &plain),
            attempts(WorkloadKind::OpenLoop, &backoff),
            attempts(WorkloadKind::Serial, &plain),
            attempts(WorkloadKind::Serial, &backoff)
        );
    }
    let mut board = Scoreboard::empty(SEED);
    board.serial = [
        ("open, no backoff", &open_plain),
        ("open, backoff", &open_backoff),
        ("serial, no backoff", &serial_plain),
        ("serial, backoff", &serial_backoff),
    ]
    .into_iter()
    .map(|(label, row)| Labelled::new(label, row.clone()))
    .collect();
    holds(Claim::SerialBackoffCuts, &board);
    // Mostly by delaying first tries: the attempts per request hardly move.
    assert!((serial_backoff.load / serial_plain.load - 1.0).abs() < 0.05);
    assert!(serial_backoff.first_tries * 2 < serial_plain.first_tries);
}

fn json(kind: WorkloadKind, strategy: &Strategy, seed: u64) -> String {
    serde_json::to_string(&kind.run(&Overrides::default(), strategy, seed).unwrap()).unwrap()
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let mut all = open_loop::published_strategies();
    all.extend(serial::published_strategies());
    for kind in [WorkloadKind::OpenLoop, WorkloadKind::Serial] {
        for (name, s) in &all {
            let a = json(kind, s, 7);
            assert_eq!(a, json(kind, s, 7), "{kind} {name}");
            assert_ne!(a, json(kind, s, 8), "{kind} {name}");
        }
    }
}

#[test]
fn invalid_overrides_are_refused_by_name() {
    let s = open_loop::published_strategies()[1].1;
    let param = |kind: WorkloadKind, o: Overrides| kind.run(&o, &s, 1).unwrap_err().param();
    let d = Overrides::default();
    for kind in [WorkloadKind::OpenLoop, WorkloadKind::Serial] {
        assert_eq!(
            param(
                kind,
                Overrides {
                    clients: Some(0),
                    ..d
                }
            ),
            Some("clients")
        );
        assert_eq!(
            param(
                kind,
                Overrides {
                    rounds: Some(3),
                    ..d
                }
            ),
            Some("rounds")
        );
        for x in [-0.1, 1.5, f64::NAN] {
            assert_eq!(
                param(
                    kind,
                    Overrides {
                        failure_rate: Some(x),
                        ..d
                    }
                ),
                Some("failure_rate")
            );
        }
        for t in [Duration::ZERO, Duration::from_secs(86_401)] {
            assert_eq!(
                param(
                    kind,
                    Overrides {
                        duration: Some(t),
                        ..d
                    }
                ),
                Some("duration")
            );
        }
        let too_many = kind
            .run(
                &Overrides {
                    clients: Some(100_001),
                    ..d
                },
                &s,
                1,
            )
            .unwrap_err();
        assert!(
            matches!(
                too_many,
                SimError::TooLarge {
                    what: "clients",
                    ..
                }
            ),
            "{too_many}"
        );
    }
    // Both pace their clients at a rate: the serial ones as the source's `SerialClient` does,
    // the open ones as every open source (up to the same rate as a scenario's).
    for (kind, most) in [
        (WorkloadKind::OpenLoop, limits::MAX_SOURCE_RATE),
        (WorkloadKind::Serial, limits::MAX_SERIAL_RATE),
    ] {
        for r in [0.0, -1.0, most * 1.000_001, f64::NAN, f64::INFINITY] {
            assert_eq!(param(kind, Overrides { rate: Some(r), ..d }), Some("rate"));
        }
    }
    // The event budget: too much work is refused up front.
    let huge = Overrides {
        clients: Some(100_000),
        rate: Some(1e5),
        ..d
    };
    let err = WorkloadKind::OpenLoop.run(&huge, &s, 1).unwrap_err();
    assert!(matches!(err, SimError::TooLarge { .. }), "{err}");
    let huge = Overrides {
        clients: Some(100_000),
        duration: Some(Duration::from_secs(86_400)),
        ..d
    };
    let err = WorkloadKind::Serial.run(&huge, &s, 1).unwrap_err();
    assert!(matches!(err, SimError::TooLarge { .. }), "{err}");
    // The boundaries themselves are accepted.
    let w = OpenLoop::from_overrides(&Overrides {
        failure_rate: Some(1.0),
        rate: Some(limits::MAX_SOURCE_RATE),
        clients: Some(1),
        duration: Some(Duration::from_millis(1)),
        ..d
    })
    .unwrap();
    w.validate().unwrap();
    let w = Serial::from_overrides(&Overrides {
        rate: Some(limits::MAX_SERIAL_RATE),
        clients: Some(1),
        duration: Some(Duration::from_millis(1)),
        ..d
    })
    .unwrap();
    w.validate().unwrap();
    let w = Serial::from_overrides(&Overrides {
        failure_rate: Some(0.0),
        clients: Some(1),
        ..d
    })
    .unwrap();
    w.validate().unwrap();
}

#[test]
fn the_edges_of_the_failure_rate() {
    let s = open_loop::published_strategies()[1].1;
    let never = open(at(0.0), &s, 3);
    assert_eq!((never.success_rate, never.load), (1.0, 1.0));
    let always = open(at(1.0), &s, 3);
    assert_eq!((always.success_rate, always.load), (0.0, 4.0));
    let always = WorkloadKind::Serial.run(&at(1.0), &s, 3).unwrap();
    assert_eq!((always.success_rate, always.load), (0.0, 4.0));
}

/// W3's serial clients are paced as the source's `SerialClient`: about `rate` calls a second
/// each when calls are quick, one call in flight, the next at once when one took longer than
/// its draw.
#[test]
fn serial_clients_start_calls_at_their_rate() {
    let s = Strategy::policy(stagger_core::AnyConfig::from(
        stagger_core::policy::NoRetry::new(),
    ));
    let quick = Overrides {
        failure_rate: Some(0.0),
        ..Overrides::default()
    };
    let row = WorkloadKind::Serial.run(&quick, &s, 1).unwrap();
    // 100 clients x 10 a second x 10 s, within Poisson noise; back to back they would make
    // about 100 x 10 s / 10 ms = 100 000.
    let calls = row.first_tries as f64;
    assert!((9_500.0..10_500.0).contains(&calls), "{calls}");
    // Slow calls (a second each, far above the 100 ms between starts) run back to back.
    let slow = Serial {
        rtt: stagger_sim::dist::Delay::Constant {
            nanos: 1_000_000_000,
        },
        failure_rate: 0.0,
        ..Serial::default()
    };
    let row = slow.run(&s, 1).unwrap();
    assert_eq!(row.first_tries, 100 * 10, "{row:?}");
}

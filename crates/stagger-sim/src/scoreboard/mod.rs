//! The scoreboard: every catalog policy, the published strategies and the budgets on every
//! canonical workload, with each published finding beside ours.
//!
//! Every figure comes from running the models at one world seed. Independent runs are spread
//! over the machine's cores with rayon and collected in a fixed order, so the output does not
//! depend on the number of threads: the same seed gives the same bytes.

use std::time::Duration;

use rayon::prelude::*;
use serde::Serialize;
use stagger_core::{AnyConfig, PolicyKind};

use crate::error::SimError;
use crate::metrics::ResultRow;
use crate::strategy::Strategy;
use crate::workload::Workload;
use crate::workload::contention::{self, Contention};
use crate::workload::herd::Herd;
use crate::workload::open_loop::{self, OpenLoop};
use crate::workload::outage::Outage;
use crate::workload::serial::{self, Serial};
use crate::workload::spike::{Ramp, Spike};

mod claims;
mod destinations;
mod recovery;
mod storm;
mod tail;

pub use claims::{Claim, Finding, constant_patience, margins};
pub use destinations::*;
pub use recovery::*;
pub use storm::*;
pub use tail::*;

/// A labelled result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Labelled {
    /// What was run.
    pub label: String,
    /// Its results.
    pub row: ResultRow,
}

impl Labelled {
    /// `row`, labelled `label`.
    #[must_use]
    pub fn new(label: impl Into<String>, row: ResultRow) -> Self {
        Self {
            label: label.into(),
            row,
        }
    }
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The swept parameter's value (clients, or a failure rate).
    pub x: f64,
    /// The results at that value.
    pub results: Vec<Labelled>,
}

/// A labelled series of numbers, for a plot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// What the series is.
    pub label: String,
    /// Its values, one per step.
    pub values: Vec<f64>,
}

/// Everything `stagger bench` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scoreboard {
    /// The world seed.
    pub seed: u64,
    /// Every catalog policy on the herd (1000 clients).
    pub herd: Vec<Labelled>,
    /// Retries per 10 ms over the first 2.5 s of the herd, per policy, for a plot.
    pub herd_arrivals: Vec<Series>,
    /// Every catalog policy on the 30-second outage.
    pub outage: Vec<Labelled>,
    /// The published contention strategies and the corrected decorrelated jitter, 100 clients.
    pub contention: Vec<Labelled>,
    /// The same, from 10 to 190 clients.
    pub contention_sweep: Vec<SweepPoint>,
    /// W2's strategies against the failure rate.
    pub open_loop: Vec<SweepPoint>,
    /// W2's client-count experiment as Brooker's `run_sims_clients` runs it: 100 requests a
    /// second in all, over 10, 100 and 1000 clients ([`W2_CLIENTS`]), at failure rates 0.05 and
    /// 0.5: labels such as "10 x 10/s, STRATEGY" and "1000 x 0.1/s, STRATEGY" ([`w2_shape`]).
    pub many_small: Vec<SweepPoint>,
    /// W3: open and serial clients, with and without backoff, at a 50 % failure rate.
    pub serial: Vec<Labelled>,
    /// W4's spike: no backoff, jittered backoff, and every budget with no backoff; then
    /// hedging by [`spike_hedging`], without a budget and with every budget.
    pub spike: Vec<Labelled>,
    /// Goodput per second on the spike, per strategy, for a plot.
    pub spike_goodput: Vec<Series>,
    /// W4's ramp, the same strategies.
    pub ramp: Vec<Labelled>,
    /// The spike's two published strategies over [`SPIKE_SEEDS`] seeds: how many recover.
    pub spike_recovery: Vec<RecoveryShare>,
    /// The 429 storm: every dispersal rule under every form of `Retry-After`, over
    /// [`THROTTLE_SEEDS`] seeds.
    pub throttle: Vec<ThrottlePoint>,
    /// The storm's variants: open arrivals against the rate limiter and the requests at once
    /// against a concurrency limiter, for two dispersal rules, without and with the gate, over
    /// [`THROTTLE_SEEDS`] seeds.
    pub throttle_variants: Vec<ThrottleVariantPoint>,
    /// One host's outage against a budget shared with a healthy host, and against a budget per
    /// host, and the no-budget ceiling, over [`PARTITION_SEEDS`] seeds.
    pub partition: Vec<PartitionPoint>,
    /// The `tail` workload at its defaults: without pauses, then with them without hedging,
    /// hedging at the 95th percentile, hedging at a fixed delay ([`Scoreboard::tail_delay`]) and
    /// retrying after an attempt timeout, each over [`TAIL_SEEDS`] seeds.
    pub tail: Vec<TailPoint>,
    /// The fixed hedge delay of the `tail` rows, measured on the pool without pauses.
    pub tail_delay: Option<TailDelay>,
    /// The `tail` workload at each of [`TAIL_LOADS`], without hedging and hedging at the 95th
    /// percentile, over [`TAIL_SWEEP_SEEDS`] seeds.
    pub tail_sweep: Vec<TailPoint>,
    /// The `tail` workload with each request fanning out to [`TAIL_FANOUT`] sub-requests,
    /// without hedging and hedging at the 95th percentile, over [`TAIL_SEEDS`] seeds.
    pub tail_fanout: Vec<TailPoint>,
    /// Each published result beside ours.
    pub fidelity: Vec<Finding>,
}

/// The client counts of W2's client-count experiment (Brooker's `run_sims_clients`).
pub const W2_CLIENTS: [u64; 3] = [10, 100, 1_000];

/// The requests a second all clients of that experiment send together.
pub const W2_TOTAL_RATE: f64 = 100.0;

/// The label of `clients` clients sharing [`W2_TOTAL_RATE`]: "10 x 10/s", "1000 x 0.1/s".
#[must_use]
pub fn w2_shape(clients: u64) -> String {
    format!("{clients} x {}/s", W2_TOTAL_RATE / clients as f64)
}

/// A progress callback: told the name of each part as it starts.
pub type Progress<'a> = &'a (dyn Fn(&str) + Sync);

fn labelled(label: impl Into<String>, row: ResultRow) -> Labelled {
    Labelled::new(label, row)
}

/// Runs `jobs` in parallel, keeping their order.
fn parallel<J, T>(
    jobs: Vec<J>,
    f: impl Fn(&J) -> Result<T, SimError> + Sync + Send,
) -> Result<Vec<T>, SimError>
where
    J: Sync,
    T: Send,
{
    jobs.par_iter().map(f).collect()
}

/// The catalog at its defaults, as strategies.
fn catalog() -> Vec<Strategy> {
    PolicyKind::ALL
        .into_iter()
        .map(|k| Strategy::policy(AnyConfig::from(k)))
        .collect()
}

impl Scoreboard {
    /// Runs everything at world seed `seed`.
    ///
    /// # Errors
    ///
    /// A [`SimError`] if a run fails, which would be a bug in the defaults.
    pub fn run(seed: u64, progress: Progress<'_>) -> Result<Self, SimError> {
        progress("herd");
        let herd_model = Herd::default();
        let herd = parallel(catalog(), |s| {
            Ok(labelled(s.policy.name(), herd_model.run(s, seed)?))
        })?;
        let herd_arrivals = parallel(
            [
                PolicyKind::Constant,
                PolicyKind::Exponential,
                PolicyKind::ExponentialFullJitter,
                PolicyKind::DecorrelatedJitter,
            ]
            .to_vec(),
            |k| {
                let s = Strategy::policy(AnyConfig::from(*k));
                let counts = herd_model.retry_histogram(
                    &s,
                    seed,
                    Duration::from_millis(10),
                    Duration::from_millis(2_500),
                )?;
                Ok(Series {
                    label: k.name().to_owned(),
                    values: counts.into_iter().map(|c| c as f64).collect(),
                })
            },
        )?;

        progress("outage");
        let outage_model = Outage::default();
        let outage = parallel(catalog(), |s| {
            Ok(labelled(s.policy.name(), outage_model.run(s, seed)?))
        })?;

        progress("contention");
        let mut strategies = contention::published_strategies();
        strategies.push((
            "decorrelated-jitter (corrected)",
            contention::corrected_decorrelated(),
        ));
        let contention_model = Contention::default();
        let contention = parallel(strategies.clone(), |(label, s)| {
            Ok(labelled(*label, contention_model.run(s, seed)?))
        })?;
        let sweep_jobs: Vec<(u64, &'static str, Strategy)> = (1..=10)
            .map(|i| 10 + 20 * (i - 1))
            .flat_map(|clients| {
                strategies
                    .iter()
                    .map(move |(label, s)| (clients, *label, *s))
            })
            .collect();
        let sweep_rows = parallel(sweep_jobs.clone(), |(clients, label, s)| {
            let model = Contention {
                clients: *clients,
                ..Contention::default()
            };
            Ok((*clients as f64, labelled(*label, model.run(s, seed)?)))
        })?;
        let contention_sweep = group(sweep_rows);

        progress("open-loop");
        let open_jobs: Vec<(f64, &'static str, Strategy)> = [0.1, 0.3, 0.5, 0.7, 0.9]
            .into_iter()
            .flat_map(|x| {
                open_loop::published_strategies()
                    .into_iter()
                    .map(move |(l, s)| (x, l, s))
            })
            .collect();
        let open_rows = parallel(open_jobs, |(x, label, s)| {
            let model = OpenLoop {
                failure_rate: *x,
                ..OpenLoop::default()
            };
            Ok((*x, labelled(*label, model.run(s, seed)?)))
        })?;
        let open_loop = group(open_rows);
        let small_jobs: Vec<(f64, u64, &'static str, Strategy)> = [0.05, 0.5]
            .into_iter()
            .flat_map(|x| {
                W2_CLIENTS.into_iter().flat_map(move |clients| {
                    open_loop::published_strategies()
                        .into_iter()
                        .map(move |(l, s)| (x, clients, l, s))
                })
            })
            .collect();
        let small_rows = parallel(small_jobs, |(x, clients, label, s)| {
            let model = OpenLoop {
                failure_rate: *x,
                clients: *clients,
                rate: W2_TOTAL_RATE / *clients as f64,
                ..OpenLoop::default()
            };
            let shape = w2_shape(*clients);
            Ok((
                *x,
                labelled(format!("{shape}, {label}"), model.run(s, seed)?),
            ))
        })?;
        let many_small = group(small_rows);

        progress("serial");
        let serial_jobs: Vec<(bool, &'static str, Strategy)> = serial::published_strategies()
            .into_iter()
            .flat_map(|(l, s)| [(false, l, s), (true, l, s)])
            .collect();
        let serial = parallel(serial_jobs, |(closed, label, s)| {
            let row = if *closed {
                Serial {
                    failure_rate: 0.5,
                    ..Serial::default()
                }
                .run(s, seed)?
            } else {
                OpenLoop {
                    failure_rate: 0.5,
                    ..OpenLoop::default()
                }
                .run(s, seed)?
            };
            let clients = if *closed { "serial" } else { "open" };
            Ok(labelled(format!("{clients}, {label}"), row))
        })?;

        progress("spike and ramp");
        let spike_strategies = spike_strategies();
        let per_seconds = parallel(spike_strategies.clone(), |(label, s)| {
            Ok((label.clone(), Spike::default().simulate(s, seed)?))
        })?;
        let spike_goodput = per_seconds
            .iter()
            .take(2)
            .map(|(label, t)| Series {
                label: label.clone(),
                values: t.goodput.iter().map(|&g| g as f64).collect(),
            })
            .collect();
        let spike = per_seconds
            .into_iter()
            .map(|(label, t)| labelled(label, t.row))
            .collect();
        let ramp = parallel(spike_strategies, |(label, s)| {
            Ok(labelled(label.clone(), Ramp::default().run(s, seed)?))
        })?;

        let mut board = Self {
            seed,
            herd,
            herd_arrivals,
            outage,
            contention,
            contention_sweep,
            open_loop,
            many_small,
            serial,
            spike,
            spike_goodput,
            ramp,
            spike_recovery: spike_recovery(seed)?,
            ..Self::empty(seed)
        };
        progress("throttle");
        let (throttle, variants) =
            rayon::join(|| throttle_points(seed), || throttle_variant_points(seed));
        board.throttle = throttle?;
        board.throttle_variants = variants?;
        progress("partition");
        board.partition = partition_points(seed)?;
        progress("tail");
        let (tail, fanout) = rayon::join(|| tail_section(seed), || tail_fanout_points(seed));
        let (tail, delay, sweep) = tail?;
        board.tail = tail;
        board.tail_delay = Some(delay);
        board.tail_sweep = sweep;
        board.tail_fanout = fanout?;
        board.fidelity = board.findings();
        Ok(board)
    }

    /// A board with no rows at world seed `seed`: fill the sections a [`Claim`] reads with
    /// runs of your own and [`Claim::check`] it. Every claim of an empty board is not
    /// reproduced.
    #[must_use]
    pub fn empty(seed: u64) -> Self {
        Self {
            seed,
            herd: Vec::new(),
            herd_arrivals: Vec::new(),
            outage: Vec::new(),
            contention: Vec::new(),
            contention_sweep: Vec::new(),
            open_loop: Vec::new(),
            many_small: Vec::new(),
            serial: Vec::new(),
            spike: Vec::new(),
            spike_goodput: Vec::new(),
            ramp: Vec::new(),
            spike_recovery: Vec::new(),
            throttle: Vec::new(),
            throttle_variants: Vec::new(),
            partition: Vec::new(),
            tail: Vec::new(),
            tail_delay: None,
            tail_sweep: Vec::new(),
            tail_fanout: Vec::new(),
            fidelity: Vec::new(),
        }
    }

    /// Each published claim ([`Claim::ALL`]) checked on this board's rows. A claim whose rows
    /// are missing is listed as not reproduced, never dropped.
    #[must_use]
    pub fn findings(&self) -> Vec<Finding> {
        Claim::ALL.iter().map(|c| c.check(self)).collect()
    }
}

/// Groups `(x, result)` pairs into sweep points, keeping the order of first appearance.
fn group(rows: Vec<(f64, Labelled)>) -> Vec<SweepPoint> {
    let mut points: Vec<SweepPoint> = Vec::new();
    for (x, row) in rows {
        match points.last_mut() {
            Some(p) if p.x == x => p.results.push(row),
            _ => points.push(SweepPoint {
                x,
                results: vec![row],
            }),
        }
    }
    points
}

/// A policy's measured figures at its defaults: the herd and the outage, as its page shows them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyFigures {
    /// The herd (1000 clients).
    pub herd: ResultRow,
    /// The 30-second outage.
    pub outage: ResultRow,
}

/// Runs `kind` at its defaults on the herd and the outage at world seed `seed`: the figures of
/// its page, the same ones as the scoreboard's.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn policy_figures(kind: PolicyKind, seed: u64) -> Result<PolicyFigures, SimError> {
    let strategy = Strategy::policy(AnyConfig::from(kind));
    Ok(PolicyFigures {
        herd: Herd::default().run(&strategy, seed)?,
        outage: Outage::default().run(&strategy, seed)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn empty() -> Scoreboard {
        Scoreboard::empty(1)
    }

    #[test]
    fn a_finding_without_its_rows_is_listed_and_not_reproduced() {
        let findings = empty().findings();
        assert_eq!(findings.len(), Claim::ALL.len());
        for (f, claim) in findings.iter().zip(Claim::ALL) {
            assert_eq!(f.claim, claim);
            assert_eq!(
                (f.workload, f.published),
                (claim.workload(), claim.published())
            );
            assert!(!f.reproduced, "{}", f.published);
            assert!(f.ours.starts_with("not measured"), "{}", f.ours);
        }
    }

    #[test]
    fn every_claim_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for claim in Claim::ALL {
            assert!(seen.insert(claim), "{claim:?} twice");
        }
        let published: std::collections::HashSet<_> =
            Claim::ALL.iter().map(|c| c.published()).collect();
        assert_eq!(
            published.len(),
            Claim::ALL.len(),
            "each claim has its own words"
        );
    }

    /// A `tail` point whose runs have these p99.9s (ms) and loads.
    fn tail_point(label: &str, runs: &[(f64, f64)]) -> TailPoint {
        TailPoint {
            label: label.to_owned(),
            offered: 0.6,
            runs: runs
                .iter()
                .map(|&(p999, load)| {
                    let mut row = Metrics::new(10_000_000).row("immediate".to_owned(), None);
                    row.p999_ms = Some(Some(p999));
                    row.load = load;
                    row
                })
                .collect(),
        }
    }

    fn tail_finding(board: &Scoreboard) -> Finding {
        board
            .findings()
            .into_iter()
            .find(|f| f.workload == "tail")
            .expect("the tail claim")
    }

    #[test]
    fn the_tail_claim_is_read_on_the_rows() {
        let mut board = empty();
        board.tail_delay = Some(TailDelay {
            delay_ms: 34,
            share_within: 0.953,
            share_below: Some(0.948),
        });
        board.tail = vec![
            tail_point(tail_labels::NO_HEDGING, &[(1_000.0, 1.0), (960.0, 1.0)]),
            tail_point(&TailPoint::fixed_label(34), &[(80.0, 1.06), (90.0, 1.06)]),
        ];
        // 980 / 85 = 11.5x for +6 %: it holds, on the means and at each seed.
        let held = tail_finding(&board);
        assert!(held.reproduced, "{}", held.ours);
        assert!(held.ours.contains("(11.5x)"), "{}", held.ours);
        assert!(held.ours.contains("every seed meets it"), "{}", held.ours);

        // One seed's hedged p99.9 up to 110 ms: the mean still holds (980 / 95 = 10.3x), and
        // the board names the seed that does not (960 / 110 = 8.7x).
        board.tail[1].runs[1].p999_ms = Some(Some(110.0));
        let short = tail_finding(&board);
        assert!(short.reproduced, "{}", short.ours);
        assert!(short.ours.contains("8.7x for +6.0%"), "{}", short.ours);
        assert!(short.ours.contains("seed 2 falls short"), "{}", short.ours);

        // Up to 120 ms: the mean falls short (980 / 100 = 9.8x), and the claim with it.
        board.tail[1].runs[1].p999_ms = Some(Some(120.0));
        assert!(!tail_finding(&board).reproduced);

        // A cut of 11.5x again, but for 12 % more load: it does not hold.
        board.tail[1].runs[1].p999_ms = Some(Some(90.0));
        for run in &mut board.tail[1].runs {
            run.load = 1.12;
        }
        let loaded = tail_finding(&board);
        assert!(!loaded.reproduced, "{}", loaded.ours);
        assert!(loaded.ours.contains("(+12.0%)"), "{}", loaded.ours);

        // A run without a p99.9 is a missing figure, not a pass.
        board.tail[1].runs[0].p999_ms = Some(None);
        let missing = tail_finding(&board);
        assert!(!missing.reproduced);
        assert!(missing.ours.starts_with("not measured"), "{}", missing.ours);

        // And so is a fast-path delay that was not measured.
        board.tail[1].runs[0].p999_ms = Some(Some(80.0));
        for run in &mut board.tail[1].runs {
            run.load = 1.06;
        }
        assert!(tail_finding(&board).reproduced);
        board.tail_delay = None;
        assert!(!tail_finding(&board).reproduced);
    }

    #[test]
    #[ignore = "runs the whole board: cargo test --release -p stagger-sim -- --ignored"]
    fn the_hedging_figures_are_the_boards() {
        let board = Scoreboard::run(1, &|_| {}).unwrap();
        let figures = hedging_figures(1).unwrap();
        assert_eq!(figures.tail, board.tail);
        assert_eq!(Some(figures.tail_delay), board.tail_delay);
        assert_eq!(figures.tail_sweep, board.tail_sweep);
        assert_eq!(figures.tail_fanout, board.tail_fanout);
        assert_eq!(figures.spike, board.spike);
    }

    #[test]
    fn a_tail_point_averages_its_runs() {
        let p = tail_point("x", &[(100.0, 1.0), (50.0, 1.2)]);
        assert_eq!(p.p999(), Some(75.0));
        assert!((p.load().unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(tail_point("x", &[]).p999(), None);
    }

    #[test]
    fn a_row_missing_its_metric_does_not_pass() {
        // The spike's rows exist but carry no tail goodput: "stays collapsed" must not read
        // the absence as a collapse.
        let mut board = empty();
        let row = Metrics::new(10_000_000).row("immediate".to_owned(), None);
        for label in ["no backoff", "jittered backoff"] {
            board.spike.push(labelled(label, row.clone()));
            board.ramp.push(labelled(label, row.clone()));
        }
        let findings = board.findings();
        let spike: Vec<_> = findings
            .iter()
            .filter(|f| matches!(f.workload, "spike" | "ramp"))
            .collect();
        assert_eq!(spike.len(), 3);
        assert!(spike.iter().all(|f| !f.reproduced));
    }
}

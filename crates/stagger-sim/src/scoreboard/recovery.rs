//! The spike's and the ramp's figures: which strategies recover after the load falls back,
//! over [`SPIKE_SEEDS`] seeds, and the hedging page's figures.

use super::*;
use crate::error::SimError;
use crate::strategy::Strategy;
use crate::workload::Workload;
use crate::workload::spike::{self, Spike};
use serde::Serialize;
use stagger_core::budget::BudgetKind;
use stagger_core::engine::Hedging;

/// The world seeds, from the board's on, over which the spike's published strategies are run
/// to count how many recover: the published figures average 10 runs of a random process whose
/// runs go one way or the other.
pub const SPIKE_SEEDS: u64 = 100;

/// The tail goodput ratio at or above which a spike run has recovered: it serves at least 90 %
/// of what it is offered over the last 30 s.
pub const RECOVERED: f64 = 0.9;

/// The share of spike runs without backoff that may recover for "without backoff it stays
/// collapsed" to hold: fewer than half.
pub const STAYS_COLLAPSED_BELOW: f64 = 0.5;

/// The share of spike runs with jittered backoff that must recover for "with jittered backoff
/// it recovers" to hold.
pub const RECOVERS_AT_LEAST: f64 = 0.9;

/// One of the spike's published strategies over [`SPIKE_SEEDS`] seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecoveryShare {
    /// The strategy: `no backoff` or `jittered backoff`.
    pub label: String,
    /// The runs whose tail goodput ratio reached [`RECOVERED`].
    pub recovered: u64,
    /// The runs.
    pub runs: u64,
    /// The mean tail goodput ratio over the runs: the published figure's form (successes a
    /// second over the last 30 s, averaged over runs, over the rate offered).
    pub mean_ratio: f64,
}

impl RecoveryShare {
    /// The share of runs that recovered.
    #[must_use]
    pub fn share(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.recovered as f64 / self.runs as f64
        }
    }
}

/// The spike's two published strategies, [`spike::no_backoff`] and
/// [`spike::jittered_backoff`], each over [`SPIKE_SEEDS`] world seeds from `seed` on.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn spike_recovery(seed: u64) -> Result<Vec<RecoveryShare>, SimError> {
    let strategies = [
        ("no backoff", spike::no_backoff()),
        ("jittered backoff", spike::jittered_backoff()),
    ];
    let runs: Vec<(usize, u64)> = (0..strategies.len())
        .flat_map(|i| (seed..seed.saturating_add(SPIKE_SEEDS)).map(move |s| (i, s)))
        .collect();
    let ratios = parallel(runs, |&(i, s)| {
        Ok(Spike::default()
            .run(&strategies[i].1, s)?
            .tail_goodput_ratio
            .unwrap_or(0.0))
    })?;
    Ok(strategies
        .iter()
        .zip(ratios.chunks(usize::try_from(SPIKE_SEEDS).unwrap_or(usize::MAX)))
        .map(|((label, _), ratios)| RecoveryShare {
            label: (*label).to_owned(),
            recovered: ratios.iter().filter(|r| **r >= RECOVERED).count() as u64,
            runs: ratios.len() as u64,
            mean_ratio: ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
        })
        .collect())
}

/// The hedging of the `spike` rows: at the 95th percentile of the fleet's attempt latencies,
/// with as many attempts in all as [`spike::no_backoff`]'s policy allows (3).
#[must_use]
pub fn spike_hedging() -> Hedging {
    use stagger_core::PolicyConfig;
    let attempts = match spike::no_backoff().policy {
        crate::SimPolicy::Catalog(config) => config.max_attempts(),
        _ => 3,
    };
    Hedging::quantile(TAIL_QUANTILE, attempts)
}

/// The `spike` and `ramp` strategies, labelled, in the tables' order: no backoff, jittered
/// backoff, no backoff with each budget, then hedging by [`spike_hedging`] without a budget and
/// with each.
#[must_use]
pub fn spike_strategies() -> Vec<(String, Strategy)> {
    let mut strategies = vec![
        ("no backoff".to_owned(), spike::no_backoff()),
        ("jittered backoff".to_owned(), spike::jittered_backoff()),
    ];
    for budget in BudgetKind::ALL {
        strategies.push((
            format!("no backoff + {budget}"),
            spike::no_backoff().with_budget(Some(budget)),
        ));
    }
    let hedged = spike::no_backoff().with_hedging(Some(spike_hedging()));
    let hedge_label = hedged.name();
    strategies.push((hedge_label.clone(), hedged));
    for budget in BudgetKind::ALL {
        strategies.push((
            format!("{hedge_label} + {budget}"),
            hedged.with_budget(Some(budget)),
        ));
    }
    strategies
}

/// The figures of the hedging page, as the board has them: [`tail_section`]'s, and the
/// `spike` rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HedgingFigures {
    /// [`Scoreboard::tail`].
    pub tail: Vec<TailPoint>,
    /// [`Scoreboard::tail_delay`].
    pub tail_delay: TailDelay,
    /// [`Scoreboard::tail_sweep`].
    pub tail_sweep: Vec<TailPoint>,
    /// [`Scoreboard::tail_fanout`].
    pub tail_fanout: Vec<TailPoint>,
    /// [`Scoreboard::spike`].
    pub spike: Vec<Labelled>,
}

/// Runs what the hedging page measures at world seed `seed`, without the rest of the board.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn hedging_figures(seed: u64) -> Result<HedgingFigures, SimError> {
    let (tail, spike) = rayon::join(
        || tail_section(seed),
        || {
            parallel(spike_strategies(), |(label, s)| {
                Ok(labelled(
                    label.clone(),
                    Spike::default().simulate(s, seed)?.row,
                ))
            })
        },
    );
    let (tail, tail_delay, tail_sweep) = tail?;
    Ok(HedgingFigures {
        tail,
        tail_delay,
        tail_sweep,
        tail_fanout: tail_fanout_points(seed)?,
        spike: spike?,
    })
}

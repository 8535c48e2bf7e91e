//! Budgets per destination: one budget for two hosts against one per host, when one host is
//! down, over [`PARTITION_SEEDS`] seeds.

use super::*;
use crate::error::SimError;
use crate::workload::Workload;
use crate::workload::partition::{self, BudgetPartition, Partition};
use serde::Serialize;

/// The world seeds (from the board's seed on) each partition figure is averaged over.
pub const PARTITION_SEEDS: u64 = 10;

/// One budget mode on the `partition` workload's defaults (one client, host A down, host B
/// failing 20 % of attempts), with [`partition::trial_strategy`], over [`PARTITION_SEEDS`]
/// seeds. Counts are means per run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionPoint {
    /// The budget, if any.
    pub budget: Option<&'static str>,
    /// One budget for both hosts (`shared`) or one per host (`partitioned`); `None` without a
    /// budget, where the two are the same.
    pub budget_partition: Option<&'static str>,
    /// Host B's requests that succeeded, as a share of its requests: the mean over the seeds.
    pub b_success_share: f64,
    /// The lowest and the highest of that share in any seed.
    pub b_success_range: (f64, f64),
    /// Retries sent to host B.
    pub b_retries: f64,
    /// Attempts to host B that the budget refused.
    pub b_refused: f64,
    /// Retries sent to host A.
    pub a_retries: f64,
    /// Attempts to host A that the budget refused.
    pub a_refused: f64,
}

/// The `partition` figures: the trial's budget shared by both hosts, partitioned by host, and
/// no budget.
///
/// # Errors
///
/// A [`SimError`] if a run fails, which would be a bug in the defaults.
pub fn partition_points(seed: u64) -> Result<Vec<PartitionPoint>, SimError> {
    let strategy = partition::trial_strategy();
    let jobs = vec![
        (strategy, BudgetPartition::Shared),
        (strategy, BudgetPartition::Partitioned),
        (strategy.with_budget(None), BudgetPartition::Shared),
    ];
    parallel(jobs, |&(strategy, budget_partition)| {
        let model = Partition {
            budget_partition,
            ..Partition::default()
        };
        let mut share = 0.0f64;
        let mut range = (f64::INFINITY, f64::NEG_INFINITY);
        let mut counts = [0u64; 4];
        for s in seed..seed.saturating_add(PARTITION_SEEDS) {
            let row = model.run(&strategy, s)?;
            let (a, b) = (
                row.host_a.unwrap_or_default(),
                row.host_b.unwrap_or_default(),
            );
            share += b.success_share;
            range = (range.0.min(b.success_share), range.1.max(b.success_share));
            for (sum, x) in counts
                .iter_mut()
                .zip([b.retries, b.refused, a.retries, a.refused])
            {
                *sum += x;
            }
        }
        let n = PARTITION_SEEDS as f64;
        let mean = |sum: u64| sum as f64 / n;
        Ok(PartitionPoint {
            budget: strategy.budget.map(|b| b.name()),
            budget_partition: strategy.budget.map(|_| budget_partition.name()),
            b_success_share: share / n,
            b_success_range: range,
            b_retries: mean(counts[0]),
            b_refused: mean(counts[1]),
            a_retries: mean(counts[2]),
            a_refused: mean(counts[3]),
        })
    })
}

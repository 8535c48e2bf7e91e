//! Budgets per destination: the `partition` workload, one budget shared by two hosts against
//! one per host, with the model and the strategy read from their definitions.

use std::fmt::Write as _;

use stagger_sim::scoreboard::Scoreboard;

use super::cells::{last_seed, pct, pct_range, table};

/// The section: what the model is, and its table.
pub(super) fn section(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## `partition`: partitioned budgets, one client calling a host that is down and one that is not\n\n{}",
        partition_intro(board.seed)
    );
    s.push_str(&partition_table(&board.partition));
    s
}

/// What the partition table shows, and the commands behind it: every figure of the model and
/// the strategy is read from their definitions.
pub(super) fn partition_intro(seed: u64) -> String {
    use stagger_core::PolicyConfig;
    use stagger_sim::workload::partition::{Partition, trial_strategy};
    let model = Partition::default();
    let strategy = trial_strategy();
    let budget = strategy.budget.map_or_else(
        || "no budget".to_owned(),
        |b| format!("`{b}` ({})", b.summary()),
    );
    let policy = match strategy.policy {
        stagger_sim::SimPolicy::Catalog(config) => format!(
            "`{}`, {} attempts",
            config.kind().name(),
            config.max_attempts()
        ),
        other => format!("`{}`", other.name()),
    };
    format!(
        "One client sends {} requests/s for {}, {} of them to host A, which is down for the \
         whole run, the rest to host B, which fails {} of attempts independently; every \
         failure is retryable. The policy is the AWS SDKs' standard retry mode (preset \
         `aws-standard`: {policy}) and the budget their retry quota, {budget}: either one for \
         both hosts (`shared`) or one per host (`partitioned`, \
         `stagger_core::budget::BudgetPerDestination`, each host's budget starting full). Means per run over \
         world seeds {seed} to {} (`stagger simulate --workload partition --policy \
         aws-standard --budget aws-standard --budget-partition shared|partitioned --format \
         json --seed N`, the figures under `host_a` and `host_b`; without `--budget` for the \
         no-budget ceiling).\n",
        model.rate,
        stagger_core::duration::human(model.duration),
        pct(model.share_down),
        pct(model.failure_rate),
        last_seed(seed, stagger_sim::scoreboard::PARTITION_SEEDS)
    )
}

/// The partition figures as a table.
pub(super) fn partition_table(points: &[stagger_sim::scoreboard::PartitionPoint]) -> String {
    let one = |x: f64| format!("{x:.1}");
    table(
        &[
            "Budget",
            "Host B: success (range)",
            "Host B: retries sent",
            "Host B: refused",
            "Host A: retries sent",
            "Host A: refused",
        ],
        points
            .iter()
            .map(|p| {
                vec![
                    match (p.budget, p.budget_partition) {
                        (Some(b), Some(mode)) => format!("`{b}`, {mode}"),
                        (Some(b), None) => format!("`{b}`"),
                        (None, _) => "no budget".to_owned(),
                    },
                    pct_range(p.b_success_share, p.b_success_range),
                    one(p.b_retries),
                    one(p.b_refused),
                    one(p.a_retries),
                    one(p.a_refused),
                ]
            })
            .collect(),
    )
}

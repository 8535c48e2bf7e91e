//! The measured sections of the documentation's pages: the figures a policy's page ends
//! with, and the server-directed waits and hedging pages whole, each the page's text from
//! `stagger-core` followed by the scoreboard's own sections on the workloads it cites.
//!
//! A page reuses the scoreboard's sections rather than its own words for them, so a page and
//! the scoreboard never describe the same run two ways.

use stagger_sim::scoreboard::Labelled;

use super::cells::{num, pct, percentile_words};
use super::partition::{partition_intro, partition_table};
use super::spike::{spike_hedging_table, spike_hedging_text};
use super::tail::{tail_fanout, tail_intro, tail_sweep, tail_table};
use super::throttle::{throttle_intro, throttle_table, throttle_variants};

/// The server-directed waits page, with its measured figures: the `throttle` workload's, and
/// the `partition` workload's for the other state kept per destination, the budget.
pub(crate) fn server_waits_page(
    points: &[stagger_sim::scoreboard::ThrottlePoint],
    variants: &[stagger_sim::scoreboard::ThrottleVariantPoint],
    partition: &[stagger_sim::scoreboard::PartitionPoint],
    seed: u64,
) -> String {
    format!(
        "{}\n## Measured\n\nFrom the simulator's `throttle` workload. {}\n{}{}\n\
         ## Budgets per destination\n\nA gate is kept per destination; a retry budget can be \
         too. A client that holds one budget for every host lets one host's outage spend the \
         retries the others need; `stagger_core::budget::BudgetPerDestination` keeps one budget per \
         destination, in a bounded set. From the simulator's `partition` workload. {}\n{}",
        stagger_core::engine::Dispersal::PAGE,
        throttle_intro(seed),
        throttle_table(points),
        throttle_variants(variants, seed),
        partition_intro(seed),
        partition_table(partition)
    )
}

/// A policy's measured figures, as its page ends.
pub(crate) fn policy_figures(
    figures: &stagger_sim::scoreboard::PolicyFigures,
    seed: u64,
) -> String {
    let (h, o) = (&figures.herd, &figures.outage);
    format!(
        "\n## Measured\n\nFrom the simulator at the policy's defaults, world seed {seed} \
         (`stagger simulate --workload herd|outage --policy {}`):\n\n\
         - `herd` (1000 clients fail together): {} of all retries in the busiest 10 ms window; \
           {} attempts per client.\n\
         - `outage` (100 requests/s through a 30 s outage): {} of the requests that met the outage \
           succeeded; {} attempts per request; {} attempts reached the dependency in the second \
           after it recovered.\n",
        h.policy,
        pct(h.peak_window_share),
        num(h.load),
        pct(o.success_rate),
        num(o.load),
        o.recovery_load.unwrap_or(0),
    )
}

/// The hedging page, with its measured figures: the `tail` workload's rows, its load sweep and
/// the claim read on them, and the `spike` workload's hedged rows.
pub(crate) fn hedging_page(
    tail: &[stagger_sim::scoreboard::TailPoint],
    delay: Option<&stagger_sim::scoreboard::TailDelay>,
    sweep: &[stagger_sim::scoreboard::TailPoint],
    fanout: &[stagger_sim::scoreboard::TailPoint],
    spike: &[Labelled],
    seed: u64,
) -> String {
    use stagger_sim::scoreboard::{TailPoint, tail_claim, tail_labels};
    let said = |claim: Option<(String, bool)>| {
        claim.map_or_else(
            || "not measured: a row is missing".to_owned(),
            |(ours, held)| {
                format!(
                    "{ours}. {}",
                    if held {
                        "The claim holds here"
                    } else {
                        "The claim does **not** hold here"
                    }
                )
            },
        )
    };
    let fast = delay.and_then(|d| tail_claim(tail, &TailPoint::fixed_label(d.delay_ms), seed));
    let claim = format!(
        "{}.\n\nHedged instead at the {} of every attempt the sketch measured, slow ones \
         included (the self-tuning delay, which no one has to measure beforehand): {}",
        said(fast),
        percentile_words(stagger_sim::scoreboard::TAIL_QUANTILE),
        said(tail_claim(tail, tail_labels::HEDGE_P95, seed)),
    );
    let model = stagger_sim::workload::spike::Spike::default();
    format!(
        "{}\n## Measured\n\nFrom the simulator's `tail` workload: a tail made by replicas \
         that pause, at a setup of ours, not Dean and Barroso's. {}\n{}\n\
         Dean and Barroso's result, read here as \"a hedge at the {} of the fast path (the \
         pause-free pool's) cuts p99.9 at least {}x for at most {:.0}% more load\": {claim}.\n{}{}\n\
         ### Against one overloaded server: the `spike` workload\n\n\
         From the simulator's `spike` workload ({} requests a second, {} for {}, one server \
         with no admission control; its section in `docs/scoreboard.md` has the model).{}\n{}",
        stagger_core::engine::Hedging::PAGE,
        tail_intro(seed, delay),
        tail_table(tail),
        percentile_words(stagger_sim::scoreboard::TAIL_QUANTILE),
        stagger_sim::scoreboard::TAIL_CLAIM_CUT,
        100.0 * stagger_sim::scoreboard::TAIL_CLAIM_EXTRA_LOAD,
        tail_sweep(sweep, seed),
        tail_fanout(fanout, seed),
        model.rate,
        model.rate * model.spike_factor,
        stagger_core::duration::human(model.spike_for),
        spike_hedging_text(spike),
        spike_hedging_table(spike),
    )
}

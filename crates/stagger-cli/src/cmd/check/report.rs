//! The report of one configuration: what it commits its user to, from its own arithmetic and
//! from its planned runs, as data.
//!
//! The structs are the JSON output as it is, so their fields and docs are the format; the
//! text and the warnings read the same [`Report`], so both say the same figures.

use std::time::Duration;

use serde::Serialize;
use stagger_core::budget::AnyBudgetConfig;
use stagger_core::duration::human;
use stagger_core::engine::Nested;
use stagger_core::{AnyConfig, Param, PolicyConfig};
use stagger_sim::SimPolicy;
use stagger_sim::scoreboard::{RECOVERED, THROTTLE_SEEDS};
use stagger_sim::workload::spike;

use super::args::Args;
use super::input::Subject;
use super::plan::{Plan, long_deadline_note};
use crate::flags::CommandError;
use crate::progress::Progress;

/// What one configuration commits its user to.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// Where the configuration comes from, as the text's first line says ([`Subject::source`]).
    pub(super) source: String,
    /// A service config's method configs that have this policy, each by its names, in the
    /// file's order; empty for a retry configuration file.
    pub(super) method_configs: Vec<String>,
    /// The policy's catalog name.
    pub(super) policy: &'static str,
    /// The attempts a request makes at most, first included: its hedges', if it hedges.
    pub(super) max_attempts: u32,
    /// The delay before each retry: its band, in milliseconds.
    pub(super) delays_ms: Vec<(f64, f64)>,
    /// The sum of the delays: the retry window's band, in milliseconds.
    pub(super) window_ms: (f64, f64),
    /// The deadline of a whole call, retries included, if it sets one.
    pub(super) deadline: Option<String>,
    /// The retry budget, its parameters and whose they are, if it has one.
    pub(super) budget: Option<String>,
    /// How it hedges, if it hedges instead of retrying.
    pub(super) hedging: Option<String>,
    /// Whether an uncertain failure may be retried.
    pub(super) idempotent: bool,
    /// Attempts per request through `--layers`.
    pub(super) layers: Layers,
    /// The load of the total outage of `--outage`.
    pub(super) outage: Option<OutageLoad>,
    /// The 429 storm.
    pub(super) throttle: Option<ThrottleFigure>,
    /// The world seed of the simulator runs.
    pub(super) seed: u64,
    /// This configuration and the catalog's defaults beside it, on the canonical workloads.
    pub(super) workloads: Vec<WorkloadRow>,
    /// The spike as the scoreboard runs it, beside the rows' own.
    pub(super) spike_reference: SpikeReference,
    /// What the runs leave out of the configuration.
    pub(super) notes: Vec<String>,
    /// What to change, each with its fix.
    pub(super) warnings: Vec<Warning>,
}

/// Attempts per request through the layers.
#[derive(Debug, Serialize)]
pub(super) struct Layers {
    /// The layers of `--layers`.
    pub(super) layers: u32,
    /// When each layer retries on its own (other libraries, or `nested = "retry"`): the
    /// attempts multiply. `None` past `u64::MAX`.
    pub(super) uncoordinated: Option<u64>,
    /// With stagger's default ownership of recovery (`nested = "single-attempt"`): only the
    /// outermost layer retries.
    pub(super) owned: u64,
    /// What this configuration asks for inside another executor, if it sets `nested`;
    /// `None` when it leaves it at stagger's default (`single-attempt`).
    pub(super) nested: Option<&'static str>,
    /// The same layers simulated in the total outage (every attempt failing), attempts per
    /// request reaching the dependency, with no budget and the configuration's deadline at
    /// every layer: `None` for one layer, a hedged configuration, or a stack too large to
    /// simulate within the check's limits.
    pub(super) simulated: Option<SimulatedLayers>,
}

impl Layers {
    /// The attempts of layers that each retry on their own, as a number, or in words past
    /// `u64::MAX`.
    pub(super) fn worst(&self) -> String {
        self.uncoordinated
            .map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string())
    }
}

/// Attempts per request through the layers, measured on the simulator's composed model.
#[derive(Debug, Serialize)]
pub(super) struct SimulatedLayers {
    /// Every layer retrying on its own (`nested = "retry"` in each inner layer).
    pub(super) uncoordinated: f64,
    /// stagger's default in every inner layer (`nested = "single-attempt"`).
    pub(super) owned: f64,
}

/// The load on a dependency that is down, measured.
#[derive(Debug, Serialize)]
pub(super) struct OutageLoad {
    /// The requests a second of `--rate`.
    pub(super) rate: f64,
    /// The clients of `--clients`.
    pub(super) clients: u64,
    /// How long the outage lasts, in a reader's units.
    pub(super) duration: String,
    /// Attempts per request without a budget.
    pub(super) without_budget: f64,
    /// Attempts per request with the configuration's budget, one per client.
    pub(super) with_budget: Option<f64>,
}

/// The 429 storm of the nginx trial, measured with this configuration.
#[derive(Debug, Serialize)]
pub(super) struct ThrottleFigure {
    /// Mean requests served of 20, over the seeds.
    pub(super) served: f64,
    /// The seeds run, from the world seed on.
    pub(super) seeds: u64,
    /// Retries sent before the server's time, over every seed.
    pub(super) early_retries: u64,
    /// How each 429's wait is spread above the server's time.
    pub(super) dispersal: &'static str,
    /// Whether `dispersal` is stagger's default, the file setting none.
    pub(super) default_dispersal: bool,
    /// The deadline of each request, in a reader's units.
    pub(super) deadline: String,
    /// Whether the deadline is the configuration's own (or the trial's 3 s, if it sets none).
    pub(super) own_deadline: bool,
    /// The longest server wait that is waited for, in a reader's units.
    pub(super) max_server_wait: String,
    /// Whether `max_server_wait` is stagger's default, the file setting none.
    pub(super) default_max_server_wait: bool,
}

/// One strategy on the canonical workloads.
#[derive(Debug, Serialize)]
pub(super) struct WorkloadRow {
    /// `this configuration`, or a policy `at its defaults`.
    pub(super) label: String,
    /// The policy's parameters, as a configuration file writes them.
    pub(super) parameters: String,
    /// The herd's largest share of all retries in one 10 ms window.
    pub(super) herd_peak_share: f64,
    /// The share of the outage's requests that succeeded.
    pub(super) outage_success: f64,
    /// The spike's tail goodput ratio (1 is healthy).
    pub(super) spike_tail_goodput: Option<f64>,
}

/// The spike's "jittered backoff" as the scoreboard runs it, with other parameters than the
/// catalog's defaults, run here at the same seed as the rows: what the rows' spike verdicts
/// are to be read beside.
#[derive(Debug, Serialize)]
pub(super) struct SpikeReference {
    /// The scoreboard's name for it.
    pub(super) label: &'static str,
    /// Its catalog policy.
    pub(super) policy: &'static str,
    /// Its parameters, as a configuration file writes them.
    pub(super) parameters: String,
    /// Its tail goodput ratio at this seed.
    pub(super) tail_goodput: Option<f64>,
    /// For each row of a jittered policy that stays collapsed where it recovers, why: its
    /// retry window against the scoreboard's.
    pub(super) reasons: Vec<String>,
}

/// A plain warning and its fix.
#[derive(Debug, Serialize)]
pub(super) struct Warning {
    /// What the configuration does, with the figure behind it.
    pub(super) what: String,
    /// The setting that fixes it, as a configuration file writes it.
    pub(super) fix: String,
}

/// A duration in milliseconds, as the JSON gives delays.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The report of `subject`: its own arithmetic, and `plan`'s runs made and counted in
/// `progress`. Its warnings are left empty, for [`super::warnings`] to read the rest.
pub(super) fn report(
    subject: &Subject,
    plan: Plan,
    args: &Args,
    progress: &Progress,
) -> Result<Report, CommandError> {
    let policy = subject.policy;
    let attempts = subject.max_attempts();
    let retries = attempts.saturating_sub(1);
    // The delays: every retry's band, up to a hundred listed.
    let delays_ms: Vec<(f64, f64)> = (1..=retries.min(100))
        .map(|n| {
            let b = policy.bounds(n);
            (ms(b.min), ms(b.max))
        })
        .collect();
    let window = window(policy, retries);
    let simulated = match plan.stack {
        Some((owned, every)) => Some(SimulatedLayers {
            owned: owned.run(progress)?.load,
            uncoordinated: every.run(progress)?.load,
        }),
        None => None,
    };
    let layers = Layers {
        layers: args.layers,
        uncoordinated: u64::from(attempts).checked_pow(args.layers),
        owned: u64::from(attempts),
        nested: subject.set.nested.map(nested_name),
        simulated,
    };

    let outage = Some(OutageLoad {
        rate: args.rate,
        clients: args.clients,
        duration: human(args.outage),
        without_budget: plan.without_budget.run(progress)?.load,
        with_budget: match plan.with_budget {
            Some(run) => Some(run.run(progress)?.load),
            None => None,
        },
    });

    let throttle = {
        let (mut served, mut early) = (0, 0);
        for run in plan.throttle_runs {
            let row = run.run(progress)?;
            served += row.successes;
            early += row.early_retries.unwrap_or(0);
        }
        Some(ThrottleFigure {
            served: served as f64 / THROTTLE_SEEDS as f64,
            seeds: THROTTLE_SEEDS,
            early_retries: early,
            dispersal: plan.throttle.dispersal.name(),
            default_dispersal: !subject.set.dispersal,
            deadline: human(plan.throttle.timeout),
            own_deadline: subject.settings.timeout().is_some(),
            max_server_wait: human(subject.settings.max_server_wait()),
            default_max_server_wait: !subject.set.max_server_wait,
        })
    };

    let mut configs = Vec::new();
    let workloads = plan
        .workloads
        .into_iter()
        .map(|(label, config, [herd, outage, spike])| {
            configs.push(config);
            Ok(WorkloadRow {
                label,
                parameters: parameters_of(config),
                herd_peak_share: herd.run(progress)?.peak_window_share,
                outage_success: outage.run(progress)?.success_rate,
                spike_tail_goodput: spike.run(progress)?.tail_goodput_ratio,
            })
        })
        .collect::<Result<Vec<_>, CommandError>>()?;
    let spike_reference = spike_reference(
        plan.spike_reference.run(progress)?.tail_goodput_ratio,
        &workloads,
        &configs,
    );

    Ok(Report {
        source: subject.source(),
        method_configs: subject
            .grpc
            .as_ref()
            .map_or_else(Vec::new, |g| g.methods.clone()),
        policy: policy.kind().name(),
        max_attempts: attempts,
        delays_ms,
        window_ms: (ms(window.min), ms(window.max)),
        deadline: subject.settings.timeout().map(human),
        budget: subject.budget.map(|(kind, config)| {
            let whose = if config == AnyBudgetConfig::published(kind) {
                "its published defaults"
            } else {
                "configured"
            };
            format!("{kind} ({}; {whose}), one per client", parameters(config))
        }),
        hedging: subject.hedging.map(|h| {
            format!(
                "{} attempts in all, the next after {} without an answer",
                h.max_attempts(),
                h.delay()
            )
        }),
        idempotent: subject.settings.idempotent().unwrap_or(true),
        layers,
        outage,
        throttle,
        seed: args.seed,
        workloads,
        spike_reference,
        notes: subject
            .unmodelled
            .iter()
            .cloned()
            .chain(long_deadline_note(&subject.settings))
            .collect(),
        warnings: Vec::new(),
    })
}

/// The sum of `policy`'s first `retries` delays: the retry window's bounds.
fn window(policy: AnyConfig, retries: u32) -> stagger_core::Bounds {
    policy.window_bounds(retries).unwrap_or_else(|| {
        let (mut min, mut max) = (Duration::ZERO, Duration::ZERO);
        for n in 1..=retries.min(100_000) {
            let b = policy.bounds(n);
            min = min.saturating_add(b.min);
            max = max.saturating_add(b.max);
        }
        stagger_core::Bounds { min, max }
    })
}

/// Whether any of `policy`'s delays is drawn from a band rather than fixed.
pub(super) fn jittered(policy: AnyConfig) -> bool {
    let retries = policy.max_attempts().saturating_sub(1);
    (1..=retries.min(1_000)).any(|n| {
        let b = policy.bounds(n);
        b.min != b.max
    })
}

/// A policy's parameters, as a configuration file writes them: `base 100 ms, cap 30 s,
/// factor 2, max_attempts 8`.
fn parameters_of(config: AnyConfig) -> String {
    let params: Vec<String> = stagger_core::config::PolicySpec::from_config(&config)
        .params()
        .into_iter()
        .map(|p| match p {
            Param::Base(d) | Param::Cap(d) => format!("{} {}", p.name(), human(d)),
            Param::Factor(x) | Param::Jitter(x) => format!("{} {x}", p.name()),
            Param::MaxAttempts(n) => format!("{} {n}", p.name()),
            other => other.name().to_owned(),
        })
        .collect();
    if params.is_empty() {
        "no parameters".to_owned()
    } else {
        params.join(", ")
    }
}

/// Whether a spike run's tail goodput ratio counts as recovered, as the scoreboard counts it.
pub(super) fn recovers(tail_goodput: Option<f64>) -> bool {
    tail_goodput.is_some_and(|g| g >= RECOVERED)
}

/// The scoreboard's jittered backoff on the spike, whose `tail_goodput` was measured at the
/// rows' seed, and for each row of a jittered policy (`configs`, in the rows' order) that
/// stays collapsed where it recovers, the reason: the rows' retry windows are far shorter.
fn spike_reference(
    tail_goodput: Option<f64>,
    rows: &[WorkloadRow],
    configs: &[AnyConfig],
) -> SpikeReference {
    let SimPolicy::Catalog(board) = spike::jittered_backoff().policy else {
        unreachable!("the scoreboard's jittered backoff is a catalog policy")
    };
    let board_retries = board.max_attempts().saturating_sub(1);
    let board_window = window(board, board_retries).max;
    let reasons = rows
        .iter()
        .zip(configs)
        .filter(|(row, config)| {
            recovers(tail_goodput) && !recovers(row.spike_tail_goodput) && jittered(**config)
        })
        .map(|(row, config)| {
            let retries = config.max_attempts().saturating_sub(1);
            format!(
                "{} stays collapsed where the scoreboard's jittered backoff recovers: its {retries} delays add up to at most {}, the scoreboard's {board_retries} to at most {}",
                row.label,
                human(window(*config, retries).max),
                human(board_window)
            )
        })
        .collect();
    SpikeReference {
        label: "jittered backoff",
        policy: board.kind().name(),
        parameters: parameters_of(board),
        tail_goodput,
        reasons,
    }
}

/// A budget's parameters, as a configuration file names them.
fn parameters(config: AnyBudgetConfig) -> String {
    match config {
        AnyBudgetConfig::TokenBucket(c) => format!(
            "capacity {}, retry_cost {}, timeout_cost {}, throttle_cost {}",
            c.capacity(),
            c.retry_cost(),
            c.timeout_cost(),
            c.throttle_cost()
        ),
        AnyBudgetConfig::Ratio(c) => format!(
            "percent {}, min_per_sec {}, ttl {}",
            c.percent(),
            c.min_per_sec(),
            human(c.ttl())
        ),
        AnyBudgetConfig::GrpcThrottle(c) => format!(
            "max_tokens {}, token_ratio {}",
            c.max_tokens(),
            c.token_ratio()
        ),
        AnyBudgetConfig::SreAdaptive(c) => format!("k {}, window {}", c.k(), human(c.window())),
        AnyBudgetConfig::Breaker(c) => format!(
            "threshold {}, window {}",
            c.threshold(),
            c.window()
                .map_or_else(|| "since creation".to_owned(), human)
        ),
        other => format!("{other:?}"),
    }
}

/// `nested` as a configuration file writes it.
fn nested_name(nested: Nested) -> &'static str {
    if nested == Nested::Retry {
        "retry"
    } else {
        "single-attempt"
    }
}

//! `stagger simulate`: run policies (and budgets) on a canonical workload, or a scenario file's
//! retry stack on the model of its system.

use std::io::Write;
use std::time::Duration;

use clap::ValueEnum;
use serde::Serialize;
use stagger_core::budget::BudgetKind;
use stagger_core::engine::{
    Dispersal, HedgeDelay, Hedging, MAX_HEDGED_ATTEMPTS, ParseHedgeDelayError,
};
use stagger_core::{AnyConfig, Clock, MonotonicClock, PolicyConfig, PolicyKind, Preset, Timestamp};
use stagger_sim::model::{RetryAfterForm, RunOptions};
use stagger_sim::workload::partition::BudgetPartition;
use stagger_sim::{Estimate, Overrides, ResultRow, SimError, SimPolicy, Strategy, WorkloadKind};

use crate::cmd::schedule::Overrides as PolicyOverrides;
use crate::flags::{self, CommandError};
use crate::limits::{self, Bytes, Count, MemoryLimit};
use crate::plot::{Figure, captions};
use crate::progress::Progress;

/// Flags of `stagger simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The workload: herd, outage, contention, open-loop, serial, spike, ramp, throttle,
    /// partition, tail.
    #[arg(long, value_name = "NAME", required_unless_present = "scenario")]
    workload: Option<String>,
    /// Policies, comma-separated: catalog names, preset names, or
    /// `aws-2015-decorrelated-clamped`.
    #[arg(
        long,
        value_name = "P[,P...]",
        value_delimiter = ',',
        required_unless_present = "scenario"
    )]
    policy: Vec<String>,
    /// A scenario file (TOML or JSON): the clients, the dependency and the retry stack of your
    /// own system, with its duration and seed, in place of --workload, --policy and the
    /// workload's flags (see docs/scenarios/).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = [
            "workload", "policy", "budget", "seed", "clients", "rounds", "failure_rate",
            "duration", "rate", "window", "timeout", "retry_after", "limit_rate", "limit_burst",
            "limit_concurrency", "retry_after_form", "dispersal", "gate", "budget_partition",
            "attempt_timeout", "load", "replicas", "concurrency", "pause", "pause_every",
            "fanout", "hedge", "base", "cap", "factor", "jitter",
            "max_attempts",
        ]
    )]
    scenario: Option<std::path::PathBuf>,
    /// A budget per simulated client (see `stagger budgets`).
    #[arg(long, value_name = "NAME")]
    budget: Option<String>,
    /// The world seed; every generator of the run derives from it.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// Clients (or arrival sources).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    clients: Option<u64>,
    /// Rounds to average over.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    rounds: Option<u32>,
    /// The server's failure probability per attempt, in [0, 1].
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    failure_rate: Option<f64>,
    /// The simulated duration, such as 10s.
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    duration: Option<Duration>,
    /// The offered rate, in requests per second.
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    rate: Option<f64>,
    /// The window of the peak retry share (default 10ms).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    window: Option<Duration>,
    /// One end-to-end deadline per request, from its first attempt (outage, throttle, tail).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    timeout: Option<Duration>,
    /// Make the dependency throttle while down, answering 503 with this Retry-After (outage);
    /// the wait a refusal tells (throttle; default 1s).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    retry_after: Option<Duration>,
    /// The rate limiter's rate, in requests per second (throttle; default 5).
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    limit_rate: Option<f64>,
    /// The rate limiter's tokens: 1 admits one request per 1/rate (throttle; default 1).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    limit_burst: Option<u32>,
    /// A concurrency limiter with this many requests in service, answering 503, in place of
    /// the rate limiter (throttle).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    limit_concurrency: Option<u32>,
    /// How a refusal states its wait: fixed, exact, fixed-rounded or exact-rounded
    /// (throttle; default fixed, the --retry-after value).
    #[arg(long, value_name = "FORM", value_parser = retry_after_form)]
    retry_after_form: Option<RetryAfterForm>,
    /// What a client adds above a server's wait: floor, policy-above or uniform-asked
    /// (throttle and outage; default uniform-asked).
    #[arg(long, value_name = "RULE", value_parser = dispersal)]
    dispersal: Option<Dispersal>,
    /// The clients share one gate for the destination: once one is throttled, every call
    /// waits for a paced slot of its own (throttle).
    #[arg(long)]
    gate: bool,
    /// Whether the client's --budget is one for both hosts (shared) or one per host
    /// (partitioned) (partition; default shared).
    #[arg(long, value_name = "MODE", value_parser = budget_partition)]
    budget_partition: Option<BudgetPartition>,
    /// A timeout for each attempt, besides the request's deadline: an attempt that outlives
    /// it is cut and retried as a timeout (tail).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    attempt_timeout: Option<Duration>,
    /// The offered load, as a share of the servers' capacity, in (0, 1) (tail; default 0.6).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    load: Option<f64>,
    /// The replicas in the pool (tail; default 10).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    replicas: Option<u32>,
    /// The requests each replica serves at once, the rest queued (tail; default 4).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    concurrency: Option<u32>,
    /// How long a replica pauses; 0s for no pauses (tail; default 1s).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    pause: Option<Duration>,
    /// The mean time a replica runs between pauses (tail; default 99s).
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    pause_every: Option<Duration>,
    /// The sub-requests each request fans out to, to replicas picked at random, all needed:
    /// a request is as slow as its slowest (tail; default 1).
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    fanout: Option<u32>,
    /// Hedge instead of retrying, comma-separated to compare: `none`, a delay such as 10ms,
    /// or a percentile of the measured attempt latencies such as p95; each policy runs once
    /// per value, its --max-attempts the attempts in all, at most 10 (every workload but
    /// contention).
    #[arg(long, value_name = "DELAY|pNN|none", value_delimiter = ',', value_parser = hedge, allow_hyphen_values = true)]
    hedge: Vec<Option<HedgeDelay>>,
    #[command(flatten)]
    policy_overrides: PolicyOverrides,
    /// Refuse, before it starts, a run estimated to need more memory than this, such as
    /// 2GiB or 512MB (default: 85% of the smaller of the address-space limit and the
    /// machine's memory).
    #[arg(long, value_name = "SIZE", value_parser = limits::size, allow_hyphen_values = true)]
    max_memory: Option<u64>,
    #[command(flatten)]
    limit: limits::MaxEvents,
    /// Report the estimated events and memory, and the events processed, events per second
    /// and peak memory, on stderr.
    #[arg(long)]
    stats: bool,
    /// Also write the results as one self-contained HTML page, with the plot inline for
    /// --workload herd, spike and ramp and for a scenario on the composed model.
    #[arg(long, value_name = "FILE.html")]
    html: Option<std::path::PathBuf>,
    /// Write a plot: retries over time (herd, or a scenario's fixed clients) or goodput per
    /// second (spike, ramp, or a scenario's open or serial clients on the composed model).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// How to print results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A Markdown table.
    Table,
    /// One JSON object.
    Json,
    /// One CSV row per strategy.
    Csv,
}

/// The JSON document.
#[derive(Serialize)]
struct Document<'a> {
    workload: &'a str,
    seed: u64,
    results: &'a [ResultRow],
}

fn sim_error(err: SimError) -> CommandError {
    match err.param() {
        Some(param) => CommandError::Usage(format!("invalid --{}: {err}", param.replace('_', "-"))),
        None => CommandError::Usage(err.to_string()),
    }
}

/// The strategy a `--policy` name stands for, with the policy overrides applied.
fn strategy(
    name: &str,
    overrides: &PolicyOverrides,
    budget: Option<BudgetKind>,
) -> Result<Strategy, CommandError> {
    let policy = if name == "aws-2015-decorrelated-clamped" {
        let (base, cap) = overrides.base_and_cap(name)?;
        let base = base.unwrap_or(Duration::from_millis(5));
        let cap = cap.unwrap_or(Duration::from_secs(2));
        if base.is_zero() || base > stagger_sim::limits::MAX_DURATION {
            return Err(CommandError::Usage(
                "invalid --base: longer than 0 and at most a day".to_owned(),
            ));
        }
        if cap < base || cap > stagger_sim::limits::MAX_DURATION {
            return Err(CommandError::Usage(
                "invalid --cap: at least --base (5ms by default) and at most a day".to_owned(),
            ));
        }
        SimPolicy::AwsDecorrelatedClamped { base, cap }
    } else {
        let config = match name.parse::<AnyConfig>() {
            Ok(config) => config,
            Err(_) => Preset::named(name).map(|p| p.config()).map_err(|_| {
                CommandError::Usage(format!(
                    "invalid --policy: {}",
                    flags::unknown_name(
                        "policy or preset",
                        name,
                        &[
                            ("policies", &PolicyKind::names()),
                            ("presets", &Preset::names()),
                            (
                                "simulator-only policies",
                                &["aws-2015-decorrelated-clamped"]
                            ),
                        ]
                    )
                ))
            })?,
        };
        SimPolicy::Catalog(overrides.apply(config)?)
    };
    Ok(Strategy::of(policy).with_budget(budget))
}

/// Reads a `--hedge` value. A duration of any length is read, and bounded by
/// [`Hedging::validate`] in [`hedged`] as a configuration file's `[hedging] delay` is (at most
/// [`MAX_HEDGE_DELAY`](stagger_core::limits::MAX_HEDGE_DELAY)), with the same error.
fn hedge(text: &str) -> Result<Option<HedgeDelay>, String> {
    if text == "none" {
        return Ok(None);
    }
    if let Ok(delay) = stagger_core::duration::parse(text) {
        return Ok(Some(HedgeDelay::Fixed(delay)));
    }
    text.parse()
        .map(Some)
        .map_err(|e: ParseHedgeDelayError| e.to_string())
}

/// `strategy` hedging at `delay`, with its policy's attempt limit as the attempts in all.
fn hedged(strategy: Strategy, delay: Option<HedgeDelay>) -> Result<Strategy, CommandError> {
    let Some(delay) = delay else {
        return Ok(strategy);
    };
    let SimPolicy::Catalog(config) = strategy.policy else {
        return Err(CommandError::Usage(format!(
            "invalid --hedge: {} has no attempt limit to hedge up to",
            strategy.policy.name()
        )));
    };
    let max_attempts = config.max_attempts().min(MAX_HEDGED_ATTEMPTS);
    let hedging = match delay {
        HedgeDelay::Quantile(q) => Hedging::quantile(q, max_attempts),
        HedgeDelay::Fixed(d) => Hedging::fixed(d, max_attempts),
        _ => unreachable!("the parser reads these two"),
    };
    hedging
        .validate()
        .map_err(|e| CommandError::Usage(format!("invalid --hedge: {e}")))?;
    Ok(strategy.with_hedging(Some(hedging)))
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    if let Some(path) = &args.scenario {
        return run_scenario(args, path, out);
    }
    let name = args.workload.as_deref().unwrap_or_default();
    let workload: WorkloadKind = name.parse().map_err(|_| {
        CommandError::Usage(format!(
            "invalid --workload: {}",
            flags::unknown_name("workload", name, &[("workloads", &WorkloadKind::names())])
        ))
    })?;
    let budget = match &args.budget {
        Some(name) => Some(name.parse::<BudgetKind>().map_err(|_| {
            CommandError::Usage(format!(
                "invalid --budget: {}",
                flags::unknown_name("budget", name, &[("budgets", &BudgetKind::names())])
            ))
        })?),
        None => None,
    };
    let overrides = Overrides {
        clients: args.clients,
        rounds: args.rounds,
        failure_rate: args.failure_rate,
        duration: args.duration,
        rate: args.rate,
        window: args.window,
        timeout: args.timeout,
        retry_after: args.retry_after,
        limit_rate: args.limit_rate,
        limit_burst: args.limit_burst,
        limit_concurrency: args.limit_concurrency,
        retry_after_form: args.retry_after_form,
        dispersal: args.dispersal,
        gate: args.gate.then_some(true),
        budget_partition: args.budget_partition,
        attempt_timeout: args.attempt_timeout,
        load: args.load,
        replicas: args.replicas,
        concurrency: args.concurrency,
        pause: args.pause,
        pause_every: args.pause_every,
        fanout: args.fanout,
    };
    if args.plot.is_some()
        && !matches!(
            workload,
            WorkloadKind::Herd | WorkloadKind::Spike | WorkloadKind::Ramp
        )
    {
        return Err(CommandError::Usage(format!(
            "invalid --plot: used with herd, spike or ramp, not {workload} (stagger bench plots the others)"
        )));
    }
    let hedges: &[Option<HedgeDelay>] = if args.hedge.is_empty() {
        &[None]
    } else {
        &args.hedge
    };
    let mut strategies = Vec::new();
    for name in &args.policy {
        let s = strategy(name, &args.policy_overrides, budget)?;
        for delay in hedges {
            strategies.push(hedged(s, *delay)?);
        }
    }
    let plotted = matches!(
        workload,
        WorkloadKind::Herd | WorkloadKind::Spike | WorkloadKind::Ramp
    );
    let plotting = args.plot.is_some() || (args.html.is_some() && plotted);
    let (estimates, total) = estimate(workload, &overrides, &strategies, plotting)?;
    let process = limits::process_bytes();
    let memory = MemoryLimit::new(args.max_memory);
    check_limits(total, process, &memory, args.limit.max_events)?;
    let started = MonotonicClock::new().now();
    let progress = Progress::runs("simulating", strategies.len());
    let results = strategies
        .iter()
        .zip(&estimates)
        .map(|(s, e)| {
            let row = workload
                .run_within(&overrides, s, args.seed, stop_after(e))
                .map_err(|err| run_error(err, e));
            progress.run_done();
            row
        })
        .collect::<Result<Vec<_>, _>>()?;
    progress.finish();
    if args.stats {
        let plots = if plotting {
            " (and as many again for the plot)"
        } else {
            ""
        };
        let estimated = estimates.iter().map(|e| e.events).sum::<u64>();
        print_stats(args, (estimated, plots), total, process, &results, started);
    }
    let (title, x, y, caption) = match workload {
        WorkloadKind::Herd => (
            "herd: retries per 10 ms",
            "time (s)",
            "retries",
            captions::RETRIES,
        ),
        WorkloadKind::Ramp => (
            "goodput per second",
            "time (s)",
            "successes/s",
            captions::RAMP,
        ),
        _ => (
            "goodput per second",
            "time (s)",
            "successes/s",
            captions::SPIKE,
        ),
    };
    let lines = if plotting {
        Some(plot_lines(
            workload,
            &overrides,
            &strategies,
            &estimates,
            args.seed,
        )?)
    } else {
        None
    };
    if let (Some(path), Some(lines)) = (&args.plot, &lines) {
        crate::plot::chart(path, title, x, y, lines)?;
    }
    if let Some(path) = &args.html {
        let mut table = Vec::new();
        crate::results::write_table(&mut table, workload.name(), args.seed, &results)?;
        // The command as typed, less the page's own path.
        let mut command = Vec::new();
        let mut typed = std::env::args().skip(1);
        while let Some(arg) = typed.next() {
            if arg == "--html" {
                typed.next();
            } else if !arg.starts_with("--html=") {
                command.push(arg);
            }
        }
        let mut markdown = format!(
            "# `stagger simulate`\n\n`stagger {}`\n\n{}",
            command.join(" "),
            String::from_utf8_lossy(&table)
        );
        let mut plots = Vec::new();
        if let Some(lines) = &lines {
            markdown.push_str(&format!("\n![{title}](plot.svg)\n"));
            plots.push(Figure {
                name: "plot.svg",
                svg: crate::plot::chart_svg(title, x, y, lines)?,
                caption,
            });
        }
        std::fs::write(
            path,
            crate::html::page("stagger simulate", &markdown, &plots),
        )?;
    }
    write_results(out, args.format, workload.name(), args.seed, &results)
}

/// The results in `format`: one JSON document, CSV, or the table.
fn write_results(
    out: &mut dyn Write,
    format: Format,
    workload: &str,
    seed: u64,
    results: &[ResultRow],
) -> Result<(), CommandError> {
    match format {
        Format::Json => {
            let doc = Document {
                workload,
                seed,
                results,
            };
            serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Csv => crate::results::write_csv(out, workload, results)?,
        Format::Table => crate::results::write_table(out, workload, seed, results)?,
    }
    Ok(())
}

/// Runs a scenario file on its model, within the same limits as a workload run. On the composed
/// model a plot (`--plot`, and the page's) shows what the herd's or the spike's does: a fixed
/// fleet's retries per 10 ms over the first 30 s, or the goodput per second of open or serial
/// clients, each from a run of its own.
fn run_scenario(
    args: &Args,
    path: &std::path::Path,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    let ready = crate::scenario::read(path)?;
    let estimate = ready
        .model
        .estimate(&ready.strategy)
        .map_err(|e| CommandError::Usage(format!("{}: {e}", path.display())))?;
    let plotted = match &ready.model {
        crate::scenario::Model::Composed(model, layers) => Some((model, layers)),
        other if args.plot.is_some() => {
            return Err(CommandError::Usage(format!(
                "invalid --plot: a scenario on the {} model has no plot (the composed model's \
                 have one)",
                other.name()
            )));
        }
        _ => None,
    }
    .filter(|_| args.plot.is_some() || args.html.is_some());
    let total = if plotted.is_some() {
        estimate.then(estimate)
    } else {
        estimate
    };
    let process = limits::process_bytes();
    check_limits(
        total,
        process,
        &MemoryLimit::new(args.max_memory),
        args.limit.max_events,
    )?;
    let started = MonotonicClock::new().now();
    let row = ready
        .model
        .run_within(&ready.strategy, ready.seed, stop_after(&estimate))
        .map_err(|err| run_error(err, &estimate))?;
    let results = [row];
    if args.stats {
        let plots = if plotted.is_some() {
            " (and as many again for the plot)"
        } else {
            ""
        };
        print_stats(
            args,
            (estimate.events, plots),
            total,
            process,
            &results,
            started,
        );
    }
    let chart = match plotted {
        Some((model, layers)) => Some(
            scenario_plot(
                model,
                layers,
                &ready.strategy,
                ready.seed,
                stop_after(&estimate),
            )
            .map_err(|err| run_error(err, &estimate))?,
        ),
        None => None,
    };
    if let (Some(path), Some((title, x, y, lines))) = (&args.plot, &chart) {
        crate::plot::chart(path, title, x, y, lines)?;
    }
    let name = ready.model.name();
    if let Some(html) = &args.html {
        let mut table = Vec::new();
        crate::results::write_table(&mut table, name, ready.seed, &results)?;
        let mut markdown = format!(
            "# `stagger simulate`\n\n`stagger simulate --scenario {}`: the {name} model\n\n{}",
            path.display(),
            String::from_utf8_lossy(&table)
        );
        let mut plots = Vec::new();
        if let Some((title, x, y, lines)) = &chart {
            markdown.push_str(&format!("\n![{title}](plot.svg)\n"));
            // A fixed fleet's plot counts its retries; open or serial clients', their goodput.
            let caption = if *y == "retries" {
                captions::RETRIES
            } else {
                captions::GOODPUT
            };
            plots.push(Figure {
                name: "plot.svg",
                svg: crate::plot::chart_svg(title, x, y, lines)?,
                caption,
            });
        }
        std::fs::write(
            html,
            crate::html::page("stagger simulate", &markdown, &plots),
        )?;
    }
    write_results(out, args.format, name, ready.seed, &results)
}

/// A scenario's plot on the composed model: its title, axes and line.
fn scenario_plot(
    model: &stagger_sim::model::Composed,
    layers: &[stagger_sim::model::Layer],
    strategy: &Strategy,
    seed: u64,
    within: u64,
) -> Result<(&'static str, &'static str, &'static str, crate::plot::Lines), SimError> {
    let label = match strategy.budget {
        Some(b) => format!("{} + {b}", strategy.name()),
        None => strategy.name(),
    };
    if matches!(model.clients, stagger_sim::model::Clients::Fixed { .. }) {
        let counts = model.retry_histogram(
            strategy,
            &RunOptions::seed(seed).layers(layers),
            Duration::from_millis(10),
            Duration::from_secs(30),
        )?;
        let points = counts
            .into_iter()
            .enumerate()
            .map(|(i, c)| (i as f64 * 0.01, c as f64))
            .collect();
        return Ok((
            "retries per 10 ms",
            "time (s)",
            "retries",
            vec![(label, points)],
        ));
    }
    let per_second = model.per_second(
        strategy,
        &RunOptions::seed(seed).max_events(within).layers(layers),
    )?;
    let offered = per_second
        .offered
        .iter()
        .enumerate()
        .map(|(i, &r)| (i as f64, r))
        .collect();
    Ok((
        "goodput per second",
        "time (s)",
        "requests/s",
        vec![
            (format!("{label}: successes"), series(per_second.goodput)),
            ("offered".to_owned(), offered),
        ],
    ))
}

/// Prints `--stats` on stderr: the estimate (its events, and what it adds to them), the events
/// the runs processed since `started`, their rate, the peak memory and the limits.
fn print_stats(
    args: &Args,
    (estimated, plots): (u64, &str),
    total: Estimate,
    process: u64,
    results: &[ResultRow],
    started: Timestamp,
) {
    let seconds = MonotonicClock::new()
        .now()
        .saturating_duration_since(started)
        .as_secs_f64();
    let events: u64 = results.iter().map(|r| r.events).sum();
    let peak = limits::peak_resident_bytes()
        .map_or_else(|| "unknown".to_owned(), |b| Bytes(b).to_string());
    eprintln!(
        "estimated: {estimated} events{plots}, {} of memory (the run's data {}, the process {}); \
         measured: {events} events in {seconds:.3} s ({:.0} events/s), peak memory {peak}; \
         limits: {}, --max-events {}",
        Bytes(total.bytes.saturating_add(process)),
        Bytes(total.bytes),
        Bytes(process),
        events as f64 / seconds.max(1e-9),
        MemoryLimit::new(args.max_memory),
        Count(args.limit.max_events),
    );
}

/// The plot's lines: one per strategy.
fn plot_lines(
    workload: WorkloadKind,
    overrides: &Overrides,
    strategies: &[Strategy],
    estimates: &[Estimate],
    seed: u64,
) -> Result<crate::plot::Lines, CommandError> {
    use stagger_sim::Workload;
    use stagger_sim::workload::herd::Herd;
    use stagger_sim::workload::spike::{Ramp, Spike};
    let progress = Progress::runs("plotting", strategies.len());
    let mut lines = Vec::new();
    for (s, e) in strategies.iter().zip(estimates) {
        let label = match s.budget {
            Some(b) => format!("{} + {b}", s.policy.name()),
            None => s.policy.name(),
        };
        let within = stop_after(e);
        let points: Result<Vec<(f64, f64)>, SimError> = match workload {
            // The herd stops at its own limits, which its run has just passed.
            WorkloadKind::Herd => Herd::configured(overrides).and_then(|herd| {
                Ok(herd
                    .retry_histogram(s, seed, Duration::from_millis(10), Duration::from_secs(30))?
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| (i as f64 * 0.01, c as f64))
                    .collect())
            }),
            WorkloadKind::Spike => Spike::configured(overrides)
                .and_then(|w| w.simulate_within(s, seed, within))
                .map(|t| series(t.goodput)),
            WorkloadKind::Ramp => Ramp::configured(overrides)
                .and_then(|w| w.simulate_within(s, seed, within))
                .map(|t| series(t.goodput)),
            _ => Err(SimError::Invalid {
                param: "plot",
                allowed: "used with herd, spike or ramp (stagger bench plots the others)",
            }),
        };
        lines.push((label, points.map_err(|err| run_error(err, e))?));
        progress.run_done();
    }
    progress.finish();
    Ok(lines)
}

fn series(values: Vec<u64>) -> Vec<(f64, f64)> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i as f64, v as f64))
        .collect()
}

/// Each strategy's estimate, and the whole command's: the runs one after the other (and,
/// with a plot, each run again for it).
fn estimate(
    workload: WorkloadKind,
    overrides: &Overrides,
    strategies: &[Strategy],
    plotting: bool,
) -> Result<(Vec<Estimate>, Estimate), CommandError> {
    let estimates = strategies
        .iter()
        .map(|s| workload.estimate(overrides, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(sim_error)?;
    let total = estimates.iter().fold(Estimate::default(), |sum, e| {
        let sum = sum.then(*e);
        if plotting { sum.then(*e) } else { sum }
    });
    Ok((estimates, total))
}

/// Refuses, with one line, a command whose estimate passes a limit.
fn check_limits(
    total: Estimate,
    process: u64,
    memory: &MemoryLimit,
    max_events: u64,
) -> Result<(), CommandError> {
    let needed = total.bytes.saturating_add(process);
    if let Some(limit) = memory.bytes
        && needed > limit
    {
        return Err(CommandError::Usage(format!(
            "the run would need about {} of memory ({} estimated for its data, {} for the \
             process), more than {memory}: use fewer clients, a lower rate or a shorter \
             duration, or raise --max-memory",
            Bytes(needed),
            Bytes(total.bytes),
            Bytes(process),
        )));
    }
    if total.events > max_events {
        return Err(CommandError::Usage(format!(
            "the run would process about {} events (estimated), more than --max-events {}: \
             use fewer clients, a lower rate or a shorter duration, or raise --max-events",
            Count(total.events),
            Count(max_events),
        )));
    }
    Ok(())
}

/// The events after which a run is stopped: twice its estimate, so that no run takes much
/// longer than it was estimated to (a small run gets some room for chance).
pub(crate) fn stop_after(estimate: &Estimate) -> u64 {
    estimate.events.saturating_mul(2).saturating_add(STOP_ROOM)
}

/// The events any run may process past twice its estimate.
const STOP_ROOM: u64 = 10_000;

/// A failure of a run: its parameters', or the stop at [`stop_after`].
fn run_error(err: SimError, estimate: &Estimate) -> CommandError {
    match err {
        SimError::EventLimit { limit } => CommandError::Usage(format!(
            "the run was stopped after {} events, twice its estimate of {}: this strategy does \
             more than the estimate models (a budget that refuses first attempts, on serial \
             clients, starts a new request at once)",
            Count(limit),
            Count(estimate.events),
        )),
        other => sim_error(other),
    }
}

/// A `--retry-after-form` value.
fn retry_after_form(text: &str) -> Result<RetryAfterForm, String> {
    text.parse().map_err(|_: SimError| {
        let names = RetryAfterForm::ALL.map(RetryAfterForm::name);
        flags::unknown_name("form", text, &[("forms", &names)])
    })
}

/// A `--budget-partition` value.
fn budget_partition(text: &str) -> Result<BudgetPartition, String> {
    text.parse().map_err(|_: SimError| {
        let names = BudgetPartition::ALL.map(BudgetPartition::name);
        flags::unknown_name("mode", text, &[("modes", &names)])
    })
}

/// A `--dispersal` value.
fn dispersal(text: &str) -> Result<Dispersal, String> {
    Dispersal::ALL
        .into_iter()
        .find(|d| d.name() == text)
        .ok_or_else(|| {
            let names = Dispersal::ALL.map(Dispersal::name);
            flags::unknown_name("rule", text, &[("rules", &names)])
        })
}

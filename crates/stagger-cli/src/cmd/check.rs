//! `stagger check`: what a retry configuration commits its user to, read from the file and
//! measured in the simulator, with plain warnings and the fix for each.
//!
//! Every figure is either the configuration's own arithmetic (attempts through layers, the
//! retry window's bounds) or a simulator run of the configuration as the executors run it.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use serde::Serialize;
use stagger_core::budget::{AnyBudgetConfig, BudgetKind};
use stagger_core::config::RetrySpec;
use stagger_core::config::grpc::ServiceConfig;
use stagger_core::duration::human;
use stagger_core::engine::{Hedging, Nested, Settings};
use stagger_core::{AnyConfig, Param, PolicyConfig, PolicyKind};
use stagger_sim::model::{self, Composed, RunOptions};
use stagger_sim::scoreboard::{RECOVERED, THROTTLE_SEEDS};
use stagger_sim::workload::herd::Herd;
use stagger_sim::workload::open_loop::OpenLoop;
use stagger_sim::workload::outage::Outage;
use stagger_sim::workload::spike::{self, Spike};
use stagger_sim::workload::throttle::Throttle;
use stagger_sim::{Estimate, ResultRow, SimError, SimPolicy, Strategy, Workload};

use super::simulate::stop_after;
use crate::flags::{self, Failure};
use crate::limits::{self, Bytes, Count, MemoryLimit};
use crate::progress::Progress;

/// What a gRPC report says of how the import reads the file.
fn grpc_limit() -> String {
    let most = stagger_core::limits::GRPC_MAX_ATTEMPTS;
    format!("a maxAttempts above {most} is read as {most}, as gRFC A6 has clients do")
}

/// The delays the text lists; the JSON lists up to a hundred.
const SHOWN_DELAYS: usize = 8;

// The longest `--outage` is the open-loop model's longest run; the most layers `--layers`
// takes, the simulator's most retry layers.
use stagger_sim::limits::{MAX_DURATION as MAX_OUTAGE, MAX_LAYERS};

/// Flags of `stagger check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A retry configuration (TOML or JSON, the keys the configuration loader reads) or a
    /// gRPC service config (JSON with `methodConfig`).
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
    /// The layers of retrying clients one request passes through (a service calling a service
    /// calling the dependency is 2 or more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_LAYERS)))]
    layers: u32,
    /// The requests a second the whole fleet sends the dependency.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1_000.0,
        allow_negative_numbers = true
    )]
    rate: f64,
    /// The client processes of the fleet; each holds its own budget.
    #[arg(long, value_name = "C", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=OpenLoop::MAX_CLIENTS))]
    clients: u64,
    /// How long the total outage of the dependency lasts.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = flags::duration, allow_hyphen_values = true)]
    outage: Duration,
    /// The world seed of the simulator runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    limit: limits::MaxEvents,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// One retry configuration to check: a file's, or one retry or hedging policy of a service
/// config, with every method config that has it.
#[derive(Clone, Debug)]
struct Subject {
    /// The file it comes from, as the command line names it.
    file: String,
    /// Where in a service config it comes from; `None` for a retry configuration file.
    grpc: Option<Grpc>,
    policy: AnyConfig,
    budget: Option<(BudgetKind, AnyBudgetConfig)>,
    settings: Settings,
    hedging: Option<Hedging>,
    /// Whether it paces its calls through a gate per destination.
    gated: bool,
    /// Settings the file sets that no run of the check models, each with what that means.
    unmodelled: Vec<String>,
    /// Which of the settings the report describes the file sets, rather than leaving them at
    /// stagger's defaults.
    set: Set,
}

/// The settings with a default that a report names only as the file sets them, or as the
/// default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Set {
    /// `nested`, if the file sets it.
    nested: Option<Nested>,
    /// Whether the file sets `server_wait_dispersal`.
    dispersal: bool,
    /// Whether the file sets `max_server_wait`.
    max_server_wait: bool,
}

/// Which policy of a service config a [`Subject`] is, and whose.
#[derive(Clone, Debug)]
struct Grpc {
    /// `"retry"` or `"hedging"`.
    policy: &'static str,
    /// The method configs that have it, each by its names, in the file's order.
    methods: Vec<String>,
}

/// The method configs a source line names before it counts the rest.
const SHOWN_METHODS: usize = 3;

impl Subject {
    /// Where it comes from, as a report's first line says: the file, and for a service
    /// config the policy and the method configs that have it (a few named, the rest counted).
    fn source(&self) -> String {
        let Some(grpc) = &self.grpc else {
            return self.file.clone();
        };
        let methods = match grpc.methods.as_slice() {
            [one] => one.clone(),
            all => {
                let mut shown: Vec<String> = all.iter().take(SHOWN_METHODS).cloned().collect();
                if all.len() > SHOWN_METHODS {
                    shown.push(format!("and {} more", all.len() - SHOWN_METHODS));
                }
                format!("{} method configs: {}", all.len(), shown.join("; "))
            }
        };
        format!("{}, the {} policy of {methods}", self.file, grpc.policy)
    }

    /// What decides its report, apart from where it comes from: two subjects of one file with
    /// the same key get the same report.
    ///
    /// The policy's and the budget's configurations hold floating-point parameters, so they
    /// have no `Hash`; their `Debug` form, derived, prints every field (floating-point ones
    /// exactly, as Rust prints them to read back), so equal keys are equal settings.
    fn verdict_key(&self) -> String {
        format!(
            "{:?}",
            (
                self.grpc.as_ref().map(|g| g.policy),
                self.policy,
                self.budget,
                self.settings,
                self.hedging,
                self.gated,
                &self.unmodelled,
                self.set,
            )
        )
    }
}

/// `subjects` with each that would get the same report as an earlier one
/// ([`Subject::verdict_key`]) merged into it: its method configs are named with the earlier
/// one's, and the reports keep the order in which each was first seen.
fn distinct(subjects: Vec<Subject>) -> Vec<Subject> {
    use std::collections::hash_map::{Entry, HashMap};
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut kept: Vec<Subject> = Vec::new();
    for subject in subjects {
        match first.entry(subject.verdict_key()) {
            Entry::Occupied(at) => {
                if let (Some(into), Some(from)) = (&mut kept[*at.get()].grpc, subject.grpc) {
                    into.methods.extend(from.methods);
                }
            }
            Entry::Vacant(at) => {
                at.insert(kept.len());
                kept.push(subject);
            }
        }
    }
    kept
}

/// What one configuration commits its user to.
#[derive(Debug, Serialize)]
struct Report {
    source: String,
    /// A service config's method configs that have this policy, each by its names, in the
    /// file's order; empty for a retry configuration file.
    method_configs: Vec<String>,
    policy: &'static str,
    max_attempts: u32,
    /// The delay before each retry: its band, in milliseconds.
    delays_ms: Vec<(f64, f64)>,
    /// The sum of the delays: the retry window's band, in milliseconds.
    window_ms: (f64, f64),
    deadline: Option<String>,
    budget: Option<String>,
    hedging: Option<String>,
    idempotent: bool,
    layers: Layers,
    outage: Option<OutageLoad>,
    throttle: Option<ThrottleFigure>,
    /// The world seed of the simulator runs.
    seed: u64,
    workloads: Vec<WorkloadRow>,
    /// The spike as the scoreboard runs it, beside the rows' own.
    spike_reference: SpikeReference,
    /// What the runs leave out of the configuration.
    notes: Vec<String>,
    warnings: Vec<Warning>,
}

/// Attempts per request through the layers.
#[derive(Debug, Serialize)]
struct Layers {
    layers: u32,
    /// When each layer retries on its own (other libraries, or `nested = "retry"`): the
    /// attempts multiply. `None` past `u64::MAX`.
    uncoordinated: Option<u64>,
    /// With stagger's default ownership of recovery (`nested = "single-attempt"`): only the
    /// outermost layer retries.
    owned: u64,
    /// What this configuration asks for inside another executor, if it sets `nested`;
    /// `None` when it leaves it at stagger's default (`single-attempt`).
    nested: Option<&'static str>,
    /// The same layers simulated in the total outage (every attempt failing), attempts per
    /// request reaching the dependency, with no budget and the configuration's deadline at
    /// every layer: `None` for one layer, a hedged configuration, or a stack too large to
    /// simulate within the check's limits.
    simulated: Option<SimulatedLayers>,
}

/// Attempts per request through the layers, measured on the simulator's composed model.
#[derive(Debug, Serialize)]
struct SimulatedLayers {
    /// Every layer retrying on its own (`nested = "retry"` in each inner layer).
    uncoordinated: f64,
    /// stagger's default in every inner layer (`nested = "single-attempt"`).
    owned: f64,
}

/// The load on a dependency that is down, measured.
#[derive(Debug, Serialize)]
struct OutageLoad {
    rate: f64,
    clients: u64,
    duration: String,
    /// Attempts per request without a budget.
    without_budget: f64,
    /// Attempts per request with the configuration's budget, one per client.
    with_budget: Option<f64>,
}

/// The 429 storm of the nginx trial, measured with this configuration.
#[derive(Debug, Serialize)]
struct ThrottleFigure {
    /// Mean requests served of 20, over the seeds.
    served: f64,
    seeds: u64,
    /// Retries sent before the server's time, over every seed.
    early_retries: u64,
    dispersal: &'static str,
    /// Whether `dispersal` is stagger's default, the file setting none.
    default_dispersal: bool,
    deadline: String,
    /// Whether the deadline is the configuration's own (or the trial's 3 s, if it sets none).
    own_deadline: bool,
    max_server_wait: String,
    /// Whether `max_server_wait` is stagger's default, the file setting none.
    default_max_server_wait: bool,
}

/// One strategy on the canonical workloads.
#[derive(Debug, Serialize)]
struct WorkloadRow {
    label: String,
    /// The policy's parameters, as a configuration file writes them.
    parameters: String,
    /// The herd's largest share of all retries in one 10 ms window.
    herd_peak_share: f64,
    /// The share of the outage's requests that succeeded.
    outage_success: f64,
    /// The spike's tail goodput ratio (1 is healthy).
    spike_tail_goodput: Option<f64>,
}

/// The spike's "jittered backoff" as the scoreboard runs it, with other parameters than the
/// catalog's defaults, run here at the same seed as the rows: what the rows' spike verdicts
/// are to be read beside.
#[derive(Debug, Serialize)]
struct SpikeReference {
    /// The scoreboard's name for it.
    label: &'static str,
    policy: &'static str,
    /// Its parameters, as a configuration file writes them.
    parameters: String,
    /// Its tail goodput ratio at this seed.
    tail_goodput: Option<f64>,
    /// For each row of a jittered policy that stays collapsed where it recovers, why: its
    /// retry window against the scoreboard's.
    reasons: Vec<String>,
}

/// A plain warning and its fix.
#[derive(Debug, Serialize)]
struct Warning {
    what: String,
    fix: String,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), Failure> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(Failure::Usage(format!(
            "invalid --rate: must be a positive number of requests a second, got {}",
            args.rate
        )));
    }
    let requests = args.rate * args.outage.as_secs_f64();
    if requests < 1.0 {
        return Err(Failure::Usage(format!(
            "invalid --rate and --outage: {} requests a second for {} is less than one request",
            args.rate,
            human(args.outage)
        )));
    }
    let per_client = args.rate / args.clients as f64;
    if per_client > OpenLoop::MAX_RATE {
        return Err(Failure::Usage(format!(
            "invalid --rate: {per_client} requests a second per client (--rate over --clients) \
             is more than {}; raise --clients",
            OpenLoop::MAX_RATE
        )));
    }
    if args.outage > MAX_OUTAGE {
        return Err(Failure::Usage(format!(
            "invalid --outage: at most {}, got {}",
            human(MAX_OUTAGE),
            human(args.outage)
        )));
    }
    let subjects = distinct(read(&args.config)?);
    // Every run of the check is planned and estimated, and the whole admitted, before any
    // starts.
    let mut defaults = Defaults::new();
    let mut plans = subjects
        .iter()
        .map(|s| Plan::new(s, args, &mut defaults))
        .collect::<Result<Vec<_>, _>>()?;
    admit(&subjects, &mut plans, args)?;
    let progress = Progress::runs("checking", plans.iter().map(Plan::runs).sum());
    let reports = subjects
        .iter()
        .zip(plans)
        .map(|(s, plan)| report(s, plan, args, &progress))
        .collect::<Result<Vec<_>, _>>()?;
    progress.finish();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &reports).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Text => {
            for (i, r) in reports.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                out.write_all(text(r).as_bytes())?;
            }
        }
    }
    Ok(())
}

/// Reads `path` into the configurations it holds: one for a retry configuration, one per
/// retried or hedged method config for a gRPC service config.
fn read(path: &std::path::Path) -> Result<Vec<Subject>, Failure> {
    use crate::flags::FileFormat;
    let shown = path.display();
    let (text, format) = crate::flags::read_config_file(path).map_err(Failure::Usage)?;
    let bad =
        |what: &str, e: &dyn std::fmt::Display| Failure::Usage(format!("{shown}: {what}: {e}"));
    match format {
        FileFormat::Toml => {
            let spec: RetrySpec = toml::from_str(&text)
                .map_err(|e| Failure::toml(format!("{shown}: not a retry configuration"), &e))?;
            from_spec(&spec, shown.to_string()).map(|s| vec![s])
        }
        FileFormat::Json => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| bad("not JSON", &e))?;
            let grpc = value.as_object().is_some_and(|o| {
                o.keys().any(|k| {
                    let k = k.to_ascii_lowercase();
                    k == "methodconfig" || k == "method_config"
                })
            });
            if grpc {
                let config: ServiceConfig = serde_json::from_value(value)
                    .map_err(|e| bad("not a gRPC service config", &e))?;
                from_service_config(&config, &shown.to_string())
            } else {
                let spec: RetrySpec = serde_json::from_value(value)
                    .map_err(|e| bad("not a retry configuration", &e))?;
                from_spec(&spec, shown.to_string()).map(|s| vec![s])
            }
        }
    }
}

fn from_spec(spec: &RetrySpec, file: String) -> Result<Subject, Failure> {
    // The file's own words: `max_attempts`, not the CLI's `--max-attempts`.
    let bad = |e: stagger_core::ConfigError| Failure::Usage(format!("{file}: {e}"));
    let settings = spec.to_settings().map_err(bad)?;
    let mut unmodelled = Vec::new();
    if settings.timeout().is_some() {
        unmodelled.push(
            "the deadline is applied to the outage, the total outage and the 429 storm; the herd \
             models none, so its figures are what the retries do before it"
                .to_owned(),
        );
    }
    if spec.attempt_timeout.is_some() {
        unmodelled.push(
            "the attempt timeout is applied to the total outage and the spike only (the herd, \
             the outage and the 429 storm run their workloads' own clients)"
                .to_owned(),
        );
    }
    if spec.max_server_wait.is_some() {
        unmodelled.push(
            "max_server_wait is not modelled in the 429 storm, whose server asks for 1 s"
                .to_owned(),
        );
    }
    if spec.budget_per_destination.is_some() {
        unmodelled.push(
            "budget_per_destination: every run here has one destination, so it is one budget per \
             client"
                .to_owned(),
        );
    }
    Ok(Subject {
        policy: spec.to_config().map_err(bad)?,
        budget: spec.budget.map(|b| (b.kind(), b.to_config())),
        settings,
        hedging: spec.to_hedging().map_err(bad)?,
        gated: spec.gate.is_some(),
        unmodelled,
        set: Set {
            nested: spec.nested,
            dispersal: spec.server_wait_dispersal.is_some(),
            max_server_wait: spec.max_server_wait.is_some(),
        },
        file,
        grpc: None,
    })
}

fn from_service_config(config: &ServiceConfig, shown: &str) -> Result<Vec<Subject>, Failure> {
    let grpc =
        |e: stagger_core::config::grpc::GrpcConfigError| Failure::Usage(format!("{shown}: {e}"));
    let throttling = config.throttling().map_err(grpc)?;
    let budget = throttling.map(|t| (BudgetKind::GrpcThrottle, AnyBudgetConfig::GrpcThrottle(t)));
    let names = |names: &[stagger_core::config::grpc::MethodName]| {
        names
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A method config's timeout is the deadline of the whole call, retries and hedges
    // included (A6). The first method config with the names gives it, looked up by them once
    // per method config.
    let mut timeouts = std::collections::HashMap::new();
    for (named, timeout) in config.method_timeouts().map_err(grpc)? {
        timeouts.entry(named).or_insert(timeout);
    }
    let settings_of = |names_of: &[stagger_core::config::grpc::MethodName]| {
        timeouts
            .get(names_of)
            .map_or_else(Settings::new, |t| Settings::new().with_timeout(*t))
    };
    let of = |policy: &'static str, names_of: &[stagger_core::config::grpc::MethodName]| {
        Some(Grpc {
            policy,
            methods: vec![names(names_of)],
        })
    };
    // The status codes a policy retries on take no part in the check: method configs that
    // differ only in them get one report ([`distinct`]).
    let mut subjects = Vec::new();
    for (names_of, policy, _codes) in config.retry_policies().map_err(grpc)? {
        subjects.push(Subject {
            file: shown.to_owned(),
            grpc: of("retry", &names_of),
            policy,
            budget,
            settings: settings_of(&names_of),
            hedging: None,
            gated: false,
            unmodelled: vec![grpc_limit()],
            set: Set::default(),
        });
    }
    for (names_of, hedging, _codes) in config.hedging_policies().map_err(grpc)? {
        subjects.push(Subject {
            file: shown.to_owned(),
            grpc: of("hedging", &names_of),
            // A6's hedging has no backoff: the policy only counts the attempts.
            policy: AnyConfig::from(
                stagger_core::policy::Immediate::new().with_max_attempts(hedging.max_attempts()),
            ),
            budget,
            settings: settings_of(&names_of),
            hedging: Some(hedging),
            gated: false,
            unmodelled: vec![grpc_limit()],
            set: Set::default(),
        });
    }
    if subjects.is_empty() {
        return Err(Failure::Usage(format!(
            "{shown}: no method config has a retryPolicy or a hedgingPolicy: nothing is retried"
        )));
    }
    Ok(subjects)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The deadline the runs simulate: the configuration's, or a day if it is longer (the
/// simulator's limit, which no run of the check comes near; a note says so).
fn simulated_deadline(settings: &Settings) -> Option<Duration> {
    settings.timeout().map(|t| t.min(MAX_OUTAGE))
}

/// The note for a deadline longer than the simulator takes.
fn long_deadline_note(settings: &Settings) -> Option<String> {
    settings.timeout().filter(|t| *t > MAX_OUTAGE).map(|t| {
        format!(
            "the deadline of {} is simulated as {}, the simulator's longest",
            human(t),
            human(MAX_OUTAGE)
        )
    })
}

fn sim(err: SimError) -> Failure {
    Failure::Usage(format!("the simulator refuses the check's runs: {err}"))
}

/// One simulator run of the check: what it is estimated to cost, and the run itself, made
/// only once the whole check is admitted ([`admit`]).
struct Run {
    estimate: Estimate,
    /// Makes the run, given the events past which it stops.
    go: Box<dyn FnOnce(u64) -> Result<ResultRow, SimError>>,
}

impl Run {
    /// A run of `workload` for `strategy`, with its estimate, or with `known` if the same
    /// workload and strategy have been estimated already (the estimate takes no seed).
    fn of<W: Workload + 'static>(
        workload: W,
        strategy: Strategy,
        seed: u64,
        known: Option<Estimate>,
    ) -> Result<Self, Failure> {
        workload.validate().map_err(sim)?;
        Ok(Self {
            estimate: known.unwrap_or_else(|| workload.estimate(&strategy)),
            go: Box::new(move |max| workload.run_within(&strategy, seed, max)),
        })
    }

    /// A run of the composed model, with `layers` inside `strategy`'s.
    fn composed(
        model: Composed,
        strategy: Strategy,
        layers: Vec<model::Layer>,
        seed: u64,
    ) -> Result<Self, Failure> {
        model.validate().map_err(sim)?;
        Ok(Self {
            estimate: model.estimate(&strategy, &layers),
            go: Box::new(move |max| {
                model.run(
                    &strategy,
                    &RunOptions::seed(seed).max_events(max).layers(&layers),
                )
            }),
        })
    }

    /// Makes the run, stopped past twice its estimate, and counts it in `progress`.
    fn run(self, progress: &Progress) -> Result<ResultRow, Failure> {
        let row = (self.go)(stop_after(&self.estimate)).map_err(sim)?;
        progress.run_done();
        Ok(row)
    }
}

/// Every simulator run of one configuration's report, built and estimated before any runs.
struct Plan {
    /// The stack of `--layers` in the total outage, with stagger's default and with every
    /// layer retrying: `None` for one layer or a hedged configuration, or once [`admit`]
    /// leaves it out.
    stack: Option<(Run, Run)>,
    /// The total outage without a budget.
    without_budget: Run,
    /// The total outage with the configuration's budget, if it has one.
    with_budget: Option<Run>,
    /// The 429 storm as the configuration meets it, and its runs, one per seed.
    throttle: Throttle,
    throttle_runs: Vec<Run>,
    /// Each row of the canonical workloads: its label and its policy, then its herd, outage
    /// and spike runs.
    workloads: Vec<(String, AnyConfig, [Run; 3])>,
    /// The spike with the scoreboard's jittered backoff, at the same seed.
    spike_reference: Run,
}

/// The estimates of the canonical workloads' runs of a policy at the catalog's defaults, the
/// same for every configuration that has it beside its own.
type Defaults = std::collections::HashMap<PolicyKind, [Estimate; 3]>;

impl Plan {
    /// `defaults` keeps the estimates of the rows at the catalog's defaults, for the next
    /// configuration's plan.
    fn new(subject: &Subject, args: &Args, defaults: &mut Defaults) -> Result<Self, Failure> {
        let strategy = strategy_of(subject)?;
        let unbudgeted = strategy.with_budget(None);
        let seed = args.seed;
        // The total outage: open sources, every attempt failing, with the configuration's
        // deadline and dispersal (each layer of a stack has them too).
        let mut total = OpenLoop {
            clients: args.clients,
            rate: args.rate / args.clients as f64,
            duration: args.outage,
            failure_rate: 1.0,
            ..OpenLoop::default()
        }
        .composed();
        // The simulator takes deadlines up to a day: a longer one is a day there, which no
        // run of the check comes near.
        total.deadline = simulated_deadline(&subject.settings);
        total.attempt_timeout = subject.settings.attempt_timeout();
        total.dispersal = subject.settings.dispersal();
        // The stack simulated: the configuration at every layer, in a total outage, no
        // budget.
        let stack = if subject.hedging.is_some() || args.layers < 2 {
            None
        } else {
            let layers = |nested: Nested| {
                vec![
                    model::Layer {
                        policy: unbudgeted.policy,
                        settings: subject.settings.with_nested(nested),
                    };
                    args.layers as usize - 1
                ]
            };
            Some((
                Run::composed(total, unbudgeted, layers(Nested::SingleAttempt), seed)?,
                Run::composed(total, unbudgeted, layers(Nested::Retry), seed)?,
            ))
        };

        let hedged = strategy.with_hedging(subject.hedging);
        let without_budget = Run::composed(
            total,
            unbudgeted.with_hedging(subject.hedging),
            Vec::new(),
            seed,
        )?;
        let with_budget = match subject.budget {
            Some(_) => Some(Run::composed(total, hedged, Vec::new(), seed)?),
            None => None,
        };

        let trial = Throttle::default();
        let throttle = Throttle {
            dispersal: subject.settings.dispersal(),
            timeout: simulated_deadline(&subject.settings).unwrap_or(trial.timeout),
            gate: subject.gated,
            ..trial
        };
        let mut throttle_runs = vec![Run::of(throttle, hedged, seed, None)?];
        let once = throttle_runs[0].estimate;
        for i in 1..THROTTLE_SEEDS {
            throttle_runs.push(Run::of(throttle, hedged, seed.wrapping_add(i), Some(once))?);
        }

        // The configuration with its deadline (on the outage) and its attempt timeout (on the
        // spike), and its hedging on all three; the catalog's defaults as their pages run
        // them.
        let policy = subject.policy;
        let mut workloads = vec![(
            "this configuration".to_owned(),
            policy,
            canonical(hedged, Some(&subject.settings), seed, None)?,
        )];
        let mut beside = Vec::new();
        if AnyConfig::from(policy.kind()) != policy || subject.budget.is_some() {
            beside.push(policy.kind());
        }
        if policy.kind() != PolicyKind::ExponentialFullJitter {
            beside.push(PolicyKind::ExponentialFullJitter);
        }
        for kind in beside {
            let runs = canonical(
                Strategy::policy(AnyConfig::from(kind)),
                None,
                seed,
                defaults.get(&kind).copied(),
            )?;
            defaults.insert(kind, runs.each_ref().map(|r| r.estimate));
            workloads.push((
                format!("{kind} at its defaults"),
                AnyConfig::from(kind),
                runs,
            ));
        }
        Ok(Self {
            stack,
            without_budget,
            with_budget,
            throttle,
            throttle_runs,
            workloads,
            spike_reference: Run::of(Spike::default(), spike::jittered_backoff(), seed, None)?,
        })
    }

    /// The runs it makes, as admitted: every report's, and the stack if it is kept.
    fn runs(&self) -> usize {
        self.required().count() + if self.stack.is_some() { 2 } else { 0 }
    }

    /// The runs every report makes: all but the stack.
    fn required(&self) -> impl Iterator<Item = &Run> {
        std::iter::once(&self.without_budget)
            .chain(&self.with_budget)
            .chain(&self.throttle_runs)
            .chain(self.workloads.iter().flat_map(|(_, _, runs)| runs))
            .chain(std::iter::once(&self.spike_reference))
    }

    /// What the runs every report makes cost, one after another.
    fn estimate(&self) -> Estimate {
        self.required()
            .fold(Estimate::default(), |sum, run| sum.then(run.estimate))
    }

    /// What the stack's runs cost, if it has one.
    fn stack_estimate(&self) -> Option<Estimate> {
        self.stack
            .as_ref()
            .map(|(owned, every)| owned.estimate.then(every.estimate))
    }
}

/// The canonical workloads' runs of `strategy`: the herd, the outage (with `own`'s deadline)
/// and the spike (with its attempt timeout), estimated, or with the `known` estimates of the
/// same runs.
fn canonical(
    strategy: Strategy,
    own: Option<&Settings>,
    seed: u64,
    known: Option<[Estimate; 3]>,
) -> Result<[Run; 3], Failure> {
    let outage = Outage {
        timeout: own.and_then(simulated_deadline),
        ..Outage::default()
    };
    let mut spike = Spike::default();
    if let Some(t) = own.and_then(Settings::attempt_timeout) {
        spike.server.timeout = t;
    }
    let [herd_e, outage_e, spike_e] = known.map_or([None; 3], |k| k.map(Some));
    Ok([
        Run::of(Herd::default(), strategy, seed, herd_e)?,
        Run::of(outage, strategy, seed, outage_e)?,
        Run::of(spike, strategy, seed, spike_e)?,
    ])
}

/// Admits the check as a whole, before any run starts: refuses it if the runs of every
/// report, added up over the distinct configurations, are estimated to process more than
/// `--max-events`, or if one of them would need more memory than the machine's limit; then
/// keeps each configuration's simulated stack of `--layers`, in order, while it fits in the
/// events left, and leaves out the rest.
fn admit(subjects: &[Subject], plans: &mut [Plan], args: &Args) -> Result<(), Failure> {
    let total = plans
        .iter()
        .fold(Estimate::default(), |sum, plan| sum.then(plan.estimate()));
    if total.events > args.limit.max_events {
        let whole = format!(
            "would simulate about {} events (estimated), more than --max-events {}",
            Count(total.events),
            Count(args.limit.max_events)
        );
        let raise = format!("or raise --max-events to {}", total.events);
        return Err(Failure::Usage(match subjects {
            [one] => format!(
                "checking this configuration {whole}: it makes {} attempts a request; use \
                 fewer max_attempts, or a lower --rate, fewer --clients or a shorter --outage, \
                 {raise}",
                subject_attempts(one)
            ),
            all => {
                let methods: usize = all
                    .iter()
                    .map(|s| s.grpc.as_ref().map_or(1, |g| g.methods.len()))
                    .sum();
                format!(
                    "checking {} distinct policies (of {methods} method configs) {whole}: check \
                     fewer at a time, or use a lower --rate, fewer --clients or a shorter \
                     --outage, {raise}",
                    all.len()
                )
            }
        }));
    }
    let limit = MemoryLimit::new(None).bytes;
    let process = limits::process_bytes();
    let memory_over = |e: Estimate| limit.is_some_and(|l| e.bytes.saturating_add(process) > l);
    if memory_over(total) {
        return Err(Failure::Usage(format!(
            "a run of the check would need about {} of memory, more than {}: a request is held \
             through its whole retry window, so use a shorter window (a lower base, cap or \
             max_attempts), a lower --rate, fewer --clients or a shorter --outage",
            Bytes(total.bytes.saturating_add(process)),
            Bytes(limit.unwrap_or(u64::MAX))
        )));
    }
    // A stack that multiplies its attempts beyond what is left is not simulated.
    let mut left = args.limit.max_events - total.events;
    for plan in plans {
        match plan.stack_estimate() {
            Some(stack) if stack.events <= left && !memory_over(stack) => left -= stack.events,
            _ => plan.stack = None,
        }
    }
    Ok(())
}

/// The attempts a request of `subject` makes at most: its hedges', if it hedges.
fn subject_attempts(subject: &Subject) -> u32 {
    subject
        .hedging
        .map_or_else(|| subject.policy.max_attempts(), |h| h.max_attempts())
}

fn report(
    subject: &Subject,
    plan: Plan,
    args: &Args,
    progress: &Progress,
) -> Result<Report, Failure> {
    let policy = subject.policy;
    let attempts = subject_attempts(subject);
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
        .collect::<Result<Vec<_>, Failure>>()?;
    let spike_reference = spike_reference(
        plan.spike_reference.run(progress)?.tail_goodput_ratio,
        &workloads,
        &configs,
    );

    let mut r = Report {
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
    };
    r.warnings = warnings(subject, &r, args);
    Ok(r)
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
fn jittered(policy: AnyConfig) -> bool {
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
fn recovers(tail_goodput: Option<f64>) -> bool {
    tail_goodput.is_some_and(|g| g >= RECOVERED)
}

/// The spike's verdict on a tail goodput ratio, as the scoreboard words it.
fn verdict(tail_goodput: f64) -> &'static str {
    if tail_goodput >= RECOVERED {
        "recovers"
    } else {
        "stays collapsed"
    }
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

/// The simulator's strategy for the configuration: its policy and its budget, one per client.
fn strategy_of(subject: &Subject) -> Result<Strategy, Failure> {
    let s = Strategy::policy(subject.policy);
    match subject.budget {
        Some((kind, config)) => s.with_budget_config(kind, config).map_err(sim),
        None => Ok(s),
    }
}

fn warnings(subject: &Subject, r: &Report, args: &Args) -> Vec<Warning> {
    let mut w = Vec::new();
    let policy = subject.policy;
    let retries = r.max_attempts.saturating_sub(1);
    if subject.hedging.is_none() && !jittered(policy) && retries > 0 && args.clients > 1 {
        let peak = |label: &str| {
            r.workloads
                .iter()
                .find(|row| row.label.starts_with(label))
                .map(|row| row.herd_peak_share)
        };
        let figures = match (peak("this configuration"), peak("exponential-full-jitter")) {
            (Some(mine), Some(jittered)) => format!(
                " On the herd (1000 clients failing at once) {:.1}% of all retries land in one 10 ms window, against {:.1}% with full jitter.",
                100.0 * mine,
                100.0 * jittered
            ),
            _ => String::new(),
        };
        w.push(Warning {
            what: format!(
                "The delays have no jitter: {} clients that fail together retry together.{figures}",
                args.clients
            ),
            fix: "policy = \"exponential-full-jitter\" (or another jittered policy)".to_owned(),
        });
    }
    if subject.settings.timeout().is_none() {
        let what = if subject.hedging.is_some() {
            format!(
                "No deadline: a call lasts as long as the slowest of its {} attempts takes to answer.",
                r.max_attempts
            )
        } else {
            format!(
                "No deadline: a call can take the whole retry window (up to {}) plus the time of each of its {} attempts.",
                human(Duration::from_secs_f64(r.window_ms.1 / 1e3)),
                r.max_attempts
            )
        };
        w.push(Warning {
            what,
            fix: "timeout = \"10s\" (one end-to-end deadline; every retry that would end past it is not sent)".to_owned(),
        });
    }
    if let Some(n) = cap_never_reached(policy, retries) {
        w.push(Warning {
            what: format!(
                "The cap is never reached: within {} attempts the longest delay is {}.",
                r.max_attempts,
                human(policy.bounds(n).max)
            ),
            fix: "lower cap to where the waits should stop growing, or raise max_attempts if the fleet should wait longer".to_owned(),
        });
    }
    if let Some(o) = &r.outage {
        match o.with_budget {
            None if r.max_attempts >= 3 => w.push(Warning {
                what: format!(
                    "No budget: during a total outage of {} every request makes all {} attempts, {:.2}x the load on a dependency that is down.",
                    o.duration, r.max_attempts, o.without_budget
                ),
                fix: "[budget] budget = \"aws-standard\" (or \"finagle\" for a share of the traffic)".to_owned(),
            }),
            Some(load) if load >= 3.0 => w.push(Warning {
                what: format!(
                    "The budget still allows {load:.2}x the load during a total outage of {} at {} requests a second from {}.",
                    o.duration, rate(o.rate), clients(o.clients)
                ),
                fix: "a smaller budget: a lower capacity, or a ratio budget (budget = \"finagle\")".to_owned(),
            }),
            _ => {}
        }
    }
    if args.layers > 1 && r.layers.uncoordinated != Some(r.layers.owned) {
        let worst = r
            .layers
            .uncoordinated
            .map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string());
        let what = if r.layers.nested == Some("retry") {
            format!(
                "Layers that multiply: this configuration sets nested = \"retry\", so each of the {} layers retries on its own: {worst} calls per request reach the dependency in the worst case.",
                args.layers
            )
        } else {
            let others = match args.layers - 1 {
                1 => "the other layer retries".to_owned(),
                n => format!("the other {n} layers retry"),
            };
            format!(
                "Layers that multiply: if {others} with other libraries, or with nested = \"retry\", {worst} calls per request reach the dependency in the worst case; with stagger's default ownership of recovery at every layer, {}.",
                r.layers.owned
            )
        };
        w.push(Warning {
            what,
            fix: "retry at one layer only: nested = \"single-attempt\" (the default) in every stagger layer inside another, and no retries in the layers stagger does not run".to_owned(),
        });
    }
    w
}

/// `nested` as a configuration file writes it.
fn nested_name(nested: Nested) -> &'static str {
    if nested == Nested::Retry {
        "retry"
    } else {
        "single-attempt"
    }
}

/// The last retry, if the policy has a cap that none of its `retries` delays reaches: the
/// same bounds with the cap lifted.
fn cap_never_reached(policy: AnyConfig, retries: u32) -> Option<u32> {
    let uncapped = policy.set(Param::Cap(Duration::MAX)).ok()?;
    if retries == 0 {
        return None;
    }
    let same = (1..=retries.min(1_000)).all(|n| policy.bounds(n) == uncapped.bounds(n));
    same.then_some(retries)
}

fn text(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", r.source);
    let policy = if r.hedging.is_some() {
        "none, hedged"
    } else {
        r.policy
    };
    let _ = writeln!(
        s,
        "  policy: {policy}, {} attempts in all{}",
        r.max_attempts,
        if r.idempotent {
            ""
        } else {
            "; not idempotent: an uncertain failure is never retried"
        }
    );
    if let Some(h) = &r.hedging {
        let _ = writeln!(s, "  hedging: {h}");
    }
    if !r.delays_ms.is_empty() && r.hedging.is_none() {
        let mut bands: Vec<String> = r
            .delays_ms
            .iter()
            .take(SHOWN_DELAYS)
            .map(|&(a, b)| band(a, b))
            .collect();
        let retries = r.max_attempts.saturating_sub(1) as usize;
        if retries > SHOWN_DELAYS {
            bands.push(format!("and {} more", retries - SHOWN_DELAYS));
        }
        let _ = writeln!(s, "  delays before each retry: {}", bands.join(", "));
        let _ = writeln!(
            s,
            "  retry window (the delays' sum): {}",
            band(r.window_ms.0, r.window_ms.1)
        );
    }
    let _ = writeln!(s, "  deadline: {}", r.deadline.as_deref().unwrap_or("none"));
    let _ = writeln!(s, "  budget: {}", r.budget.as_deref().unwrap_or("none"));

    let l = &r.layers;
    let _ = writeln!(
        s,
        "\nAttempts per request through {} layer{}:",
        l.layers,
        if l.layers == 1 { "" } else { "s" }
    );
    let worst = l
        .uncoordinated
        .map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string());
    if l.layers == 1 {
        let _ = writeln!(s, "  at most {}", l.owned);
    } else {
        let _ = writeln!(
            s,
            "  worst case, layers that do not coordinate (other libraries, or nested = \"retry\"): {} ^ {} = {worst}",
            l.owned, l.layers
        );
        let _ = writeln!(
            s,
            "  with stagger's default ownership of recovery (nested = \"single-attempt\"): {}",
            l.owned
        );
        if let Some(nested) = l.nested {
            let _ = writeln!(s, "  this configuration sets nested = \"{nested}\"");
        }
        if let Some(m) = &l.simulated {
            let _ = writeln!(
                s,
                "  simulated in the total outage below, no budget, the deadline at every layer: {:.2} attempts per request when every layer retries, {:.2} with stagger's default",
                m.uncoordinated, m.owned
            );
        }
    }

    if let Some(o) = &r.outage {
        let _ = writeln!(
            s,
            "\nA total outage of {}, {} requests a second from {} (simulated):",
            o.duration,
            rate(o.rate),
            clients(o.clients)
        );
        let _ = writeln!(
            s,
            "  without a budget: {:.2} attempts per request",
            o.without_budget
        );
        if let Some(with) = o.with_budget {
            let _ = writeln!(
                s,
                "  with its budget, one per client: {with:.2} attempts per request"
            );
        }
    }
    if let Some(t) = &r.throttle {
        let _ = writeln!(
            s,
            "\nA 429 storm (the trial against nginx's limit_req: 20 requests at once against 5 a second, Retry-After: 1, a 3 s deadline unless the configuration sets one), simulated:"
        );
        let default = |is: bool| if is { " (stagger's default)" } else { "" };
        let _ = writeln!(
            s,
            "  each 429's wait is a floor, spread above by {}{}; a wait past {}{} is not waited for",
            t.dispersal,
            default(t.default_dispersal),
            t.max_server_wait,
            default(t.default_max_server_wait)
        );
        let whose = if t.own_deadline {
            "its deadline"
        } else {
            "the trial's deadline (the configuration sets none)"
        };
        let _ = writeln!(
            s,
            "  served {:.1} of 20 within {whose}, {} (mean over {} seeds); {} retries before the server's time",
            t.served, t.deadline, t.seeds, t.early_retries
        );
    }
    if !r.workloads.is_empty() {
        let _ = writeln!(
            s,
            "\nOn the canonical workloads (simulated, world seed {}):",
            r.seed
        );
        let mut table = crate::render::Table::new([
            "",
            "herd peak share",
            "outage success",
            "spike tail goodput",
        ]);
        for row in &r.workloads {
            table.row([
                row.label.clone(),
                format!("{:.1}%", 100.0 * row.herd_peak_share),
                format!("{:.1}%", 100.0 * row.outage_success),
                row.spike_tail_goodput
                    .map_or_else(|| "-".to_owned(), |g| format!("{g:.3} ({})", verdict(g))),
            ]);
        }
        let mut bytes = Vec::new();
        let _ = table.write(&mut bytes);
        for line in String::from_utf8_lossy(&bytes).lines() {
            let _ = writeln!(s, "  {line}");
        }
        let defaults: Vec<String> = r
            .workloads
            .iter()
            .filter_map(|row| {
                let kind = row.label.strip_suffix(" at its defaults")?;
                Some(format!("{kind} has {}", row.parameters))
            })
            .collect();
        if !defaults.is_empty() {
            let _ = writeln!(s, "  At the catalog's defaults, {}.", defaults.join("; "));
        }
        let reference = &r.spike_reference;
        let measured = reference.tail_goodput.map_or_else(
            || "no figure".to_owned(),
            |g| format!("{g:.3} ({})", verdict(g)),
        );
        let _ = writeln!(
            s,
            "  Each spike figure is one run, with its row's own parameters. The scoreboard's spike runs its {} with other parameters, {} with {}; run here, it gets {measured}.",
            reference.label, reference.policy, reference.parameters
        );
        for reason in &reference.reasons {
            let _ = writeln!(s, "  {reason}.");
        }
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\nNot simulated as configured:");
        for n in &r.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    if r.warnings.is_empty() {
        let _ = writeln!(s, "\nNo warnings.");
    } else {
        let _ = writeln!(s, "\nWarnings:");
        for w in &r.warnings {
            let _ = writeln!(s, "  - {}\n    Fix: {}", w.what, w.fix);
        }
    }
    s
}

/// A rate as people write one: `1000`, `0.5`, `12.25`, with no digits it does not have.
fn rate(r: f64) -> String {
    // `Display` writes the shortest decimal that reads back as the same number, and never
    // an exponent.
    r.to_string()
}

/// `1 client`, `100 clients`.
fn clients(n: u64) -> String {
    if n == 1 {
        "1 client".to_owned()
    } else {
        format!("{n} clients")
    }
}

/// A band of milliseconds in a reader's units: "100 ms" or "0 ms to 2 s".
fn band(min_ms: f64, max_ms: f64) -> String {
    let d = |v: f64| human(Duration::from_secs_f64((v / 1e3).clamp(0.0, 1e12)));
    if (max_ms - min_ms).abs() < 1e-9 {
        d(min_ms)
    } else {
        format!("{} to {}", d(min_ms), d(max_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_beyond_every_delay_is_never_reached_and_a_cap_that_binds_is() {
        use stagger_core::policy::Exponential;
        let far = AnyConfig::from(
            Exponential::new()
                .with_base(Duration::from_millis(100))
                .with_cap(Duration::from_secs(60))
                .with_max_attempts(4),
        );
        assert_eq!(cap_never_reached(far, 3), Some(3));
        let near = AnyConfig::from(
            Exponential::new()
                .with_base(Duration::from_millis(100))
                .with_cap(Duration::from_millis(300))
                .with_max_attempts(4),
        );
        assert_eq!(cap_never_reached(near, 3), None);
        // A policy without a cap has nothing to reach.
        let constant = AnyConfig::from(PolicyKind::Constant);
        assert_eq!(cap_never_reached(constant, 3), None);
    }

    #[test]
    fn every_policy_at_its_defaults_and_at_the_edges_is_read_without_a_panic() {
        for kind in PolicyKind::ALL {
            let config = AnyConfig::from(kind);
            for retries in [0, 1, 9, 999, u32::MAX] {
                let _ = cap_never_reached(config, retries);
            }
            if let Ok(long) = config.set(Param::Base(Duration::MAX)) {
                let _ = cap_never_reached(long, 9);
            }
        }
    }

    #[test]
    fn a_rate_has_only_the_digits_it_needs() {
        assert_eq!(rate(1_000.0), "1000");
        assert_eq!(rate(0.5), "0.5");
        assert_eq!(rate(12.25), "12.25");
    }

    #[test]
    fn a_band_reads_as_one_value_or_two() {
        assert_eq!(band(100.0, 100.0), "100 ms");
        assert_eq!(band(0.0, 2_000.0), "0 ms to 2 s");
    }
}

//! Planning the simulator runs of the check: every run of every report is built and
//! estimated first, and the check is admitted as a whole ([`admit`]) before any starts.
//!
//! Planning first is what lets the check refuse `--max-events` or the memory limit in one
//! line, naming the whole, rather than failing part way through its output.

use std::time::Duration;

use stagger_core::duration::human;
use stagger_core::engine::{Nested, Settings};
use stagger_core::{AnyConfig, PolicyConfig, PolicyKind};
use stagger_sim::limits::MAX_DURATION as MAX_OUTAGE;
use stagger_sim::model::{self, Composed, RunOptions};
use stagger_sim::scoreboard::THROTTLE_SEEDS;
use stagger_sim::workload::herd::Herd;
use stagger_sim::workload::open_loop::OpenLoop;
use stagger_sim::workload::outage::Outage;
use stagger_sim::workload::spike::{self, Spike};
use stagger_sim::workload::throttle::Throttle;
use stagger_sim::{Estimate, ResultRow, SimError, Strategy, Workload};

use super::args::Args;
use super::input::Subject;
use crate::cmd::simulate::stop_after;
use crate::flags::CommandError;
use crate::limits::{self, Bytes, Count, MemoryLimit};
use crate::progress::Progress;

/// The deadline the runs simulate: the configuration's, or a day if it is longer (the
/// simulator's limit, which no run of the check comes near; a note says so).
fn simulated_deadline(settings: &Settings) -> Option<Duration> {
    settings.timeout().map(|t| t.min(MAX_OUTAGE))
}

/// The note for a deadline longer than the simulator takes.
pub(super) fn long_deadline_note(settings: &Settings) -> Option<String> {
    settings.timeout().filter(|t| *t > MAX_OUTAGE).map(|t| {
        format!(
            "the deadline of {} is simulated as {}, the simulator's longest",
            human(t),
            human(MAX_OUTAGE)
        )
    })
}

/// The simulator's refusal of a run, as the check's one line.
fn sim(err: SimError) -> CommandError {
    CommandError::Usage(format!("the simulator refuses the check's runs: {err}"))
}

/// One simulator run of the check: what it is estimated to cost, and the run itself, made
/// only once the whole check is admitted ([`admit`]).
pub(super) struct Run {
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
    ) -> Result<Self, CommandError> {
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
    ) -> Result<Self, CommandError> {
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
    pub(super) fn run(self, progress: &Progress) -> Result<ResultRow, CommandError> {
        let row = (self.go)(stop_after(&self.estimate)).map_err(sim)?;
        progress.run_done();
        Ok(row)
    }
}

/// Every simulator run of one configuration's report, built and estimated before any runs.
pub(super) struct Plan {
    /// The stack of `--layers` in the total outage, with stagger's default and with every
    /// layer retrying: `None` for one layer or a hedged configuration, or once [`admit`]
    /// leaves it out.
    pub(super) stack: Option<(Run, Run)>,
    /// The total outage without a budget.
    pub(super) without_budget: Run,
    /// The total outage with the configuration's budget, if it has one.
    pub(super) with_budget: Option<Run>,
    /// The 429 storm as the configuration meets it.
    pub(super) throttle: Throttle,
    /// The 429 storm's runs, one per seed.
    pub(super) throttle_runs: Vec<Run>,
    /// Each row of the canonical workloads: its label and its policy, then its herd, outage
    /// and spike runs.
    pub(super) workloads: Vec<(String, AnyConfig, [Run; 3])>,
    /// The spike with the scoreboard's jittered backoff, at the same seed.
    pub(super) spike_reference: Run,
}

/// The estimates of the canonical workloads' runs of a policy at the catalog's defaults, the
/// same for every configuration that has it beside its own.
pub(super) type Defaults = std::collections::HashMap<PolicyKind, [Estimate; 3]>;

impl Plan {
    /// `defaults` keeps the estimates of the rows at the catalog's defaults, for the next
    /// configuration's plan.
    pub(super) fn new(
        subject: &Subject,
        args: &Args,
        defaults: &mut Defaults,
    ) -> Result<Self, CommandError> {
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
    pub(super) fn runs(&self) -> usize {
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
) -> Result<[Run; 3], CommandError> {
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
pub(super) fn admit(
    subjects: &[Subject],
    plans: &mut [Plan],
    args: &Args,
) -> Result<(), CommandError> {
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
        return Err(CommandError::Usage(match subjects {
            [one] => format!(
                "checking this configuration {whole}: it makes {} attempts a request; use \
                 fewer max_attempts, or a lower --rate, fewer --clients or a shorter --outage, \
                 {raise}",
                one.max_attempts()
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
        return Err(CommandError::Usage(format!(
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

/// The simulator's strategy for the configuration: its policy and its budget, one per client.
fn strategy_of(subject: &Subject) -> Result<Strategy, CommandError> {
    let s = Strategy::policy(subject.policy);
    match subject.budget {
        Some((kind, config)) => s.with_budget_config(kind, config).map_err(sim),
        None => Ok(s),
    }
}

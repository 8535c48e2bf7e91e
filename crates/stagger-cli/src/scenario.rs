//! Scenario files: a user's system described as clients, a dependency and a retry stack, read
//! from TOML or JSON and run on the simulator's model of that system.
//!
//! Open, serial or fixed clients against a failure rate, an outage window, a limiter, a
//! service that slows as work piles up, two hosts behind one name, a pool of replicas, or any
//! mix of them, with a steady, spiking or ramping load, run on the simulator's composed model
//! ([`stagger_sim::model`]), whose parts combine freely; a contended row runs on the
//! contention workload's own loop (see [`MODELS`]). A combination no model covers, or a
//! setting the chosen model cannot honour, is refused by name rather than dropped.

use std::time::Duration;

use serde::Deserialize;
use stagger_core::config::RetrySpec;
use stagger_core::engine::Nested;
use stagger_sim::dist::{Delay, Latency};
use stagger_sim::model::{
    self, BudgetScope, Composed, ConcurrencyLimit, Limiter, Network, RampShape, RateLimit,
    Replicas, RetryAfterForm, RunOptions, Service, SpikeShape, TwoHosts, Window,
};
use stagger_sim::workload::contention::Contention;
use stagger_sim::workload::open_loop::OpenLoop;
use stagger_sim::workload::outage::Outage;
use stagger_sim::workload::partition::Partition;
use stagger_sim::workload::spike::{Server, Spike};
use stagger_sim::workload::tail::Tail;
use stagger_sim::{Estimate, ResultRow, SimError, SimPolicy, Strategy, Workload};

use crate::flags::CommandError;

/// The combinations a scenario can describe today, one per model, as the error lists them.
pub(crate) const MODELS: &str = "clients kind = \"open\", \"serial\" or \"fixed\" with \
    dependency failure_rate (or always_fails, as the herd's), outage, rate_limit, \
    concurrency_limit, service, two_hosts or replicas (open clients with a spike or a ramp too), \
    in any mix (composed), or kind = \"fixed\" with occ (contention)";

/// A scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// How long clients send requests, such as "10s".
    duration: Option<String>,
    /// The world seed (default 1).
    seed: Option<u64>,
    clients: ClientsTable,
    dependency: DependencyTable,
    /// One retry configuration per layer, outermost first.
    retry: Vec<RetrySpec>,
}

/// The `[clients]` table: who calls, in flat keys that the kind chooses among.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsTable {
    kind: ClientKind,
    /// Open or serial clients: the independent sources.
    sources: Option<u64>,
    /// Open or serial clients: each source's requests a second.
    rate_per_source: Option<f64>,
    /// Fixed clients: how many, each making one request at once.
    count: Option<u64>,
    /// Open clients: a spike of the rate, `factor` times it from `at` for `for`.
    spike: Option<SpikeShape<String>>,
    /// Open clients: a ramp of the rate, up to `peak_factor` times it at `peak_at` and down at
    /// the same slope.
    ramp: Option<RampShape<String>>,
    /// Open clients against replicas: the sub-requests each request fans out to, all needed.
    fanout: Option<u32>,
    /// Open or serial clients on the composed model: whether each source holds its own budget
    /// (the default), all share one, or each request holds its own.
    budget_scope: Option<BudgetScope>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ClientKind {
    Open,
    Fixed,
    Serial,
}

/// The `[dependency]` table: the model's parts, read as the model declares them (their times
/// as text until the file is read), and the keys that choose the network, a dependency that
/// always fails, a limiter and the contended row.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DependencyTable {
    /// The round trip of one attempt (open and serial clients).
    rtt: Option<Latency>,
    /// The one-way network delay (fixed clients, the outage).
    network: Option<Latency>,
    /// Each attempt fails independently with this probability.
    failure_rate: Option<f64>,
    /// The dependency is down from `at` for `for`.
    outage: Option<Window<String>>,
    /// Every attempt fails: the herd.
    always_fails: Option<bool>,
    /// An optimistic-concurrency row that every client writes, over `rounds` rounds.
    occ: Option<Occ>,
    /// A rate limiter in front of the dependency, answering 429 with `Retry-After`.
    rate_limit: Option<RateLimit<String, Option<String>>>,
    /// A concurrency limiter in front of the dependency, answering 503 with `Retry-After`.
    concurrency_limit: Option<ConcurrencyLimit<String, Option<String>>>,
    /// A server whose service time grows with the attempts in progress.
    service: Option<Service<String>>,
    /// A pool of replicas that pause now and then.
    replicas: Option<Replicas<String, Latency>>,
    /// Two hosts behind one name: `share_down` of the requests go to the one that is down,
    /// the rest to one whose attempts fail at `failure_rate`.
    two_hosts: Option<TwoHosts>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Occ {
    rounds: Option<u32>,
}

/// A scenario ready to run: the model, the strategy and the seed.
pub(crate) struct Ready {
    pub(crate) model: Model,
    pub(crate) strategy: Strategy,
    pub(crate) seed: u64,
}

impl Model {
    /// The inner retry layers the model runs, outermost first (the composed model's).
    fn set_layers(&mut self, layers: Vec<model::Layer>) {
        if let Self::Composed(_, inner) = self {
            *inner = layers;
        }
    }
}

/// The model a scenario runs on. One is built per scenario, so the composed model's size
/// beside the others costs nothing worth a box.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Model {
    /// The composed model, with its inner retry layers.
    Composed(Composed, Vec<model::Layer>),
    Contention(Contention),
}

impl Model {
    /// The scenario keys (besides `seed` and `[[retry]]`) the model reads.
    const fn reads(&self) -> &'static [&'static str] {
        const ARRIVALS: [&str; 3] = ["duration", "clients.sources", "clients.rate_per_source"];
        match self {
            Self::Composed(..) => &[
                ARRIVALS[0],
                ARRIVALS[1],
                ARRIVALS[2],
                "clients.count",
                "clients.budget_scope",
                "dependency.rtt",
                "dependency.network",
                "dependency.failure_rate",
                "dependency.always_fails",
                "dependency.outage",
                "dependency.rate_limit",
                "dependency.concurrency_limit",
                "clients.spike",
                "clients.ramp",
                "dependency.service",
                "dependency.two_hosts",
                "dependency.replicas",
                "clients.fanout",
            ],
            Self::Contention(_) => &["clients.count", "dependency.network", "dependency.occ"],
        }
    }

    /// The model's workload name, as `stagger simulate --workload` takes it.
    pub(crate) const fn name(&self) -> &'static str {
        match self {
            Self::Composed(..) => "composed",
            Self::Contention(_) => "contention",
        }
    }

    pub(crate) fn estimate(&self, s: &Strategy) -> Result<Estimate, SimError> {
        match self {
            Self::Composed(w, layers) => {
                w.validate().map_err(file_keys)?;
                Ok(w.estimate(s, layers))
            }
            Self::Contention(w) => checked(w, s),
        }
    }

    pub(crate) fn run_within(
        &self,
        s: &Strategy,
        seed: u64,
        max_events: u64,
    ) -> Result<ResultRow, SimError> {
        match self {
            Self::Composed(w, layers) => w.run(
                s,
                &RunOptions::seed(seed).max_events(max_events).layers(layers),
            ),
            Self::Contention(w) => w.run_within(s, seed, max_events),
        }
    }
}

/// The composed model's refusal of a part, with the part named as the scenario file names it.
fn file_keys(error: SimError) -> SimError {
    let SimError::Invalid { param, allowed } = error else {
        return error;
    };
    let key = match param {
        "rate" => "clients.rate_per_source",
        "clients" => "clients.sources or clients.count",
        "failure_rate" => "dependency.failure_rate",
        "outage" => "dependency.outage",
        "retry_after" => "dependency's retry_after",
        "limit_rate" => "dependency.rate_limit.rate",
        "limit_burst" => "dependency.rate_limit.burst",
        "limit_concurrency" => "dependency.concurrency_limit.limit",
        "service" => "dependency.concurrency_limit.service",
        "timeout" => "retry[0].timeout",
        "attempt_timeout" => "retry[0].attempt_timeout",
        "rtt" => "dependency.rtt",
        "budget_scope" => "clients.budget_scope",
        "share_down" => "dependency.two_hosts.share_down",
        "fanout" => "clients.fanout",
        other => other,
    };
    SimError::Invalid {
        param: key,
        allowed,
    }
}

fn checked<W: Workload>(w: &W, s: &Strategy) -> Result<Estimate, SimError> {
    w.validate()?;
    Ok(w.estimate(s))
}

/// Reads a scenario file, TOML or JSON by its extension, and maps it onto its model.
pub(crate) fn read(path: &std::path::Path) -> Result<Ready, CommandError> {
    use crate::flags::FileFormat;
    let shown = path.display();
    let (text, format) = crate::flags::read_config_file(path).map_err(CommandError::Usage)?;
    let scenario: Scenario = match format {
        FileFormat::Toml => toml::from_str(&text)
            .map_err(|e| CommandError::toml(format!("{shown}: not a scenario"), &e))?,
        FileFormat::Json => {
            serde_json::from_str(&text).map_err(|e| CommandError::Usage(format!("{shown}: {e}")))?
        }
    };
    scenario
        .ready()
        .map_err(|e| CommandError::Usage(format!("{shown}: {e}")))
}

/// `strategy` with `budget`, one per client, configured as the file has it.
pub(crate) fn with_budget(
    strategy: Strategy,
    budget: Option<stagger_core::config::BudgetSpec>,
) -> Result<Strategy, SimError> {
    match budget {
        Some(b) => strategy.with_budget_config(b.kind(), b.to_config()),
        None => Ok(strategy),
    }
}

fn duration(field: &str, text: &str) -> Result<Duration, String> {
    stagger_core::duration::parse(text).map_err(|e| format!("{field}: {e}"))
}

/// A limiter's `form`, by name, or the default.
fn form(field: &str, text: Option<&str>) -> Result<RetryAfterForm, String> {
    text.map_or(Ok(RetryAfterForm::default()), |t| {
        t.parse().map_err(|e| format!("{field}: {e}"))
    })
}

/// Refuses the settings of the outer retry layer that `model` cannot honour: a deadline unless
/// `deadline_ok`, the server-wait settings unless `waits_ok`, an attempt timeout and hedging
/// unless `overload` (the spike and the ramp), and what no model takes yet.
fn refuse_outer(
    o: &RetrySpec,
    model: &str,
    deadline_ok: bool,
    waits_ok: bool,
    overload: bool,
) -> Result<(), String> {
    refuse_outer_but(o, model, deadline_ok, waits_ok, overload, false)
}

/// [`refuse_outer`], taking a budget per destination where `per_destination` (the partition).
fn refuse_outer_but(
    o: &RetrySpec,
    model: &str,
    deadline_ok: bool,
    waits_ok: bool,
    overload: bool,
    per_destination: bool,
) -> Result<(), String> {
    if !deadline_ok {
        unused(&o.timeout, "retry[0].timeout", model)?;
        if o.policy.deadline().is_some() {
            return Err(format!(
                "retry[0]: the preset's deadline does not apply to the {model} model"
            ));
        }
    }
    if !waits_ok {
        unused(
            &o.server_wait_dispersal,
            "retry[0].server_wait_dispersal",
            model,
        )?;
        unused(&o.gate, "retry[0].gate", model)?;
    }
    if !overload {
        unused(&o.attempt_timeout, "retry[0].attempt_timeout", model)?;
        unused(&o.hedging, "retry[0].hedging", model)?;
    }
    unused(&o.max_server_wait, "retry[0].max_server_wait", model)?;
    if !per_destination {
        unused(
            &o.budget_per_destination,
            "retry[0].budget_per_destination",
            model,
        )?;
    }
    if o.idempotent == Some(false) {
        return Err(format!(
            "retry[0].idempotent = false: the {model} model's calls are idempotent"
        ));
    }
    Ok(())
}

/// Refuses `field` if it is set: the model chosen cannot honour it.
fn unused<T>(value: &Option<T>, field: &str, model: &str) -> Result<(), String> {
    match value {
        Some(_) => Err(format!("{field} does not apply to the {model} model")),
        None => Ok(()),
    }
}

impl Scenario {
    fn ready(self) -> Result<Ready, String> {
        let (outer, inner) = self
            .retry
            .split_first()
            .ok_or("no [[retry]] layer: a scenario needs one retry configuration at least")?;
        stagger_sim::limits::check_layers(self.retry.len())
            .map_err(|e| format!("[[retry]]: {e}"))?;
        // The inner layers, outermost first: each makes its attempts inside one attempt of
        // the layer above. Their policy and nesting rule act; a deadline of their own acts on
        // the composed model; what else they set is refused, since no model runs it yet.
        let mut layers = Vec::with_capacity(inner.len());
        for (i, layer) in inner.iter().enumerate() {
            let n = i + 1;
            layer.validate().map_err(|e| format!("retry[{n}]: {e}"))?;
            let set = [
                (layer.attempt_timeout.is_some(), "attempt_timeout"),
                (layer.idempotent.is_some(), "idempotent"),
                (layer.budget.is_some(), "budget"),
                (layer.hedging.is_some(), "hedging"),
                (layer.gate.is_some(), "gate"),
                (
                    layer.budget_per_destination.is_some(),
                    "budget_per_destination",
                ),
                (layer.max_server_wait.is_some(), "max_server_wait"),
                (
                    layer.server_wait_dispersal.is_some(),
                    "server_wait_dispersal",
                ),
            ];
            if let Some((_, key)) = set.iter().find(|(on, _)| *on) {
                return Err(format!(
                    "retry[{n}].{key}: an inner layer's {key} is not modelled yet; set it on the \
                     outer layer"
                ));
            }
            let policy =
                SimPolicy::Catalog(layer.to_config().map_err(|e| format!("retry[{n}]: {e}"))?);
            let settings = layer
                .to_settings()
                .map_err(|e| format!("retry[{n}]: {e}"))?;
            if settings.timeout().is_some_and(|t| t.is_zero()) {
                return Err(format!("retry[{n}].timeout: must be longer than 0"));
            }
            layers.push((n, model::Layer { policy, settings }));
        }
        let settings = outer.to_settings().map_err(|e| format!("retry[0]: {e}"))?;
        let mut strategy =
            Strategy::policy(outer.to_config().map_err(|e| format!("retry[0]: {e}"))?);
        strategy =
            with_budget(strategy, outer.budget).map_err(|e| format!("retry[0].budget: {e}"))?;
        let c = &self.clients;
        let d = &self.dependency;
        let duration_of = |model: &str| -> Result<Option<Duration>, String> {
            self.duration
                .as_deref()
                .map(|t| duration("duration", t))
                .transpose()
                .map_err(|e| format!("{e} ({model})"))
        };
        let source_rate = || -> Result<(u64, f64), String> {
            let sources = c
                .sources
                .ok_or("clients.sources is required for open and serial clients")?;
            let rate = c
                .rate_per_source
                .ok_or("clients.rate_per_source is required for open and serial clients")?;
            Ok((sources, rate))
        };
        let refuse_settings = |model: &str, deadline_ok: bool, waits_ok: bool| {
            refuse_outer(outer, model, deadline_ok, waits_ok, false)
        };
        // The one-way network, for the models that have one (the others refuse the key).
        let network = d
            .network
            .as_ref()
            .map(|n| n.delay("dependency.network"))
            .transpose()?;
        let model = match c.kind {
            ClientKind::Open | ClientKind::Serial | ClientKind::Fixed
                if d.failure_rate.is_some()
                    || d.always_fails == Some(true)
                    || d.outage.is_some()
                    || d.rate_limit.is_some()
                    || d.concurrency_limit.is_some()
                    || d.service.is_some()
                    || d.two_hosts.is_some()
                    || d.replicas.is_some() =>
            {
                let m = "composed";
                // The deadline, the dispersal above a wait, the gate, the attempt timeout and
                // hedging apply, and with two hosts a budget per destination.
                if d.two_hosts.is_none() && outer.budget_per_destination.is_some() {
                    return Err(
                        "retry[0].budget_per_destination needs dependency.two_hosts: \
                                one dependency is one destination, whose budget is the one \
                                budget"
                            .to_owned(),
                    );
                }
                refuse_outer_but(outer, m, true, true, true, true)?;
                let two_hosts = d
                    .two_hosts
                    .map(|hosts| -> Result<TwoHosts, String> {
                        let budget_per_host = match outer.budget_per_destination {
                            None => false,
                            Some(n) if n >= 2 => true,
                            Some(n) => {
                                return Err(format!(
                                    "retry[0].budget_per_destination = {n}: the two hosts \
                                     need room for 2"
                                ));
                            }
                        };
                        Ok(TwoHosts {
                            budget_per_host,
                            ..hosts
                        })
                    })
                    .transpose()?;
                let clients = match c.kind {
                    ClientKind::Fixed => {
                        unused(
                            &c.sources,
                            "clients.sources (fixed clients have a count)",
                            m,
                        )?;
                        unused(
                            &c.rate_per_source,
                            "clients.rate_per_source (fixed clients call once, at time zero)",
                            m,
                        )?;
                        if d.outage.is_none() {
                            unused(
                                &self.duration,
                                "duration (fixed clients call once, at time zero)",
                                m,
                            )?;
                        }
                        model::Clients::Fixed {
                            count: c
                                .count
                                .ok_or("clients.count is required for fixed clients")?,
                        }
                    }
                    kind => {
                        unused(
                            &c.count,
                            "clients.count (open and serial clients have sources)",
                            m,
                        )?;
                        let (sources, rate) = source_rate()?;
                        if kind == ClientKind::Serial {
                            model::Clients::Serial {
                                clients: sources,
                                rate,
                            }
                        } else {
                            model::Clients::Open { sources, rate }
                        }
                    }
                };
                let outage = d
                    .outage
                    .as_ref()
                    .map(|w| -> Result<Window, String> {
                        Ok(Window {
                            at: duration("dependency.outage.at", &w.at)?,
                            lasts: duration("dependency.outage.for", &w.lasts)?,
                            retry_after: w
                                .retry_after
                                .as_deref()
                                .map(|t| duration("dependency.outage.retry_after", t))
                                .transpose()?,
                        })
                    })
                    .transpose()?;
                let limiter = match (&d.rate_limit, &d.concurrency_limit) {
                    (Some(_), Some(_)) => {
                        return Err(
                            "dependency: rate_limit or concurrency_limit, not both".to_owned()
                        );
                    }
                    (Some(limit), None) => Some(Limiter::Rate(RateLimit {
                        rate: limit.rate,
                        burst: limit.burst,
                        retry_after: duration(
                            "dependency.rate_limit.retry_after",
                            &limit.retry_after,
                        )?,
                        form: form("dependency.rate_limit.form", limit.form.as_deref())?,
                    })),
                    (None, Some(limit)) => Some(Limiter::Concurrency(ConcurrencyLimit {
                        limit: limit.limit,
                        service: duration("dependency.concurrency_limit.service", &limit.service)?,
                        retry_after: duration(
                            "dependency.concurrency_limit.retry_after",
                            &limit.retry_after,
                        )?,
                        form: form("dependency.concurrency_limit.form", limit.form.as_deref())?,
                    })),
                    (None, None) => None,
                };
                // The round trip drawn whole, or a one-way delay drawn each way. With neither,
                // a dependency with no failure rate keeps the outage's, the throttle's and the
                // herd's 1 ms each way, and one with a failure rate Brooker's Exp(mean 10 ms)
                // round trip.
                let network = match (&d.rtt, network) {
                    (Some(_), Some(_)) => {
                        return Err("dependency: rtt (a round trip) or network (one way), \
                                    not both"
                            .to_owned());
                    }
                    (Some(rtt), None) => Network::RoundTrip(rtt.delay("dependency.rtt")?),
                    (None, Some(one_way)) => Network::OneWay(one_way),
                    // The spike's server answers across its own network.
                    (None, None) if d.service.is_some() => {
                        Network::OneWay(Server::default().network)
                    }
                    // Two hosts answer across the partition's 1 ms each way.
                    (None, None) if two_hosts.is_some() => {
                        Network::OneWay(Partition::default().network)
                    }
                    // A pool of replicas is the tail's: no network.
                    (None, None) if d.replicas.is_some() => {
                        Network::RoundTrip(Delay::Constant { nanos: 0 })
                    }
                    (None, None) if d.failure_rate.is_none() => {
                        Network::OneWay(Outage::default().network)
                    }
                    (None, None) => Network::RoundTrip(OpenLoop::default().rtt),
                };
                let load = match (&c.spike, &c.ramp) {
                    (Some(_), Some(_)) => {
                        return Err("clients: a spike or a ramp, not both".to_owned());
                    }
                    (Some(shape), None) => model::Load::Spike(SpikeShape {
                        factor: shape.factor,
                        at: duration("clients.spike.at", &shape.at)?,
                        lasts: duration("clients.spike.for", &shape.lasts)?,
                    }),
                    (None, Some(shape)) => model::Load::Ramp(RampShape {
                        peak_factor: shape.peak_factor,
                        peak_at: duration("clients.ramp.peak_at", &shape.peak_at)?,
                    }),
                    (None, None) => model::Load::Steady,
                };
                let replicas = d
                    .replicas
                    .as_ref()
                    .map(|pool| -> Result<Replicas, String> {
                        Ok(Replicas {
                            count: pool.count,
                            concurrency: pool.concurrency,
                            service: pool.service.delay("dependency.replicas.service")?,
                            pause: duration("dependency.replicas.pause", &pool.pause)?,
                            pause_every: duration(
                                "dependency.replicas.pause_every",
                                &pool.pause_every,
                            )?,
                        })
                    })
                    .transpose()?;
                let service = d
                    .service
                    .as_ref()
                    .map(|service| -> Result<Service, String> {
                        Ok(Service {
                            base: duration("dependency.service.base", &service.base)?,
                            per_in_flight: duration(
                                "dependency.service.per_in_flight",
                                &service.per_in_flight,
                            )?,
                        })
                    })
                    .transpose()?;
                let default_duration = if load != model::Load::Steady {
                    Spike::default().duration
                } else if outage.is_some() {
                    Outage::default().duration
                } else if two_hosts.is_some() {
                    Partition::default().duration
                } else if d.replicas.is_some() {
                    Tail::default().duration
                } else {
                    OpenLoop::default().duration
                };
                if c.budget_scope.is_some() && outer.budget.is_none() {
                    return Err(
                        "clients.budget_scope: there is no budget to hold; add a [retry.budget] \
                         to the outer layer"
                            .to_owned(),
                    );
                }
                let budget_scope = c.budget_scope.unwrap_or_default();
                let duration = duration_of(m)?.unwrap_or(default_duration);
                let mut model = Composed::new(clients, duration, network);
                // A dependency that always fails (the herd's) fails every attempt.
                let failure_rate = match (d.failure_rate, d.always_fails) {
                    (Some(_), Some(true)) => {
                        return Err("dependency: failure_rate or always_fails, not both".to_owned());
                    }
                    (_, Some(true)) => 1.0,
                    // Host B fails at the partition's rate unless the file says otherwise.
                    (None, _) if two_hosts.is_some() => Partition::default().failure_rate,
                    (x, _) => x.unwrap_or_default(),
                };
                model.dependency = model::Dependency {
                    failure_rate,
                    outage,
                    limiter,
                    service,
                    two_hosts,
                    replicas,
                };
                model.fanout = c.fanout.unwrap_or(1);
                model.load = load;
                model.deadline = settings.timeout();
                // Against the spike's service an attempt times out after 3 s unless the file
                // says otherwise, as on the spike: a client that waits for ever never retries.
                model.attempt_timeout = outer
                    .attempt_timeout
                    .or_else(|| service.map(|_| Server::default().timeout));
                // A service that piles work up may never finish it: requests are followed
                // for the spike's drain after the run, as on the spike.
                if service.is_some() {
                    model.drain = Some(stagger_sim::workload::spike::DRAIN);
                }
                model.budget_scope = budget_scope;
                model.dispersal = settings.dispersal();
                model.gate = outer.gate.is_some();
                if let Some(h) = outer.to_hedging().map_err(|e| format!("retry[0]: {e}"))? {
                    strategy = strategy.with_hedging(Some(h));
                }
                Model::Composed(model, Vec::new())
            }
            ClientKind::Fixed if d.occ.is_some() => {
                let m = "contention";
                refuse_settings(m, false, false)?;
                let mut w = Contention::default();
                if let Some(n) = c.count {
                    w.clients = n;
                }
                if let Some(r) = d.occ.as_ref().and_then(|o| o.rounds) {
                    w.rounds = r;
                }
                if let Some(n) = network {
                    w.network = n;
                }
                Model::Contention(w)
            }
            _ => {
                return Err(format!(
                    "no model covers these clients and this dependency yet; what composes today: {MODELS}"
                ));
            }
        };
        // Inner layers: the composed model runs them; the others only the default, one attempt
        // inside the outer layer's, which is the outer layer alone, and with nothing else set.
        let mut model = model;
        if matches!(model, Model::Composed(..)) && strategy.hedging.is_some() {
            // Hedged attempts go to the dependency: inner layers under them run only the
            // default, one attempt each, which is the outer layer alone.
            if let Some((n, _)) = layers.iter().find(|(_, l)| {
                l.settings.nested() == Nested::Retry || l.settings.timeout().is_some()
            }) {
                return Err(format!(
                    "retry[0].hedging: hedged attempts go to the dependency, so retry[{n}] \
                     cannot retry or keep a deadline of its own under them; drop its nested \
                     = \"retry\" and timeout, or the hedging"
                ));
            }
        } else if matches!(model, Model::Composed(..)) {
            model.set_layers(layers.into_iter().map(|(_, layer)| layer).collect());
        } else if let Some((n, layer)) = layers
            .iter()
            .find(|(_, l)| l.settings.nested() == Nested::Retry || l.settings.timeout().is_some())
        {
            let what = if layer.settings.nested() == Nested::Retry {
                "nested = \"retry\""
            } else {
                "a deadline of its own"
            };
            return Err(format!(
                "retry[{n}]: {what} in an inner layer runs on the composed model only, not \
                 the {} model; with the default (single-attempt) only the outermost layer \
                 retries",
                model.name()
            ));
        }
        // Whatever the branches above have not refused: every key the file sets must be one
        // the chosen model reads.
        let reads = model.reads();
        if let Some(key) = self.set_keys().into_iter().find(|k| !reads.contains(k)) {
            return Err(format!(
                "{key} does not apply to the {} model (it reads {})",
                model.name(),
                reads.join(", ")
            ));
        }
        Ok(Ready {
            model,
            strategy,
            seed: self.seed.unwrap_or(1),
        })
    }

    /// The clients' and the dependency's keys this file sets, and `duration`.
    fn set_keys(&self) -> Vec<&'static str> {
        let (c, d) = (&self.clients, &self.dependency);
        [
            (self.duration.is_some(), "duration"),
            (c.sources.is_some(), "clients.sources"),
            (c.rate_per_source.is_some(), "clients.rate_per_source"),
            (c.count.is_some(), "clients.count"),
            (c.spike.is_some(), "clients.spike"),
            (c.ramp.is_some(), "clients.ramp"),
            (c.fanout.is_some(), "clients.fanout"),
            (c.budget_scope.is_some(), "clients.budget_scope"),
            (d.rtt.is_some(), "dependency.rtt"),
            (d.network.is_some(), "dependency.network"),
            (d.failure_rate.is_some(), "dependency.failure_rate"),
            (d.outage.is_some(), "dependency.outage"),
            (d.always_fails.is_some(), "dependency.always_fails"),
            (d.occ.is_some(), "dependency.occ"),
            (d.rate_limit.is_some(), "dependency.rate_limit"),
            (
                d.concurrency_limit.is_some(),
                "dependency.concurrency_limit",
            ),
            (d.service.is_some(), "dependency.service"),
            (d.replicas.is_some(), "dependency.replicas"),
            (d.two_hosts.is_some(), "dependency.two_hosts"),
        ]
        .into_iter()
        .filter_map(|(set, key)| set.then_some(key))
        .collect()
    }
}

//! Reading the file: a retry configuration (TOML or JSON) or a gRPC service config, into the
//! [`Subject`]s to check, one per distinct policy.
//!
//! A subject keeps what the file sets apart from stagger's defaults ([`Set`]) and what no run
//! models, because the report names only what the file asks for. Method configs that would
//! get the same report are merged ([`distinct`]) so a service config with many methods is
//! checked once per policy.

use stagger_core::budget::{AnyBudgetConfig, BudgetKind};
use stagger_core::config::RetrySpec;
use stagger_core::config::grpc::{MethodHedgingPolicy, MethodRetryPolicy, ServiceConfig};
use stagger_core::engine::{Hedging, Nested, Settings};
use stagger_core::{AnyConfig, PolicyConfig};

use crate::flags::CommandError;

/// What a gRPC report says of how the import reads the file.
fn grpc_limit() -> String {
    let most = stagger_core::limits::GRPC_MAX_ATTEMPTS;
    format!("a maxAttempts above {most} is read as {most}, as gRFC A6 has clients do")
}

/// One retry configuration to check: a file's, or one retry or hedging policy of a service
/// config, with every method config that has it.
#[derive(Clone, Debug)]
pub(super) struct Subject {
    /// The file it comes from, as the command line names it.
    pub(super) file: String,
    /// Where in a service config it comes from; `None` for a retry configuration file.
    pub(super) grpc: Option<Grpc>,
    /// The retry policy; for a hedged subject, its attempts with no backoff.
    pub(super) policy: AnyConfig,
    /// The retry budget and its kind, if it has one: one per client in every run.
    pub(super) budget: Option<(BudgetKind, AnyBudgetConfig)>,
    /// The executor's settings: deadline, attempt timeout, server waits, nesting.
    pub(super) settings: Settings,
    /// How it hedges, if it hedges instead of retrying.
    pub(super) hedging: Option<Hedging>,
    /// Whether it paces its calls through a gate per destination.
    pub(super) gated: bool,
    /// Settings the file sets that no run of the check models, each with what that means.
    pub(super) unmodelled: Vec<String>,
    /// Which of the settings the report describes the file sets, rather than leaving them at
    /// stagger's defaults.
    pub(super) set: Set,
}

/// The settings with a default that a report names only as the file sets them, or as the
/// default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Set {
    /// `nested`, if the file sets it.
    pub(super) nested: Option<Nested>,
    /// Whether the file sets `server_wait_dispersal`.
    pub(super) dispersal: bool,
    /// Whether the file sets `max_server_wait`.
    pub(super) max_server_wait: bool,
}

/// Which policy of a service config a [`Subject`] is, and whose.
#[derive(Clone, Debug)]
pub(super) struct Grpc {
    /// `"retry"` or `"hedging"`.
    pub(super) policy: &'static str,
    /// The method configs that have it, each by its names, in the file's order.
    pub(super) methods: Vec<String>,
}

/// The method configs a source line names before it counts the rest.
const SHOWN_METHODS: usize = 3;

impl Subject {
    /// The attempts a request makes at most: its hedges', if it hedges.
    pub(super) fn max_attempts(&self) -> u32 {
        self.hedging
            .map_or_else(|| self.policy.max_attempts(), |h| h.max_attempts())
    }

    /// Where it comes from, as a report's first line says: the file, and for a service
    /// config the policy and the method configs that have it (a few named, the rest counted).
    pub(super) fn source(&self) -> String {
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
pub(super) fn distinct(subjects: Vec<Subject>) -> Vec<Subject> {
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

/// Reads `path` into the configurations it holds: one for a retry configuration, one per
/// retried or hedged method config for a gRPC service config.
pub(super) fn read(path: &std::path::Path) -> Result<Vec<Subject>, CommandError> {
    use crate::flags::FileFormat;
    let shown = path.display();
    let (text, format) = crate::flags::read_config_file(path).map_err(CommandError::Usage)?;
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        CommandError::Usage(format!("{shown}: {what}: {e}"))
    };
    match format {
        FileFormat::Toml => {
            let spec: RetrySpec = toml::from_str(&text).map_err(|e| {
                CommandError::toml(format!("{shown}: not a retry configuration"), &e)
            })?;
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

/// The one subject of a retry configuration file, named `file`.
fn from_spec(spec: &RetrySpec, file: String) -> Result<Subject, CommandError> {
    // The file's own words: `max_attempts`, not the CLI's `--max-attempts`.
    let bad = |e: stagger_core::ConfigError| CommandError::Usage(format!("{file}: {e}"));
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

/// The subjects of a gRPC service config named `shown`: one per method config with a retry
/// or a hedging policy, in the file's order, each with the throttling as its budget and the
/// method config's timeout as its deadline.
fn from_service_config(config: &ServiceConfig, shown: &str) -> Result<Vec<Subject>, CommandError> {
    let grpc = |e: stagger_core::config::grpc::GrpcConfigError| {
        CommandError::Usage(format!("{shown}: {e}"))
    };
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
    for MethodRetryPolicy {
        methods, policy, ..
    } in config.retry_policies().map_err(grpc)?
    {
        subjects.push(Subject {
            file: shown.to_owned(),
            grpc: of("retry", &methods),
            policy,
            budget,
            settings: settings_of(&methods),
            hedging: None,
            gated: false,
            unmodelled: vec![grpc_limit()],
            set: Set::default(),
        });
    }
    for MethodHedgingPolicy {
        methods, hedging, ..
    } in config.hedging_policies().map_err(grpc)?
    {
        subjects.push(Subject {
            file: shown.to_owned(),
            grpc: of("hedging", &methods),
            // A6's hedging has no backoff: the policy only counts the attempts.
            policy: AnyConfig::from(
                stagger_core::policy::Immediate::new().with_max_attempts(hedging.max_attempts()),
            ),
            budget,
            settings: settings_of(&methods),
            hedging: Some(hedging),
            gated: false,
            unmodelled: vec![grpc_limit()],
            set: Set::default(),
        });
    }
    if subjects.is_empty() {
        return Err(CommandError::Usage(format!(
            "{shown}: no method config has a retryPolicy or a hedgingPolicy: nothing is retried"
        )));
    }
    Ok(subjects)
}

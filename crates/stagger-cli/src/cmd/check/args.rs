//! The flags of `stagger check`, and the refusal of values no run of the check can take.
//!
//! Their bounds are the simulator's (`stagger_sim::limits`, `OpenLoop`'s), checked before
//! anything is read or run: clap checks each flag on its own, [`validate`] what depends on
//! two (a rate and an outage that add up to less than one request, a rate too high for the
//! clients) or on a parsed duration.

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use stagger_core::duration::human;
use stagger_sim::workload::open_loop::OpenLoop;
// The longest `--outage` is the open-loop model's longest run; the most layers `--layers`
// takes, the simulator's most retry layers.
use stagger_sim::limits::{MAX_DURATION as MAX_OUTAGE, MAX_LAYERS};

use crate::flags::{self, CommandError};
use crate::limits;

/// Flags of `stagger check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A retry configuration (TOML or JSON, the keys the configuration loader reads) or a
    /// gRPC service config (JSON with `methodConfig`).
    #[arg(value_name = "CONFIG")]
    pub(super) config: PathBuf,
    /// The layers of retrying clients one request passes through (a service calling a service
    /// calling the dependency is 2 or more).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_LAYERS)))]
    pub(super) layers: u32,
    /// The requests a second the whole fleet sends the dependency.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1_000.0,
        allow_negative_numbers = true
    )]
    pub(super) rate: f64,
    /// The client processes of the fleet; each holds its own budget.
    #[arg(long, value_name = "C", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=OpenLoop::MAX_CLIENTS))]
    pub(super) clients: u64,
    /// How long the total outage of the dependency lasts.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = flags::duration, allow_hyphen_values = true)]
    pub(super) outage: Duration,
    /// The world seed of the simulator runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(super) seed: u64,
    #[command(flatten)]
    pub(super) limit: limits::MaxEvents,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
}

/// How the reports are written: `text` for a reader, `json` for a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    Text,
    Json,
}

/// Refuses flags whose values each pass clap but together ask for no run, or for one the
/// open-loop model cannot make.
pub(super) fn validate(args: &Args) -> Result<(), CommandError> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(CommandError::Usage(format!(
            "invalid --rate: must be a positive number of requests a second, got {}",
            args.rate
        )));
    }
    let requests = args.rate * args.outage.as_secs_f64();
    if requests < 1.0 {
        return Err(CommandError::Usage(format!(
            "invalid --rate and --outage: {} requests a second for {} is less than one request",
            args.rate,
            human(args.outage)
        )));
    }
    let per_client = args.rate / args.clients as f64;
    if per_client > OpenLoop::MAX_RATE {
        return Err(CommandError::Usage(format!(
            "invalid --rate: {per_client} requests a second per client (--rate over --clients) \
             is more than {}; raise --clients",
            OpenLoop::MAX_RATE
        )));
    }
    if args.outage > MAX_OUTAGE {
        return Err(CommandError::Usage(format!(
            "invalid --outage: at most {}, got {}",
            human(MAX_OUTAGE),
            human(args.outage)
        )));
    }
    Ok(())
}

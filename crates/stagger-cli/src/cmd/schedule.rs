//! `stagger schedule`: a policy's or preset's retry schedule, as a table, JSON or CSV.

use std::io::Write;
use std::time::Duration;

use clap::{ArgGroup, ValueEnum};
use serde::Serialize;
use stagger_core::duration::human;
use stagger_core::{
    AnyConfig, Bounds, ConfigError, Param, PolicyConfig, Preset, Schedule, SeededRng,
};

use crate::flags::{self, CommandError};
use crate::render::{self, Table};

/// Flags of `stagger schedule`.
#[derive(Debug, clap::Args)]
#[command(group(ArgGroup::new("source").required(true).args(["policy", "preset"])))]
pub(crate) struct Args {
    /// A policy from the catalog, with its defaults (see `stagger policies`).
    #[arg(long, value_name = "NAME")]
    policy: Option<String>,
    /// A named preset: delivery, aws-standard, grpc, envoy, polly, cenkalti.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    #[command(flatten)]
    overrides: Overrides,
    /// Draw jitter from this seed.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "key",
        allow_negative_numbers = true
    )]
    seed: Option<u64>,
    /// Draw jitter from this key, such as a delivery id (the same key, the same schedule).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    key: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Parameter overrides, shared by every command that builds a policy.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct Overrides {
    /// The base delay, such as 100ms, 1s or 1h.
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    base: Option<Duration>,
    /// The cap on a delay, such as 20s or 1h.
    #[arg(long, value_name = "DURATION", value_parser = flags::duration, allow_hyphen_values = true)]
    cap: Option<Duration>,
    /// The growth factor of an exponential curve.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    factor: Option<f64>,
    /// The jitter fraction in [0, 1]: the share of each delay that may be removed
    /// (subtractive), or the half-width of the band around it (proportional).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    jitter: Option<f64>,
    /// The most attempts, counting the first.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    max_attempts: Option<u32>,
}

impl Overrides {
    /// The base and cap overrides of a policy that has no other parameter; any other
    /// override is refused, naming its flag.
    pub(crate) fn base_and_cap(
        &self,
        policy: &str,
    ) -> Result<(Option<Duration>, Option<Duration>), CommandError> {
        let others = [
            ("factor", self.factor.is_some()),
            ("jitter", self.jitter.is_some()),
            ("max-attempts", self.max_attempts.is_some()),
        ];
        match others.iter().find(|(_, set)| *set) {
            Some((flag, _)) => Err(CommandError::Usage(format!(
                "invalid --{flag}: `{policy}` takes only --base and --cap"
            ))),
            None => Ok((self.base, self.cap)),
        }
    }

    /// `config` with every given override applied, checked.
    pub(crate) fn apply(&self, config: AnyConfig) -> Result<AnyConfig, CommandError> {
        let params = [
            self.base.map(Param::Base),
            self.cap.map(Param::Cap),
            self.factor.map(Param::Factor),
            self.jitter.map(Param::Jitter),
            self.max_attempts.map(Param::MaxAttempts),
        ];
        let config = params
            .into_iter()
            .flatten()
            .try_fold(config, AnyConfig::set)?;
        match config.validate() {
            // The user raised the base above a cap they did not set: name the flag they typed.
            Err(err @ ConfigError::CapBelowBase { .. }) if self.cap.is_none() => Err(
                CommandError::Usage(format!("invalid --base: {err}; raise --cap as well")),
            ),
            other => Ok(other.map(|()| config)?),
        }
    }
}

/// How to print a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A Markdown table: each retry, the delay before it and the time since the first failure.
    Table,
    /// One JSON object.
    Json,
    /// One CSV row per retry.
    Csv,
}

/// The JSON document: the schedule's own fields, then where it came from.
#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    schedule: &'a Schedule,
    preset: Option<&'a str>,
    seed: Option<u64>,
    key: Option<&'a str>,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    let (config, preset) = match (&args.policy, &args.preset) {
        (Some(name), _) => (name.parse::<AnyConfig>()?, None),
        (None, Some(name)) => {
            let preset = Preset::named(name)?;
            (preset.config(), Some(preset))
        }
        (None, None) => {
            return Err(CommandError::Usage(
                "pass --policy NAME or --preset NAME".into(),
            ));
        }
    };
    let config = args.overrides.apply(config)?;
    let rng = match &args.key {
        Some(key) => SeededRng::from_key(key),
        None => SeededRng::new(args.seed.unwrap_or(0)),
    };
    let schedule = Schedule::new(config, rng)?;
    let jittered = !schedule.is_exact();
    // A jittered schedule needs a draw: without a seed or key it uses seed 0, and says so.
    let seed = match (&args.key, args.seed) {
        (Some(_), _) => None,
        (None, Some(seed)) => Some(seed),
        (None, None) => jittered.then_some(0),
    };
    match args.format {
        Format::Json => {
            let doc = Document {
                schedule: &schedule,
                preset: preset.as_ref().map(Preset::name),
                seed,
                key: args.key.as_deref(),
            };
            serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Format::Csv => write_csv(&schedule, out)?,
        Format::Table => {
            let title = match preset {
                Some(p) => format!("{} (preset `{}`)", schedule.kind(), p.name()),
                None => schedule.kind().to_string(),
            };
            writeln!(
                out,
                "{title}: {} attempts, {} retries",
                schedule.max_attempts(),
                schedule.retries().len()
            )?;
            writeln!(out)?;
            let drawn = args.seed.is_some() || args.key.is_some();
            write_table(&schedule, drawn, out)?;
            if jittered && !drawn {
                writeln!(out)?;
                writeln!(
                    out,
                    "Bands show every possible draw; pass --seed N or --key TEXT for one."
                )?;
            }
        }
    }
    Ok(())
}

/// Writes a schedule as a delivery table: Retry | Delay before it | Elapsed since first
/// failure, then the total window. An exact schedule shows its values; a jittered one shows
/// the draw (when `drawn`) beside each band.
pub(crate) fn write_table(
    schedule: &Schedule,
    drawn: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let exact = schedule.is_exact();
    let mut header = vec!["Retry", "Delay before it", "Elapsed since first failure"];
    if !exact && drawn {
        header.extend(["Delay band", "Elapsed band"]);
    }
    let mut table = Table::new(header);
    for r in schedule.retries() {
        let mut cells = if exact || drawn {
            vec![r.retry.to_string(), human(r.delay), human(r.elapsed)]
        } else {
            vec![r.retry.to_string(), band(r.bounds), band(r.elapsed_bounds)]
        };
        if !exact && drawn {
            cells.extend([band(r.bounds), band(r.elapsed_bounds)]);
        }
        table.row(cells);
    }
    table.write(out)?;
    writeln!(out)?;
    let window = schedule.total_window_bounds();
    if exact {
        let total = schedule.total_window();
        writeln!(
            out,
            "Total retry window: {} ({} ms)",
            human(total),
            render::ms(total)
        )
    } else {
        if drawn {
            let total = schedule.total_window();
            writeln!(
                out,
                "Total retry window, as drawn: {} ({} ms)",
                human(total),
                render::ms(total)
            )?;
        }
        writeln!(
            out,
            "Total retry window: between {} and {} ({}–{} ms)",
            human(window.min),
            human(window.max),
            render::ms(window.min),
            render::ms(window.max)
        )
    }
}

fn band(b: Bounds) -> String {
    if b.is_exact() {
        human(b.min)
    } else {
        format!("{} – {}", human(b.min), human(b.max))
    }
}

fn write_csv(schedule: &Schedule, out: &mut dyn Write) -> std::io::Result<()> {
    render::csv_record(
        out,
        &[
            "retry",
            "delay_ms",
            "elapsed_ms",
            "min_ms",
            "max_ms",
            "elapsed_min_ms",
            "elapsed_max_ms",
        ],
    )?;
    for r in schedule.retries() {
        render::csv_record(
            out,
            &[
                r.retry.to_string(),
                render::ms(r.delay),
                render::ms(r.elapsed),
                render::ms(r.bounds.min),
                render::ms(r.bounds.max),
                render::ms(r.elapsed_bounds.min),
                render::ms(r.elapsed_bounds.max),
            ],
        )?;
    }
    Ok(())
}

//! `stagger explain NAME`: a policy's page with its measured figures, a preset's provenance, a
//! budget's page, or the server-directed waits or hedging page with its measurements.

use std::io::Write;

use stagger_core::budget::BudgetKind;
use stagger_core::duration::human;
use stagger_core::{PolicyConfig, PolicyKind, Preset};

use crate::flags::CommandError;
use crate::progress::Progress;

/// Flags of `stagger explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A policy (see `stagger policies`), a preset, a budget (see `stagger budgets`),
    /// `server-waits` or `hedging`.
    #[arg(value_name = "NAME")]
    name: String,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    if let Ok(kind) = args.name.parse::<PolicyKind>() {
        out.write_all(kind.page().as_bytes())?;
        let figures = stagger_sim::scoreboard::policy_figures(kind, 1)
            .map_err(|e| CommandError::Usage(e.to_string()))?;
        out.write_all(crate::scoreboard_md::policy_figures(&figures, 1).as_bytes())?;
        return Ok(());
    }
    if args.name == "server-waits" {
        let points = stagger_sim::scoreboard::throttle_points(1)
            .map_err(|e| CommandError::Usage(e.to_string()))?;
        let variants = stagger_sim::scoreboard::throttle_variant_points(1)
            .map_err(|e| CommandError::Usage(e.to_string()))?;
        let partition = stagger_sim::scoreboard::partition_points(1)
            .map_err(|e| CommandError::Usage(e.to_string()))?;
        out.write_all(
            crate::scoreboard_md::server_waits_page(&points, &variants, &partition, 1).as_bytes(),
        )?;
        return Ok(());
    }
    if args.name == "hedging" {
        // Its runs are the library's, which reports nothing until all are done: the progress
        // names the page and counts the seconds.
        let progress = Progress::parts("measuring the hedging page");
        let f = stagger_sim::scoreboard::hedging_figures(1)
            .map_err(|e| CommandError::Usage(e.to_string()))?;
        progress.finish();
        out.write_all(
            crate::scoreboard_md::hedging_page(
                &f.tail,
                Some(&f.tail_delay),
                &f.tail_sweep,
                &f.tail_fanout,
                &f.spike,
                1,
            )
            .as_bytes(),
        )?;
        return Ok(());
    }
    let preset = Preset::named(&args.name).ok();
    let budget = args.name.parse::<BudgetKind>().ok();
    if let Some(preset) = preset {
        write_preset(&preset, out)?;
    }
    if let Some(budget) = budget {
        if preset.is_some() {
            writeln!(out)?;
            writeln!(out, "`{}` is also a retry budget:", args.name)?;
            writeln!(out)?;
        }
        out.write_all(budget.page().as_bytes())?;
    }
    if preset.is_none() && budget.is_none() {
        return Err(CommandError::Usage(crate::flags::unknown_name(
            "policy, preset, budget or page",
            &args.name,
            &[
                ("policies", &PolicyKind::names()),
                ("presets", &Preset::names()),
                ("budgets", &BudgetKind::names()),
                ("pages", &["server-waits", "hedging"]),
            ],
        )));
    }
    Ok(())
}

fn write_preset(preset: &Preset, out: &mut dyn Write) -> Result<(), CommandError> {
    let kind = preset.config().kind();
    writeln!(out, "# Preset `{}`", preset.name())?;
    writeln!(out)?;
    writeln!(
        out,
        "Policy: `{kind}` ({} attempts).",
        preset.config().max_attempts()
    )?;
    if let Some(deadline) = preset.deadline() {
        writeln!(out, "Deadline: {} end to end.", human(deadline))?;
    }
    writeln!(out)?;
    writeln!(out, "Source: {}", preset.source())?;
    writeln!(out)?;
    writeln!(out, "Notes: {}", preset.notes())?;
    writeln!(out)?;
    writeln!(
        out,
        "See `stagger schedule --preset {}` for its schedule and `stagger explain {kind}` for the policy.",
        preset.name()
    )?;
    Ok(())
}

//! `stagger policies`: the catalog and the presets, as tables.

use std::io::Write;

use stagger_core::{PolicyConfig, PolicyKind, Preset};

use crate::flags::CommandError;
use crate::render::Table;

/// Flags of `stagger policies` (none yet).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    write_catalog(out)?;
    Ok(())
}

/// The catalog table, then the presets table.
pub(crate) fn write_catalog(out: &mut dyn Write) -> std::io::Result<()> {
    let mut policies = Table::new(["Policy", "Delay before retry n", "When to use it"]);
    for kind in PolicyKind::ALL {
        policies.row([
            format!("`{kind}`"),
            format!("`{}`", kind.formula()),
            kind.summary().to_owned(),
        ]);
    }
    policies.write(out)?;
    writeln!(out)?;
    writeln!(
        out,
        "`v = min(cap, base * factor^(n-1))`; `U(a, b)` is a uniform draw."
    )?;
    writeln!(out)?;
    let mut presets = Table::new(["Preset", "Policy", "Source"]);
    for preset in Preset::ALL {
        presets.row([
            format!("`{}`", preset.name()),
            format!("`{}`", preset.config().kind()),
            preset.source().to_owned(),
        ]);
    }
    presets.write(out)
}

//! `stagger budgets`: the retry budgets, by the names the simulator and configuration use.

use std::io::Write;

use stagger_core::budget::BudgetKind;

use crate::flags::CommandError;
use crate::render::Table;

/// Flags of `stagger budgets` (none yet).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    let mut table = Table::new(["Budget", "What it bounds"]);
    for kind in BudgetKind::ALL {
        table.row([format!("`{kind}`"), kind.summary().to_owned()]);
    }
    table.write(out)?;
    writeln!(out)?;
    writeln!(out, "`stagger explain NAME` prints a budget's page.")?;
    Ok(())
}

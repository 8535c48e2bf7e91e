//! `stagger`: the policy catalog, schedules as data, and reports, from the command line.
//!
//! Each subcommand is a module under `cmd/` that turns flags into library calls; the domain
//! logic lives in `stagger-core` and the simulator in `stagger-sim`. Errors print one line on
//! stderr and exit with status 2.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod cmd;
mod excerpt;
mod flags;
mod html;
mod limits;
mod plot;
mod progress;
mod render;
mod results;
mod scenario;
mod scoreboard_md;

/// Retry failed work correctly, and prove it: the policy catalog, schedules as data, and the
/// simulator that measures every policy and budget on canonical workloads.
// No bare `about` in the attribute: it would print the package description instead.
#[derive(Debug, Parser)]
#[command(name = "stagger", version, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the policy catalog and the presets.
    Policies(cmd::policies::Args),
    /// List the retry budgets.
    Budgets(cmd::budgets::Args),
    /// Print a policy's page with its simulator measurements, or a preset's or a budget's page.
    Explain(cmd::explain::Args),
    /// Print the retry schedule of a policy or preset: delays, bands, elapsed time, window.
    Schedule(cmd::schedule::Args),
    /// Print the catalog as Markdown: policies, presets, budgets and their schedules.
    // `report` was its name: a hidden alias keeps scripts that use it working.
    #[command(alias = "report")]
    Catalog(cmd::catalog::Args),
    /// Run policies and budgets on a canonical workload in the simulator.
    Simulate(Box<cmd::simulate::Args>),
    /// Run every policy and budget on every workload in the simulator and print the scoreboard:
    /// its summary on a terminal, the whole document as Markdown when redirected.
    Bench(cmd::bench::Args),
    /// Read a retry configuration or a gRPC service config and print what it commits you to:
    /// attempts through layers, the load of an outage, a 429 storm, the canonical workloads,
    /// and warnings with their fixes.
    Check(cmd::check::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return flags::clap_failure(&err, &Cli::command()),
    };
    let mut out = io::stdout().lock();
    let result = match cli.command {
        Command::Policies(args) => cmd::policies::run(&args, &mut out),
        Command::Budgets(args) => cmd::budgets::run(&args, &mut out),
        Command::Explain(args) => cmd::explain::run(&args, &mut out),
        Command::Schedule(args) => cmd::schedule::run(&args, &mut out),
        Command::Catalog(args) => cmd::catalog::run(&args, &mut out),
        Command::Simulate(args) => cmd::simulate::run(&args, &mut out),
        Command::Bench(args) => cmd::bench::run(&args, &mut out),
        Command::Check(args) => cmd::check::run(&args, &mut out),
    };
    match result.and_then(|()| out.flush().map_err(flags::CommandError::from)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => err.report(),
    }
}

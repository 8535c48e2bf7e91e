//! `stagger check`: what a retry configuration commits its user to, read from the file and
//! measured in the simulator, with plain warnings and the fix for each.
//!
//! Every figure is either the configuration's own arithmetic (attempts through layers, the
//! retry window's bounds) or a simulator run of the configuration as the executors run it.
//! The command is a pipeline, one module a stage: the flags ([`args`]), the file read into
//! subjects ([`input`]), their runs planned and admitted as a whole ([`plan`]), each report
//! measured ([`report`]) and warned about ([`warnings`]), then written ([`output`]).

mod args;
mod input;
mod output;
mod plan;
mod report;
mod warnings;

use std::io::Write;

pub(crate) use args::Args;

use crate::flags::CommandError;
use crate::progress::Progress;

/// Runs `stagger check` with `args`, writing the reports to `out`.
pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    args::validate(args)?;
    let subjects = input::distinct(input::read(&args.config)?);
    // Every run of the check is planned and estimated, and the whole admitted, before any
    // starts.
    let mut defaults = plan::Defaults::new();
    let mut plans = subjects
        .iter()
        .map(|s| plan::Plan::new(s, args, &mut defaults))
        .collect::<Result<Vec<_>, _>>()?;
    plan::admit(&subjects, &mut plans, args)?;
    let progress = Progress::runs("checking", plans.iter().map(plan::Plan::runs).sum());
    let reports = subjects
        .iter()
        .zip(plans)
        .map(|(s, plan)| {
            let mut r = report::report(s, plan, args, &progress)?;
            r.warnings = warnings::warnings(s, &r, args);
            Ok(r)
        })
        .collect::<Result<Vec<_>, CommandError>>()?;
    progress.finish();
    output::write(&reports, args.format, out)
}

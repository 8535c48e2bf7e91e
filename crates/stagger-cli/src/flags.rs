//! Turning flags into values, and failures into one line on stderr.

use std::fmt;
use std::io;
use std::process::ExitCode;
use std::time::Duration;

use stagger_core::ConfigError;

/// Parses a duration flag such as `100ms`, `1s` or `1h`.
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    stagger_core::duration::parse(text).map_err(|e| e.to_string())
}

/// Why a command failed: bad input (exit 2) or an I/O error (exit 1).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The user's flags or values are invalid.
    Usage(String),
    /// Writing the output failed.
    Io(io::Error),
}

impl Failure {
    /// Prints the failure as one line on stderr and returns its exit status.
    pub(crate) fn report(&self) -> ExitCode {
        let line = match self {
            Self::Usage(reason) => format!("error: {reason}"),
            Self::Io(err) if err.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
            Self::Io(err) => format!("error: {err}"),
        };
        eprintln!("{}", line.replace('\n', " "));
        ExitCode::from(match self {
            Self::Usage(_) => 2,
            Self::Io(_) => 1,
        })
    }
}

impl From<io::Error> for Failure {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

impl From<ConfigError> for Failure {
    /// Names the flag the user typed for the offending parameter.
    fn from(err: ConfigError) -> Self {
        Self::Usage(match err.param() {
            Some(param) => format!("invalid --{}: {err}", param.replace('_', "-")),
            None => err.to_string(),
        })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(reason) => f.write_str(reason),
            Self::Io(err) => err.fmt(f),
        }
    }
}

/// Reports a command-line parsing failure: help and version go to stdout with status 0;
/// anything else is the first paragraph of clap's message on one line, with status 2.
pub(crate) fn clap_failure(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        // Help is what the user asked for; a failure to print it leaves nothing to report.
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let rendered = err.render().to_string();
    let paragraph: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    if paragraph.is_empty() {
        eprintln!("error: invalid arguments");
    } else {
        eprintln!("{}", paragraph.join(" "));
    }
    ExitCode::from(2)
}

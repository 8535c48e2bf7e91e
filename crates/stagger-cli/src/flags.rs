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

/// A configuration file's format, named by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileFormat {
    Toml,
    Json,
}

/// Reads a configuration file (`.toml` or `.json`, named by its extension, in any case): its
/// text and format, or one line saying why not.
pub(crate) fn read_config_file(path: &std::path::Path) -> Result<(String, FileFormat), String> {
    let shown = path.display();
    let format = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("toml") => FileFormat::Toml,
        Some("json") => FileFormat::Json,
        _ => {
            return Err(format!(
                "{shown}: name the format by the file's extension: .toml or .json"
            ));
        }
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    Ok((text, format))
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

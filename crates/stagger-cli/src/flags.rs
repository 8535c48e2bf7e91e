//! Turning flags into values, and a command's errors into one line on stderr.

use std::fmt;
use std::io;
use std::process::ExitCode;
use std::time::Duration;

use stagger_core::budget::BudgetKind;
use stagger_core::policy::PolicyKind;
use stagger_core::{ConfigError, Preset};

use crate::excerpt;

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
pub(crate) enum CommandError {
    /// The user's flags or values are invalid.
    Usage(String),
    /// A file its parser refused: one line naming the file and what it should be, then the
    /// parser's own message as it wrote it, over several lines (TOML's shows the offending
    /// line and points at the column).
    Parse {
        /// `FILE: not a retry configuration`.
        what: String,
        /// The parser's message.
        message: String,
    },
    /// Writing the output failed.
    Io(io::Error),
}

impl CommandError {
    /// Prints the error on stderr as `error: ` and its [`Display`](fmt::Display) form, at most
    /// [`excerpt::MOST`] bytes, and returns its exit status.
    pub(crate) fn report(&self) -> ExitCode {
        if let Self::Io(err) = self
            && err.kind() == io::ErrorKind::BrokenPipe
        {
            return ExitCode::SUCCESS;
        }
        eprintln!("{PREFIX}{self}");
        ExitCode::from(match self {
            Self::Usage(_) | Self::Parse { .. } => 2,
            Self::Io(_) => 1,
        })
    }

    /// A TOML document's parse error, kept as TOML writes it.
    pub(crate) fn toml(what: String, err: &toml::de::Error) -> Self {
        Self::Parse {
            what,
            message: err.to_string(),
        }
    }
}

/// The names among `known` that `typed` is most likely a typo of, best first, at most three:
/// those the fewest edits away (an edit inserts, deletes or replaces a character, or swaps
/// two neighbours), if that is few for its length; failing that, those that contain it.
pub(crate) fn closest<'a>(typed: &str, known: &[&'a str]) -> Vec<&'a str> {
    const MOST: usize = 3;
    let typed = typed.to_ascii_lowercase();
    let length = typed.chars().count();
    // A third of the name, and at least one edit: `hrd` for `herd`, `exponentail` for
    // `exponential`, but not `tail` for `herd`.
    let allowed = (length / 3).max(1);
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .map(|name| (edit_distance(&typed, name), *name))
        .filter(|(d, _)| *d <= allowed)
        .collect();
    near.sort_by_key(|(d, _)| *d);
    if let Some(&(best, _)) = near.first() {
        return near
            .into_iter()
            .take_while(|(d, _)| *d == best)
            .map(|(_, name)| name)
            .take(MOST)
            .collect();
    }
    if length < 3 {
        return Vec::new();
    }
    known
        .iter()
        .copied()
        .filter(|name| name.contains(typed.as_str()))
        .take(MOST)
        .collect()
}

/// The edits from `a` to `b`: insertions, deletions, replacements and swaps of two
/// neighbouring characters (the optimal string alignment distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back, the last, and this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let replace = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + replace);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

/// One line for a name that is none of the known ones: what it is not, the closest names if
/// any look meant, and every valid name by group, such as
/// "unknown workload `hrd` (did you mean `herd`?); the workloads are: herd, outage, ...".
pub(crate) fn unknown_name(what: &str, typed: &str, groups: &[(&str, &[&str])]) -> String {
    // A name in two groups (`aws-standard`, a preset and a budget) is suggested once.
    let mut every: Vec<&str> = Vec::new();
    for name in groups.iter().flat_map(|(_, names)| names.iter().copied()) {
        if !every.contains(&name) {
            every.push(name);
        }
    }
    let mut line = format!("unknown {what} `{typed}`");
    let near: Vec<String> = closest(typed, &every)
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect();
    if let Some((last, first)) = near.split_last() {
        let names = if first.is_empty() {
            last.clone()
        } else {
            format!("{} or {last}", first.join(", "))
        };
        line.push_str(&format!(" (did you mean {names}?)"));
    }
    for (group, names) in groups {
        line.push_str(&format!("; the {group} are: {}", names.join(", ")));
    }
    line
}

impl From<io::Error> for CommandError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

impl From<ConfigError> for CommandError {
    /// Names the flag the user typed for the offending parameter.
    fn from(err: ConfigError) -> Self {
        // An unknown name gets the closest valid ones, as every name flag does.
        let message = match &err {
            ConfigError::UnknownPolicy { name, .. } => {
                unknown_name("policy", name, &[("policies", &PolicyKind::names())])
            }
            ConfigError::UnknownPreset { name, .. } => {
                unknown_name("preset", name, &[("presets", &Preset::names())])
            }
            ConfigError::UnknownBudget { name, .. } => {
                unknown_name("budget", name, &[("budgets", &BudgetKind::names())])
            }
            _ => err.to_string(),
        };
        Self::Usage(match err.param() {
            Some(param) => format!("invalid --{}: {message}", param.replace('_', "-")),
            None => message,
        })
    }
}

/// What [`CommandError::report`] writes before the message.
const PREFIX: &str = "error: ";

impl fmt::Display for CommandError {
    /// One line, or for a [`CommandError::Parse`] the parser's message below it; in excerpts
    /// if it would pass [`excerpt::MOST`] bytes on stderr, whatever the parser quoted of the
    /// input. Every error a command prints passes here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Self::Usage(reason) => reason.replace('\n', " "),
            Self::Parse { what, message } => {
                format!("{}:\n{}", what.replace('\n', " "), message.trim_end())
            }
            Self::Io(err) => err.to_string().replace('\n', " "),
        };
        // `error: `, the message and its newline.
        let most = excerpt::MOST - PREFIX.len() - 1;
        f.write_str(&excerpt::excerpt(&text, most))
    }
}

/// Reports a command-line parsing failure: help and version go to stdout with status 0;
/// anything else is the first paragraph of clap's message and its tips (`a similar argument
/// exists: '--policy'`) on one line, with the subcommands listed for an unknown one, with
/// status 2.
pub(crate) fn clap_failure(err: &clap::Error, cli: &clap::Command) -> ExitCode {
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
    let tips = rendered
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tip:"));
    let mut line = if paragraph.is_empty() {
        "error: invalid arguments".to_owned()
    } else {
        paragraph.join(" ")
    };
    for tip in tips {
        line.push_str("; ");
        line.push_str(tip);
    }
    if err.kind() == ErrorKind::InvalidSubcommand {
        let names: Vec<&str> = cli
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(clap::Command::get_name)
            .collect();
        line.push_str(&format!("; the commands are: {}", names.join(", ")));
    }
    eprintln!("{}", excerpt::excerpt(&line, excerpt::MOST - 1));
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_an_insertion_a_deletion_a_replacement_or_a_swap() {
        assert_eq!(edit_distance("herd", "herd"), 0);
        assert_eq!(edit_distance("hrd", "herd"), 1);
        assert_eq!(edit_distance("herds", "herd"), 1);
        assert_eq!(edit_distance("hard", "herd"), 1);
        assert_eq!(edit_distance("exponentail", "exponential"), 1);
        assert_eq!(edit_distance("", "tail"), 4);
        assert_eq!(edit_distance("tail", "herd"), 4);
    }

    #[test]
    fn a_typo_gets_its_closest_names_and_a_stranger_none() {
        let workloads = ["herd", "outage", "contention", "spike", "ramp", "tail"];
        assert_eq!(closest("hrd", &workloads), ["herd"]);
        assert_eq!(closest("Spkie", &workloads), ["spike"]);
        assert!(closest("zzz", &workloads).is_empty());
        assert!(closest("tail-x-y-z", &workloads).is_empty());
        let policies = [
            "exponential",
            "exponential-full-jitter",
            "exponential-equal-jitter",
        ];
        assert_eq!(
            closest("exponentail-full-jitter", &policies),
            ["exponential-full-jitter"]
        );
        // A part of a name: every name that contains it.
        assert_eq!(
            closest("jitter", &policies),
            ["exponential-full-jitter", "exponential-equal-jitter"]
        );
    }

    #[test]
    fn an_unknown_name_is_one_line_with_the_closest_and_every_valid_name() {
        let line = unknown_name(
            "policy or preset",
            "delivry",
            &[
                ("policies", &["constant", "linear"]),
                ("presets", &["delivery"]),
            ],
        );
        assert_eq!(
            line,
            "unknown policy or preset `delivry` (did you mean `delivery`?); the policies are: \
             constant, linear; the presets are: delivery"
        );
        assert!(!line.contains('\n'));
        let none = unknown_name("workload", "zzz", &[("workloads", &["herd"])]);
        assert_eq!(none, "unknown workload `zzz`; the workloads are: herd");
    }
}

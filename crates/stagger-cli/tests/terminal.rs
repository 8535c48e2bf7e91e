//! What a person at a terminal sees, and what a pipe sees: a long command's progress on
//! stderr, drawn on a terminal only, and `bench`'s summary in place of its whole document.
//!
//! A terminal comes from `script` (util-linux), which runs the command on a pseudo-terminal
//! and copies what it shows. Where `script` is absent the terminal tests say so on stderr and
//! skip.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::stagger;

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/check")
        .join(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// `word` quoted for `sh`.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What a terminal shows while `stagger ARGS` runs on it (stdout and stderr together, lines
/// ended by `\r\n` as a terminal ends them), or `None` if `script` cannot run here.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_stagger"))
        .chain(args.iter().copied())
        .map(quoted)
        .collect();
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command.join(" "), "/dev/null"])
        .output();
    match out {
        Ok(out) if out.status.success() => Some(String::from_utf8(out.stdout).expect("UTF-8")),
        Ok(out) => panic!(
            "`stagger {}` on a terminal exited with {:?}: {}{}",
            args.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            eprintln!("\n*** SKIPPED a terminal test: `script` (util-linux) cannot run: {e} ***\n");
            None
        }
    }
}

/// A check long enough (seconds, not one) to show its progress: the stack of three layers
/// at twice the default rate, through a two-minute outage.
const LONG_CHECK: [&str; 8] = [
    "check", "LONG", "--layers", "3", "--rate", "2000", "--outage", "2m",
];

fn long_check(file: &str) -> Vec<&str> {
    LONG_CHECK
        .iter()
        .map(|a| if *a == "LONG" { file } else { a })
        .collect()
}

#[test]
fn a_long_check_shows_its_runs_on_a_terminal_and_nothing_off_it() {
    let file = example("three-attempts.toml");
    let args = long_check(&file);
    // Off a terminal: the report on stdout, nothing on stderr.
    let piped = stagger(&args);
    assert!(piped.status.success());
    assert!(
        piped.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let report = String::from_utf8(piped.stdout).unwrap();
    let Some(shown) = on_a_terminal(&args) else {
        return;
    };
    // The line counts runs in place, `\r` and a clear to the end of the line before each
    // drawing, and is erased before the report.
    assert!(shown.contains("\rchecking: "), "{shown:?}");
    let counts: Vec<(u64, u64)> = shown
        .split("\rchecking: ")
        .skip(1)
        .map(|part| {
            let (done, rest) = part.split_once('/').expect("done/total");
            let total = rest.split_once(" runs…\x1b[K").expect("runs…").0;
            (done.parse().unwrap(), total.parse().unwrap())
        })
        .collect();
    assert!(!counts.is_empty(), "{shown:?}");
    assert!(
        counts
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 == w[1].1),
        "the count only grows: {counts:?}"
    );
    assert!(
        counts.iter().all(|(done, total)| done <= total),
        "{counts:?}"
    );
    // Less the progress, the terminal shows exactly the report a pipe gets.
    let erased = "\r\x1b[K";
    let after = shown.rsplit_once(erased).expect("the line is erased").1;
    assert_eq!(after.replace("\r\n", "\n"), report);
}

/// `bench` on a terminal prints the summary, wrapped to the terminal, and where the rest
/// goes. Redirected, it prints the whole document, which
/// `the_committed_scoreboard_is_what_bench_prints_and_the_readme_quotes_it` (tests/cli.rs)
/// compares with docs/scoreboard.md.
#[test]
fn bench_prints_its_summary_on_a_terminal() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let committed =
        std::fs::read_to_string(root.join("docs/scoreboard.md")).expect("docs/scoreboard.md");
    let Some(shown) = on_a_terminal(&["bench"]) else {
        return;
    };
    // Seconds of simulation: the part under way is shown, and erased before the summary.
    assert!(shown.contains("\rsimulating "), "{shown:?}");
    let shown = shown
        .rsplit_once("\r\x1b[K")
        .map_or(shown.as_str(), |(_, after)| after)
        .replace("\r\n", "\n");
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines.len() < committed.lines().count() / 3,
        "{} lines on a terminal:\n{shown}",
        lines.len()
    );
    assert!(!shown.contains("## `herd`"), "{shown}");
    // Wrapped to a terminal's width: only a word longer than a line may pass it.
    for line in &lines {
        assert!(
            line.chars().count() <= 100 || !line.trim().contains(' '),
            "{} columns: {line}",
            line.chars().count()
        );
    }
    let last = shown
        .rsplit("\n\n")
        .find(|p| !p.trim().is_empty())
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        last,
        "This is the summary. The whole scoreboard, every workload's tables and the published \
         findings, is Markdown for a file: `--out DIR` writes it to DIR/scoreboard.md with its \
         plots, `--html FILE` as one page, and `stagger bench > FILE.md` prints it there."
    );
    // The summary is the scoreboard's own: its policy rows, as the document has them.
    for policy in ["`constant`", "`exponential-full-jitter`", "`no-retry`"] {
        let row = |text: &str| -> Vec<String> {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("| {policy} ")))
                .unwrap_or_else(|| panic!("{policy}: {text}"));
            line.split('|').map(|c| c.trim().to_owned()).collect()
        };
        assert_eq!(row(&shown), row(&committed), "{policy}");
    }
}

/// `explain hedging` measures its page for seconds in one library call: the progress names
/// what it measures and counts the seconds, and is erased before the page.
#[test]
fn explain_hedging_shows_what_it_measures_on_a_terminal() {
    let Some(shown) = on_a_terminal(&["explain", "hedging"]) else {
        return;
    };
    let drawn = shown
        .split("\rmeasuring the hedging page… ")
        .nth(1)
        .expect("the progress line");
    let seconds = drawn.split_once(" s\x1b[K").expect("its seconds").0;
    assert!(seconds.parse::<u64>().unwrap() >= 1, "{drawn:?}");
    let page = shown
        .rsplit_once("\r\x1b[K")
        .expect("the line is erased")
        .1
        .replace("\r\n", "\n");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let committed = std::fs::read_to_string(root.join("docs/hedging.md")).expect("a page");
    assert_eq!(page.lines().next(), committed.lines().next());
}

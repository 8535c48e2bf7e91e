//! Hostile input to `stagger check` and `stagger simulate --scenario`, run as a user runs
//! them: a file of one 10 MB line, a valid file whose 10 MB value is an unknown policy, a
//! 10 MB JSON value or key. Each is refused with status 2 and an error of at most 2 KiB on
//! stderr that still says what is wrong: the parsers quote the input, and the message
//! quotes it in excerpts.

mod support;

use support::{Files, stagger};

/// The most bytes an error may take on stderr.
const MOST: usize = 2048;

/// 10 MiB of `c`.
fn huge(c: char) -> String {
    std::iter::repeat_n(c, 10 << 20).collect()
}

/// Runs `stagger ARGS`, which must be refused: its stderr, checked to be an error of at most
/// [`MOST`] bytes that contains each of `says`.
fn refused(args: &[&str], says: &[&str]) -> String {
    let out = stagger(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown: String = stderr.chars().take(600).collect();
    let name = args
        .last()
        .map_or("", |a| a.rsplit('/').next().unwrap_or(a));
    assert_eq!(out.status.code(), Some(2), "{name}: {shown}");
    assert!(out.stdout.is_empty(), "{name}");
    assert!(
        stderr.len() <= MOST,
        "{name}: {} bytes on stderr, more than {MOST}: {shown}...",
        stderr.len()
    );
    assert!(stderr.starts_with("error: "), "{name}: {stderr}");
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    for words in says {
        assert!(stderr.contains(words), "{name}: `{words}` in {stderr}");
    }
    stderr
}

#[test]
fn a_check_of_10_mb_of_hostile_input_says_what_is_wrong_in_at_most_2_kib() {
    let files = Files::new("hostile-check");
    let x = huge('x');
    let a = huge('a');
    let line = files.write("line.toml", &x);
    let err = refused(
        &["check", &line],
        &[
            "not a retry configuration",
            "line 1, column",
            "expected `=`",
        ],
    );
    // The excerpt says how long the quoted line was.
    assert!(err.contains("10485760 bytes"), "{err}");
    let policy = files.write(
        "policy.toml",
        &format!("policy = \"{a}\"\nmax_attempts = 3\n"),
    );
    let err = refused(
        &["check", &policy],
        &["line 1, column 10", "unknown policy `aaaa", "exponential"],
    );
    assert!(err.contains("10485762 bytes"), "{err}");
    let key = files.write("key.toml", &format!("{x} = 1\n"));
    refused(&["check", &key], &["unknown field `xxxx", "max_attempts"]);
    let json = files.write("policy.json", &format!("{{\"policy\": \"{a}\"}}"));
    refused(
        &["check", &json],
        &["not a retry configuration", "unknown policy `aaaa"],
    );
    let key = files.write("key.json", &format!("{{\"{x}\": 1}}"));
    refused(&["check", &key], &["unknown field `xxxx", "max_attempts"]);
    // A value of many short words: no one of them is long, their line is.
    let words = "a ".repeat(5 << 20);
    let spaced = files.write("spaced.json", &format!("{{\"policy\": \"{words}\"}}"));
    refused(
        &["check", &spaced],
        &["unknown policy `a a a", "exponential"],
    );
    let spaced = files.write("spaced.toml", &format!("policy = \"{words}\"\n"));
    refused(
        &["check", &spaced],
        &["line 1, column 10", "unknown policy `a a a"],
    );
}

#[test]
fn a_scenario_of_10_mb_of_hostile_input_says_what_is_wrong_in_at_most_2_kib() {
    let files = Files::new("hostile-scenario");
    let herd = "seed = 1\n[clients]\nkind = \"fixed\"\ncount = 10\n[dependency]\nnetwork = { \
                constant = \"1ms\" }\nalways_fails = true\n[[retry]]\n";
    let x = huge('x');
    let a = huge('a');
    // The file is a scenario but for its policy.
    let valid = files.write("herd.toml", &format!("{herd}policy = \"constant\"\n"));
    let out = stagger(&["simulate", "--scenario", &valid]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = files.write("line.toml", &x);
    refused(
        &["simulate", "--scenario", &line],
        &["not a scenario", "line 1, column", "expected `=`"],
    );
    let policy = files.write("policy.toml", &format!("{herd}policy = \"{a}\"\n"));
    refused(
        &["simulate", "--scenario", &policy],
        &["line 9, column 10", "unknown policy `aaaa"],
    );
    let key = files.write("key.toml", &format!("{herd}{x} = 1\n"));
    refused(&["simulate", "--scenario", &key], &["unknown field `xxxx"]);
    let json = files.write(
        "policy.json",
        &format!(
            "{{\"seed\": 1, \"clients\": {{\"kind\": \"fixed\", \"count\": 10}}, \"dependency\": \
             {{\"network\": {{\"constant\": \"1ms\"}}, \"always_fails\": true}}, \"retry\": \
             [{{\"policy\": \"{a}\"}}]}}"
        ),
    );
    refused(
        &["simulate", "--scenario", &json],
        &["unknown policy `aaaa"],
    );
    let key = files.write("key.json", &format!("{{\"seed\": 1, \"{x}\": 1}}"));
    refused(&["simulate", "--scenario", &key], &["unknown field `xxxx"]);
}

#[test]
fn a_short_error_is_printed_whole() {
    let files = Files::new("hostile-short");
    let long = "b".repeat(300);
    let policy = files.write("policy.toml", &format!("policy = \"{long}\"\n"));
    let err = refused(&["check", &policy], &["unknown policy"]);
    assert!(err.contains(&format!("`{long}`")), "{err}");
}

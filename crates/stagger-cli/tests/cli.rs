//! The `stagger` binary, run as a user runs it.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{stagger, stdout};

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(args)).expect("one JSON object")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn delivery_schedule_json_is_seed_002s() {
    let doc = json(&["schedule", "--preset", "delivery", "--format", "json"]);
    assert_eq!(doc["policy"], "exponential-subtractive-jitter");
    assert_eq!(doc["preset"], "delivery");
    assert_eq!(doc["max_attempts"], 8);
    // Integers, exactly as seed 002 prints them.
    assert_eq!(
        doc["delays_ms"].to_string(),
        "[1000,2000,4000,8000,16000,32000,64000]"
    );
    assert_eq!(
        doc["elapsed_ms"].to_string(),
        "[1000,3000,7000,15000,31000,63000,127000]"
    );
    assert_eq!(doc["total_window_ms"], 127_000);
    assert_eq!(doc["bounds_ms"][6].to_string(), "[64000,64000]");
    assert_eq!(doc["exact"], true);
}

#[test]
fn forty_one_attempts_end_on_the_one_hour_cap() {
    let doc = json(&[
        "schedule",
        "--preset",
        "delivery",
        "--max-attempts",
        "41",
        "--format",
        "json",
    ]);
    let delays = numbers(&doc["delays_ms"]);
    assert_eq!(delays.len(), 40);
    assert_eq!(delays.last(), Some(&3_600_000.0));
}

#[test]
fn keyed_jitter_stays_in_the_80_to_100_percent_band_and_replays() {
    let args = [
        "schedule",
        "--preset",
        "delivery",
        "--jitter",
        "0.2",
        "--key",
        "delivery-123",
        "--format",
        "json",
    ];
    let first = stdout(&args);
    assert_eq!(first, stdout(&args), "the same key gives the same bytes");
    let doc: Value = serde_json::from_str(&first).unwrap();
    let published = [1000.0, 2000.0, 4000.0, 8000.0, 16000.0, 32000.0, 64000.0];
    for (d, p) in numbers(&doc["delays_ms"]).iter().zip(published) {
        assert!(*d <= p && *d >= 0.8 * p, "{d} outside [{}, {p}]", 0.8 * p);
    }
    assert_eq!(doc["key"], "delivery-123");
    let other = stdout(&[
        "schedule",
        "--preset",
        "delivery",
        "--jitter",
        "0.2",
        "--key",
        "delivery-124",
        "--format",
        "json",
    ]);
    assert_ne!(first, other);
}

#[test]
fn every_policy_schedules_in_every_format() {
    for name in [
        "constant",
        "linear",
        "exponential",
        "exponential-full-jitter",
        "exponential-equal-jitter",
        "decorrelated-jitter",
        "decorrelated-jitter-v2",
        "exponential-subtractive-jitter",
        "exponential-proportional-jitter",
        "immediate",
        "no-retry",
    ] {
        let doc = json(&[
            "schedule", "--policy", name, "--seed", "7", "--format", "json",
        ]);
        assert_eq!(doc["policy"], name);
        let delays = numbers(&doc["delays_ms"]);
        let bounds = doc["bounds_ms"].as_array().unwrap();
        assert_eq!(delays.len(), bounds.len());
        for (d, b) in delays.iter().zip(bounds) {
            let (lo, hi) = (b[0].as_f64().unwrap(), b[1].as_f64().unwrap());
            assert!(lo <= *d && *d <= hi, "{name}: {d} outside [{lo}, {hi}]");
        }
        let csv = stdout(&[
            "schedule", "--policy", name, "--seed", "7", "--format", "csv",
        ]);
        assert_eq!(csv.lines().count(), delays.len() + 1, "{name}");
        let table = stdout(&["schedule", "--policy", name]);
        assert!(table.contains("| Retry | Delay before it"), "{name}");
    }
}

#[test]
fn the_table_has_seed_002s_shape() {
    let table = stdout(&["schedule", "--preset", "delivery"]);
    assert!(table.contains("| Retry | Delay before it | Elapsed since first failure |"));
    assert!(table.contains("| 6     | 32 s            | 1 min 3 s                   |"));
    assert!(table.contains("Total retry window: 2 min 7 s (127000 ms)"));
    let bands = stdout(&["schedule", "--preset", "delivery", "--jitter", "0.2"]);
    assert!(bands.contains("| 4     | 6.4 s – 8 s"), "{bands}");
    assert!(bands.contains("between 1 min 41.6 s and 2 min 7 s"));
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_parameter() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["schedule", "--preset", "delivery", "--jitter", "1.5"],
            "--jitter",
        ),
        (
            &["schedule", "--preset", "delivery", "--jitter", "-0.1"],
            "--jitter",
        ),
        (
            &["schedule", "--preset", "delivery", "--jitter", "NaN"],
            "--jitter",
        ),
        (
            &["schedule", "--preset", "delivery", "--base", "-1s"],
            "--base",
        ),
        (
            &["schedule", "--preset", "delivery", "--base", "1 parsec"],
            "--base",
        ),
        (
            &[
                "schedule", "--preset", "delivery", "--cap", "1ms", "--base", "1s",
            ],
            "--cap",
        ),
        (
            &["schedule", "--policy", "exponential", "--factor", "0"],
            "--factor",
        ),
        (
            &["schedule", "--policy", "exponential", "--factor", "inf"],
            "--factor",
        ),
        (
            &["schedule", "--policy", "constant", "--factor", "2"],
            "--factor",
        ),
        (
            &["schedule", "--preset", "delivery", "--max-attempts", "0"],
            "--max-attempts",
        ),
        (
            &["schedule", "--preset", "delivery", "--max-attempts", "-3"],
            "--max-attempts",
        ),
        (
            &[
                "schedule",
                "--preset",
                "delivery",
                "--max-attempts",
                "4294967295",
            ],
            "--max-attempts",
        ),
        (&["schedule", "--policy", "nope"], "--policy"),
        (&["schedule", "--preset", "nope"], "--preset"),
        (
            &["schedule", "--policy", "constant", "--format", "xml"],
            "--format",
        ),
        (
            &[
                "schedule", "--policy", "constant", "--seed", "1", "--key", "k",
            ],
            "--seed",
        ),
        (&["schedule"], "--policy"),
        (&["explain", "nope"], "nope"),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, names) in cases {
        let out = stagger(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn policies_and_explain_cover_the_catalog() {
    let list = stdout(&["policies"]);
    for line in [
        "`constant`",
        "`exponential-full-jitter`",
        "`no-retry`",
        "`delivery`",
        "`cenkalti`",
    ] {
        assert!(list.contains(line), "{line}");
    }
    for kind in stagger_core::PolicyKind::ALL {
        let name = kind.name();
        let page = stdout(&["explain", name]);
        for heading in [
            "## When to use it",
            "## When not to use it",
            "## How it works",
            "## Tie-breaking",
            "## Parameters",
            "## Complexity",
            "## Source",
            "## Notes",
        ] {
            assert!(page.contains(heading), "{name}: {heading}");
        }
    }
    let preset = stdout(&["explain", "grpc"]);
    assert!(preset.contains("exponential-proportional-jitter"));
}

#[test]
fn the_committed_catalog_is_what_the_catalog_command_writes() {
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/catalog.md");
    let committed = std::fs::read_to_string(&committed).expect("docs/catalog.md exists");
    assert_eq!(
        stdout(&["catalog"]),
        committed,
        "docs/catalog.md is stale: run `cargo run --release -p stagger-cli -- catalog --out docs`"
    );
}

/// Each command's name says what it makes: `catalog` the catalog as Markdown, and the HTML
/// reports come from `--html`. The old name `report` still runs the catalog, unlisted.
#[test]
fn the_catalog_is_named_catalog_and_report_is_its_hidden_old_name() {
    let help = stdout(&["--help"]);
    assert!(
        help.lines()
            .any(|l| l.trim_start().starts_with("catalog ") && l.contains("Markdown")),
        "{help}"
    );
    assert!(
        !help.lines().any(|l| l.trim_start().starts_with("report")),
        "{help}"
    );
    assert_eq!(stdout(&["report"]), stdout(&["catalog"]));
    for command in ["simulate", "bench"] {
        let own = stdout(&[command, "--help"]);
        assert!(own.contains("--html <FILE.html>"), "{command}: {own}");
    }
}

/// A name that is not one gets the closest valid names, if any look meant, and the list of
/// valid ones, in one line: policies, presets, budgets, workloads, the flags' own values,
/// pages, subcommands and flags.
#[test]
fn an_unknown_name_gets_the_closest_ones_and_the_valid_ones() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "exponentail-full-jitter",
            ],
            &[
                "invalid --policy: unknown policy or preset `exponentail-full-jitter` (did you \
                 mean `exponential-full-jitter`?)",
                "the policies are: constant, linear,",
                "the presets are: delivery, aws-standard,",
            ],
        ),
        (
            &["simulate", "--workload", "herd", "--policy", "delivry"],
            &["(did you mean `delivery`?)"],
        ),
        (
            &["simulate", "--workload", "hrd", "--policy", "constant"],
            &["unknown workload `hrd` (did you mean `herd`?); the workloads are: herd, outage,"],
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--budget",
                "aws-standrd",
            ],
            &["unknown budget `aws-standrd` (did you mean `aws-standard`?); the budgets are: "],
        ),
        (
            &[
                "simulate",
                "--workload",
                "throttle",
                "--policy",
                "constant",
                "--dispersal",
                "flor",
            ],
            &["(did you mean `floor`?); the rules are: floor, policy-above, uniform-asked"],
        ),
        (
            &[
                "simulate",
                "--workload",
                "throttle",
                "--policy",
                "constant",
                "--retry-after-form",
                "fixd",
            ],
            &["(did you mean `fixed`?); the forms are: fixed, exact,"],
        ),
        (
            &[
                "simulate",
                "--workload",
                "partition",
                "--policy",
                "constant",
                "--budget-partition",
                "share",
            ],
            &["(did you mean `shared`?); the modes are: shared, partitioned"],
        ),
        (
            &["explain", "aws-standrd"],
            &[
                "unknown policy, preset, budget or page `aws-standrd` (did you mean \
                 `aws-standard`?)",
                "the pages are: server-waits, hedging",
            ],
        ),
        // Nothing close: no guess, the list alone.
        (
            &["explain", "qqq"],
            &["unknown policy, preset, budget or page `qqq`; the policies are: "],
        ),
        (
            &["chek"],
            &[
                "'check'",
                "the commands are: policies, budgets, explain, schedule, catalog,",
            ],
        ),
        (
            &["simulate", "--workload", "herd", "--polcy", "constant"],
            &["tip: a similar argument exists: '--policy'"],
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--format",
                "jsn",
            ],
            &["[possible values: table, json, csv]", "'json'"],
        ),
    ];
    for (args, says) in cases {
        let out = stagger(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        for said in *says {
            assert!(stderr.contains(said), "{args:?}: {said}\n{stderr}");
        }
    }
    // `aws-standard` is a preset and a budget: it is suggested once.
    let out = stagger(&["explain", "aws-standrd"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("did you mean").count(), 1, "{stderr}");
    assert!(
        !stderr.contains("`aws-standard` or `aws-standard`"),
        "{stderr}"
    );
}

/// The header and cells of a Markdown table's lines, trimmed.
fn table(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("| -"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// `simulate` prints the columns its workload has, not every column of every workload; the
/// herd, whose requests all give up by design, says what its columns mean instead of showing
/// a success rate of 0.
#[test]
fn simulate_prints_the_columns_its_workload_has() {
    let cases: &[(&str, &[&str])] = &[
        ("herd", &["policy", "load", "peak_window_share"]),
        (
            "outage",
            &[
                "policy",
                "success_rate",
                "load",
                "peak_window_share",
                "p50_ms",
                "p99_ms",
                "met_outage",
                "recovery_load",
            ],
        ),
        (
            "spike",
            &[
                "policy",
                "success_rate",
                "load",
                "peak_window_share",
                "p50_ms",
                "p99_ms",
                "tail_goodput_ratio",
                "recovery_ms",
            ],
        ),
        (
            "throttle",
            &[
                "policy",
                "served_share",
                "load",
                "peak_window_share",
                "p50_ms",
                "p99_ms",
                "rejected_per_success",
                "early_retries",
            ],
        ),
        (
            // No retries at all (the tail's pool answers every attempt): no share of them.
            "tail",
            &[
                "policy",
                "success_rate",
                "load",
                "p50_ms",
                "p99_ms",
                "p999_ms",
            ],
        ),
    ];
    for (workload, columns) in cases {
        let text = stdout(&[
            "simulate",
            "--workload",
            workload,
            "--policy",
            "exponential-full-jitter",
        ]);
        let rows = table(&text);
        assert_eq!(rows[0], *columns, "{workload}:\n{text}");
        assert!(
            rows[1..].iter().all(|r| r.iter().all(|c| !c.is_empty())),
            "{workload}: an empty cell\n{text}"
        );
        let csv = stdout(&[
            "simulate",
            "--workload",
            workload,
            "--policy",
            "exponential-full-jitter",
            "--format",
            "csv",
        ]);
        assert_eq!(
            csv.lines().next(),
            Some(columns.join(",").as_str()),
            "{csv}"
        );
    }
    // A budget adds its column.
    let text = stdout(&[
        "simulate",
        "--workload",
        "herd",
        "--policy",
        "constant",
        "--budget",
        "aws-standard",
    ]);
    assert_eq!(
        table(&text)[0],
        ["policy", "budget", "load", "peak_window_share"]
    );
    // The herd says why nothing succeeds, and what its columns mean.
    let herd = stdout(&["simulate", "--workload", "herd", "--policy", "constant"]);
    assert!(
        herd.contains("fails every attempt by design")
            && herd.contains("load is the attempts per request")
            && herd.contains("peak_window_share is the busiest window's share of all retries"),
        "{herd}"
    );
    assert!(!herd.contains("success_rate"), "{herd}");
    // The JSON keeps every field.
    let doc = json(&[
        "simulate",
        "--workload",
        "herd",
        "--policy",
        "constant",
        "--format",
        "json",
    ]);
    assert_eq!(doc["results"][0]["success_rate"], 0.0);
}

#[test]
fn the_readme_catalog_table_is_what_policies_prints() {
    let readme = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&readme).expect("README.md exists");
    let listing = stdout(&["policies"]);
    let catalog: String = listing
        .lines()
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(catalog.lines().count() == 13, "{catalog}");
    assert!(
        readme.contains(&catalog),
        "README's catalog table differs from `stagger policies`"
    );
}

#[test]
fn budgets_are_listed_and_explained_by_name() {
    let list = stdout(&["budgets"]);
    for name in [
        "aws-standard",
        "aws-2026",
        "brooker",
        "finagle",
        "grpc-throttle",
        "sre-adaptive",
        "breaker",
    ] {
        assert!(list.contains(&format!("`{name}`")), "{name}");
        let page = stdout(&["explain", name]);
        assert!(page.contains("##"), "{name} has a page");
    }
    // `aws-standard` is both a policy preset and a budget: both are explained.
    let both = stdout(&["explain", "aws-standard"]);
    assert!(both.contains("# Preset `aws-standard`") && both.contains("also a retry budget"));
}

#[test]
fn simulate_prints_one_json_object_with_a_row_per_strategy() {
    let args = [
        "simulate",
        "--workload",
        "herd",
        "--policy",
        "constant,exponential-full-jitter",
        "--clients",
        "200",
        "--seed",
        "3",
        "--format",
        "json",
    ];
    let text = stdout(&args);
    let doc: Value = serde_json::from_str(&text).expect("one JSON object");
    assert_eq!(doc["workload"], "herd");
    assert_eq!(doc["seed"], 3);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for key in [
        "policy",
        "budget",
        "success_rate",
        "load",
        "peak_window_share",
        "p50_ms",
        "p99_ms",
    ] {
        assert!(results[0].get(key).is_some(), "{key}");
    }
    assert_eq!(results[0]["policy"], "constant");
    assert!((results[0]["peak_window_share"].as_f64().unwrap() - 1.0 / 7.0).abs() < 1e-9);
    // Same seed, same bytes.
    assert_eq!(text, stdout(&args));
}

#[test]
fn impossible_simulations_exit_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--clients",
                "0",
            ],
            "--clients",
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--clients",
                "-5",
            ],
            "--clients",
        ),
        (
            &["simulate", "--workload", "nope", "--policy", "constant"],
            "--workload",
        ),
        (
            &[
                "simulate",
                "--workload",
                "outage",
                "--policy",
                "constant",
                "--rate",
                "-1",
            ],
            "--rate",
        ),
        (
            &[
                "simulate",
                "--workload",
                "outage",
                "--policy",
                "constant",
                "--duration",
                "0s",
            ],
            "--duration",
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--rounds",
                "3",
            ],
            "--rounds",
        ),
        (
            &["simulate", "--workload", "herd", "--policy", "nope"],
            "--policy",
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--budget",
                "nope",
            ],
            "--budget",
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--clients",
                "100000000",
            ],
            "clients",
        ),
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "constant",
                "--timeout",
                "1s",
            ],
            "--timeout",
        ),
        (
            &[
                "simulate",
                "--workload",
                "outage",
                "--policy",
                "constant",
                "--duration",
                "45s",
            ],
            "--duration",
        ),
        (
            &[
                "simulate",
                "--workload",
                "outage",
                "--policy",
                "constant",
                "--plot",
                "never-written.svg",
            ],
            "--plot",
        ),
        (
            &[
                "simulate",
                "--workload",
                "contention",
                "--policy",
                "aws-2015-decorrelated-clamped",
                "--max-attempts",
                "3",
            ],
            "--max-attempts",
        ),
        (
            &[
                "simulate",
                "--workload",
                "contention",
                "--policy",
                "aws-2015-decorrelated-clamped",
                "--base",
                "10ms",
                "--cap",
                "1ms",
            ],
            "--cap",
        ),
    ];
    for (args, names) in cases {
        let out = stagger(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
    }
}

#[test]
fn the_committed_scoreboard_is_what_bench_prints_and_the_readme_quotes_it() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let printed = stdout(&["bench"]);
    let committed =
        std::fs::read_to_string(root.join("docs/scoreboard.md")).expect("docs/scoreboard.md");
    assert_eq!(
        printed, committed,
        "docs/scoreboard.md is stale: run `cargo run --release -p stagger-cli -- bench --out docs --readme README.md`"
    );
    let summary = printed
        .split("## Summary\n\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a summary section");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(
        readme.contains(summary.trim_end()),
        "the README's scoreboard is stale"
    );
    for kind in stagger_core::PolicyKind::ALL {
        let page =
            std::fs::read_to_string(root.join(format!("docs/policies/{kind}.md"))).expect("a page");
        let explained = stdout(&["explain", kind.name()]);
        assert_eq!(page, explained, "docs/policies/{kind}.md is stale");
    }
    let page = std::fs::read_to_string(root.join("docs/server-waits.md")).expect("a page");
    assert_eq!(
        page,
        stdout(&["explain", "server-waits"]),
        "docs/server-waits.md is stale"
    );
    let page = std::fs::read_to_string(root.join("docs/hedging.md")).expect("a page");
    assert_eq!(
        page,
        stdout(&["explain", "hedging"]),
        "docs/hedging.md is stale"
    );
}

#[test]
fn the_throttle_variants_commands_reproduce_their_rows() {
    // A reader's way to check a row: the command the section prints, at each of its seeds.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let board = std::fs::read_to_string(root.join("docs/scoreboard.md")).expect("a board");
    let section = board
        .split("### Throttle variants")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a throttle variants section");
    let seeds: Vec<u64> = {
        let (_, rest) = section.split_once("world seeds ").expect("the seeds");
        let (first, rest) = rest.split_once(" to ").expect("a range");
        let last = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap();
        (first.parse().unwrap()..=last.parse().unwrap()).collect()
    };
    let commands: Vec<&str> = section
        .split('`')
        .filter(|s| s.starts_with("stagger simulate"))
        .collect();
    assert_eq!(commands.len(), 2, "{section}");
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    for (variant, command) in ["open arrivals", "concurrency limiter"]
        .iter()
        .zip(commands)
    {
        for (gate, rule) in [("none", "floor"), ("shared", "uniform-asked")] {
            let (mut requests, mut served, mut attempts, mut refused, mut peak, mut early) =
                (0u64, 0u64, 0u64, 0.0f64, 0.0f64, 0u64);
            let mut range = (f64::INFINITY, f64::NEG_INFINITY);
            for seed in &seeds {
                let seed = seed.to_string();
                let mut args: Vec<&str> = command
                    .split_whitespace()
                    .skip(1)
                    .filter(|a| *a != "[--gate]")
                    .map(|a| match a {
                        "RULE" => rule,
                        "N" => &seed,
                        other => other,
                    })
                    .collect();
                if gate == "shared" {
                    args.push("--gate");
                }
                args.extend(["--format", "json"]);
                let doc = json(&args);
                let row = &doc["results"][0];
                let count = |key: &str| row[key].as_u64().expect(key);
                let share = row["served_share"].as_f64().unwrap();
                range = (range.0.min(share), range.1.max(share));
                requests += count("first_tries");
                served += count("successes");
                attempts += count("attempts");
                refused +=
                    row["rejected_per_success"].as_f64().unwrap() * count("successes") as f64;
                peak += row["peak_window_share"].as_f64().unwrap();
                early += count("early_retries");
            }
            let n = seeds.len() as f64;
            let per_run = requests as f64 / n;
            let expected = [
                if per_run.fract() == 0.0 {
                    format!("{per_run:.0}")
                } else {
                    format!("{per_run:.1}")
                },
                format!(
                    "{} ({}-{})",
                    pct(served as f64 / requests as f64),
                    pct(range.0),
                    pct(range.1)
                ),
                format!("{:.3}", attempts as f64 / requests as f64),
                format!("{:.3}", refused / served as f64),
                pct(peak / n),
                early.to_string(),
            ];
            assert_eq!(early, 0, "{variant}, {gate}, {rule}");
            let row: Vec<&str> = section
                .lines()
                .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
                .find(|cols| {
                    cols.get(1) == Some(variant)
                        && cols.get(2) == Some(&gate)
                        && cols.get(3).copied() == Some(format!("`{rule}`").as_str())
                })
                .unwrap_or_else(|| panic!("a row for {variant}, {gate}, {rule}"));
            assert_eq!(row[4..10], expected[..], "{variant}, {gate}, {rule}");
        }
    }
}

#[test]
fn the_throttle_workload_reports_its_keys_for_each_rule_and_refuses_foreign_flags() {
    let common = [
        "simulate",
        "--workload",
        "throttle",
        "--policy",
        "exponential-full-jitter",
        "--base",
        "100ms",
        "--cap",
        "2s",
        "--max-attempts",
        "4",
        "--format",
        "json",
    ];
    let mut served = Vec::new();
    for rule in ["floor", "policy-above", "uniform-asked"] {
        let mut args = common.to_vec();
        args.extend(["--dispersal", rule]);
        let doc = json(&args);
        let row = &doc["results"][0];
        for key in ["served_share", "rejected_per_success", "peak_window_share"] {
            assert!(row[key].is_f64(), "{rule}: {key} in {row}");
        }
        assert_eq!(row["early_retries"], 0, "{rule}");
        assert_eq!(row["dispersal"], rule);
        served.push(row["served_share"].as_f64().unwrap());
    }
    // The default spread serves more than the floor alone.
    assert!(served[2] > served[0], "{served:?}");
    // A throttle flag on another workload, and a bad rule, are refused with one line.
    for bad in [
        &[
            "simulate",
            "--workload",
            "herd",
            "--policy",
            "constant",
            "--dispersal",
            "floor",
        ][..],
        &[
            "simulate",
            "--workload",
            "throttle",
            "--policy",
            "constant",
            "--dispersal",
            "late",
        ],
        &[
            "simulate",
            "--workload",
            "throttle",
            "--policy",
            "constant",
            "--retry-after-form",
            "x",
        ],
    ] {
        let out = stagger(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim().lines().count(),
            1,
            "{bad:?}"
        );
    }
}

#[test]
fn the_partition_workload_keeps_host_bs_retries_when_the_budget_is_per_host() {
    let common = [
        "simulate",
        "--workload",
        "partition",
        "--policy",
        "aws-standard",
        "--budget",
        "aws-standard",
        "--format",
        "json",
    ];
    let host_b = |mode: &str| {
        let mut args = common.to_vec();
        args.extend(["--budget-partition", mode]);
        let doc = json(&args);
        let row = doc["results"][0].clone();
        assert_eq!(row["budget_partition"], mode);
        for host in ["host_a", "host_b"] {
            for key in ["requests", "successes", "retries", "refused"] {
                assert!(row[host][key].is_u64(), "{mode}: {host}.{key} in {row}");
            }
        }
        assert_eq!(row["host_a"]["successes"], 0, "{mode}: host A is down");
        row["host_b"].clone()
    };
    let (shared, partitioned) = (host_b("shared"), host_b("partitioned"));
    let share = |b: &Value| b["success_share"].as_f64().unwrap();
    assert!(
        share(&partitioned) > share(&shared) + 0.1,
        "{shared} against {partitioned}"
    );
    assert_eq!(partitioned["refused"], 0);
    assert!(shared["refused"].as_u64().unwrap() > 0, "{shared}");
    // The default is a shared budget.
    assert_eq!(json(&common)["results"][0]["host_b"], shared);
    // The flag on another workload, and a mode that does not exist, are refused with one line.
    for bad in [
        &[
            "simulate",
            "--workload",
            "throttle",
            "--policy",
            "constant",
            "--budget-partition",
            "shared",
        ][..],
        &[
            "simulate",
            "--workload",
            "partition",
            "--policy",
            "constant",
            "--budget-partition",
            "both",
        ],
        &[
            "simulate",
            "--workload",
            "partition",
            "--policy",
            "constant",
            "--clients",
            "3",
        ],
    ] {
        let out = stagger(bad);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{bad:?}: {stderr}");
        assert!(
            stderr.contains("--budget-partition") || stderr.contains("--clients"),
            "{bad:?}: {stderr}"
        );
    }
}

#[test]
fn the_tail_workload_reports_its_percentiles_and_an_attempt_timeout_cuts_the_tail() {
    let common = [
        "simulate",
        "--workload",
        "tail",
        "--policy",
        "immediate",
        "--max-attempts",
        "3",
        "--duration",
        "30s",
        "--pause-every",
        "29s",
        "--format",
        "json",
    ];
    let row = |extra: &[&str]| {
        let mut args = common.to_vec();
        args.extend_from_slice(extra);
        let text = stdout(&args);
        assert_eq!(text, stdout(&args), "same seed, same bytes");
        let doc: Value = serde_json::from_str(&text).expect("one JSON object");
        assert_eq!(doc["workload"], "tail");
        let row = doc["results"][0].clone();
        for key in ["p50_ms", "p99_ms", "p999_ms", "load", "success_rate"] {
            assert!(row[key].is_f64(), "{extra:?}: {key} in {row}");
        }
        row
    };
    let plain = row(&[]);
    let timed = row(&["--attempt-timeout", "50ms"]);
    let p999 = |r: &Value| r["p999_ms"].as_f64().unwrap();
    assert!(p999(&plain) > 5.0 * p999(&timed), "{plain} against {timed}");
    let load = timed["load"].as_f64().unwrap();
    assert!(load > 1.0 && load < 1.1, "{timed}");
    // The tail's flags elsewhere, and bad values, are refused with one line naming the flag.
    for (bad, flag) in [
        (
            &[
                "simulate",
                "--workload",
                "open-loop",
                "--policy",
                "constant",
                "--attempt-timeout",
                "50ms",
            ][..],
            "--attempt-timeout",
        ),
        (
            &[
                "simulate",
                "--workload",
                "tail",
                "--policy",
                "constant",
                "--load",
                "1.5",
            ],
            "--load",
        ),
        (
            &[
                "simulate",
                "--workload",
                "tail",
                "--policy",
                "constant",
                "--replicas",
                "0",
            ],
            "--replicas",
        ),
        (
            &[
                "simulate",
                "--workload",
                "tail",
                "--policy",
                "constant",
                "--attempt-timeout",
                "0s",
            ],
            "--attempt-timeout",
        ),
        (
            &[
                "simulate",
                "--workload",
                "tail",
                "--policy",
                "constant",
                "--clients",
                "3",
            ],
            "--clients",
        ),
    ] {
        let out = stagger(bad);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{bad:?}: {stderr}");
        assert!(stderr.contains(flag), "{bad:?}: {stderr}");
    }
}

/// `--hedge` runs each policy once per value, hedged rows named by their hedging, and bad
/// values or workloads that do not hedge are refused with one line naming the flag.
#[test]
fn simulate_hedges_the_tail_and_refuses_what_it_cannot_hedge() {
    let text = stdout(&[
        "simulate",
        "--workload",
        "tail",
        "--policy",
        "immediate",
        "--max-attempts",
        "2",
        "--duration",
        "30s",
        "--pause-every",
        "29s",
        "--hedge",
        "none,30ms",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&text).expect("one JSON object");
    let rows = doc["results"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["policy"], "immediate");
    assert_eq!(rows[1]["policy"], "hedge-30msx2");
    let p999 = |r: &Value| r["p999_ms"].as_f64().unwrap();
    assert!(p999(&rows[0]) > 5.0 * p999(&rows[1]), "{text}");
    let load = rows[1]["load"].as_f64().unwrap();
    assert!(load > 1.0 && load < 1.2, "{text}");
    for (bad, flag) in [
        (&["--workload", "tail", "--hedge", "p100"][..], "--hedge"),
        (&["--workload", "tail", "--hedge", "fast"], "--hedge"),
        (&["--workload", "tail", "--hedge", "-1ms"], "--hedge"),
        (&["--workload", "contention", "--hedge", "p95"], "--hedge"),
        (&["--workload", "tail", "--fanout", "0"], "--fanout"),
        (&["--workload", "herd", "--fanout", "2"], "--fanout"),
    ] {
        let mut args = vec!["simulate", "--policy", "immediate"];
        args.extend_from_slice(bad);
        let out = stagger(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{bad:?}: {stderr}");
        assert!(stderr.contains(flag), "{bad:?}: {stderr}");
    }
}

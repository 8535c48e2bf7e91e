//! `stagger simulate` estimates a run's events and memory before it starts, refuses with one
//! line and exit 2 what would pass `--max-memory` or `--max-events`, and otherwise runs: no run
//! the CLI accepts aborts, and the estimate it states is honest.

mod support;

use support::{Limited, limiter, stagger, stagger_limited};

/// The address space the runs under a limit get: small enough that every size flag's maximum
/// is far beyond it, large enough for the binary itself.
const LIMIT: u64 = 512 << 20;

/// Seconds a run under the limit may take: an estimate refuses at once, and an accepted run
/// here is small.
const SECONDS: u64 = 20;

/// Exit 0, or exit 2 with exactly one line on stderr; never a signal or the time limit.
fn assert_clean(args: &[&str], run: &Limited) {
    let shown = format!(
        "`stagger {}` under a {} MiB address space: {run:?}",
        args.join(" "),
        LIMIT >> 20
    );
    assert!(!run.timed_out, "ran past {SECONDS} s: {shown}");
    match run.code {
        Some(0) => {}
        Some(2) => {
            assert_eq!(run.stderr.lines().count(), 1, "{shown}");
            assert!(run.stderr.starts_with("error: "), "{shown}");
        }
        _ => panic!("ended by a signal or an unexpected status: {shown}"),
    }
}

#[test]
fn the_issues_runs_are_refused_at_once_under_a_memory_limit() {
    let Some(limiter) = limiter() else { return };
    let cases: [(&[&str], &str); 3] = [
        // 3.7 GB and 25 s before; refused for memory.
        (
            &[
                "simulate",
                "--workload",
                "herd",
                "--policy",
                "exponential",
                "--clients",
                "10000000",
            ],
            "--max-memory",
        ),
        // 3 GB before; now a few MB, but 7.6e7 events.
        (
            &[
                "simulate",
                "--workload",
                "outage",
                "--policy",
                "immediate",
                "--rate",
                "200000",
                "--duration",
                "50s",
            ],
            "--max-events",
        ),
        // 52 s before: 1e7 arrivals are 4e7 events, and 1.2 million requests in flight.
        (
            &[
                "simulate",
                "--workload",
                "open-loop",
                "--policy",
                "constant",
                "--clients",
                "100000",
                "--rate",
                "100",
                "--duration",
                "1s",
            ],
            "--max-",
        ),
    ];
    for (args, limit) in cases {
        let run = stagger_limited(limiter, LIMIT, SECONDS, args);
        assert_clean(args, &run);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("would") && run.stderr.contains(limit),
            "{args:?} is refused by its estimate, naming {limit}: {}",
            run.stderr
        );
    }
}

#[test]
fn every_workload_at_its_accepted_maxima_exits_0_or_2_under_a_memory_limit() {
    let Some(limiter) = limiter() else { return };
    // The largest value of each size flag that the workload accepts, alone and together;
    // `--max-events` keeps the runs that are accepted short in a debug build.
    let maxima: &[&[&str]] = &[
        &["herd", "--clients", "10000000"],
        &["herd", "--clients", "10000000", "--window", "1d"],
        &["herd", "--clients", "1", "--max-attempts", "4294967295"],
        &["outage", "--rate", "217391", "--duration", "46s"],
        &[
            "outage",
            "--rate",
            "115",
            "--duration",
            "1d",
            "--window",
            "1d",
        ],
        &[
            "outage",
            "--rate",
            "217391",
            "--duration",
            "46s",
            "--timeout",
            "1d",
        ],
        &[
            "outage",
            "--rate",
            "217391",
            "--duration",
            "46s",
            "--retry-after",
            "1d",
        ],
        &["contention", "--clients", "10000", "--rounds", "2"],
        &["contention", "--clients", "141", "--rounds", "10000"],
        &["contention", "--clients", "1", "--rounds", "10000"],
        &[
            "open-loop",
            "--clients",
            "100000",
            "--rate",
            "100",
            "--duration",
            "1s",
        ],
        &[
            "open-loop",
            "--clients",
            "1",
            "--rate",
            "100000",
            "--duration",
            "100s",
        ],
        &[
            "open-loop",
            "--clients",
            "100000",
            "--rate",
            "0.001",
            "--duration",
            "1d",
            "--failure-rate",
            "1",
        ],
        &[
            "serial",
            "--clients",
            "100000",
            "--duration",
            "5s",
            "--failure-rate",
            "1",
        ],
        &[
            "serial",
            "--clients",
            "1",
            "--duration",
            "1d",
            "--window",
            "1d",
        ],
        &["spike", "--rate", "12500"],
        &["spike", "--rate", "11.57", "--duration", "1d"],
        &["ramp", "--rate", "12500"],
        &["ramp", "--rate", "11.5", "--duration", "1d"],
        &["throttle", "--clients", "100000"],
        &["throttle", "--rate", "1000000", "--duration", "1d"],
        &[
            "throttle",
            "--clients",
            "100000",
            "--limit-concurrency",
            "4294967295",
        ],
        &[
            "throttle",
            "--clients",
            "100000",
            "--limit-burst",
            "1000000",
            "--timeout",
            "1d",
        ],
        &["partition", "--rate", "1000000", "--duration", "10s"],
        &[
            "partition",
            "--rate",
            "115",
            "--duration",
            "1d",
            "--window",
            "1d",
            "--failure-rate",
            "1",
        ],
        &[
            "partition",
            "--rate",
            "1000000",
            "--duration",
            "10s",
            "--budget",
            "aws-standard",
            "--budget-partition",
            "partitioned",
        ],
        &["tail", "--replicas", "10000", "--concurrency", "10000"],
        &["tail", "--replicas", "400"],
        &[
            "tail",
            "--replicas",
            "400",
            "--attempt-timeout",
            "1ms",
            "--timeout",
            "1d",
            "--pause",
            "1d",
            "--pause-every",
            "1ms",
        ],
        &[
            "tail",
            "--replicas",
            "1",
            "--concurrency",
            "1",
            "--load",
            "0.99",
            "--duration",
            "1d",
            "--window",
            "1d",
        ],
    ];
    let policies = [
        "exponential-full-jitter",
        "immediate,constant",
        "aws-2015-decorrelated-clamped",
    ];
    let mut refused_by_estimate = 0;
    for workload in maxima {
        for policy in policies {
            if policy.starts_with("aws-2015") && workload.contains(&"--max-attempts") {
                continue;
            }
            let mut args = vec![
                "simulate",
                "--workload",
                workload[0],
                "--policy",
                policy,
                "--max-events",
                "300000",
            ];
            args.extend_from_slice(&workload[1..]);
            let run = stagger_limited(limiter, LIMIT, SECONDS, &args);
            assert_clean(&args, &run);
            assert!(
                !run.stderr.contains("unexpected argument"),
                "{args:?}: {}",
                run.stderr
            );
            refused_by_estimate += usize::from(run.stderr.contains("would"));
        }
    }
    assert!(refused_by_estimate > maxima.len(), "{refused_by_estimate}");
}

#[test]
fn a_run_past_the_memory_limit_names_it_and_bad_limits_exit_2() {
    if let Some(limiter) = limiter() {
        // Not the events: the memory.
        let args = [
            "simulate",
            "--workload",
            "herd",
            "--policy",
            "exponential",
            "--clients",
            "10000000",
            "--max-events",
            "1e9",
        ];
        let run = stagger_limited(limiter, LIMIT, SECONDS, &args);
        assert_clean(&args, &run);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert!(
            run.stderr.contains("--max-memory") && run.stderr.contains("address-space limit"),
            "{}",
            run.stderr
        );
    }
    // An explicit limit, with no limiter needed.
    let small = stagger(&[
        "simulate",
        "--workload",
        "herd",
        "--policy",
        "constant",
        "--clients",
        "1000000",
        "--max-memory",
        "16MiB",
    ]);
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert_eq!(small.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--max-memory 16.0 MiB"), "{stderr}");
    for (flag, value) in [
        ("--max-memory", "12parsecs"),
        ("--max-memory", "0"),
        ("--max-memory", "-1GiB"),
        ("--max-events", "0"),
        ("--max-events", "1.5"),
        ("--max-events", "many"),
    ] {
        let out = stagger(&[
            "simulate",
            "--workload",
            "herd",
            "--policy",
            "constant",
            flag,
            value,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
    }
}

/// The figures of `--stats`: estimated events and bytes, measured events and peak bytes.
fn stats(stderr: &str) -> (f64, f64, f64, f64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("estimated: "))
        .unwrap_or_else(|| panic!("no --stats line in {stderr}"));
    let after = |marker: &str| {
        let at = line
            .find(marker)
            .unwrap_or_else(|| panic!("`{marker}` in {line}"))
            + marker.len();
        &line[at..]
    };
    let number = |text: &str| -> f64 {
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        text[..end]
            .parse()
            .unwrap_or_else(|_| panic!("a number in {text}"))
    };
    let bytes = |text: &str| -> f64 {
        let value = number(text);
        let unit = text.split_whitespace().nth(1).unwrap_or("B");
        let scale = match unit.trim_end_matches([',', ';', ')']) {
            "B" => 1.0,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            other => panic!("unit {other} in {line}"),
        };
        value * scale
    };
    let estimated_events = number(after("estimated: "));
    let estimated_bytes = bytes(after(" events, "));
    let measured_events = number(after("measured: "));
    let peak = bytes(after("peak memory "));
    (estimated_events, estimated_bytes, measured_events, peak)
}

#[test]
fn the_estimate_is_within_twice_the_measured_events_and_peak_memory() {
    // A mid-size run of each workload, under a second in a debug build, each large enough
    // that its data is a good part of the process.
    let runs: &[&[&str]] = &[
        &[
            "herd",
            "--policy",
            "exponential-full-jitter",
            "--clients",
            "100000",
        ],
        &["outage", "--policy", "exponential", "--rate", "1500"],
        &[
            "contention",
            "--policy",
            "exponential",
            "--clients",
            "2000",
            "--rounds",
            "2",
        ],
        &[
            "open-loop",
            "--policy",
            "constant",
            "--clients",
            "4000",
            "--rate",
            "20",
            "--duration",
            "1s",
        ],
        &[
            "serial",
            "--policy",
            "immediate",
            "--clients",
            "10000",
            "--duration",
            "500ms",
        ],
        &[
            "spike",
            "--policy",
            "immediate",
            "--max-attempts",
            "3",
            "--rate",
            "200",
        ],
        &[
            "ramp",
            "--policy",
            "immediate",
            "--max-attempts",
            "3",
            "--rate",
            "200",
        ],
        &[
            "throttle",
            "--policy",
            "exponential-full-jitter",
            "--clients",
            "20000",
            "--limit-rate",
            "500",
        ],
        &[
            "partition",
            "--policy",
            "constant",
            "--rate",
            "20000",
            "--duration",
            "5s",
        ],
        &[
            "tail",
            "--policy",
            "immediate",
            "--replicas",
            "100",
            "--duration",
            "10s",
            "--attempt-timeout",
            "50ms",
        ],
    ];
    for run in runs {
        let mut args = vec!["simulate", "--stats", "--workload"];
        args.extend_from_slice(run);
        let out = stagger(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        let (estimated_events, estimated_bytes, events, peak) = stats(&stderr);
        for (what, estimate, measured) in [
            ("events", estimated_events, events),
            ("memory", estimated_bytes, peak),
        ] {
            let ratio = measured / estimate;
            assert!(
                (0.5..=2.0).contains(&ratio),
                "{args:?}: {what} measured {measured} against {estimate} estimated ({ratio:.2}x): \
                 {stderr}"
            );
        }
    }
}

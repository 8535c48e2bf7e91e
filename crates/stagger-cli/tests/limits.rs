//! `stagger simulate` estimates a run's events and memory before it starts, refuses with one
//! line and exit 2 what would pass `--max-memory` or `--max-events`, and otherwise runs: no run
//! the CLI accepts aborts, and the estimate it states is honest.

mod support;

use support::{Files, Limited, limiter, stagger, stagger_limited};

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
        // One open source's highest rate, as the outage's and a scenario's.
        &[
            "open-loop",
            "--clients",
            "1",
            "--rate",
            "1000000",
            "--duration",
            "10s",
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

// ---------------------------------------------------------------------------------------------
// One limit for the flags, the configuration files and the scenario files
// ---------------------------------------------------------------------------------------------

/// Exit 2 with one line on stderr, which is returned.
#[track_caller]
fn refused(args: &[&str]) -> String {
    let out = stagger(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    stderr
}

/// Accepted by every check of the parameters: refused only by the run's estimate, since
/// `args` end in `--max-events 1`.
#[track_caller]
fn accepted(args: &[&str]) {
    let stderr = refused(args);
    assert!(
        stderr.contains("would process") && stderr.contains("--max-events 1"),
        "{args:?} passed its checks: {stderr}"
    );
}

/// `stagger simulate ARGS --max-events 1`.
fn simulate(args: &[&str]) -> Vec<String> {
    let mut all = vec!["simulate".to_owned()];
    all.extend(args.iter().map(|&a| a.to_owned()));
    all.extend(["--max-events".to_owned(), "1".to_owned()]);
    all
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn a_hedge_delay_past_a_day_is_refused_alike_by_the_flag_a_scenario_and_a_checked_file() {
    let day = stagger_core::limits::MAX_HEDGE_DELAY;
    assert_eq!(day.as_secs(), 86_400);
    let why = format!(
        "must be at most {} seconds (a day), got 90000",
        day.as_secs()
    );
    let files = Files::new("hedge-limit");

    // `stagger simulate --hedge`.
    let flag = |delay: &str| {
        simulate(&[
            "--workload",
            "tail",
            "--policy",
            "immediate",
            "--max-attempts",
            "2",
            "--duration",
            "1s",
            "--hedge",
            delay,
        ])
    };
    accepted(&strs(&flag("24h")));
    accepted(&strs(&flag("1d")));
    let error = refused(&strs(&flag("25h")));
    assert!(
        error.contains("invalid --hedge: ") && error.contains(&why),
        "{error}"
    );
    let error = refused(&strs(&flag("1d1ns")));
    assert!(error.contains("invalid --hedge: "), "{error}");

    // A scenario file's `[retry.hedging]`.
    let scenario = |delay: &str| {
        files.write(
            &format!("tail-{delay}.toml"),
            &format!(
                "duration = \"1s\"\nseed = 1\n[clients]\nkind = \"open\"\nsources = 1\n\
                 rate_per_source = 100.0\n[dependency.replicas]\ncount = 10\nconcurrency = 4\n\
                 service = {{ exp = \"10ms\" }}\npause = \"1s\"\npause_every = \"99s\"\n\
                 [[retry]]\npolicy = \"immediate\"\nmax_attempts = 2\ntimeout = \"2s\"\n\
                 [retry.hedging]\nmax_attempts = 2\ndelay = \"{delay}\"\n"
            ),
        )
    };
    accepted(&strs(&simulate(&["--scenario", &scenario("24h")])));
    let error = refused(&strs(&simulate(&["--scenario", &scenario("25h")])));
    assert!(error.contains(&format!("hedging.delay {why}")), "{error}");

    // `stagger check` of a configuration file's `[hedging]`.
    let config = |delay: &str| {
        files.write(
            &format!("config-{delay}.toml"),
            &format!("preset = \"grpc\"\n[hedging]\nmax_attempts = 2\ndelay = \"{delay}\"\n"),
        )
    };
    let checked = stagger(&["check", &config("24h")]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let error = refused(&["check", &config("25h")]);
    assert!(error.contains(&format!("hedging.delay {why}")), "{error}");
}

#[test]
fn the_simulators_limits_are_the_same_for_the_flags_and_the_scenario_files() {
    use stagger_sim::limits;
    // The values below are written as the user writes them; they are the central limits.
    assert_eq!(limits::MAX_DURATION.as_secs(), 86_400);
    assert_eq!(limits::MAX_SOURCE_RATE, 1e6);
    assert_eq!(limits::MAX_REQUESTS, 1e7);
    assert_eq!(limits::MAX_FANOUT, 1_000);
    assert_eq!(limits::MAX_REPLICAS, 10_000);
    assert_eq!(limits::MAX_LAYERS, 16);
    let files = Files::new("sim-limits");
    let open = |name: &str, duration: &str, sources: u64, rate: &str| {
        files.write(
            name,
            &format!(
                "duration = \"{duration}\"\nseed = 1\n[clients]\nkind = \"open\"\n\
                 sources = {sources}\nrate_per_source = {rate}\n[dependency]\n\
                 rtt = {{ exp = \"10ms\" }}\nfailure_rate = 0.5\n[[retry]]\n\
                 policy = \"immediate\"\nmax_attempts = 2\n"
            ),
        )
    };
    let tail = |name: &str, count: &str, fanout: &str| {
        files.write(
            name,
            &format!(
                "duration = \"1s\"\nseed = 1\n[clients]\nkind = \"open\"\nsources = 1\n\
                 rate_per_source = 1.0\nfanout = {fanout}\n[dependency.replicas]\n\
                 count = {count}\nconcurrency = 1\nservice = {{ exp = \"10ms\" }}\n\
                 pause = \"1s\"\npause_every = \"99s\"\n[[retry]]\npolicy = \"immediate\"\n\
                 max_attempts = 2\ntimeout = \"2s\"\n"
            ),
        )
    };
    // (flags at the limit, flags past it, the scenario at it, past it, what both refusals say)
    type Case<'a> = ([&'a str; 8], [&'a str; 8], String, String, &'a str);
    let cases: Vec<Case> = vec![
        (
            [
                "open-loop",
                "--clients",
                "1",
                "--rate",
                "0.01",
                "--duration",
                "1d",
                "--seed",
            ],
            [
                "open-loop",
                "--clients",
                "1",
                "--rate",
                "0.01",
                "--duration",
                "1d1ns",
                "--seed",
            ],
            open("day.toml", "1d", 1, "0.01"),
            open("day-past.toml", "1d1ns", 1, "0.01"),
            "duration must be longer than 0 and at most a day",
        ),
        (
            [
                "open-loop",
                "--clients",
                "1",
                "--rate",
                "1000000",
                "--duration",
                "1ms",
                "--seed",
            ],
            [
                "open-loop",
                "--clients",
                "1",
                "--rate",
                "1000001",
                "--duration",
                "1ms",
                "--seed",
            ],
            open("rate.toml", "1ms", 1, "1000000.0"),
            open("rate-past.toml", "1ms", 1, "1000001.0"),
            "must be a number of requests per second in (0, 1e6]",
        ),
        (
            [
                "open-loop",
                "--clients",
                "10",
                "--rate",
                "100000",
                "--duration",
                "10s",
                "--seed",
            ],
            [
                "open-loop",
                "--clients",
                "10",
                "--rate",
                "100000",
                "--duration",
                "10001ms",
                "--seed",
            ],
            open("requests.toml", "10s", 10, "100000.0"),
            open("requests-past.toml", "10001ms", 10, "100000.0"),
            "exceeds the limit of 1e7 requests",
        ),
        (
            [
                "tail",
                "--fanout",
                "1000",
                "--replicas",
                "10",
                "--duration",
                "1s",
                "--seed",
            ],
            [
                "tail",
                "--fanout",
                "1001",
                "--replicas",
                "10",
                "--duration",
                "1s",
                "--seed",
            ],
            tail("fanout.toml", "10", "1000"),
            tail("fanout-past.toml", "10", "1001"),
            "fanout must be between 1 and 1000",
        ),
        (
            [
                "tail",
                "--fanout",
                "1",
                "--replicas",
                "10000",
                "--duration",
                "1s",
                "--seed",
            ],
            [
                "tail",
                "--fanout",
                "1",
                "--replicas",
                "10001",
                "--duration",
                "1s",
                "--seed",
            ],
            tail("replicas.toml", "10000", "1"),
            tail("replicas-past.toml", "10001", "1"),
            "must be between 1 and 10000",
        ),
    ];
    for (at, past, file_at, file_past, why) in cases {
        let flags = |args: [&str; 8]| {
            let mut all = vec!["--workload"];
            all.extend_from_slice(&args);
            all.extend(["1", "--policy", "immediate"]);
            simulate(&all)
        };
        accepted(&strs(&flags(at)));
        let error = refused(&strs(&flags(past)));
        assert!(error.contains(why), "{past:?}: {error}");
        accepted(&strs(&simulate(&["--scenario", &file_at])));
        let error = refused(&strs(&simulate(&["--scenario", &file_past])));
        assert!(error.contains(why), "{file_past}: {error}");
    }

    // Retry layers: `stagger check --layers` and a scenario's `[[retry]]` tables.
    let stack = |name: &str, layers: u32| {
        let mut text = String::from(
            "duration = \"1s\"\nseed = 1\n[clients]\nkind = \"open\"\nsources = 1\n\
             rate_per_source = 1.0\n[dependency]\nrtt = { exp = \"10ms\" }\nfailure_rate = 0.5\n",
        );
        for _ in 0..layers {
            text.push_str("[[retry]]\npolicy = \"immediate\"\nmax_attempts = 1\n");
        }
        files.write(name, &text)
    };
    accepted(&strs(&simulate(&["--scenario", &stack("layers.toml", 16)])));
    let error = refused(&strs(&simulate(&[
        "--scenario",
        &stack("layers-past.toml", 17),
    ])));
    assert!(
        error.contains("[[retry]]: retry layers (the outermost included) exceeds the limit of 16"),
        "{error}"
    );
    let config = files.write("config.toml", "policy = \"immediate\"\nmax_attempts = 1\n");
    let checked = stagger(&["check", &config, "--layers", "16"]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let error = refused(&["check", &config, "--layers", "17"]);
    assert!(
        error.contains("--layers") && error.contains("1..=16"),
        "{error}"
    );

    // `stagger check --outage` runs the open-loop model: at most its longest run.
    let error = refused(&["check", &config, "--outage", "1d1ns"]);
    assert!(error.contains("invalid --outage: at most 1 d,"), "{error}");
    let error = refused(&["check", &config, "--clients", "100001"]);
    assert!(
        error.contains("--clients") && error.contains("1..=100000"),
        "{error}"
    );
}

//! `stagger check`, run as a user runs it, on the example configurations under `docs/check/`.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::{stagger, stdout};

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/check")
        .join(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The reports of `stagger check FILE ARGS --format json`.
fn reports(file: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["check", file];
    all.extend(args);
    all.extend(["--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout(&all)).expect("JSON");
    doc.as_array()
        .expect("one report per configuration")
        .clone()
}

fn warnings(report: &Value) -> Vec<(String, String)> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| {
            (
                w["what"].as_str().unwrap().to_owned(),
                w["fix"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn has(warnings: &[(String, String)], start: &str) -> bool {
    warnings.iter().any(|(what, _)| what.starts_with(start))
}

#[test]
fn three_attempts_through_three_layers_are_27_calls_or_3_with_stagger_and_the_fix_is_named() {
    let file = example("three-attempts.toml");
    let text = stdout(&["check", &file, "--layers", "3"]);
    assert!(text.contains("3 ^ 3 = 27"), "{text}");
    assert!(
        text.contains(
            "with stagger's default ownership of recovery (nested = \"single-attempt\"): 3"
        ),
        "{text}"
    );
    let report = &reports(&file, &["--layers", "3"])[0];
    assert_eq!(report["layers"]["uncoordinated"], 27);
    assert_eq!(report["layers"]["owned"], 3);
    // The stack simulated in the total outage: every layer retrying sends 27 attempts per
    // request to the dependency, the default 3, the same as the outage run without a budget.
    let simulated = &report["layers"]["simulated"];
    assert_eq!(
        simulated["uncoordinated"].as_f64(),
        Some(27.0),
        "{simulated}"
    );
    assert_eq!(simulated["owned"].as_f64(), Some(3.0), "{simulated}");
    assert_eq!(
        report["outage"]["without_budget"].as_f64(),
        Some(3.0),
        "{report}"
    );
    let w = warnings(report);
    let (_, fix) = w
        .iter()
        .find(|(what, _)| what.starts_with("Layers that multiply"))
        .expect("the layers warning");
    assert!(fix.contains("nested = \"single-attempt\""), "{fix}");
    // The rest of what this file gets wrong: no jitter, no deadline, a cap out of reach, no
    // budget.
    for start in [
        "The delays have no jitter",
        "No deadline",
        "The cap is never reached",
        "No budget",
    ] {
        assert!(has(&w, start), "{start}: {w:?}");
    }
    // One layer: nothing multiplies.
    let alone = &reports(&file, &[])[0];
    assert_eq!(alone["layers"]["uncoordinated"], 3);
    assert!(!has(&warnings(alone), "Layers that multiply"));
}

#[test]
fn a_configuration_that_asks_each_layer_to_retry_is_told_so() {
    let dir = std::env::temp_dir().join(format!("stagger-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nested.toml");
    std::fs::write(
        &file,
        "policy = \"exponential-full-jitter\"\nmax_attempts = 4\ntimeout = \"3s\"\nnested = \"retry\"\n",
    )
    .unwrap();
    let report = &reports(file.to_str().unwrap(), &["--layers", "3"])[0];
    assert_eq!(report["layers"]["nested"], "retry");
    assert_eq!(report["layers"]["uncoordinated"], 64);
    // Simulated, the 3 s deadline at every layer cuts the 64 short, and the default makes 4.
    let simulated = &report["layers"]["simulated"];
    let every = simulated["uncoordinated"].as_f64().unwrap();
    assert!(every > 16.0 && every < 64.0, "{simulated}");
    assert_eq!(simulated["owned"].as_f64(), Some(4.0), "{simulated}");
    let w = warnings(report);
    assert!(
        w.iter()
            .any(|(what, _)| what.contains("this configuration sets nested = \"retry\"")),
        "{w:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fleets_configuration_passes_and_its_budget_bounds_an_outage() {
    let report = &reports(&example("fleet.toml"), &[])[0];
    let w = warnings(report);
    assert!(w.is_empty(), "{w:?}");
    // In a total outage without a budget every request makes every attempt; the budget, one
    // per client, holds the fleet near one attempt a request.
    let outage = &report["outage"];
    let without = outage["without_budget"].as_f64().unwrap();
    let with = outage["with_budget"].as_f64().unwrap();
    assert!((without - 6.0).abs() < 0.01, "{outage}");
    assert!(with < 1.5, "{outage}");
    // The deadline is the configuration's own, and nothing retried before the server's time.
    assert_eq!(report["throttle"]["own_deadline"], true);
    assert_eq!(report["throttle"]["deadline"], "5 s");
    assert_eq!(report["throttle"]["early_retries"], 0);
}

#[test]
fn the_canonical_figures_are_the_scoreboards() {
    use stagger_core::PolicyKind;
    let report = &reports(&example("fleet.toml"), &["--seed", "1"])[0];
    let row = report["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "exponential-full-jitter at its defaults")
        .expect("the catalog's default beside it");
    let figures =
        stagger_sim::scoreboard::policy_figures(PolicyKind::ExponentialFullJitter, 1).unwrap();
    assert_eq!(
        row["herd_peak_share"].as_f64(),
        Some(figures.herd.peak_window_share)
    );
    assert_eq!(
        row["outage_success"].as_f64(),
        Some(figures.outage.success_rate)
    );
}

#[test]
fn a_grpc_service_config_reports_its_policy_and_its_throttling() {
    let file = example("grpc-service-config.json");
    let all = reports(&file, &["--layers", "2"]);
    assert_eq!(all.len(), 1);
    let report = &all[0];
    assert_eq!(report["policy"], "exponential-proportional-jitter");
    assert_eq!(report["max_attempts"], 4);
    let budget = report["budget"].as_str().unwrap();
    assert!(
        budget.starts_with("grpc-throttle (max_tokens 100, token_ratio 0.1; configured)"),
        "{budget}"
    );
    assert_eq!(report["layers"]["uncoordinated"], 16);
    // The delays are A6's: 100 ms doubling to 1 s, each within 20 % of its value.
    assert_eq!(report["delays_ms"][0][0], 80.0);
    assert_eq!(report["delays_ms"][0][1], 120.0);
    let text = stdout(&["check", &file]);
    assert!(
        text.contains("the retry policy of helloworld.Greeter"),
        "{text}"
    );
    // The method config's timeout is the call's deadline.
    assert_eq!(report["deadline"], "5 s", "{report}");
    let notes = report["notes"].to_string();
    assert!(!notes.contains("timeout"), "{notes}");
    // One longer than the simulator takes is reported, and simulated as a day, which a note
    // says.
    let long = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"timeout\": \"5s\"", "\"timeout\": \"100000s\"");
    let path = std::env::temp_dir().join(format!("stagger-check-long-{}.json", std::process::id()));
    std::fs::write(&path, long).unwrap();
    let report = &reports(path.to_str().unwrap(), &[])[0];
    assert!(
        report["notes"].to_string().contains("simulated as 1 d"),
        "{report}"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn what_the_runs_do_not_model_is_said_and_the_deadline_reaches_the_outage() {
    let dir = std::env::temp_dir().join(format!("stagger-check-notes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, extra: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("policy = \"exponential-full-jitter\"\nmax_attempts = 8\n{extra}"),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let plain = &reports(&file("plain.toml", ""), &[])[0];
    assert!(plain["notes"].as_array().unwrap().is_empty(), "{plain}");
    let extra = "timeout = \"200ms\"\nmax_server_wait = \"100ms\"\nbudget_per_destination = 8\nattempt_timeout = \"1s\"\n[budget]\nbudget = \"aws-standard\"\n";
    let set = &reports(&file("set.toml", extra), &[])[0];
    let notes: Vec<&str> = set["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for key in [
        "deadline",
        "attempt timeout",
        "max_server_wait",
        "budget_per_destination",
    ] {
        assert!(notes.iter().any(|n| n.contains(key)), "{key}: {notes:?}");
    }
    // The deadline is applied where a model has one: the outage's requests that succeed are
    // those that outlast it within 200 ms, fewer than without it.
    let deadline = &reports(&file("deadline.toml", "timeout = \"200ms\"\n"), &[])[0];
    let outage = |r: &Value| r["workloads"][0]["outage_success"].as_f64().unwrap();
    assert!(
        outage(deadline) < outage(plain),
        "{} vs {}",
        outage(deadline),
        outage(plain)
    );
    // And to the total outage: 8 attempts spread over more than 200 ms are cut short.
    let total = |r: &Value| r["outage"]["without_budget"].as_f64().unwrap();
    assert_eq!(total(plain), 8.0, "{plain}");
    assert!(
        total(deadline) < 8.0,
        "{} attempts per request within 200 ms",
        total(deadline)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let file = example("three-attempts.toml");
    let run = |seed: &str| stdout(&["check", &file, "--seed", seed, "--format", "json"]);
    assert_eq!(run("7"), run("7"));
    assert_ne!(run("7"), run("8"));
}

#[test]
fn bad_input_is_refused_in_one_line_that_names_it() {
    let dir = std::env::temp_dir().join(format!("stagger-check-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let invalid = write("invalid.toml", "policy = \"constant\"\nmax_attempts = 0\n");
    let yaml = write("config.yaml", "policy: constant\n");
    let nothing = write(
        "nothing.json",
        r#"{"methodConfig": [{"name": [{"service": "a.B"}]}]}"#,
    );
    let grpc_bad = write(
        "grpc.json",
        r#"{"methodConfig": [{"retryPolicy": {"maxAttempts": 1}}]}"#,
    );
    let huge = write("huge.toml", "policy = \"immediate\"\nmax_attempts = 1000\n");
    let grpc = example("grpc-service-config.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["check", &invalid], "max_attempts"),
        (vec!["check", &yaml], ".toml or .json"),
        (vec!["check", &nothing], "nothing is retried"),
        (
            vec!["check", &grpc_bad],
            "methodConfig[0].retryPolicy.maxAttempts",
        ),
        (vec!["check", "/no/such/file.toml"], "cannot read"),
        (vec!["check", &huge], "--rate"),
        (vec!["check", &grpc, "--rate", "0"], "--rate"),
        (vec!["check", &grpc, "--rate", "nan"], "--rate"),
        (vec!["check", &grpc, "--layers", "0"], "--layers"),
        (vec!["check", &grpc, "--layers", "17"], "--layers"),
        (vec!["check", &grpc, "--clients", "0"], "--clients"),
        (vec!["check", &grpc, "--outage", "-1s"], "--outage"),
        (vec!["check", &grpc, "--outage", "0s"], "--outage"),
        (vec!["check", &grpc, "--outage", "25h"], "--outage"),
        (
            vec!["check", &grpc, "--rate", "0.001", "--outage", "1s"],
            "less than one request",
        ),
        (vec!["check", &grpc, "--rate", "1e9"], "raise --clients"),
    ];
    for (args, named) in cases {
        let out = stagger(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A file's errors name its keys as the file writes them, not as the CLI's flags.
    let budget = write(
        "budget.json",
        r#"{"policy": "constant", "max_attempts": 3, "budget": {"budget": "finagle", "ttl": "5m"}}"#,
    );
    for (file, key) in [(&invalid, "max_attempts"), (&budget, "ttl")] {
        let out = stagger(&["check", file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(key) && !stderr.contains("--"), "{stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A hedged configuration runs on the spike, whose model sends hedges beside the attempts in
/// flight, with the figure the simulator gives it there; the herd and the outage run it too, on
/// the composed model, hedges and all, and the catalog's default beside it keeps every figure.
#[test]
fn a_hedged_configuration_runs_on_every_canonical_workload() {
    use stagger_core::engine::Hedging;
    use stagger_core::{AnyConfig, Param, PolicyConfig, PolicyKind};
    use stagger_sim::Workload;
    let dir = std::env::temp_dir().join(format!("stagger-check-hedged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hedged.toml");
    std::fs::write(
        &file,
        "policy = \"immediate\"\nmax_attempts = 3\n[hedging]\ndelay = \"p95\"\nmax_attempts = 3\n\
         [budget]\nbudget = \"aws-standard\"\n",
    )
    .unwrap();
    let report = &reports(file.to_str().unwrap(), &["--seed", "1"])[0];
    let _ = std::fs::remove_dir_all(&dir);
    let rows = report["workloads"].as_array().expect("workloads");
    let mine = &rows[0];
    assert_eq!(mine["label"], "this configuration");
    // The herd and the outage run it too, hedges and all, on the composed model.
    let herd = stagger_sim::workload::herd::Herd::default();
    let outage = stagger_sim::workload::outage::Outage::default();
    let policy = AnyConfig::from(PolicyKind::Immediate)
        .set(Param::MaxAttempts(3))
        .unwrap();
    let retrying = stagger_sim::Strategy::policy(policy)
        .with_budget(Some(stagger_core::budget::BudgetKind::AwsStandard));
    let hedged = retrying.with_hedging(Some(Hedging::quantile(9_500, 3)));
    let spike = |s: &stagger_sim::Strategy| {
        stagger_sim::workload::spike::Spike::default()
            .run(s, 1)
            .unwrap()
            .tail_goodput_ratio
    };
    // The hedged run is not the retrying one: the figure is the hedges'.
    assert_ne!(spike(&hedged), spike(&retrying));
    assert_eq!(mine["spike_tail_goodput"].as_f64(), spike(&hedged));
    let herd_share = herd.run(&hedged, 1).unwrap().peak_window_share;
    assert_eq!(mine["herd_peak_share"].as_f64(), Some(herd_share));
    let outage_success = outage.run(&hedged, 1).unwrap().success_rate;
    assert_eq!(mine["outage_success"].as_f64(), Some(outage_success));
    let jittered = rows
        .iter()
        .find(|r| r["label"] == "exponential-full-jitter at its defaults")
        .expect("the catalog's default beside it");
    assert!(jittered["herd_peak_share"].as_f64().is_some());
    assert!(jittered["outage_success"].as_f64().is_some());
}

/// A TOML file that does not parse gets TOML's own message, on the lines TOML writes it: the
/// file and what it should be, the place, the offending line with a caret under it, and what
/// was expected. Nothing is squashed onto one line.
#[test]
fn a_toml_file_that_does_not_parse_gets_tomls_own_message() {
    let dir = std::env::temp_dir().join(format!("stagger-check-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "unknown.toml",
            "policy = \"constant\"\nmax_atempts = 3\n",
            "TOML parse error at line 2, column 1",
            "2 | max_atempts = 3",
            "unknown field `max_atempts`, expected one of",
        ),
        (
            "unquoted.toml",
            "policy = \"exponential\"\nbase = 100ms\n",
            "TOML parse error at line 2, column 8",
            "2 | base = 100ms",
            "string values must be quoted",
        ),
    ];
    for (name, text, place, line, what) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let file = path.to_str().unwrap();
        let out = stagger(&["check", file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty(), "{name}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines[0],
            format!("error: {file}: not a retry configuration:"),
            "{stderr}"
        );
        assert_eq!(lines[1], place, "{stderr}");
        let at = lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("the offending line: {stderr}"));
        assert!(
            lines[at + 1]
                .trim_start_matches([' ', '|'])
                .starts_with('^'),
            "a caret under it: {stderr}"
        );
        assert!(lines.last().unwrap().starts_with(what), "{stderr}");
        assert!(!stderr.contains("   |   "), "nothing squashed: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The spike's verdicts are read beside the scoreboard's: the check names the parameters of
/// each row at the catalog's defaults, runs the scoreboard's own jittered backoff at the same
/// seed and says so, and gives the reason where a jittered row stays collapsed while it
/// recovers.
#[test]
fn the_spike_verdicts_say_what_the_scoreboard_runs_and_why_they_differ() {
    use stagger_sim::Workload;
    use stagger_sim::workload::spike::{self, Spike};
    let file = example("three-attempts.toml");
    let text = stdout(&["check", &file]);
    assert!(
        text.contains(
            "At the catalog's defaults, exponential has base 100 ms, cap 20 s, factor 2, \
             max_attempts 8; exponential-full-jitter has base 100 ms, cap 20 s, factor 2, \
             max_attempts 8."
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "The scoreboard's spike runs its jittered backoff with other parameters, \
             exponential-full-jitter with base 20 s, cap 1 h, factor 2, max_attempts 3; run \
             here, it gets"
        ),
        "{text}"
    );
    let report = &reports(&file, &[])[0];
    let reference = &report["spike_reference"];
    let measured = Spike::default()
        .run(&spike::jittered_backoff(), 1)
        .unwrap()
        .tail_goodput_ratio;
    assert_eq!(reference["tail_goodput"].as_f64(), measured, "{reference}");
    assert!(measured.unwrap() >= stagger_sim::scoreboard::RECOVERED);
    // The row at the defaults stays collapsed where the scoreboard's recovers: the reason
    // is given, in the text and the JSON alike.
    let row = report["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "exponential-full-jitter at its defaults")
        .unwrap();
    assert!(row["spike_tail_goodput"].as_f64().unwrap() < 0.9, "{row}");
    let reasons = reference["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reference}");
    let reason = reasons[0].as_str().unwrap();
    assert_eq!(
        reason,
        "exponential-full-jitter at its defaults stays collapsed where the scoreboard's \
         jittered backoff recovers: its 7 delays add up to at most 12.7 s, the scoreboard's 2 \
         to at most 1 min"
    );
    assert!(text.contains(&format!("  {reason}.\n")), "{text}");
    // An un-jittered row that stays collapsed does not contradict the scoreboard: no reason.
    assert!(
        !text.contains("exponential at its defaults stays collapsed"),
        "{text}"
    );
}

/// A report names only what the file sets: a `nested` it leaves out is not said to be asked
/// for, and a default it leaves in place is called the default.
#[test]
fn what_the_file_does_not_set_is_not_said_to_be_asked_for() {
    let file = example("three-attempts.toml");
    let text = stdout(&["check", &file, "--layers", "3"]);
    assert!(!text.contains("asks for nested"), "{text}");
    assert!(!text.contains("sets nested"), "{text}");
    assert!(
        text.contains(
            "spread above by uniform-asked (stagger's default); a wait past 5 min (stagger's \
             default) is not waited for"
        ),
        "{text}"
    );
    let report = &reports(&file, &["--layers", "3"])[0];
    assert!(report["layers"]["nested"].is_null(), "{report}");
    assert_eq!(report["throttle"]["default_dispersal"], true);
    assert_eq!(report["throttle"]["default_max_server_wait"], true);
    // The same settings written in the file are the file's.
    let dir = std::env::temp_dir().join(format!("stagger-check-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("set.toml");
    std::fs::write(
        &path,
        "policy = \"exponential\"\nmax_attempts = 3\nnested = \"single-attempt\"\n\
         server_wait_dispersal = \"uniform-asked\"\nmax_server_wait = \"5m\"\n",
    )
    .unwrap();
    let set = path.to_str().unwrap();
    let text = stdout(&["check", set, "--layers", "3"]);
    assert!(
        text.contains("  this configuration sets nested = \"single-attempt\"\n"),
        "{text}"
    );
    assert!(!text.contains("(stagger's default)"), "{text}");
    let report = &reports(set, &["--layers", "3"])[0];
    assert_eq!(report["layers"]["nested"], "single-attempt");
    assert_eq!(report["throttle"]["default_dispersal"], false);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Rates read as people write them: `1000 requests a second`, never `1000.000`.
#[test]
fn rates_read_as_people_write_them() {
    let file = example("three-attempts.toml");
    let text = stdout(&["check", &file]);
    assert!(
        text.contains("A total outage of 1 min, 1000 requests a second from 100 clients"),
        "{text}"
    );
    assert!(!text.contains("1000.000"), "{text}");
    let text = stdout(&["check", &file, "--rate", "2.5", "--clients", "1"]);
    assert!(
        text.contains(", 2.5 requests a second from 1 client (simulated)"),
        "{text}"
    );
}

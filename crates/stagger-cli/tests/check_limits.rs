//! `stagger check` on a gRPC service config of many method configs, run as a user runs it:
//! identical retry policies are checked once, and the whole check is held to `--max-events`,
//! every distinct policy's runs added up before any starts.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::{stagger, stdout};

/// A directory of its own for one test's files, removed when the test ends.
struct Dir(PathBuf);

impl Dir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "stagger-check-limits-{test}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Writes `doc` as `name` and returns its path.
    fn write(&self, name: &str, doc: &Value) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_str().expect("a UTF-8 path").to_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A method config named `svc.S{i}/Call`, retrying with A6's backoff from `initial_ms`.
fn method_config(i: usize, initial_ms: usize) -> Value {
    json!({
        "name": [{ "service": format!("svc.S{i}"), "method": "Call" }],
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": format!("{}.{:03}s", initial_ms / 1000, initial_ms % 1000),
            "maxBackoff": "300s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"]
        }
    })
}

/// A service config of `n` method configs: all with the same retry policy, or each with a
/// backoff of its own (100 ms, 101 ms, ...), all below the cap so that no two are the same.
fn service_config(n: usize, distinct: bool) -> Value {
    let configs: Vec<Value> = (0..n)
        .map(|i| method_config(i, if distinct { 100 + i } else { 100 }))
        .collect();
    json!({ "methodConfig": configs })
}

/// The runs `stagger check ARGS` refuses in one line on stderr, with exit 2 and nothing on
/// stdout: that line.
fn refusal(args: &[&str]) -> String {
    let out = stagger(args);
    let stderr = String::from_utf8(out.stderr).expect("UTF-8");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

/// Runs `stagger ARGS`, failing the test if it runs past `seconds` (it is then killed by its
/// id).
fn within(seconds: u64, args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_stagger"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let pid = child.id();
    let (done, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waited.recv_timeout(Duration::from_secs(seconds)) {
        Ok(out) => out.expect("the child can be waited for"),
        Err(_) => {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
            panic!("`stagger {}` ran past {seconds} s", args.join(" "));
        }
    }
}

/// The events the refusal names as the whole check's estimate: the `--max-events` that
/// admits it.
fn named_total(line: &str) -> u64 {
    let (_, total) = line
        .trim_end()
        .rsplit_once("raise --max-events to ")
        .unwrap_or_else(|| panic!("no total named: {line}"));
    total.parse().unwrap_or_else(|_| panic!("{line}"))
}

/// The estimate of checking `file` with `args`: what a check that allows one event names.
fn estimate(file: &str, args: &[&str]) -> u64 {
    let mut all = vec!["check", file, "--max-events", "1"];
    all.extend(args);
    named_total(&refusal(&all))
}

/// The reports of `stagger check FILE ARGS --format json`.
fn reports(file: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["check", file];
    all.extend(args);
    all.extend(["--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout(&all)).expect("JSON");
    doc.as_array().expect("a list of reports").clone()
}

/// A report without where it comes from: what the configuration is told.
fn verdict(report: &Value) -> Value {
    let mut v = report.clone();
    let o = v.as_object_mut().unwrap();
    o.remove("source");
    o.remove("method_configs");
    v
}

#[test]
fn a_thousand_identical_method_configs_are_checked_once_with_the_verdict_of_one() {
    let dir = Dir::new("identical");
    let one = dir.write("one.json", &service_config(1, false));
    let thousand = dir.write("thousand.json", &service_config(1_000, false));

    // The text: one report, whose first line names the method configs compactly, and whose
    // every other line is the single method config's.
    let one_text = stdout(&["check", &one]);
    let thousand_text = stdout(&["check", &thousand]);
    let (one_source, one_rest) = one_text.split_once('\n').unwrap();
    let (source, rest) = thousand_text.split_once('\n').unwrap();
    assert!(
        one_source.ends_with("one.json, the retry policy of svc.S0/Call"),
        "{one_source}"
    );
    assert!(
        source.ends_with(
            "thousand.json, the retry policy of 1000 method configs: svc.S0/Call; \
             svc.S1/Call; svc.S2/Call; and 997 more"
        ),
        "{source}"
    );
    assert_eq!(rest, one_rest);
    assert_eq!(thousand_text.matches("\n  policy: ").count(), 1);

    // The JSON: one report, naming every method config in order, with the verdict of one.
    let single = reports(&one, &[]);
    let all = reports(&thousand, &[]);
    assert_eq!(all.len(), 1);
    let names = all[0]["method_configs"].as_array().unwrap();
    assert_eq!(names.len(), 1_000);
    assert_eq!(names[0], "svc.S0/Call");
    assert_eq!(names[999], "svc.S999/Call");
    assert_eq!(single[0]["method_configs"], json!(["svc.S0/Call"]));
    assert_eq!(verdict(&all[0]), verdict(&single[0]));

    // Checked once: the thousand are estimated as one, and pass within one's events.
    let once = estimate(&one, &[]);
    assert_eq!(estimate(&thousand, &[]), once);
    let admitted = reports(&thousand, &["--max-events", &once.to_string()]);
    assert_eq!(verdict(&admitted[0]), verdict(&single[0]));
}

#[test]
fn a_thousand_distinct_method_configs_are_refused_in_one_line_before_any_run() {
    let dir = Dir::new("distinct");
    let thousand = dir.write("thousand.json", &service_config(1_000, true));
    let one = dir.write("one.json", &service_config(1, true));
    // The old check ran each method config with an allowance of its own: this file took
    // minutes. Refused up front, it takes a fraction of a second; the bound here is only a
    // guard against a run that simulates them all, generous for a loaded machine.
    let out = within(60, &["check", &thousand]);
    let line = String::from_utf8(out.stderr).expect("UTF-8");
    assert_eq!(out.status.code(), Some(2), "{line}");
    assert!(out.stdout.is_empty());
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(!line.contains("panicked"), "{line}");

    // One line: the total estimate, the limit, and the flag that raises it.
    assert!(
        line.starts_with(
            "error: checking 1000 distinct policies (of 1000 method configs) would simulate about "
        ),
        "{line}"
    );
    assert!(line.contains("more than --max-events 2.0e7"), "{line}");
    let total = named_total(&line);
    // Every distinct policy's runs are counted: the thousand cost about a thousand times the
    // first (their backoffs differ, and their estimates by less than 1 %).
    let once = estimate(&one, &[]);
    assert!(
        total > 990 * once && total < 1_010 * once,
        "{total} against {once} for one"
    );
    assert!(total > 20_000_000, "{line}");
}

#[test]
fn ten_distinct_method_configs_are_checked_and_held_to_their_total() {
    let dir = Dir::new("ten");
    let ten = dir.write("ten.json", &service_config(10, true));
    let all = reports(&ten, &[]);
    assert_eq!(all.len(), 10);
    for (i, report) in all.iter().enumerate() {
        let name = format!("svc.S{i}/Call");
        assert_eq!(report["method_configs"], json!([name]), "{report}");
        assert!(
            report["source"].as_str().unwrap().ends_with(&name),
            "{report}"
        );
        // Each its own: A6's first delay is within 20 % of the initial backoff.
        let first = report["delays_ms"][0][0].as_f64().unwrap();
        assert!((first - 0.8 * (100 + i) as f64).abs() < 1e-6, "{report}");
    }

    // The total is the sum of each method config's estimate alone.
    let total = estimate(&ten, &[]);
    let each: u64 = (0..10)
        .map(|i| {
            let alone = dir.write(
                &format!("s{i}.json"),
                &json!({ "methodConfig": [method_config(i, 100 + i)] }),
            );
            estimate(&alone, &[])
        })
        .sum();
    assert_eq!(total, each);
    // And it is the whole check that is held to --max-events: one event fewer than the total
    // is refused, though each method config alone needs a tenth of it.
    let line = refusal(&["check", &ten, "--max-events", &(total - 1).to_string()]);
    assert!(line.contains("10 distinct policies"), "{line}");
    assert_eq!(named_total(&line), total);
}

#[test]
fn only_what_the_check_reads_merges_method_configs_and_the_first_seen_order_is_kept() {
    let dir = Dir::new("merge");
    let base = |i: usize| method_config(i, 100);
    // The status codes take no part in the check: S3 merges into S0.
    let mut codes = base(3);
    codes["retryPolicy"]["retryableStatusCodes"] = json!(["UNAVAILABLE", "ABORTED"]);
    // A deadline does: S1 is reported apart.
    let mut deadline = base(1);
    deadline["timeout"] = json!("2s");
    // So does another backoff: S2.
    let other = method_config(2, 250);
    let hedging = |i: usize| {
        json!({
            "name": [{ "service": format!("svc.H{i}") }],
            "hedgingPolicy": { "maxAttempts": 3, "hedgingDelay": "0.5s" }
        })
    };
    let file = dir.write(
        "mixed.json",
        &json!({ "methodConfig": [
            base(0), deadline, hedging(0), other, codes, hedging(1), base(4)
        ]}),
    );
    let all = reports(&file, &[]);
    let listed: Vec<&Value> = all.iter().map(|r| &r["method_configs"]).collect();
    assert_eq!(
        listed,
        [
            &json!(["svc.S0/Call", "svc.S3/Call", "svc.S4/Call"]),
            &json!(["svc.S1/Call"]),
            &json!(["svc.S2/Call"]),
            &json!(["svc.H0/*", "svc.H1/*"]),
        ],
        "retry policies first, then hedging policies, each in the order first seen"
    );
    assert_eq!(all[0]["deadline"], Value::Null);
    assert_eq!(all[1]["deadline"], "2 s");
    assert!(
        all[0]["source"].as_str().unwrap().ends_with(
            "the retry policy of 3 method configs: svc.S0/Call; svc.S3/Call; svc.S4/Call"
        ),
        "{}",
        all[0]["source"]
    );
    assert!(
        all[3]["source"]
            .as_str()
            .unwrap()
            .ends_with("the hedging policy of 2 method configs: svc.H0/*; svc.H1/*"),
        "{}",
        all[3]["source"]
    );
    assert!(all[3]["hedging"].is_string(), "{}", all[3]);
}

#[test]
fn a_stack_of_layers_is_simulated_only_within_what_the_total_leaves() {
    let dir = Dir::new("stack");
    let file = dir.write("one.json", &service_config(1, false));
    // The stack's runs are not in the total: without room for them, the check still passes,
    // and says nothing of the stack simulated.
    let required = estimate(&file, &["--layers", "2"]);
    assert_eq!(required, estimate(&file, &[]));
    let tight = reports(
        &file,
        &["--layers", "2", "--max-events", &required.to_string()],
    );
    assert_eq!(tight[0]["layers"]["simulated"], Value::Null, "{}", tight[0]);
    assert_eq!(tight[0]["layers"]["uncoordinated"], 16);
    // With the default room, the stack is simulated.
    let roomy = reports(&file, &["--layers", "2"]);
    let simulated = &roomy[0]["layers"]["simulated"];
    assert_eq!(simulated["owned"].as_f64(), Some(4.0), "{simulated}");
    assert_eq!(verdict(&tight[0])["outage"], verdict(&roomy[0])["outage"]);
}

/// The flag is checked like `stagger simulate`'s.
#[test]
fn an_invalid_max_events_is_refused_in_one_line() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/check/fleet.toml");
    let file = file.to_str().unwrap();
    for bad in ["0", "1.5", "many"] {
        let line = refusal(&["check", file, "--max-events", bad]);
        assert!(line.contains("--max-events"), "{line}");
    }
}

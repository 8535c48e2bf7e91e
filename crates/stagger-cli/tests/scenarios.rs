//! `stagger simulate --scenario FILE`, run as a user runs it, on the scenario files under
//! `docs/scenarios/`: each reproduces its canonical workload's row.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use stagger_sim::Workload;
use support::{stagger, stdout};

fn scenario(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/scenarios")
        .join(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The one result row of `stagger simulate --scenario FILE --format json`, and the model's name.
fn row(file: &str) -> (String, Value) {
    let doc: Value = serde_json::from_str(&stdout(&[
        "simulate",
        "--scenario",
        file,
        "--format",
        "json",
    ]))
    .expect("JSON");
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{doc}");
    (
        doc["workload"].as_str().unwrap().to_owned(),
        results[0].clone(),
    )
}

#[test]
fn the_open_loop_example_gives_the_closed_form() {
    let (model, row) = row(&scenario("open-loop.toml"));
    assert_eq!(model, "open-loop");
    let success = row["success_rate"].as_f64().unwrap();
    let load = row["load"].as_f64().unwrap();
    // 1 - 0.5^4 and 1 + 0.5 + 0.25 + 0.125, within the sampling error of 10 000 requests.
    assert!((success - 0.94).abs() <= 0.01, "{success}");
    assert!((load - 1.87).abs() <= 0.02, "{load}");
}

#[test]
fn each_canonical_scenario_reproduces_its_workloads_row() {
    use stagger_core::PolicyKind;
    use stagger_sim::scoreboard::policy_figures;
    use stagger_sim::workload::{contention, open_loop, partition, serial, spike, tail, throttle};
    let strategy = |list: Vec<(&'static str, stagger_sim::Strategy)>, name: &str| {
        list.into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s)
            .unwrap()
    };
    let expected: Vec<(&str, &str, stagger_sim::ResultRow)> = vec![
        (
            "herd.toml",
            "herd",
            policy_figures(PolicyKind::ExponentialFullJitter, 1)
                .unwrap()
                .herd,
        ),
        (
            "outage.toml",
            "outage",
            policy_figures(PolicyKind::Exponential, 1).unwrap().outage,
        ),
        (
            "open-loop.toml",
            "open-loop",
            open_loop::OpenLoop::default()
                .run(&strategy(open_loop::published_strategies(), "3 retries"), 1)
                .unwrap(),
        ),
        (
            "serial.toml",
            "serial",
            serial::Serial::default()
                .run(&strategy(serial::published_strategies(), "backoff"), 1)
                .unwrap(),
        ),
        (
            "contention.toml",
            "contention",
            contention::Contention::default()
                .run(
                    &strategy(contention::published_strategies(), "FullJitter"),
                    1,
                )
                .unwrap(),
        ),
        (
            "spike.toml",
            "spike",
            spike::Spike::default()
                .run(&spike::jittered_backoff(), 1)
                .unwrap(),
        ),
        (
            "ramp.toml",
            "ramp",
            spike::Ramp::default().run(&spike::no_backoff(), 1).unwrap(),
        ),
        (
            "tail.toml",
            "tail",
            tail::Tail::default()
                .run(&stagger_sim::scoreboard::tail_strategy(), 1)
                .unwrap(),
        ),
        (
            "partition.toml",
            "partition",
            partition::Partition {
                budget_partition: partition::BudgetPartition::Partitioned,
                ..partition::Partition::default()
            }
            .run(&partition::trial_strategy(), 1)
            .unwrap(),
        ),
        (
            "throttle.toml",
            "throttle",
            throttle::Throttle::default()
                .run(&throttle::trial_strategy(), 1)
                .unwrap(),
        ),
    ];
    for (file, workload, want) in expected {
        let (model, got) = row(&scenario(file));
        assert_eq!(model, workload, "{file}");
        assert_eq!(got, serde_json::to_value(&want).unwrap(), "{file}");
    }
}

#[test]
fn several_sources_are_one_of_their_summed_rate_unless_each_holds_a_budget() {
    let dir = std::env::temp_dir().join(format!("stagger-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one = std::fs::read_to_string(scenario("outage.toml")).unwrap();
    let four = one
        .replace("sources = 1\n", "sources = 4\n")
        .replace("rate_per_source = 100.0", "rate_per_source = 25.0");
    assert_ne!(one, four);
    let path = dir.join("four.toml");
    std::fs::write(&path, &four).unwrap();
    assert_eq!(row(path.to_str().unwrap()), row(&scenario("outage.toml")));
    let budgeted = dir.join("budgeted.toml");
    std::fs::write(
        &budgeted,
        format!("{four}[retry.budget]\nbudget = \"aws-standard\"\n"),
    )
    .unwrap();
    let out = stagger(&["simulate", "--scenario", budgeted.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with a budget"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scenario_is_refused_by_name_when_it_says_what_no_model_takes() {
    let dir = std::env::temp_dir().join(format!("stagger-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = std::fs::read_to_string(scenario("open-loop.toml")).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let cases = [
        (
            "typo.toml",
            base.replace("sources = 100", "sorces = 100"),
            "sorces",
        ),
        ("top.toml", format!("colour = 1\n{base}"), "colour"),
        (
            "deadline.toml",
            format!("{base}timeout = \"1s\"\n"),
            "retry[0].timeout does not apply to the open-loop model",
        ),
        (
            "network.toml",
            base.replace("rtt = { exp = \"10ms\" }", "network = { exp = \"10ms\" }"),
            "dependency.network",
        ),
        (
            "latency.toml",
            base.replace("exp = \"10ms\"", "exp = \"ten\""),
            "dependency.rtt.exp",
        ),
        (
            "kind.toml",
            base.replace("kind = \"open\"", "kind = \"closed\""),
            "closed",
        ),
        (
            "nothing.toml",
            base.replace("failure_rate = 0.5", ""),
            "what composes today",
        ),
        (
            "noretry.toml",
            base.split("[[retry]]").next().unwrap().to_owned(),
            "retry",
        ),
        (
            "nested.toml",
            format!("{base}\n[[retry]]\npolicy = \"immediate\"\nnested = \"retry\"\n"),
            "retry[1]: nested = \"retry\"",
        ),
        (
            "badpolicy.toml",
            base.replace("max_attempts = 4", "max_attempts = 0"),
            "max_attempts",
        ),
        (
            "rate.toml",
            base.replace("failure_rate = 0.5", "failure_rate = 2.0"),
            "failure_rate",
        ),
        ("scenario.yaml", base.clone(), ".toml or .json"),
        (
            "serial_shape.toml",
            base.replace("kind = \"open\"", "kind = \"serial\"")
                + "\n[dependency.two_hosts]\nshare_down = 0.5\n",
            "does not apply to the",
        ),
        (
            "limiter.toml",
            base.replace(
                "failure_rate = 0.5",
                "failure_rate = 0.5\nrate_limit = { rate = 5.0, retry_after = \"1s\" }",
            ),
            "dependency.rate_limit does not apply to the open-loop model",
        ),
        (
            "inner.toml",
            format!("{base}\n[[retry]]\npolicy = \"immediate\"\ntimeout = \"1ms\"\n"),
            "retry[1].timeout",
        ),
        (
            "fanout.toml",
            base.replace(
                "rate_per_source = 10.0",
                "rate_per_source = 10.0\nfanout = 3",
            ),
            "clients.fanout needs dependency.replicas",
        ),
        (
            "shape.toml",
            base.replace(
                "rate_per_source = 10.0",
                "rate_per_source = 10.0\nspike = { factor = 2.0, at = \"1s\", for = \"1s\" }",
            ),
            "clients.spike",
        ),
    ];
    for (name, text, named) in &cases {
        let file = write(name, text);
        let out = stagger(&["simulate", "--scenario", &file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.contains(named), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    // A fixed population calls once: a duration does not apply to the storm.
    let storm = std::fs::read_to_string(scenario("throttle.toml")).unwrap();
    let timed = write("timed.toml", &format!("duration = \"20h\"\n{storm}"));
    let out = stagger(&["simulate", "--scenario", &timed]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("duration does not apply to the throttle"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A scenario replaces the workload's flags: given both, the command says which.
    let out = stagger(&[
        "simulate",
        "--scenario",
        &scenario("herd.toml"),
        "--clients",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clients"));
    std::fs::remove_dir_all(&dir).unwrap();
}

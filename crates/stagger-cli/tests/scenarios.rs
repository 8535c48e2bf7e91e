//! `stagger simulate --scenario FILE`, run as a user runs it, on the scenario files under
//! `docs/scenarios/`: each reproduces its canonical workload's row.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use stagger_sim::Workload;
use support::{Files, stagger, stdout};

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
    assert_eq!(model, "composed");
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
            "composed",
            policy_figures(PolicyKind::ExponentialFullJitter, 1)
                .unwrap()
                .herd,
        ),
        (
            "outage.toml",
            "composed",
            policy_figures(PolicyKind::Exponential, 1).unwrap().outage,
        ),
        (
            "open-loop.toml",
            "composed",
            open_loop::OpenLoop::default()
                .run(&strategy(open_loop::published_strategies(), "3 retries"), 1)
                .unwrap(),
        ),
        (
            "serial.toml",
            "composed",
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
            "composed",
            spike::Spike::default()
                .run(&spike::jittered_backoff(), 1)
                .unwrap(),
        ),
        (
            "ramp.toml",
            "composed",
            spike::Ramp::default().run(&spike::no_backoff(), 1).unwrap(),
        ),
        (
            "tail.toml",
            "composed",
            tail::Tail::default()
                .run(&stagger_sim::scoreboard::tail_strategy(), 1)
                .unwrap(),
        ),
        (
            "partition.toml",
            "composed",
            partition::Partition {
                budget_partition: partition::BudgetPartition::Partitioned,
                ..partition::Partition::default()
            }
            .run(&partition::trial_strategy(), 1)
            .unwrap(),
        ),
        (
            "throttle.toml",
            "composed",
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

/// The figures of `stagger simulate --workload ARGS... --format json`, as [`row`] gives a
/// scenario's.
fn workload_row(args: &[&str]) -> Value {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout(&all)).expect("JSON");
    doc["results"][0].clone()
}

#[test]
fn an_outages_deadline_and_retry_after_in_a_file_give_the_workloads_rows() {
    let files = Files::new("outage-settings");
    let outage = std::fs::read_to_string(scenario("outage.toml")).unwrap();
    let throttled = files.write(
        "throttled.toml",
        &outage.replace(
            "outage = { at = \"15s\", for = \"30s\" }",
            "outage = { at = \"15s\", for = \"30s\", retry_after = \"2s\" }",
        ),
    );
    let (_, got) = row(&throttled);
    let want = workload_row(&[
        "--workload",
        "outage",
        "--policy",
        "exponential",
        "--retry-after",
        "2s",
    ]);
    assert_eq!(got, want);
    // The floor held: the throttled run sends fewer attempts than the plain one.
    let (_, plain) = row(&scenario("outage.toml"));
    assert!(
        got["load"].as_f64() < plain["load"].as_f64(),
        "{got} {plain}"
    );

    // The dispersal above the wait is the outer layer's: the floor alone waits less.
    let floor = files.write(
        "floor.toml",
        &format!(
            "{}server_wait_dispersal = \"floor\"\n",
            std::fs::read_to_string(&throttled).unwrap()
        ),
    );
    let (_, at_floor) = row(&floor);
    let want = workload_row(&[
        "--workload",
        "outage",
        "--policy",
        "exponential",
        "--retry-after",
        "2s",
        "--dispersal",
        "floor",
    ]);
    assert_eq!(at_floor, want);
    assert_ne!(at_floor, got);

    let deadline = files.write("deadline.toml", &format!("{outage}timeout = \"5s\"\n"));
    let (_, got) = row(&deadline);
    let want = workload_row(&[
        "--workload",
        "outage",
        "--policy",
        "exponential",
        "--timeout",
        "5s",
    ]);
    assert_eq!(got, want);
}

#[test]
fn nested_layers_multiply_their_attempts_unless_the_outer_one_owns_recovery() {
    let files = Files::new("nested");
    let w2 = std::fs::read_to_string(scenario("open-loop.toml")).unwrap();
    let inner = |nested: &str| {
        format!("{w2}\n[[retry]]\npolicy = \"immediate\"\nmax_attempts = 3\n{nested}")
    };
    // The default: the inner layer makes one attempt inside each of the outer one's, and the
    // outer layer alone retries: the same row as without it.
    let owned = files.write("owned.toml", &inner(""));
    assert_eq!(row(&owned), row(&scenario("open-loop.toml")));
    // Two layers that both retry: each outer attempt is an inner run of up to 3 attempts at a
    // failure rate of 0.5, which fails with probability 0.5^3. Per request, 1 + 0.5 + 0.25
    // attempts per inner run, and sum_{k<4} 0.125^k inner runs: load 1.75 x 1.1426 = 2.0,
    // success 1 - 0.125^4.
    // The file under docs/scenarios is this stack.
    let both = scenario("stack.toml");
    assert_eq!(
        std::fs::read_to_string(&both)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("nested"))
            .count(),
        1
    );
    let (_, got) = row(&both);
    let load = got["load"].as_f64().unwrap();
    let success = got["success_rate"].as_f64().unwrap();
    let requests = got["first_tries"].as_f64().unwrap();
    // The attempts of one request, exactly: r - 1 failed inner runs of 3, then a last run of
    // 1, 2 or 3 (a run's third attempt ends it, answered or not).
    let (mut mean, mut square) = (0.0, 0.0);
    for r in 1..=4 {
        let reach = 0.125f64.powi(r - 1);
        for (k, p) in [(1.0, 0.5), (2.0, 0.25), (3.0, 0.25)] {
            let attempts = 3.0 * f64::from(r - 1) + k;
            // Run r is the last if it succeeds, or if it is the fourth.
            let last = if r == 4 || k < 3.0 { p } else { 0.125 };
            mean += reach * last * attempts;
            square += reach * last * attempts * attempts;
        }
    }
    let closed = 1.75 * (1.0 + 0.125 + 0.125f64.powi(2) + 0.125f64.powi(3));
    assert!((mean - closed).abs() < 1e-12, "{mean} {closed}");
    let error = ((square - mean * mean) / requests).sqrt();
    assert!(
        (load - mean).abs() <= 4.0 * error,
        "load {load}, closed form {mean} +- {error}"
    );
    let p = 1.0 - 0.125f64.powi(4);
    let error = (p * (1.0 - p) / requests).sqrt();
    assert!(
        (success - p).abs() <= 4.0 * error,
        "success {success}, closed form {p}"
    );
    // A dependency that always fails: 4 x 3 = 12 attempts per request, where stagger's default
    // makes 4 (what `stagger check --layers 2` states for these layers).
    let down = |text: String| text.replace("failure_rate = 0.5", "failure_rate = 1.0");
    let (_, worst) = row(&files.write("worst.toml", &down(inner("nested = \"retry\"\n"))));
    assert_eq!(worst["load"].as_f64(), Some(12.0), "{worst}");
    let (_, single) = row(&files.write("single.toml", &down(inner(""))));
    assert_eq!(single["load"].as_f64(), Some(4.0), "{single}");
}

#[test]
fn the_mixed_example_keeps_the_limiters_time_and_its_shared_budget_bounds_the_load() {
    let files = Files::new("mixed");
    let mixed = scenario("mixed.toml");
    let (model, got) = row(&mixed);
    assert_eq!(model, "composed");
    assert_eq!(got["early_retries"].as_u64(), Some(0), "{got}");
    assert!(got["met_outage"].as_u64().unwrap() > 0, "{got}");
    assert!(got["rejected_per_success"].as_f64().unwrap() > 0.0, "{got}");
    let text = std::fs::read_to_string(&mixed).unwrap();
    let (kept, _) = text.split_once("[retry.budget]").unwrap();
    // Without the budget its scope goes too: a scope with nothing to hold is refused.
    let kept = kept.replace("budget_scope = \"shared\"\n", "");
    let (_, unbounded) = row(&files.write("no-budget.toml", &kept));
    let load = |v: &Value| v["load"].as_f64().unwrap();
    assert!(load(&got) < load(&unbounded), "{got} {unbounded}");
}

#[test]
fn the_storms_limiter_and_gate_in_a_file_give_the_workloads_rows() {
    let files = Files::new("storm-settings");
    let storm = std::fs::read_to_string(scenario("throttle.toml")).unwrap();
    let flags = [
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
    ];
    let with = |more: &[&'static str]| {
        let mut all = flags.to_vec();
        all.extend_from_slice(more);
        workload_row(&all)
    };
    let gated = files.write("gated.toml", &format!("{storm}gate = 16\n"));
    assert_eq!(row(&gated).1, with(&["--gate"]));
    let busy = files.write(
        "busy.toml",
        &storm.replace(
            "rate_limit = { rate = 5.0, burst = 1, retry_after = \"1s\" }",
            "concurrency_limit = { limit = 4, service = \"100ms\", retry_after = \"1s\" }",
        ),
    );
    assert_eq!(row(&busy).1, with(&["--limit-concurrency", "4"]));
    let exact = files.write(
        "exact.toml",
        &storm.replace(
            "retry_after = \"1s\" }",
            "retry_after = \"1s\", form = \"exact-rounded\" }",
        ),
    );
    assert_eq!(
        row(&exact).1,
        with(&["--retry-after-form", "exact-rounded"])
    );
}

#[test]
fn parts_combine_across_the_canonical_workloads() {
    let files = Files::new("combined");
    let outage = std::fs::read_to_string(scenario("outage.toml")).unwrap();
    let (_, alone) = row(&scenario("outage.toml"));
    let load = |v: &Value| v["load"].as_f64().unwrap();

    // An outage and a failure rate outside it: more attempts per request than the outage alone.
    let flaky = files.write(
        "flaky.toml",
        &outage.replace(
            "network = { constant = \"1ms\" }",
            "network = { constant = \"1ms\" }\nfailure_rate = 0.5",
        ),
    );
    let (model, both) = row(&flaky);
    assert_eq!(model, "composed");
    assert!(load(&both) > load(&alone) + 0.3, "{both} {alone}");
    assert!(both["met_outage"].as_u64().unwrap() > 0);

    // Serial clients through the outage: each has one request in flight, so the recovery
    // second sees no more attempts than there are clients.
    let serial = files.write(
        "serial.toml",
        &outage
            .replace("kind = \"open\"", "kind = \"serial\"")
            .replace("sources = 1", "sources = 20")
            .replace("rate_per_source = 100.0", "rate_per_source = 5.0"),
    );
    let (_, row_serial) = row(&serial);
    assert!(
        row_serial["met_outage"].as_u64().unwrap() > 0,
        "{row_serial}"
    );
    assert!(
        row_serial["recovery_load"].as_u64().unwrap() <= 20 * 2,
        "{row_serial}"
    );
    assert!(load(&row_serial) > 1.0, "{row_serial}");

    // Open sources with a failure rate behind a rate limiter: refused attempts, and not one
    // retry reaches the limiter before the time it gave.
    let w2 = std::fs::read_to_string(scenario("open-loop.toml")).unwrap();
    let limited = files.write(
        "limited.toml",
        &w2.replace(
            "failure_rate = 0.5",
            "failure_rate = 0.5\nrate_limit = { rate = 500.0, burst = 50, retry_after = \"1s\" }",
        )
        .replace("max_attempts = 4", "max_attempts = 4\ntimeout = \"5s\""),
    );
    let (_, behind) = row(&limited);
    assert!(
        behind["rejected_per_success"].as_f64().unwrap() > 0.1,
        "{behind}"
    );
    assert_eq!(behind["early_retries"].as_u64(), Some(0), "{behind}");
    let (_, open) = row(&scenario("open-loop.toml"));
    assert!(
        behind["success_rate"].as_f64() < open["success_rate"].as_f64(),
        "{behind} {open}"
    );

    // A fixed fleet through an outage: every client met it, and only the ones whose policy
    // outlasts it succeed.
    let fleet = files.write(
        "fleet.toml",
        "duration = \"60s\"\n[clients]\nkind = \"fixed\"\ncount = 200\n\
         [dependency]\noutage = { at = \"0s\", for = \"5s\" }\n\
         [[retry]]\npolicy = \"exponential\"\nmax_attempts = 20\n",
    );
    let (_, fleet) = row(&fleet);
    assert_eq!(fleet["met_outage"].as_u64(), Some(200), "{fleet}");
    assert_eq!(fleet["success_rate"].as_f64(), Some(1.0), "{fleet}");

    // A budget per source against one shared by all ten: the shared bucket drains once, so it
    // lets fewer retries through the outage.
    let ten = outage
        .replace("sources = 1", "sources = 10")
        .replace("rate_per_source = 100.0", "rate_per_source = 10.0")
        .replace(
            "policy = \"exponential\"",
            "policy = \"constant\"\nmax_attempts = 50",
        );
    let budget = "[retry.budget]\nbudget = \"aws-standard\"\n";
    let per_source = files.write("per-source.toml", &format!("{ten}{budget}"));
    let shared = files.write(
        "shared.toml",
        &format!(
            "{}{budget}",
            ten.replace(
                "kind = \"open\"",
                "kind = \"open\"\nbudget_scope = \"shared\""
            )
        ),
    );
    let (_, own) = row(&per_source);
    let (_, one) = row(&shared);
    assert!(load(&one) < load(&own), "shared {one} per source {own}");
    // A shared budget is still a budget: fewer attempts than with none.
    let (_, none) = row(&files.write("none.toml", &ten));
    assert!(load(&own) < load(&none), "per source {own} none {none}");

    // The spike's overloaded server behind a rate limiter that answers 429 with Retry-After:
    // admission control in front of it, on the same model, and the row keeps the spike's
    // per-second figures beside the limiter's.
    let spike = std::fs::read_to_string(scenario("spike.toml")).unwrap();
    let admitted = files.write(
        "admitted.toml",
        &spike.replace(
            "service = { base = \"1s\", per_in_flight = \"10ms\" }",
            "service = { base = \"1s\", per_in_flight = \"10ms\" }\n\
             rate_limit = { rate = 50.0, burst = 20, retry_after = \"2s\" }",
        ),
    );
    let (model, limited) = row(&admitted);
    assert_eq!(model, "composed");
    assert!(
        limited["rejected_per_success"].as_f64().unwrap() > 0.0,
        "{limited}"
    );
    assert!(
        limited["tail_goodput_ratio"].as_f64().is_some(),
        "{limited}"
    );
    assert_eq!(limited["early_retries"].as_u64(), Some(0), "{limited}");

    // Hedging through an outage, which only the spike and the tail models took before.
    let hedged = files.write(
        "hedged.toml",
        &format!("{outage}[retry.hedging]\nmax_attempts = 2\ndelay = \"1ms\"\n"),
    );
    let (model, hedged) = row(&hedged);
    assert_eq!(model, "composed");
    assert_eq!(hedged["policy"].as_str(), Some("hedge-1msx2"), "{hedged}");
    assert!(hedged["met_outage"].as_u64().unwrap() > 0, "{hedged}");

    // Ten hedges per request through a long outage, whatever the policy's own limit: the
    // estimate counts every hedge, so the run is not stopped at twice it.
    let many = files.write(
        "many-hedges.toml",
        "duration = \"30s\"\n[clients]\nkind = \"open\"\nsources = 10\nrate_per_source = 100.0\n\
         [dependency]\nnetwork = { exp = \"1ms\" }\noutage = { at = \"1s\", for = \"28s\" }\n\
         [[retry]]\npolicy = \"immediate\"\nmax_attempts = 2\n\
         [retry.hedging]\nmax_attempts = 10\ndelay = \"10ms\"\n",
    );
    let (_, many) = row(&many);
    assert!(many["load"].as_f64().unwrap() > 5.0, "{many}");

    // Attempts that time out before the limiter's refusal comes back never hear its wait, so
    // none of their retries is early.
    let unheard = files.write(
        "unheard.toml",
        "duration = \"10s\"\n[clients]\nkind = \"open\"\nsources = 1\nrate_per_source = 100.0\n\
         [dependency]\nnetwork = { constant = \"10ms\" }\n\
         rate_limit = { rate = 10.0, burst = 1, retry_after = \"1s\" }\n\
         [[retry]]\npolicy = \"constant\"\nbase = \"10ms\"\nmax_attempts = 3\n\
         attempt_timeout = \"15ms\"\n",
    );
    let (_, unheard) = row(&unheard);
    assert!(unheard["rejected_per_success"].is_number(), "{unheard}");
    assert_eq!(unheard["early_retries"].as_u64(), Some(0), "{unheard}");
}

#[test]
fn a_scenario_is_refused_by_name_when_it_says_what_no_model_takes() {
    let files = Files::new("scenarios");
    let base = std::fs::read_to_string(scenario("open-loop.toml")).unwrap();
    let write = |name: &str, text: &str| files.write(name, text);
    let cases = [
        (
            "typo.toml",
            base.replace("sources = 100", "sorces = 100"),
            "sorces",
        ),
        ("top.toml", format!("colour = 1\n{base}"), "colour"),
        (
            "wait.toml",
            format!("{base}max_server_wait = \"1s\"\n"),
            "retry[0].max_server_wait does not apply to the composed model",
        ),
        (
            "network.toml",
            base.replace(
                "rtt = { exp = \"10ms\" }",
                "rtt = { exp = \"10ms\" }\nnetwork = { exp = \"10ms\" }",
            ),
            "rtt (a round trip) or network (one way), not both",
        ),
        (
            "inner-zero.toml",
            format!("{base}\n[[retry]]\npolicy = \"immediate\"\ntimeout = \"0s\"\n"),
            "retry[1].timeout: must be longer than 0",
        ),
        (
            "unheld.toml",
            base.replace(
                "kind = \"open\"",
                "kind = \"open\"\nbudget_scope = \"shared\"",
            ),
            "clients.budget_scope: there is no budget to hold",
        ),
        (
            "scope.toml",
            base.replace(
                "kind = \"open\"",
                "kind = \"open\"\nbudget_scope = \"everyone\"",
            ),
            "everyone",
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
            std::fs::read_to_string(scenario("contention.toml")).unwrap()
                + "\n[[retry]]\npolicy = \"immediate\"\nnested = \"retry\"\n",
            "retry[1]: nested = \"retry\" in an inner layer runs on the composed model only",
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
            "share.toml",
            base.replace("kind = \"open\"", "kind = \"serial\"")
                + "\n[dependency.two_hosts]\nshare_down = 1.5\n",
            "dependency.two_hosts.share_down",
        ),
        (
            "per_host.toml",
            format!("{base}budget_per_destination = 2\n[dependency.two_hosts]\nshare_down = 0.5\n"),
            "retry[0]: budget_per_destination needs a `budget`",
        ),
        (
            "one_host.toml",
            format!(
                "{base}budget_per_destination = 2\n[retry.budget]\nbudget = \"aws-standard\"\n"
            ),
            "retry[0].budget_per_destination needs dependency.two_hosts",
        ),
        (
            "limiters.toml",
            base.replace(
                "failure_rate = 0.5",
                "failure_rate = 0.5\nrate_limit = { rate = 5.0, retry_after = \"1s\" }\n\
                 concurrency_limit = { limit = 2, service = \"1ms\", retry_after = \"1s\" }",
            ),
            "rate_limit or concurrency_limit, not both",
        ),
        (
            "form.toml",
            base.replace(
                "failure_rate = 0.5",
                "rate_limit = { rate = 5.0, retry_after = \"1s\", form = \"roughly\" }",
            ),
            "dependency.rate_limit.form",
        ),
        (
            "count.toml",
            base.replace("sources = 100", "sources = 100\ncount = 5"),
            "clients.count (open and serial clients have sources)",
        ),
        (
            "inner.toml",
            format!(
                "{base}\n[[retry]]\npolicy = \"immediate\"\n[retry.budget]\nbudget = \"aws-standard\"\n"
            ),
            "retry[1].budget",
        ),
        (
            "fanout.toml",
            base.replace("kind = \"open\"", "kind = \"serial\"")
                .replace(
                    "rate_per_source = 10.0",
                    "rate_per_source = 10.0\nfanout = 3",
                ),
            "clients.fanout",
        ),
        (
            "shape.toml",
            base.replace(
                "rate_per_source = 10.0",
                "rate_per_source = 10.0\nspike = { factor = 2.0, at = \"1s\", for = \"1s\" }\n\
                 ramp = { peak_factor = 2.0, peak_at = \"1s\" }",
            ),
            "a spike or a ramp, not both",
        ),
    ];
    for (name, text, named) in &cases {
        let file = write(name, text);
        let out = stagger(&["simulate", "--scenario", &file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}");
        if stderr.contains("TOML parse error") {
            // What TOML refuses is shown as TOML writes it: under a line naming the file, the
            // place, the offending line with a caret, and what was wrong.
            assert!(
                stderr.starts_with(&format!(
                    "error: {file}: not a scenario:\nTOML parse error at line "
                )),
                "{name}: {stderr}"
            );
            assert!(
                stderr
                    .lines()
                    .any(|l| l.trim_start().starts_with('|') && l.contains('^')),
                "{name}: {stderr}"
            );
        } else {
            assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        }
        assert!(stderr.contains(named), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    // A fixed population calls once: a duration does not apply to the storm.
    let storm = std::fs::read_to_string(scenario("throttle.toml")).unwrap();
    let timed = write("timed.toml", &format!("duration = \"20h\"\n{storm}"));
    let out = stagger(&["simulate", "--scenario", &timed]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "duration (fixed clients call once, at time zero) does not apply to the composed model"
        ),
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
    // A budget's scope is the composed model's: the contended row's clients each hold their
    // own.
    let contended = std::fs::read_to_string(scenario("contention.toml")).unwrap();
    let scoped = write(
        "scoped.toml",
        &contended.replace(
            "kind = \"fixed\"",
            "kind = \"fixed\"\nbudget_scope = \"shared\"",
        ),
    );
    let out = stagger(&["simulate", "--scenario", &scoped]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("clients.budget_scope does not apply to the contention model"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The herd's fleet is a part of the composed model: the same file with a budget held by each
/// client, or one shared by the whole fleet, runs, and the shared one holds the fleet's retries
/// far lower; a dependency that fails every attempt cannot also fail some of them.
#[test]
fn the_herds_fleet_takes_a_budget_and_its_scope() {
    let files = Files::new("herd-budget");
    let write = |name: &str, text: &str| files.write(name, text);
    let herd = std::fs::read_to_string(scenario("herd.toml")).unwrap();
    let budgeted = format!("{herd}\n[retry.budget]\nbudget = \"aws-standard\"\n");
    let (model, alone) = row(&write("alone.toml", &budgeted));
    assert_eq!(model, "composed");
    let shared = budgeted.replace(
        "kind = \"fixed\"",
        "kind = \"fixed\"\nbudget_scope = \"shared\"",
    );
    let (_, together) = row(&write("together.toml", &shared));
    let load = |v: &Value| v["load"].as_f64().unwrap();
    // Each client's own quota (500 tokens, 5 a retry) lets its 7 retries through; one quota
    // for the fleet of 1000 runs out after 100 retries.
    assert_eq!(load(&alone), 8.0, "{alone}");
    assert!(load(&together) < 1.2, "{together}");
    assert_eq!(together["first_tries"], 1000);
    // `--stats` reports a scenario's run as a workload's: the shared budget's run goes through
    // the event loop, whose events are more than its attempts.
    let out = stagger(&[
        "simulate",
        "--scenario",
        &write("stats.toml", &shared),
        "--stats",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stats = String::from_utf8_lossy(&out.stderr);
    let measured = stats
        .split("measured: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{stats}"));
    assert!(measured > together["attempts"].as_u64().unwrap(), "{stats}");
    let both = write(
        "both.toml",
        &herd.replace(
            "always_fails = true",
            "always_fails = true\nfailure_rate = 0.5",
        ),
    );
    let out = stagger(&["simulate", "--scenario", &both]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("failure_rate or always_fails, not both"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A scenario on the composed model draws its plot: the goodput per second of open clients
/// beside the rate offered (a spike's shows it), or a fixed fleet's retries per 10 ms; a
/// scenario on another model refuses `--plot` by name.
#[test]
fn a_composed_scenario_plots_its_goodput_or_its_retries() {
    let files = Files::new("plots");
    let svg = files.0.join("spike.svg");
    let html = files.0.join("spike.html");
    let out = stagger(&[
        "simulate",
        "--scenario",
        &scenario("spike.toml"),
        "--plot",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("goodput per second") && drawn.contains("offered"));
    // Two lines of 80 seconds each, and the grid.
    assert!(drawn.matches("<polyline").count() >= 2, "{drawn}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("goodput per second"));
    let herd_svg = files.0.join("herd.svg");
    let out = stagger(&[
        "simulate",
        "--scenario",
        &scenario("herd.toml"),
        "--plot",
        herd_svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&herd_svg)
            .unwrap()
            .contains("retries per 10 ms")
    );
    // The tail's pool is a composed part too: its goodput plots.
    let tail_svg = files.0.join("tail.svg");
    let out = stagger(&[
        "simulate",
        "--scenario",
        &scenario("tail.toml"),
        "--plot",
        tail_svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let drawn = std::fs::read_to_string(&tail_svg).unwrap();
    assert!(drawn.contains("goodput per second") && drawn.contains("<polyline"));
    let out = stagger(&[
        "simulate",
        "--scenario",
        &scenario("contention.toml"),
        "--plot",
        files.0.join("contention.svg").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--plot"));
}

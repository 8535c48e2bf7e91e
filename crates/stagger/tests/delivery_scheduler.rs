//! The durable delivery scheduler example (`examples/delivery_scheduler`): its schedule, and
//! its process killed mid-schedule and restarted.
//!
//! The schedule module is the example's own file, included here, so these tests check the code
//! the example runs. The process test builds the example, points it at a loopback endpoint
//! that always answers 503, drives it at injected times (`--now`), kills a running `run-loop`
//! while it waits for the next attempt, and restarts it: every pending delivery's next attempt
//! time is the one the killed process stored, and the one the restarted process recomputes.
//! The process test needs the example's SQLite, which comes with the cfg
//! `stagger_sqlite_example`: `RUSTFLAGS="--cfg stagger_sqlite_example" cargo test -p stagger
//! --test delivery_scheduler`, as CI runs it.

#[path = "../examples/delivery_scheduler/schedule.rs"]
mod schedule;

use std::collections::BTreeSet;

use schedule::{Decision, after_failure, next_attempt_at, retry_window_ms};
use stagger::Schedule;
use stagger::rng::SeededRng;

/// Seed 002's published schedule: the time from the first failure to retries 1 to 7, in ms.
const PUBLISHED_MS: [u64; 7] = [1_000, 3_000, 7_000, 15_000, 31_000, 63_000, 127_000];

/// An arbitrary unix-millisecond time for the first attempts.
const T0: u64 = 1_700_000_000_000;

const IDS: [&str; 4] = ["order-1001", "order-1002", "invoice-77", "refund-9"];

/// Delivery `id`'s time from the first failure to each retry, in ms.
fn elapsed_ms(id: &str) -> Vec<u64> {
    (1..=7)
        .map(|n| next_attempt_at(id, n, T0).unwrap() - T0)
        .collect()
}

// The schedule, in process.

#[test]
fn the_same_delivery_always_gets_the_same_schedule() {
    for id in IDS {
        assert_eq!(elapsed_ms(id), elapsed_ms(id), "{id}");
        // It is the schedule the library lists for the same key, to the millisecond.
        let listed = Schedule::new(schedule::config(), SeededRng::from_key(id)).unwrap();
        let listed: Vec<u64> = listed
            .retries()
            .iter()
            .map(|r| r.elapsed.as_millis() as u64)
            .collect();
        assert_eq!(elapsed_ms(id), listed, "{id}");
        // And it does not depend on when the first failure happened.
        let later = next_attempt_at(id, 4, T0 + 86_400_000).unwrap();
        assert_eq!(later - T0 - 86_400_000, elapsed_ms(id)[3], "{id}");
    }
}

#[test]
fn different_deliveries_get_different_schedules() {
    let schedules: BTreeSet<Vec<u64>> = (0..1_000)
        .map(|i| elapsed_ms(&format!("delivery-{i}")))
        .collect();
    assert_eq!(schedules.len(), 1_000);
    for n in 0..7 {
        let times: BTreeSet<u64> = IDS.iter().map(|id| elapsed_ms(id)[n]).collect();
        assert_eq!(times.len(), IDS.len(), "retry {}", n + 1);
    }
}

#[test]
fn no_retry_is_later_than_the_published_schedule() {
    assert_eq!(retry_window_ms(), 127_000);
    for i in 0..1_000 {
        let id = format!("delivery-{i}");
        for (elapsed, published) in elapsed_ms(&id).into_iter().zip(PUBLISHED_MS) {
            // Jitter 0.2 only subtracts: each retry falls in 80-100 % of the published time.
            assert!(elapsed <= published, "{id}: {elapsed} > {published}");
            assert!(
                elapsed >= published * 4 / 5,
                "{id}: {elapsed} < 0.8 x {published}"
            );
        }
        assert_eq!(
            next_attempt_at(&id, 8, T0),
            None,
            "{id}: eight attempts at most"
        );
    }
}

#[test]
fn it_gives_up_after_eight_attempts_or_once_the_window_has_closed() {
    let id = IDS[0];
    let at = next_attempt_at(id, 3, T0).unwrap();
    assert_eq!(after_failure(id, 3, T0, T0 + 3_000), Decision::RetryAt(at));
    assert_eq!(
        after_failure(id, 7, T0, T0 + 126_000),
        Decision::RetryAt(next_attempt_at(id, 7, T0).unwrap())
    );
    assert_eq!(
        after_failure(id, 8, T0, T0 + 127_000),
        Decision::GiveUp("attempt limit reached")
    );
    // A process that was down past the window makes the attempt that was due, then stops.
    assert_eq!(
        after_failure(id, 3, T0, T0 + 127_001),
        Decision::GiveUp("retry window closed")
    );
}

/// The process, killed and restarted: with the example's SQLite only.
#[cfg(stagger_sqlite_example)]
mod process {
    use super::*;

    use bytes::Bytes;
    use http_body_util::{BodyExt, Empty};
    use hyper::body::Incoming;
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper::{Request, Response};
    use hyper_util::rt::TokioIo;
    use serde_json::Value;
    use std::collections::{BTreeMap, BTreeSet};
    use std::convert::Infallible;
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio::net::TcpListener;
    use tokio::process::Command;
    use tokio::time::timeout;

    /// How long any one step of the process test may take.
    const STEP: Duration = Duration::from_secs(20);

    /// Builds the example once, into this test's target directory, and returns its path.
    fn example_binary() -> PathBuf {
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("the target directory")
            .to_owned();
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo
            .args([
                "build",
                "--quiet",
                "-p",
                "stagger",
                "--example",
                "delivery_scheduler",
            ])
            .env("CARGO_TARGET_DIR", &target);
        let profile = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        if profile == "release" {
            cargo.arg("--release");
        }
        let status = cargo.status().expect("cargo runs");
        assert!(status.success(), "building the example failed");
        target
            .join(profile)
            .join("examples")
            .join("delivery_scheduler")
    }

    /// One request the endpoint received: the delivery id, the attempt number and the body.
    type Seen = Arc<Mutex<Vec<(String, u32, String)>>>;

    /// A loopback HTTP endpoint that records every request and answers 503 to all of them.
    async fn always_503() -> (SocketAddr, Seen) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Seen::default();
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = log.clone();
                let service = service_fn(move |request: Request<Incoming>| {
                    let log = log.clone();
                    async move {
                        let header = |name| {
                            let value = request.headers().get(name).map(|v| v.to_str().unwrap());
                            value.unwrap_or_default().to_owned()
                        };
                        let (id, attempt) = (header("x-delivery-id"), header("x-delivery-attempt"));
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let body = String::from_utf8(body.to_vec()).unwrap();
                        log.lock()
                            .unwrap()
                            .push((id, attempt.parse().unwrap(), body));
                        let answer = Response::builder().status(503).body(Empty::<Bytes>::new());
                        Ok::<_, Infallible>(answer.unwrap())
                    }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
            }
        });
        (addr, seen)
    }

    /// The example's command line, on one database.
    struct Cli {
        binary: PathBuf,
        db: PathBuf,
    }

    impl Cli {
        fn command(&self, now: u64, args: &[&str]) -> Command {
            let mut command = Command::new(&self.binary);
            command
                .arg("--db")
                .arg(&self.db)
                .args(["--now", &now.to_string()])
                .args(args)
                .stdin(Stdio::null())
                .kill_on_drop(true);
            command
        }

        /// Runs a one-shot command at `now`; its JSON lines, and whether it exited with success.
        async fn try_run(&self, now: u64, args: &[&str]) -> (Vec<Value>, bool) {
            let output = timeout(STEP, self.command(now, args).output())
                .await
                .unwrap_or_else(|_| panic!("{args:?} did not finish"))
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let lines = String::from_utf8(output.stdout).unwrap();
            let values = lines.lines().map(|l| serde_json::from_str(l).unwrap());
            assert!(stderr.is_empty(), "{args:?}: {stderr}");
            (values.collect(), output.status.success())
        }

        async fn run(&self, now: u64, args: &[&str]) -> Vec<Value> {
            let (lines, ok) = self.try_run(now, args).await;
            assert!(ok, "{args:?} failed");
            lines
        }

        /// The pending deliveries, by id.
        async fn list(&self) -> BTreeMap<String, Value> {
            let lines = self.run(0, &["list"]).await;
            lines
                .into_iter()
                .map(|v| (v["id"].as_str().unwrap().to_owned(), v))
                .collect()
        }
    }

    fn ms(value: &Value) -> u64 {
        value
            .as_u64()
            .unwrap_or_else(|| panic!("not a time: {value}"))
    }

    /// Checks every pending delivery's stored time against the schedule and the published limits.
    fn check_pending(pending: &BTreeMap<String, Value>) {
        for (id, p) in pending {
            let attempts = u32::try_from(p["attempts"].as_u64().unwrap()).unwrap();
            let (first, next) = (ms(&p["first_failure_ms"]), ms(&p["next_attempt_ms"]));
            assert_eq!(Some(next), next_attempt_at(id, attempts, first), "{id}");
            let published = PUBLISHED_MS[attempts as usize - 1];
            assert!(
                next - first <= published,
                "{id}: later than the published schedule"
            );
            assert!(
                next - first >= published * 4 / 5,
                "{id}: more than 20 % early"
            );
        }
        let times: BTreeSet<u64> = pending
            .values()
            .map(|p| ms(&p["next_attempt_ms"]))
            .collect();
        assert_eq!(
            times.len(),
            pending.len(),
            "two deliveries share a time: {pending:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_killed_scheduler_restarts_on_the_same_schedule() {
        let binary = example_binary();
        let (addr, seen) = always_503().await;
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("delivery_scheduler-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("deliveries.db");
        let _ = std::fs::remove_file(&db);
        let cli = Cli { binary, db };

        let url = format!("http://{addr}/hook");
        for (n, id) in IDS.iter().enumerate() {
            cli.run(T0, &["enqueue", id, &url, &format!(r#"{{"order":{n}}}"#)])
                .await;
        }

        // Three passes at injected times, each a new process reading the table: the first attempts
        // fail at T0, the second ones at T0 + 1 s, the third ones at T0 + 3 s.
        for (attempts, now) in [(1, T0), (2, T0 + 1_000), (3, T0 + 3_000)] {
            let events = cli.run(now, &["run-once"]).await;
            assert_eq!(events.len(), IDS.len(), "every delivery is due at {now}");
            let pending = cli.list().await;
            assert_eq!(pending.len(), IDS.len());
            for p in pending.values() {
                assert_eq!(p["attempts"], attempts);
                assert_eq!(ms(&p["first_failure_ms"]), T0);
            }
            check_pending(&pending);
        }

        // A long-running sender, its clock starting at T0 + 3 s and running 20 times faster than
        // real time. Once every delivery has failed six times, the next attempts are at least
        // 19 s of schedule (about a second of real time) away: kill it while it waits for them.
        let mut child = cli
            .command(T0 + 3_000, &["--speed", "20", "run-loop"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut before = BTreeMap::<String, Value>::new();
        timeout(STEP, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let event: Value = serde_json::from_str(&line).unwrap();
                match event["event"].as_str().unwrap() {
                    "retry" => {
                        before.insert(event["id"].as_str().unwrap().to_owned(), event);
                    }
                    "sleep"
                        if before.len() == IDS.len()
                            && before.values().all(|e| e["attempt"] == 6) =>
                    {
                        return;
                    }
                    "sleep" => {}
                    other => panic!("unexpected event {other}: {line}"),
                }
            }
            panic!("run-loop exited");
        })
        .await
        .expect("six attempts each within the time limit");
        child.kill().await.unwrap();

        // Restarted: the stored times are those the killed process announced, and a new process
        // recomputes exactly them from (id, attempts, first failure).
        let after = cli.list().await;
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            before.keys().collect::<Vec<_>>()
        );
        for (id, p) in &after {
            let announced = &before[id];
            assert_eq!(p["attempts"], announced["attempt"], "{id}");
            assert_eq!(p["first_failure_ms"], announced["first_failure_ms"], "{id}");
            assert_eq!(p["next_attempt_ms"], announced["next_attempt_ms"], "{id}");
        }
        check_pending(&after);
        let verified = cli.run(0, &["verify"]).await;
        assert_eq!(verified.len(), IDS.len());
        assert!(verified.iter().all(|v| v["match"] == true), "{verified:?}");

        // The restarted sender carries on, a pass at each due time, to the end of the schedule.
        for _ in 0..3 * IDS.len() {
            let pending = cli.list().await;
            let Some(now) = pending.values().map(|p| ms(&p["next_attempt_ms"])).min() else {
                break;
            };
            assert!(now <= T0 + PUBLISHED_MS[6], "an attempt after the window");
            for event in cli.run(now, &["run-once"]).await {
                let id = event["id"].as_str().unwrap();
                match event["attempt"].as_u64().unwrap() {
                    7 => assert_eq!(event["event"], "retry", "{event}"),
                    8 => assert_eq!(event["reason"], "attempt limit reached", "{event}"),
                    _ => panic!("{event}"),
                }
                if event["event"] == "retry" {
                    let at = next_attempt_at(id, 7, T0);
                    assert_eq!(event["next_attempt_ms"].as_u64(), at, "{id}");
                }
            }
            check_pending(&cli.list().await);
        }
        assert!(cli.list().await.is_empty(), "every delivery gave up");

        // The endpoint saw each delivery's eight attempts once each, in order, with its payload:
        // the kill cost no attempt and repeated none.
        let seen = seen.lock().unwrap().clone();
        for (n, id) in IDS.iter().enumerate() {
            let attempts: Vec<u32> = seen.iter().filter(|s| s.0 == *id).map(|s| s.1).collect();
            assert_eq!(attempts, (1..=8).collect::<Vec<_>>(), "{id}");
            let payload = format!(r#"{{"order":{n}}}"#);
            assert!(
                seen.iter().filter(|s| s.0 == *id).all(|s| s.2 == payload),
                "{id}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! The command line: flags, the commands, and their JSON lines.

use std::error::Error;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::schedule;
use crate::scheduler::run_once;
use crate::sender::Sender;
use crate::store::{Attempt, Outcome, Store};

const USAGE: &str = "usage: delivery_scheduler [--db PATH] [--now UNIX_MS] [--speed N] \
                     (enqueue ID URL PAYLOAD | run-once | run-loop | list | verify)";

/// How long `run-loop` sleeps at most (in real time) before looking for new deliveries.
const POLL: Duration = Duration::from_secs(1);

/// The wall clock in unix milliseconds: the only place the example reads the time.
#[allow(clippy::disallowed_methods)] // The one wall-clock read; all decision code takes `now`.
fn wall_clock_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// "Now" for the commands. One-shot commands run at `start_ms` (`--now`, or the wall clock
/// when the process started); `run-loop` advances it by real time times `speed`.
struct Clock {
    start_ms: u64,
    wall_start_ms: u64,
    speed: u64,
}

impl Clock {
    fn now_ms(&self) -> u64 {
        let real = wall_clock_ms().saturating_sub(self.wall_start_ms);
        self.start_ms
            .saturating_add(real.saturating_mul(self.speed))
    }

    /// The real time to sleep for this clock to advance by `ms`.
    fn real(&self, ms: u64) -> Duration {
        Duration::from_millis(ms.div_ceil(self.speed))
    }
}

/// Writes one JSON line to standard output.
fn emit(value: &Value) -> std::io::Result<()> {
    writeln!(std::io::stdout().lock(), "{value}")
}

/// An attempt as a JSON line: `event` is `delivered`, `retry` or `gave-up`.
fn attempt_json(a: &Attempt) -> Value {
    let (event, next, reason) = match a.outcome {
        Outcome::Delivered => ("delivered", None, None),
        Outcome::RetryAt(at) => ("retry", Some(at), None),
        Outcome::GaveUp(why) => ("gave-up", None, Some(why)),
    };
    json!({
        "event": event,
        "id": a.id,
        "attempt": a.attempt,
        "first_failure_ms": a.first_failure_ms,
        "next_attempt_ms": next,
        "reason": reason,
        "error": a.error,
    })
}

/// Runs the command the arguments name.
#[tokio::main(flavor = "current_thread")]
pub(crate) async fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("delivery_scheduler: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(mut args: Vec<String>) -> Result<ExitCode, Box<dyn Error>> {
    let mut flag = |name: &str| -> Option<String> {
        let at = args.iter().position(|a| a == name)?;
        args.remove(at);
        (at < args.len()).then(|| args.remove(at))
    };
    let db = flag("--db")
        .or_else(|| std::env::var("DELIVERY_DB").ok())
        .unwrap_or_else(|| "deliveries.db".to_owned());
    let wall_start_ms = wall_clock_ms();
    let clock = Clock {
        start_ms: flag("--now").map_or(Ok(wall_start_ms), |t| t.parse())?,
        wall_start_ms,
        speed: flag("--speed").map_or(Ok(1), |s| s.parse())?.max(1),
    };
    let store = Store::open(&db)?;
    let sender = Sender::new();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args[..] {
        ["enqueue", id, url, payload] => {
            serde_json::from_str::<Value>(payload).map_err(|e| format!("payload: {e}"))?;
            let now = clock.start_ms;
            store.enqueue(id, url, payload, now)?;
            emit(&json!({ "event": "enqueued", "id": id, "next_attempt_ms": now }))?;
        }
        ["run-once"] => {
            for event in run_once(&store, &sender, clock.start_ms).await? {
                emit(&attempt_json(&event))?;
            }
        }
        ["run-loop"] => loop {
            for event in run_once(&store, &sender, clock.now_ms()).await? {
                emit(&attempt_json(&event))?;
            }
            let now = clock.now_ms();
            let poll = now.saturating_add(u64::try_from(POLL.as_millis())? * clock.speed);
            let until = store.earliest_due()?.map_or(poll, |due| due.min(poll));
            emit(&json!({ "event": "sleep", "now_ms": now, "until_ms": until }))?;
            tokio::time::sleep(clock.real(until.saturating_sub(now))).await;
        },
        ["list"] => {
            for d in store.pending()? {
                emit(&json!({
                    "id": d.id,
                    "url": d.url,
                    "attempts": d.attempts,
                    "first_failure_ms": d.first_failure_ms,
                    "next_attempt_ms": d.next_attempt_ms,
                }))?;
            }
        }
        ["verify"] => {
            let mut all_match = true;
            // A delivery not yet attempted has no first failure and is due when enqueued.
            for d in store.pending()?.into_iter().filter(|d| d.attempts > 0) {
                let first = d
                    .first_failure_ms
                    .ok_or("a failed delivery without a first failure")?;
                let recomputed = schedule::next_attempt_at(&d.id, d.attempts, first);
                all_match &= recomputed == d.next_attempt_ms;
                emit(&json!({
                    "id": d.id,
                    "attempts": d.attempts,
                    "stored_ms": d.next_attempt_ms,
                    "recomputed_ms": recomputed,
                    "match": recomputed == d.next_attempt_ms,
                }))?;
            }
            return Ok(if all_match {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        _ => return Err(USAGE.into()),
    }
    Ok(ExitCode::SUCCESS)
}

//! A durable webhook sender whose retry schedule survives a restart.
//!
//! Each delivery (id, target URL, JSON payload) lives in a SQLite table with its attempt
//! count, the time its first attempt failed and the time its next attempt is due. The
//! schedule is the `delivery` preset, a published webhook delivery schedule (1 s doubling to a 1 h cap, 8 attempts) with
//! subtractive jitter 0.2, seeded by the delivery id: the same delivery always gets the same
//! schedule, two deliveries get different ones, and no retry is later than the published
//! schedule. "Next attempt at" is a pure function of `(id, attempts, first failure)`
//! (`schedule::next_attempt_at`), so a process restarted after a crash recomputes exactly
//! the stored times; `verify` checks that it does.
//!
//! ```text
//! delivery_scheduler [--db PATH] [--now UNIX_MS [--speed N]] COMMAND
//!
//!   enqueue ID URL PAYLOAD   store a delivery, due at once
//!   run-once                 make every attempt that is due, then exit
//!   run-loop                 run-once, sleep until the next attempt is due, and again
//!   list                     the pending deliveries, as JSON lines
//!   verify                   recompute every pending delivery's time; exit 1 on a mismatch
//! ```
//!
//! The database is `--db PATH`, else `$DELIVERY_DB`, else `deliveries.db`; the schema is
//! created if missing. Time is read in one place, `wall_clock_ms`; everything else takes
//! `now` as an argument. `--now UNIX_MS` sets the time a command runs at; `run-loop` then
//! advances it by the real time elapsed times `--speed` (default 1), so a test can drive
//! minutes of schedule in seconds.
//!
//! SQLite comes with the cfg `stagger_sqlite_example`, so that the workspace's tests do not
//! build its C code (without it, this example is a stub that says so). Try it against a
//! receiver on port 8080:
//!
//! ```text
//! export RUSTFLAGS="--cfg stagger_sqlite_example"
//! cargo run -p stagger --example delivery_scheduler -- enqueue order-1 http://127.0.0.1:8080/hook '{"n":1}'
//! cargo run -p stagger --example delivery_scheduler -- run-loop
//! ```
//!
//! One sender per database: two processes running `run-loop` on the same file could both make
//! the same attempt (the guarded updates keep the rows consistent, but the POST is sent twice).

#[cfg(stagger_sqlite_example)]
mod app;
#[cfg(stagger_sqlite_example)]
mod schedule;
#[cfg(stagger_sqlite_example)]
mod scheduler;
#[cfg(stagger_sqlite_example)]
mod sender;
#[cfg(stagger_sqlite_example)]
mod store;

#[cfg(stagger_sqlite_example)]
fn main() -> std::process::ExitCode {
    app::main()
}

/// Without SQLite: one line that says how to build the real example.
#[cfg(not(stagger_sqlite_example))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "delivery_scheduler: built without SQLite; build it with \
         RUSTFLAGS=\"--cfg stagger_sqlite_example\" cargo run -p stagger --example delivery_scheduler"
    );
    std::process::ExitCode::from(2)
}

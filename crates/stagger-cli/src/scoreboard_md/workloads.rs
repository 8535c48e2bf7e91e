//! The sections of the workloads that are one table each, or a table and its sweeps: the herd,
//! the outage, the 2015 contention simulation, the open-loop and the serial clients.

use std::fmt::Write as _;

use stagger_sim::scoreboard::Scoreboard;

use super::cells::{label_rows, ms, num, pct, sweep, table};

/// The sections, in the scoreboard's order.
pub(super) fn sections(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## `herd`: 1000 clients fail together\n\n![Retries per 10 ms](herd.svg)\n"
    );
    s.push_str(&table(
        &["Policy", "Peak 10 ms share", "Attempts per client"],
        label_rows(&board.herd, |r| vec![pct(r.peak_window_share), num(r.load)]),
    ));

    let _ = writeln!(s, "\n## `outage`: 100 requests/s through a 30 s outage\n");
    s.push_str(&table(
        &[
            "Policy",
            "Success (met the outage)",
            "Met the outage",
            "Attempts in the second after",
            "Attempts per request",
        ],
        label_rows(&board.outage, |r| {
            vec![
                pct(r.success_rate),
                r.met_outage.unwrap_or(0).to_string(),
                r.recovery_load.unwrap_or(0).to_string(),
                num(r.load),
            ]
        }),
    ));

    let _ = writeln!(
        s,
        "\n## `contention`: the 2015 AWS simulation, 100 clients, 100 rounds\n\nThe 2015 policies use base 5 ms and cap 2 s with exponent `n = 1` on the first retry; the catalog's curves start at exponent 0, so they run here with base 10 ms (2 x 5 ms), factor 2, cap 2 s, and the same delays. `Decorr` is the study's clamped decorrelated jitter (`aws-2015-decorrelated-clamped`), `decorrelated-jitter` the catalog's corrected one.\n\n![Work](contention_work.svg) ![Completion](contention_time.svg)\n"
    );
    s.push_str(&table(
        &[
            "Strategy",
            "Writes per round",
            "Completion (ms)",
            "p99 (ms)",
        ],
        label_rows(&board.contention, |r| {
            vec![ms(r.writes_per_round), ms(r.completion_ms), ms(r.p99_ms)]
        }),
    ));
    let _ = writeln!(s, "\nWrites per round, against clients:\n");
    s.push_str(&sweep(&board.contention_sweep, "clients", |r| {
        ms(r.writes_per_round)
    }));
    let _ = writeln!(s, "\nCompletion (ms), against clients:\n");
    s.push_str(&sweep(&board.contention_sweep, "clients", |r| {
        ms(r.completion_ms)
    }));

    let _ = writeln!(
        s,
        "\n## `open-loop`: 100 clients x 10 requests/s, independent failures (W2)\n\n![Success and load](open_loop.svg)\n"
    );
    let _ = writeln!(s, "Success rate (successes per first try):\n");
    s.push_str(&sweep(&board.open_loop, "failure rate", |r| {
        num(r.success_rate)
    }));
    let _ = writeln!(s, "\nLoad (attempts per first try):\n");
    s.push_str(&sweep(&board.open_loop, "failure rate", |r| num(r.load)));

    let _ = writeln!(
        s,
        "\n## `serial` against `open-loop` at a 50 % failure rate (W3)\n"
    );
    s.push_str(&table(
        &[
            "Clients, strategy",
            "First tries",
            "Attempts",
            "Attempts per first try",
        ],
        label_rows(&board.serial, |r| {
            vec![
                r.first_tries.to_string(),
                r.attempts.to_string(),
                num(r.load),
            ]
        }),
    ));

    s
}

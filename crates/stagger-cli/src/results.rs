//! The results of `stagger simulate` as a table or CSV: the columns the workload has.
//!
//! Every workload measures success, load and the spread of retries; the rest is its own (the
//! outage's recovery, the contention's writes, the spike's tail goodput, the storm's refusals,
//! each host of the partition). A column is shown when a row has its figure, and a cell that a
//! shown column lacks reads `-`. The JSON keeps every field, under the same names as the
//! headers here.

use std::io::{self, Write};

use stagger_sim::ResultRow;

use crate::render::{self, Table};

/// One column: its header (the row's JSON key, or `host_b_` and the key under `host_b`), and
/// its cell, `None` where a row has no such figure.
struct Column {
    header: &'static str,
    cell: fn(&ResultRow) -> Option<String>,
}

fn num(x: f64) -> String {
    format!("{x:.4}")
}

/// Every column a workload may have, in the order shown.
const COLUMNS: &[Column] = &[
    Column {
        header: "policy",
        cell: |r| Some(r.policy.clone()),
    },
    Column {
        header: "budget",
        cell: |r| r.budget.clone(),
    },
    // The storm's success is its served share, shown under that name.
    Column {
        header: "success_rate",
        cell: |r| r.served_share.is_none().then(|| num(r.success_rate)),
    },
    Column {
        header: "served_share",
        cell: |r| r.served_share.map(num),
    },
    Column {
        header: "load",
        cell: |r| Some(num(r.load)),
    },
    // A share of the retries, where there are retries.
    Column {
        header: "peak_window_share",
        cell: |r| (r.attempts > r.first_tries).then(|| num(r.peak_window_share)),
    },
    Column {
        header: "p50_ms",
        cell: |r| r.p50_ms.map(num),
    },
    Column {
        header: "p99_ms",
        cell: |r| r.p99_ms.map(num),
    },
    Column {
        header: "p999_ms",
        cell: |r| r.p999_ms.flatten().map(num),
    },
    Column {
        header: "writes_per_round",
        cell: |r| r.writes_per_round.map(num),
    },
    Column {
        header: "completion_ms",
        cell: |r| r.completion_ms.map(num),
    },
    Column {
        header: "met_outage",
        cell: |r| r.met_outage.map(|n| n.to_string()),
    },
    Column {
        header: "recovery_load",
        cell: |r| r.recovery_load.map(|n| n.to_string()),
    },
    Column {
        header: "tail_goodput_ratio",
        cell: |r| r.tail_goodput_ratio.map(num),
    },
    Column {
        header: "recovery_ms",
        cell: |r| {
            r.recovery_ms
                .map(|ms| ms.map_or_else(|| "never".to_owned(), num))
        },
    },
    Column {
        header: "rejected_per_success",
        cell: |r| r.rejected_per_success.map(num),
    },
    Column {
        header: "early_retries",
        cell: |r| r.early_retries.map(|n| n.to_string()),
    },
    Column {
        header: "host_a_retries",
        cell: |r| r.host_a.as_ref().map(|h| h.retries.to_string()),
    },
    Column {
        header: "host_a_refused",
        cell: |r| r.host_a.as_ref().map(|h| h.refused.to_string()),
    },
    Column {
        header: "host_b_success_share",
        cell: |r| r.host_b.as_ref().map(|h| num(h.success_share)),
    },
    Column {
        header: "host_b_retries",
        cell: |r| r.host_b.as_ref().map(|h| h.retries.to_string()),
    },
    Column {
        header: "host_b_refused",
        cell: |r| r.host_b.as_ref().map(|h| h.refused.to_string()),
    },
];

/// The columns `rows` of `workload` have: each that some row has a figure for, but the
/// herd's success rate, which is 0 by design (see [`note`]).
fn shown(workload: &str, rows: &[ResultRow]) -> Vec<&'static Column> {
    COLUMNS
        .iter()
        .filter(|c| !(workload == "herd" && c.header == "success_rate"))
        .filter(|c| rows.iter().any(|r| (c.cell)(r).is_some()))
        .collect()
}

/// What a reader needs to read the table of `workload` right, if anything: the herd's
/// requests all give up by design, which is not a failure of the policy.
pub(crate) fn note(workload: &str) -> Option<&'static str> {
    (workload == "herd").then_some(
        "The herd's dependency fails every attempt by design, so every request makes its \
         attempts and gives up: what it measures is when the retries land, not whether they \
         succeed. load is the attempts per request; peak_window_share is the busiest window's \
         share of all retries (10 ms unless --window says otherwise): the lower, the better \
         the clients' retries are spread.",
    )
}

/// The table of `rows`: a line naming the run, the columns the workload has, and its
/// [`note`].
pub(crate) fn write_table(
    out: &mut dyn Write,
    workload: &str,
    seed: u64,
    rows: &[ResultRow],
) -> io::Result<()> {
    writeln!(out, "{workload} (seed {seed})")?;
    writeln!(out)?;
    let columns = shown(workload, rows);
    let mut table = Table::new(columns.iter().map(|c| c.header));
    for row in rows {
        table.row(
            columns
                .iter()
                .map(|c| (c.cell)(row).unwrap_or_else(|| "-".to_owned())),
        );
    }
    table.write(out)?;
    if let Some(note) = note(workload) {
        writeln!(out)?;
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// The CSV of `rows`: a header of the columns the workload has, then a record per row, with
/// an empty field where a row lacks a figure.
pub(crate) fn write_csv(out: &mut dyn Write, workload: &str, rows: &[ResultRow]) -> io::Result<()> {
    let columns = shown(workload, rows);
    let header: Vec<&str> = columns.iter().map(|c| c.header).collect();
    render::csv_record(out, &header)?;
    for row in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| (c.cell)(row).unwrap_or_default())
            .collect();
        render::csv_record(out, &cells)?;
    }
    Ok(())
}

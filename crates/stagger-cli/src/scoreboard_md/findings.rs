//! The published findings beside ours: the table of each claim, how its words are read and
//! what the models give, and for each finding not reproduced, why.
//!
//! A why is worked out where the board knows it, from the policy's own arithmetic (how long
//! `constant` keeps trying against how long the outage lasts), so the note shows where the
//! model's figure comes from and not only that it differs.

use std::fmt::Write as _;

use stagger_core::duration::human;
use stagger_sim::scoreboard::Scoreboard;

use super::cells::{pct, row, table};

/// The section: where the findings come from, their table, and the notes on those not
/// reproduced.
pub(super) fn section(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Published findings beside ours\n");
    let _ = writeln!(
        s,
        "The published findings come from the catalog's own page for `constant` and from four \
         published simulations, labelled W1 to W4 below: **W1** is the AWS Architecture Blog's \
         2015 contention simulation (\"Exponential Backoff And Jitter\", \
         github.com/aws-samples/aws-arch-backoff-simulator); **W2** and **W3** are Marc \
         Brooker's 2022 retry simulations (\"What is Backoff For?\" and its code, \
         `retry_sim.py`: open clients with retry budgets and breakers, then serial clients); \
         **W4** is Brooker's 2023 simple collapse simulation (github.com/mbrooker/simulator_example, \
         `simple_collapse_sim/sim.py`), the model behind the metastable failures of Bronson et \
         al. (HotOS 2021). A *world seed* is the one number every random generator of a run is \
         derived from: the same world seed gives the same bytes. Each claim's words are read by \
         margins fixed before looking at the figures (the *Read as* column): the board's \
         verdicts and the simulator's tests read them from one place, \
         `stagger_sim::scoreboard::margins`.\n"
    );
    let rows = board
        .fidelity
        .iter()
        .map(|f| {
            vec![
                f.workload.to_owned(),
                f.published.to_owned(),
                f.reading.clone(),
                f.ours.clone(),
                if f.reproduced {
                    "yes"
                } else {
                    "**no**: why, below"
                }
                .to_owned(),
            ]
        })
        .collect();
    s.push_str(&table(
        &["Workload", "Published", "Read as", "Ours", "Reproduced"],
        rows,
    ));
    s.push_str(&not_reproduced(board));
    s
}

/// A share as a percentage without decimals where it has none: 0.02 is "2%".
fn whole_pct(x: f64) -> String {
    let p = 100.0 * x;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        pct(x)
    }
}

/// Each published finding the board does not reproduce, and why, where the board marks it.
pub(super) fn not_reproduced(board: &Scoreboard) -> String {
    use stagger_sim::scoreboard::{Claim, constant_patience, margins};
    let mut s = String::new();
    for finding in board.fidelity.iter().filter(|f| !f.reproduced) {
        let why = match finding.claim {
            Claim::OutageConstantRarelySucceeds => (|| {
                let down = stagger_sim::workload::outage::Outage::default().down_for;
                let patience = constant_patience();
                let c = row(&board.outage, "constant")?;
                let e = row(&board.outage, "exponential")?;
                Some(format!(
                    "The catalog's `constant` page says constant succeeds under {} of the time \
                     on {} outages; here {} of the requests that met the outage succeed. That is \
                     the policy's own arithmetic: at its defaults `constant` gives up {} after \
                     its first failure, so a request succeeds only if it meets the outage's \
                     last {}, and {} of {} is {}. The page's figure rounds that down; the board \
                     reads the words as written, so it marks the finding not reproduced. The \
                     point of the finding holds: `constant` rarely outlasts an outage, \
                     `exponential` far more often ({}).",
                    whole_pct(margins::CONSTANT_SUCCEEDS_UNDER),
                    human(down),
                    pct(c.success_rate),
                    human(patience),
                    human(patience),
                    human(patience),
                    human(down),
                    pct(patience.as_secs_f64() / down.as_secs_f64()),
                    pct(e.success_rate),
                ))
            })(),
            _ => None,
        };
        let _ = writeln!(
            s,
            "\n**Not reproduced ({}):** {}",
            finding.workload,
            why.unwrap_or_else(|| format!(
                "published: {}; ours: {}.",
                finding.published, finding.ours
            ))
        );
    }
    s
}

//! The 429 storm: the `throttle` workload's trial of dispersal rules and the shared gate, and
//! its variants with open arrivals and a concurrency limiter.
//!
//! The variants' text works out from the models' definitions what bounds their figures (the
//! most the limiter could admit, the room the deadline leaves), so the table is read against
//! the limits it is measured under.

use std::fmt::Write as _;

use stagger_sim::scoreboard::Scoreboard;

use super::cells::{flag_duration, last_seed, num, pct, pct_range, table};

/// The command that runs the trial's strategy on the `throttle` workload, before the flags
/// that choose a rule and a variant.
const TRIAL_COMMAND: &str = "stagger simulate --workload throttle --policy exponential-full-jitter \
     --base 100ms --cap 2s --max-attempts 4";

/// The section: the trial, its table and its variants.
pub(super) fn section(board: &Scoreboard) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## `throttle`: a 429 storm, 20 requests against 5 requests/s\n\n{}",
        throttle_intro(board.seed)
    );
    s.push_str(&throttle_table(&board.throttle));
    s.push_str(&throttle_variants(&board.throttle_variants, board.seed));
    s
}

/// What the throttle table shows, and the command behind it.
pub(super) fn throttle_intro(seed: u64) -> String {
    format!(
        "20 requests start together against a rate limiter of one token refilled 5 times a \
         second, which answers 429 with a `Retry-After` of 1 s, or the exact time until a \
         token frees, either of them rounded up to whole seconds; full jitter, base 100 ms, \
         cap 2 s, 4 attempts, a 3 s deadline. Means over world seeds {seed} to {} \
         (`{TRIAL_COMMAND} --dispersal RULE --retry-after-form FORM [--gate] --seed N`; \
         `--gate`: the 20 clients share one gate for the destination). The ceiling for any \
         client that never retries early is 11 of 20 under a fixed wait of 1 s.\n",
        last_seed(seed, stagger_sim::scoreboard::THROTTLE_SEEDS)
    )
}

/// The throttle figures as a table.
pub(super) fn throttle_table(points: &[stagger_sim::scoreboard::ThrottlePoint]) -> String {
    table(
        &[
            "Gate",
            "Dispersal",
            "Retry-After",
            "Served of 20 (range)",
            "Refused per success",
            "Peak 10 ms share",
            "Early retries",
        ],
        points
            .iter()
            .map(|p| {
                vec![
                    if p.gate { "shared" } else { "none" }.to_owned(),
                    format!("`{}`", p.dispersal),
                    format!("`{}`", p.retry_after),
                    format!(
                        "{:.1} ({}-{})",
                        p.served, p.served_range.0, p.served_range.1
                    ),
                    num(p.rejected_per_success),
                    pct(p.peak_window_share),
                    p.early_retries.to_string(),
                ]
            })
            .collect(),
    )
}

/// The throttle variants: a heading, what they are and why, the commands behind them, the
/// table, and where the gate served fewer than the same rule without it.
pub(super) fn throttle_variants(
    points: &[stagger_sim::scoreboard::ThrottleVariantPoint],
    seed: u64,
) -> String {
    use stagger_core::duration::human;
    use stagger_sim::scoreboard::{THROTTLE_SEEDS, ThrottleVariant};
    use stagger_sim::workload::throttle::Throttle;
    let open = ThrottleVariant::OpenArrivals.model();
    let conc = ThrottleVariant::ConcurrencyLimiter.model();
    let rate = open.rate.unwrap_or_default();
    let deadline = open.duration + open.timeout;
    let admitted = (open.limit_rate * deadline.as_secs_f64()).floor();
    let offered = rate * open.duration.as_secs_f64();
    let limit = conc.limit_concurrency.unwrap_or(1);
    let per_second = f64::from(limit) / Throttle::SERVICE.as_secs_f64();
    let room = per_second * (conc.timeout.saturating_sub(conc.retry_after)).as_secs_f64();
    let refused = conc.clients.saturating_sub(u64::from(limit));
    let rules = ThrottleVariant::DISPERSALS
        .map(|d| format!("`{}`", d.name()))
        .join(" and ");
    let command =
        |flags: String| format!("`{TRIAL_COMMAND} {flags} --dispersal RULE [--gate] --seed N`");
    let mut s = format!(
        "\n### Throttle variants: open arrivals, and a concurrency limiter\n\n\
         The same policy, deadline and fixed `Retry-After` of {}, for {rules}, without and with \
         the gate, with the clients or the server changed. **Open arrivals:** requests arrive \
         at random, {rate} a second for {} (about {offered:.0} a run), against the same rate \
         limiter. That is {:.1} times its {} a second: high enough that the limit binds before \
         any request retries, low enough that the limiter could still admit most of them (one \
         request per {} over the {} from the first arrival to the last deadline is at most \
         {admitted:.0}, about {} of the requests), so what is lost below that is lost to the \
         clients' timing. **Concurrency limiter:** the {} requests start together against a \
         server that keeps at most {limit} in service at a time, {} each (up to \
         {per_second:.0} a second), and answers 503 with the same `Retry-After` to any request \
         beyond that. {refused} are refused at once, and between the first retry, {} in, and \
         the {} deadline there is room for about {room:.0} one after another: the limit binds, \
         and only a fleet whose retries never collide is served in full. Over world seeds \
         {seed} to {} ({} for open arrivals, {} for the concurrency limiter). Served is the \
         share of all the seeds' requests (the range over seeds); attempts per request counts \
         the attempts that reached the server, below 1 when requests gave up without one: once \
         the destination has throttled, a gate holds every call to a slot of its own, first \
         attempts included, and a call whose slot falls past its deadline gives up at once. \
         The peak share is a share of the retries, which are few where attempts per \
         request are near or below 1.\n\n",
        human(open.retry_after),
        human(open.duration),
        rate / open.limit_rate,
        open.limit_rate,
        human(std::time::Duration::from_secs_f64(1.0 / open.limit_rate)),
        human(deadline),
        pct(admitted / offered),
        conc.clients,
        human(Throttle::SERVICE),
        human(conc.retry_after),
        human(conc.timeout),
        last_seed(seed, THROTTLE_SEEDS),
        command(format!(
            "--rate {rate} --duration {}",
            flag_duration(open.duration)
        )),
        command(format!("--limit-concurrency {limit}")),
    );
    let requests = |x: f64| {
        if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    let peak = format!("Peak {} share", human(open.window));
    s.push_str(&table(
        &[
            "Variant",
            "Gate",
            "Dispersal",
            "Requests per run",
            "Served (range)",
            "Attempts per request",
            "Refused per success",
            &peak,
            "Early retries",
        ],
        points
            .iter()
            .map(|p| {
                vec![
                    p.variant.replace('-', " "),
                    if p.gate { "shared" } else { "none" }.to_owned(),
                    format!("`{}`", p.dispersal),
                    requests(p.requests),
                    pct_range(p.served_share, p.served_share_range),
                    num(p.attempts_per_request),
                    num(p.rejected_per_success),
                    pct(p.peak_window_share),
                    p.early_retries.to_string(),
                ]
            })
            .collect(),
    ));
    let worse: Vec<String> = points
        .iter()
        .filter(|p| p.gate)
        .filter_map(|gated| {
            let alone = points.iter().find(|p| {
                !p.gate && p.variant == gated.variant && p.dispersal == gated.dispersal
            })?;
            (gated.served_share < alone.served_share).then(|| {
                format!(
                    "{}, `{}`: {} against {}",
                    gated.variant.replace('-', " "),
                    gated.dispersal,
                    pct(gated.served_share),
                    pct(alone.served_share)
                )
            })
        })
        .collect();
    if worse.is_empty() {
        let _ = writeln!(
            s,
            "\nIn every variant the shared gate served at least as many as the same rule \
             without it."
        );
    } else {
        let _ = writeln!(
            s,
            "\nThe shared gate served fewer than the same rule without it in {} of {}: {}.",
            worse.len(),
            points.iter().filter(|p| p.gate).count(),
            worse.join("; ")
        );
    }
    s
}

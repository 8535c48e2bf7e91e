//! `stagger bench`: the main job. Runs every catalog policy, the published strategies and the
//! budgets on every canonical workload, prints the scoreboard, and writes it as Markdown and
//! JSON with SVG plots (and the README's scoreboard section).
//!
//! The whole scoreboard is some 300 lines of Markdown with rows hundreds of characters wide:
//! a file's content, not a terminal's. So on a terminal `bench` prints the summary, the part
//! the README quotes, and says where the rest goes; redirected (`> scoreboard.md`, a pipe),
//! it prints the whole document, byte for byte what `--out` writes.

use std::fs;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use stagger_sim::scoreboard::Scoreboard;

use crate::flags::CommandError;
use crate::progress::Progress;
use crate::{plot, scoreboard_md};

/// Flags of `stagger bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Also write scoreboard.md, scoreboard.json, the SVG plots and a page per policy
    /// (policies/NAME.md) into this folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also replace the scoreboard section of this README (between its scoreboard markers).
    #[arg(long, value_name = "FILE")]
    readme: Option<PathBuf>,
    /// Also write the scoreboard as one self-contained HTML page, its plots inline.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// The world seed.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
}

pub(crate) fn run(args: &Args, out: &mut dyn Write) -> Result<(), CommandError> {
    let progress = Progress::parts("simulating");
    let board = Scoreboard::run(args.seed, &|part: &str| progress.part(part))
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let markdown = scoreboard_md::document(&board);
    if let Some(dir) = &args.out {
        progress.part("the policy pages");
        fs::create_dir_all(dir)?;
        fs::write(dir.join("scoreboard.md"), &markdown)?;
        let json = serde_json::to_string_pretty(&board).map_err(std::io::Error::from)?;
        fs::write(dir.join("scoreboard.json"), json + "\n")?;
        plot::all(&board, dir)?;
        let pages = dir.join("policies");
        fs::create_dir_all(&pages)?;
        for kind in stagger_core::PolicyKind::ALL {
            let figures = stagger_sim::scoreboard::policy_figures(kind, args.seed)
                .map_err(|e| CommandError::Usage(e.to_string()))?;
            let page = format!(
                "{}{}",
                kind.page(),
                scoreboard_md::policy_figures(&figures, args.seed)
            );
            fs::write(pages.join(format!("{kind}.md")), page)?;
        }
        fs::write(
            dir.join("server-waits.md"),
            scoreboard_md::server_waits_page(
                &board.throttle,
                &board.throttle_variants,
                &board.partition,
                args.seed,
            ),
        )?;
        fs::write(
            dir.join("hedging.md"),
            scoreboard_md::hedging_page(
                &board.tail,
                board.tail_delay.as_ref(),
                &board.tail_sweep,
                &board.tail_fanout,
                &board.spike,
                args.seed,
            ),
        )?;
    }
    if let Some(path) = &args.html {
        let plots = plot::all_svgs(&board)?;
        fs::write(
            path,
            crate::html::page("stagger scoreboard", &markdown, &plots),
        )?;
    }
    let summary = scoreboard_md::summary(&board);
    if let Some(readme) = &args.readme {
        update_readme(readme, &summary)?;
    }
    progress.finish();
    if std::io::stdout().is_terminal() {
        write_summary(out, args, &summary)?;
    } else {
        out.write_all(markdown.as_bytes())?;
    }
    Ok(())
}

/// What a terminal gets: the summary, and where the whole scoreboard is (or went).
fn write_summary(out: &mut dyn Write, args: &Args, summary: &str) -> std::io::Result<()> {
    let width = crate::render::TERMINAL_WIDTH;
    out.write_all(crate::render::for_terminal(summary, width).as_bytes())?;
    writeln!(out)?;
    let mut whole = Vec::new();
    if let Some(dir) = &args.out {
        whole.push(format!(
            "{} (with scoreboard.json, the plots and the policy pages)",
            dir.join("scoreboard.md").display()
        ));
    }
    if let Some(page) = &args.html {
        whole.push(format!("{} (one HTML page)", page.display()));
    }
    let mut last = if whole.is_empty() {
        "This is the summary. The whole scoreboard, every workload's tables and the published \
         findings, is Markdown for a file: `--out DIR` writes it to DIR/scoreboard.md with its \
         plots, `--html FILE` as one page, and `stagger bench > FILE.md` prints it there."
            .to_owned()
    } else {
        format!(
            "This is the summary. The whole scoreboard: {}.",
            whole.join("; ")
        )
    };
    if let Some(readme) = &args.readme {
        last.push_str(&format!(
            " Updated the scoreboard section of {}.",
            readme.display()
        ));
    }
    out.write_all(crate::render::for_terminal(&last, width).as_bytes())
}

/// The markers around the README's generated scoreboard.
pub(crate) const START: &str = "<!-- scoreboard: generated by `stagger bench`; do not edit -->";
/// The end marker.
pub(crate) const END: &str = "<!-- end of scoreboard -->";

fn update_readme(path: &Path, summary: &str) -> Result<(), CommandError> {
    let text = fs::read_to_string(path)?;
    let (Some(start), Some(end)) = (text.find(START), text.find(END)) else {
        return Err(CommandError::Usage(format!(
            "invalid --readme: {} has no scoreboard markers",
            path.display()
        )));
    };
    let updated = format!("{}{START}\n{summary}{}", &text[..start], &text[end..]);
    fs::write(path, updated)?;
    Ok(())
}

//! The HTML reports of `stagger bench --html` and `stagger simulate --html`, loaded in a real
//! headless browser: Debian's Chromium, which the test never installs (`.ci/run` does, with
//! `scripts/install-chromium.sh`; so can you). Without it the tests say so on stderr and skip,
//! unless `STAGGER_REQUIRE_BROWSER=1` (as CI sets it), where they fail.
//!
//! Each page is loaded in a window 1280 px wide, where every table must fit: its scroll width
//! no more than its width, and the page no wider than the window; and where no table cell
//! breaks a word (a word's characters drawn on two lines) or spills past its border.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::stdout;

/// The browser on the PATH; `None` (after saying so, loudly) if there is none.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|_| PathBuf::from(name))
        });
    if found.is_some() {
        return found;
    }
    let why = "no `chromium` on the PATH; install it with `scripts/install-chromium.sh` (as root, \
               Debian's package)";
    assert!(
        std::env::var("STAGGER_REQUIRE_BROWSER").as_deref() != Ok("1"),
        "STAGGER_REQUIRE_BROWSER=1 and {why}"
    );
    // Written to the process's stderr, not through the test harness's capture: a skip is
    // seen.
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED the HTML report's browser test: {why} ***\n"
    );
    None
}

/// The width of the window the pages must fit, in CSS pixels.
const WIDTH: u32 = 1280;

/// What the browser saw: the document after it ran, and what it printed on stderr.
struct Loaded {
    dom: String,
    console: Vec<String>,
}

/// Loads `page` in headless Chromium, in a window [`WIDTH`] wide, with a probe appended that
/// measures the drawn figures, their captions and the tables, and writes what it found into
/// the title.
fn load(browser: &Path, page: &Path, dir: &Path) -> Loaded {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = r#"<script>
const figures = [...document.querySelectorAll('figure svg')];
const drawn = figures.filter((svg) => {
  const box = svg.getBoundingClientRect();
  return box.width > 100 && box.height > 50 && svg.querySelectorAll('polyline').length > 0;
});
const lines = document.querySelectorAll('figure svg polyline').length;
const all = [...document.querySelectorAll('table')];
const tables = all.length;
const cut = all.filter((t) => t.scrollWidth > t.clientWidth).length;
const captions = [...document.querySelectorAll('figure > figcaption')]
  .filter((c) => c.textContent.trim().length > 40).length;
const pageWidth = document.documentElement.scrollWidth;
// Every word of every cell, drawn on one line: a word is a run without a blank in one text
// node (a `<wbr>` after `_` ends a text node, so `peak_window_share` may wrap there), and it
// may wrap only after its hyphens. A word whose characters sit on two lines is broken; it is
// listed with a space where it breaks, as `Wo rkl oa d`.
const broken = [];
const cells = [...document.querySelectorAll('th, td')];
cells.forEach((cell) => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/[^\s\-]+\-*/g)) {
      const range = document.createRange();
      const tops = [];
      for (let i = m.index; i < m.index + m[0].length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        tops.push(rect ? Math.round(rect.top) : null);
      }
      if (new Set(tops.filter((t) => t !== null)).size > 1) {
        const shown = [...m[0]].map((c, i) => (i > 0 && tops[i] !== tops[i - 1] ? ' ' : '') + c);
        broken.push(`${shown.join('')} (in "${cell.textContent.trim().slice(0, 40)}")`);
      }
    }
  }
});
// A cell whose content spills past its border.
const spilled = cells.filter((c) => c.scrollWidth > c.clientWidth + 1).length;
const report = document.createElement('pre');
report.id = 'broken-words';
report.textContent = broken.join('\n');
document.body.append(report);
document.title = `figures=${figures.length} drawn=${drawn.length} lines=${lines} tables=${tables} cut=${cut} captions=${captions} page=${pageWidth} window=${innerWidth} cells=${cells.length} broken=${broken.length} spilled=${spilled}`;
</script>"#;
    let probed = dir.join("probed.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--window-size={WIDTH},1600"))
        .arg(format!("file://{}", probed.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Loaded {
        dom: String::from_utf8(out.stdout).unwrap(),
        console,
    }
}

/// The probe's findings: figures, drawn figures, lines, tables; then the tables cut off (whose
/// scroll width passes their width), the figures with a caption, the page's width and the
/// window's; then the table cells, the words broken in them, and the cells whose content
/// spills past their border.
fn probed(dom: &str) -> [u64; 11] {
    let start = dom.find("<title>").expect("a title") + "<title>".len();
    let end = dom[start..].find("</title>").unwrap() + start;
    let mut found = [0; 11];
    for (i, key) in [
        "figures", "drawn", "lines", "tables", "cut", "captions", "page", "window", "cells",
        "broken", "spilled",
    ]
    .iter()
    .enumerate()
    {
        let text = &dom[start..end];
        let at = text
            .find(&format!("{key}="))
            .unwrap_or_else(|| panic!("{key} in {text}"));
        found[i] = text[at + key.len() + 1..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
    }
    found
}

/// The words the probe found broken, one a line, as drawn: `Wo rkl oa d (in "Workload")`.
fn broken_words(dom: &str) -> String {
    let start = dom
        .find("<pre id=\"broken-words\">")
        .expect("the probe's list")
        + "<pre id=\"broken-words\">".len();
    let end = dom[start..].find("</pre>").unwrap() + start;
    dom[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The probe's first four findings: figures, drawn figures, lines, tables; after checking
/// that the page fits its window, no table is cut off, no cell breaks a word or spills past
/// its border, and every figure has its caption.
fn title(dom: &str) -> [u64; 4] {
    let [
        figures,
        drawn,
        lines,
        tables,
        cut,
        captions,
        page,
        window,
        cells,
        broken,
        spilled,
    ] = probed(dom);
    assert_eq!(window, u64::from(WIDTH), "the window's width");
    assert!(
        page <= window,
        "the page is {page} px wide in a {window} px window"
    );
    assert_eq!(
        cut, 0,
        "{cut} of {tables} tables are cut off at {window} px"
    );
    assert!(cells > 0, "the tables have cells");
    assert_eq!(
        broken,
        0,
        "{broken} words of {tables} tables' {cells} cells are broken mid-word at {window} px:\n{}",
        broken_words(dom)
    );
    assert_eq!(
        spilled, 0,
        "{spilled} of {cells} cells spill past their border at {window} px"
    );
    assert_eq!(
        captions, figures,
        "every figure has a caption that says what to see"
    );
    [figures, drawn, lines, tables]
}

/// A page fetches nothing: no script, stylesheet, image or font from elsewhere.
fn assert_self_contained(html: &str) {
    for fetch in ["src=", "<link", "url(", "@import", "<img"] {
        assert!(!html.contains(fetch), "the page fetches something: {fetch}");
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stagger-html-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_scoreboard_page_renders_its_five_plots_and_its_tables_without_console_errors() {
    let Some(browser) = chromium() else { return };
    let dir = temp("bench");
    let page = dir.join("scoreboard.html");
    let text = stdout(&["bench", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // The page carries the same scoreboard the command printed: the first finding's words.
    let first = text
        .lines()
        .find(|l| l.starts_with("| herd"))
        .expect("the findings table");
    let words = first.split('|').nth(2).unwrap().trim();
    assert!(html.contains(words), "{words}");
    let loaded = load(&browser, &page, &dir);
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    let [figures, drawn, lines, tables] = title(&loaded.dom);
    assert_eq!(
        figures, 5,
        "herd, contention work and time, open-loop, spike"
    );
    assert_eq!(drawn, figures, "each drawn with a size and its lines");
    assert!(lines >= 5 * 2, "{lines} lines");
    assert!(tables >= 10, "{tables} tables");
    let screenshot = dir.join("scoreboard.png");
    screenshot_of(&browser, &page, &screenshot);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_simulation_page_renders_its_plot_and_its_table() {
    let Some(browser) = chromium() else { return };
    let dir = temp("simulate");
    let page = dir.join("herd.html");
    stdout(&[
        "simulate",
        "--workload",
        "herd",
        "--policy",
        "constant,exponential-full-jitter",
        "--clients",
        "200",
        "--html",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("exponential-full-jitter"), "the table's rows");
    let loaded = load(&browser, &page, &dir);
    assert!(loaded.console.is_empty(), "{:?}", loaded.console);
    let [figures, drawn, lines, tables] = title(&loaded.dom);
    assert_eq!((figures, drawn, tables), (1, 1, 1));
    assert!(lines >= 2, "one line per policy: {lines}");
    // A workload without a plot gets the table alone.
    let page = dir.join("outage.html");
    stdout(&[
        "simulate",
        "--workload",
        "outage",
        "--policy",
        "constant",
        "--html",
        page.to_str().unwrap(),
    ]);
    let loaded = load(&browser, &page, &dir);
    assert_eq!(title(&loaded.dom), [0, 0, 0, 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Takes a screenshot of `page` into `png` and checks it is a PNG of some size.
fn screenshot_of(browser: &Path, page: &Path, png: &Path) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={WIDTH},1600"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(bytes.len() > 10_000, "{} bytes", bytes.len());
}

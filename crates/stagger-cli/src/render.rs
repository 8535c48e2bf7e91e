//! Text output: Markdown tables, CSV, and Markdown reflowed for a terminal. Presentation only.

use std::io::{self, Write};

/// A table of text cells, written as a Markdown table with aligned columns.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headers.
    pub(crate) fn new<I: IntoIterator<Item = S>, S: Into<String>>(header: I) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of cells, one per header.
    pub(crate) fn row<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, cells: I) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as [`Table::write`] writes it, as a string.
    pub(crate) fn markdown(&self) -> String {
        let mut buf = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.write(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// Writes the table to `out`, each column padded to its widest cell.
    pub(crate) fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|r| r.get(c).map_or(0, |cell| cell.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |out: &mut dyn Write, cells: &[String]| -> io::Result<()> {
            let padded: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(c, w)| {
                    let cell = cells.get(c).map_or("", String::as_str);
                    format!("{cell}{}", " ".repeat(w - cell.chars().count()))
                })
                .collect();
            writeln!(out, "| {} |", padded.join(" | "))
        };
        line(out, &self.header)?;
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        writeln!(out, "| {} |", rule.join(" | "))?;
        for row in &self.rows {
            line(out, row)?;
        }
        Ok(())
    }
}

/// Writes one CSV record, quoting cells that need it.
pub(crate) fn csv_record<S: AsRef<str>>(out: &mut dyn Write, cells: &[S]) -> io::Result<()> {
    let cells: Vec<String> = cells
        .iter()
        .map(|c| {
            let c = c.as_ref();
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_owned()
            }
        })
        .collect();
    writeln!(out, "{}", cells.join(","))
}

/// The columns a terminal is taken to have: text for one is wrapped to fit them.
pub(crate) const TERMINAL_WIDTH: usize = 100;

/// `markdown` for a terminal `width` columns wide: each paragraph and list item wrapped at
/// its words; a table kept as it is if it fits, or with its headers wrapped over several
/// lines if that makes it fit, and otherwise shown as one record per row, its first cell on a
/// line of its own and each other cell under its header, indented. A heading, a fenced block
/// or a table that fits is kept line for line.
pub(crate) fn for_terminal(markdown: &str, width: usize) -> String {
    let mut out = String::new();
    let mut fenced = false;
    let mut block: Vec<&str> = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            flush(&mut out, &mut block, width);
            fenced = !fenced;
            out.push_str(line);
            out.push('\n');
        } else if fenced {
            out.push_str(line);
            out.push('\n');
        } else if line.trim().is_empty() {
            flush(&mut out, &mut block, width);
            out.push('\n');
        } else {
            block.push(line);
        }
    }
    flush(&mut out, &mut block, width);
    out
}

/// Writes one block of [`for_terminal`] (the lines between blank lines), and empties it.
fn flush(out: &mut String, block: &mut Vec<&str>, width: usize) {
    if block.is_empty() {
        return;
    }
    let fits = block.iter().all(|l| l.chars().count() <= width);
    if block.iter().all(|l| l.starts_with('|')) {
        if fits {
            for line in block.iter() {
                out.push_str(line);
                out.push('\n');
            }
        } else if !narrowed(out, block, width) {
            records(out, block, width);
        }
    } else {
        // Headings stand alone; a list item starts a paragraph of its own, whose later lines
        // hang under its text.
        let item = |line: &str| line.starts_with("- ") || line.starts_with("* ");
        let emit = |out: &mut String, paragraph: &mut Vec<&str>| {
            let text = paragraph.join(" ");
            wrap(out, &text, width, if item(&text) { "  " } else { "" });
            paragraph.clear();
        };
        let mut paragraph: Vec<&str> = Vec::new();
        for line in block.iter() {
            if line.starts_with('#') {
                emit(out, &mut paragraph);
                out.push_str(line);
                out.push('\n');
            } else if item(line) {
                emit(out, &mut paragraph);
                paragraph.push(line);
            } else {
                paragraph.push(line.trim());
            }
        }
        emit(out, &mut paragraph);
    }
    block.clear();
}

/// A Markdown table's cells: its header's, and each row's but the rule under the header.
fn cells_of(lines: &[&str]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let rule = |line: &str| line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
    let (header, rows) = lines.split_first()?;
    Some((
        cells(header),
        rows.iter().filter(|l| !rule(l)).map(|l| cells(l)).collect(),
    ))
}

/// A table whose cells fit in `width` once its headers wrap at their words: written with its
/// headers over as many lines as they need, and `true`; `false` (and nothing written) if the
/// cells alone are too wide.
fn narrowed(out: &mut String, lines: &[&str], width: usize) -> bool {
    let Some((header, rows)) = cells_of(lines) else {
        return false;
    };
    let chars = |s: &str| s.chars().count();
    // Each column is as wide as its widest cell or its header's longest word, then widened,
    // while there is room, towards its whole header.
    let mut widths: Vec<usize> = header
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let cell = rows.iter().map(|r| r.get(c).map_or(0, |v| chars(v))).max();
            let word = name.split_whitespace().map(chars).max().unwrap_or(0);
            cell.unwrap_or(0).max(word)
        })
        .collect();
    // `| a | b |`: a bar and a space before each cell, a space after it, and the last bar.
    let frame = 3 * widths.len() + 1;
    let Some(mut spare) = width.checked_sub(widths.iter().sum::<usize>() + frame) else {
        return false;
    };
    // One column at a time, a character each, so that every header gets its share.
    let full: Vec<usize> = header.iter().map(|h| chars(h)).collect();
    while spare > 0 {
        let mut widened = false;
        for (w, f) in widths.iter_mut().zip(&full) {
            if spare > 0 && *w < *f {
                *w += 1;
                spare -= 1;
                widened = true;
            }
        }
        if !widened {
            break;
        }
    }
    let wrapped: Vec<Vec<String>> = header
        .iter()
        .zip(&widths)
        .map(|(name, w)| {
            let mut lines = String::new();
            wrap(&mut lines, name, *w, "");
            lines.lines().map(str::to_owned).collect()
        })
        .collect();
    let depth = wrapped.iter().map(Vec::len).max().unwrap_or(0);
    let line = |out: &mut String, cells: &[&str]| {
        let padded: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(c, w)| {
                let cell = cells.get(c).copied().unwrap_or("");
                format!("{cell}{}", " ".repeat(w.saturating_sub(chars(cell))))
            })
            .collect();
        out.push_str(&format!("| {} |\n", padded.join(" | ")));
    };
    for i in 0..depth {
        let part: Vec<&str> = wrapped
            .iter()
            .map(|w| w.get(i).map_or("", String::as_str))
            .collect();
        line(out, &part);
    }
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &rows {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        line(out, &row);
    }
    true
}

/// A table too wide for the terminal, as records: each row's first cell, then each other
/// cell as `header: cell`, indented, wrapped; a blank line between rows.
fn records(out: &mut String, lines: &[&str], width: usize) {
    let Some((header, rows)) = cells_of(lines) else {
        return;
    };
    for (i, row) in rows.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut values = row.iter().zip(header.iter().map(String::as_str));
        if let Some((first, name)) = values.next() {
            let lead = if name.is_empty() {
                first.clone()
            } else {
                format!("{name}: {first}")
            };
            wrap(out, &lead, width, "    ");
        }
        for (value, name) in values {
            wrap(out, &format!("  {name}: {value}"), width, "    ");
        }
    }
}

/// `text` wrapped at its words to `width` columns, each line after the first indented by
/// `hang`; a word longer than a line gets a line of its own.
fn wrap(out: &mut String, text: &str, width: usize, hang: &str) {
    let text = text.trim_end();
    if text.is_empty() {
        return;
    }
    // The text's own indent is kept on its first line.
    let indent = &text[..text.len() - text.trim_start().len()];
    let mut line = indent.to_owned();
    let mut empty = true;
    for word in text.split_whitespace() {
        let needed = line.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && needed > width {
            out.push_str(&line);
            out.push('\n');
            line = hang.to_owned();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
}

/// Milliseconds as exact decimal text.
pub(crate) use stagger_core::duration::millis_text as ms;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_too_wide_for_its_headers_wraps_them_and_keeps_its_rows() {
        let md = "| Policy | Herd: retries in the busiest 10 ms |\n| ------ | ---------- |\n\
                  | `constant` | 14.3% |\n";
        assert_eq!(
            for_terminal(md, 30),
            "| Policy     | Herd: retries |\n\
             |            | in the        |\n\
             |            | busiest 10 ms |\n\
             | ---------- | ------------- |\n\
             | `constant` | 14.3%         |\n"
        );
    }

    #[test]
    fn a_terminal_gets_wrapped_paragraphs_and_tables_that_fit_or_records() {
        let md = "# Title\n\nOne two three four five six seven.\n\n\
                  | a | b |\n| - | - |\n| 1 | 2 |\n\n\
                  | If | Choose |\n| -- | ------ |\n| many clients fail | jittered backoff, always |\n\
                  | a deadline | one |\n\n\
                  - an item that is long enough\n- and another long one\n";
        let text = for_terminal(md, 20);
        assert_eq!(
            text,
            "# Title\n\nOne two three four\nfive six seven.\n\n\
             | a | b |\n| - | - |\n| 1 | 2 |\n\n\
             If: many clients\n    fail\n  Choose: jittered\n    backoff, always\n\n\
             If: a deadline\n  Choose: one\n\n\
             - an item that is\n  long enough\n- and another long\n  one\n"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 20), "{text}");
    }
}

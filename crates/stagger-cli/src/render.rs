//! Text output: Markdown tables and CSV. Presentation only.

use std::io::{self, Write};

/// A table of text cells, written as a Markdown table with aligned columns.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new<I: IntoIterator<Item = S>, S: Into<String>>(header: I) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, cells: I) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

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

/// Milliseconds as exact decimal text.
pub(crate) use stagger_core::duration::millis_text as ms;

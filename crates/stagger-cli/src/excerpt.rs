//! Quoting the user's input in excerpts: an error message of any size shortened to one that
//! fits on a screen, whatever the parsers quoted of the file.
//!
//! The parsers quote what they refuse: TOML's message shows the offending line with a run of
//! carets under it, serde names an unknown value or key in full. Of a file of one 10 MB line
//! that is 20 MB on stderr. A message that fits [`MOST`] is printed as it is; a longer one is
//! shortened in three steps, each only as far as needed, so that what the message says (the
//! line and column, the field, the names it expects) stays:
//!
//! 1. every run of more than [`LONGEST_RUN`] bytes without a blank (a value, a key), or of
//!    blanks (the indent of the carets), is cut to its start, its length and its end, as in
//!    `` `aaaa…(10485763 bytes)…aaa`; ``;
//! 2. a message of more than [`MOST_LINES`] lines keeps its first and last lines;
//! 3. the longest lines are cut to one length, the largest that fits, each keeping its start
//!    and its end (where serde_json writes the line and column) around what was cut.

use std::borrow::Cow;

/// The most bytes an error takes on stderr, its `error: ` and its last newline included.
pub(crate) const MOST: usize = 2048;

/// The longest run of non-blank (or blank) characters kept whole in a message too long.
const LONGEST_RUN: usize = 80;

/// The start kept of a run cut.
const RUN_HEAD: usize = 32;

/// The end kept of a run cut: a closing quote and the punctuation after it.
const RUN_TAIL: usize = 8;

/// The most lines a message too long keeps: its first [`HEAD_LINES`], a line saying how many
/// were cut, and its last.
const MOST_LINES: usize = 16;

/// The first lines kept of a message of more than [`MOST_LINES`].
const HEAD_LINES: usize = 10;

/// The shortest a line is cut to.
const SHORTEST_LINE: usize = 64;

/// `text` if it has at most `most` bytes, or else its excerpt of at most `most` bytes.
pub(crate) fn excerpt(text: &str, most: usize) -> Cow<'_, str> {
    if text.len() <= most {
        return Cow::Borrowed(text);
    }
    let mut lines: Vec<String> = text.split('\n').map(cut_runs).collect();
    if lines.len() > MOST_LINES {
        let tail = MOST_LINES - HEAD_LINES - 1;
        let cut = lines.len() - HEAD_LINES - tail;
        lines.splice(
            HEAD_LINES..lines.len() - tail,
            [format!("… ({cut} lines cut)")],
        );
    }
    let newlines = lines.len() - 1;
    let length =
        |cap: usize| -> usize { lines.iter().map(|l| l.len().min(cap)).sum::<usize>() + newlines };
    // The largest length every line is cut to that fits, found by halving.
    let longest = lines.iter().map(String::len).max().unwrap_or(0);
    if length(longest) > most {
        let (mut fits, mut over) = (SHORTEST_LINE.min(longest), longest);
        while over - fits > 1 {
            let mid = fits + (over - fits) / 2;
            if length(mid) <= most {
                fits = mid;
            } else {
                over = mid;
            }
        }
        for line in &mut lines {
            if line.len() > fits {
                *line = cut_line(line, fits);
            }
        }
    }
    let mut shown = lines.join("\n");
    // Only a `most` smaller than the lines' shortest cut can leave it too long.
    if shown.len() > most {
        let end = floor(&shown, most.saturating_sub(3));
        shown.truncate(end);
        shown.push('…');
    }
    Cow::Owned(shown)
}

/// `line` with each run longer than [`LONGEST_RUN`] bytes, of blanks or of anything else, cut
/// to its first [`RUN_HEAD`] bytes, its length and its last [`RUN_TAIL`].
fn cut_runs(line: &str) -> String {
    let mut out = String::new();
    let mut start = 0;
    let mut blank = None;
    for (at, c) in line.char_indices() {
        let is_blank = c.is_whitespace();
        if blank.is_some_and(|b| b != is_blank) {
            push_run(&mut out, &line[start..at]);
            start = at;
        }
        blank = Some(is_blank);
    }
    push_run(&mut out, &line[start..]);
    out
}

fn push_run(out: &mut String, run: &str) {
    if run.len() <= LONGEST_RUN {
        out.push_str(run);
    } else {
        let tail = ceil(run, run.len() - RUN_TAIL);
        out.push_str(&run[..floor(run, RUN_HEAD)]);
        out.push_str(&format!("…({} bytes)…", run.len()));
        out.push_str(&run[tail..]);
    }
}

/// `line` cut to at most `most` bytes: its start and its end around what was cut, as in
/// `start … (N bytes cut) … end`.
fn cut_line(line: &str, most: usize) -> String {
    // The note at its longest: what was cut is less than the line.
    let note_length = format!(" … ({} bytes cut) … ", line.len()).len();
    let kept = most.saturating_sub(note_length);
    let head = floor(line, kept * 2 / 3);
    let tail = ceil(line, line.len() - (kept - head));
    format!(
        "{} … ({} bytes cut) … {}",
        &line[..head],
        tail - head,
        &line[tail..]
    )
}

/// The largest char boundary of `s` at or before `at`.
fn floor(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `s` at or after `at`.
fn ceil(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_that_fits_is_kept_whole() {
        let text = format!(
            "unknown policy `{}`; the catalog has: a, b",
            "x".repeat(500)
        );
        assert!(matches!(excerpt(&text, MOST), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn a_long_value_is_cut_to_its_start_and_its_length() {
        let text = format!(
            "TOML parse error at line 1, column 10\n  |\n1 | policy = \"{0}\"\n  |          \
             {1}\nunknown policy `{0}`; the catalog has: a, b",
            "a".repeat(100_000),
            "^".repeat(100_002),
        );
        let shown = excerpt(&text, MOST);
        assert!(shown.len() <= MOST, "{}", shown.len());
        assert!(
            shown.starts_with("TOML parse error at line 1, column 10\n"),
            "{shown}"
        );
        let a = |n| "a".repeat(n);
        assert!(
            shown.contains(&format!(
                "\n1 | policy = \"{}…(100002 bytes)…{}\"\n",
                a(31),
                a(7)
            )),
            "{shown}"
        );
        let carets = "^".repeat(8);
        assert!(
            shown.contains(&format!(
                "\n  |          {}…(100002 bytes)…{carets}\n",
                "^".repeat(32)
            )),
            "{shown}"
        );
        assert!(
            shown.ends_with(&format!(
                "\nunknown policy `{}…(100003 bytes)…{}`; the catalog has: a, b",
                a(31),
                a(6)
            )),
            "{shown}"
        );
    }

    #[test]
    fn a_long_line_of_short_words_keeps_its_start_and_its_end() {
        let text = format!(
            "unknown field `{}`, expected one of `policy` at line 1 column 9",
            "a ".repeat(50_000)
        );
        let shown = excerpt(&text, 500);
        assert!(shown.len() <= 500, "{}", shown.len());
        assert!(shown.starts_with("unknown field `a a a"), "{shown}");
        assert!(shown.ends_with("`policy` at line 1 column 9"), "{shown}");
        assert!(shown.contains(" bytes cut) … "), "{shown}");
        assert_eq!(shown.lines().count(), 1);
    }

    #[test]
    fn many_lines_keep_the_first_and_the_last() {
        let text = (0..10_000)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let shown = excerpt(&text, MOST);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), MOST_LINES);
        assert_eq!(lines[0], "line 0");
        assert_eq!(lines[HEAD_LINES], "… (9985 lines cut)");
        assert_eq!(lines[MOST_LINES - 1], "line 9999");
    }

    #[test]
    fn characters_are_never_split() {
        let text = format!("{}\n{}", "é".repeat(3_000), "日本 ".repeat(3_000));
        for most in [70, 100, 333, 1000, MOST] {
            let shown = excerpt(&text, most);
            assert!(shown.len() <= most, "{most}: {}", shown.len());
        }
        // A limit below the shortest cut still holds.
        assert!(excerpt(&text, 10).len() <= 10);
    }
}

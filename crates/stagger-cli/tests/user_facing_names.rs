//! User-facing text names its sources by what they are and where a reader finds them, never
//! by the team's internal names for them: the README, docs/, the test vectors, every crate's
//! sources (their rustdoc and the CLI's help) outside tests and benchmarks.

use std::path::{Path, PathBuf};

/// Names only the team knows, as the issue tracker calls its internal documents: "seed 00N"
/// (or "seed-00N", "seed_00N"), "anchors.md", and the internal name of the delivery schedule's
/// source, "Sigil".
fn internal(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    for (i, _) in lower.match_indices("seed") {
        let rest = &lower.as_bytes()[i + 4..];
        if rest.len() >= 4
            && matches!(rest[0], b' ' | b'-' | b'_')
            && rest[1..3] == *b"00"
            && rest[3].is_ascii_digit()
        {
            return Some("seed 00N");
        }
    }
    if lower.contains("sigil") {
        return Some("Sigil");
    }
    lower.contains("anchors.md").then_some("anchors.md")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            // `docs/timings` holds cargo's build reports, which list the test targets by their
            // file names: test code, outside this check as `tests` is.
            if !matches!(
                name.to_str(),
                Some("tests" | "benches" | "target" | "timings")
            ) {
                walk(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

#[test]
fn no_user_facing_text_names_an_internal_document() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "vectors", "crates"] {
        walk(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 50,
        "{} files: the walk found the tree",
        files.len()
    );
    let mut found = Vec::new();
    for file in &files {
        // Text files only: the SVG plots and JSON are text too, and checked as such.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(name) = internal(line) {
                found.push(format!("{}:{}: {name}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "internal names in user-facing text:\n{}",
        found.join("\n")
    );
    // The check itself can fail.
    assert_eq!(internal("as Seed 002 prints it"), Some("seed 00N"));
    assert_eq!(internal("the seed-000 workloads"), Some("seed 00N"));
    assert_eq!(internal("fn matches_seed_002_table"), Some("seed 00N"));
    assert_eq!(internal("seed 00"), None);
    assert_eq!(internal("see ANCHORS.md"), Some("anchors.md"));
    assert_eq!(internal("in the shape of Sigil's table"), Some("Sigil"));
    assert_eq!(internal("world seed 1"), None);
}

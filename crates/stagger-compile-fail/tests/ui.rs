//! Each mistake in `tests/ui/` fails to compile with the message in its `.stderr` file, which
//! names the fix. Regenerate those files with `TRYBUILD=overwrite` and read the difference:
//! [`each_message_names_its_fix`] checks that the fixes are still named.

#[test]
fn mistakes_name_their_fix() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

/// The words each expected message's first line must contain: the line people read. (The
/// flag says so for each; every entry checks the first line.)
const FIXES: &[(&str, &[&str], bool)] = &[
    ("await_blocking", &[".call()"], true),
    ("no_runtime", &["the `tokio` feature", ".sleeper("], true),
    ("missing_classify", &[".classify("], true),
    ("missing_classify_reqwest", &[".classify("], true),
    ("tower_body", &["RetryBody"], true),
];

#[test]
fn each_message_names_its_fix() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut snippets: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            (path.extension()? == "rs").then(|| path.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    snippets.sort();
    let mut named: Vec<String> = FIXES.iter().map(|(name, ..)| (*name).to_owned()).collect();
    named.sort();
    assert_eq!(
        snippets, named,
        "every snippet names the words its message must contain"
    );

    for (name, words, first_line) in FIXES {
        let stderr = std::fs::read_to_string(dir.join(format!("{name}.stderr"))).unwrap();
        let text = if *first_line {
            stderr.lines().next().unwrap_or_default()
        } else {
            stderr.as_str()
        };
        for word in *words {
            assert!(
                text.contains(word),
                "{name}.stderr does not name `{word}`:\n{stderr}"
            );
        }
    }
}

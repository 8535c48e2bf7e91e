//! `stagger --help` tells the truth: it lists exactly the subcommands the clap definition
//! declares, each of them runs, and no help text promises work that is not done.
//!
//! The binary has no library target, so the clap definition cannot be reached through
//! `clap::CommandFactory`; the subcommands are read from the `Command` enum in `src/main.rs`
//! instead (clap names a variant by its kebab-case name unless `#[command(name = "...")]`
//! says otherwise).

mod support;

use std::collections::BTreeSet;

use support::{stagger, stdout};

/// The source of the clap definition.
const MAIN_RS: &str = include_str!("../src/main.rs");

/// The subcommand clap adds by itself; it is in the listing but not in the enum.
const BUILT_IN: &str = "help";

/// `FooBar` as clap names it: `foo-bar`.
fn kebab(ident: &str) -> String {
    let mut name = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                name.push('-');
            }
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    name
}

/// The subcommands the `Command` enum of `src/main.rs` declares, by the names clap gives them.
fn declared() -> BTreeSet<String> {
    let start = MAIN_RS
        .find("enum Command {")
        .expect("src/main.rs defines `enum Command`");
    let body = &MAIN_RS[start..];
    let body = &body[body.find('{').expect("an enum body") + 1..];
    let body = &body[..body.find("\n}").expect("the enum body ends")];
    let mut names = BTreeSet::new();
    let mut renamed: Option<String> = None;
    for line in body.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if line.starts_with("#[") {
            // `#[command(name = "...")]` renames the next variant.
            if let Some(at) = line
                .strip_prefix("#[command(")
                .and_then(|_| line.find("(name = \"").or_else(|| line.find(" name = \"")))
            {
                let rest = &line[at + " name = \"".len()..];
                renamed = Some(rest[..rest.find('"').expect("a closing quote")].to_owned());
            }
            continue;
        }
        let ident: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            ident.starts_with(|c: char| c.is_ascii_uppercase()),
            "cannot read a variant from `{line}` in `enum Command`"
        );
        names.insert(renamed.take().unwrap_or_else(|| kebab(&ident)));
    }
    assert!(
        !names.is_empty(),
        "no variants read from `enum Command` in src/main.rs"
    );
    names
}

/// The `Commands:` section of `stagger --help`: each subcommand with its one-line about.
fn listed(help: &str) -> Vec<(String, String)> {
    let section = help
        .split_once("\nCommands:\n")
        .expect("`stagger --help` has a Commands: section")
        .1;
    section
        .lines()
        .take_while(|l| !l.trim().is_empty())
        // An entry is indented by two spaces; a wrapped about, by more.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map(|l| {
            let l = l.trim();
            let (name, about) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (name.to_owned(), about.trim().to_owned())
        })
        .collect()
}

/// The help texts a user can reach: `stagger --help` and `stagger <sub> --help` for every
/// declared subcommand.
fn every_help() -> Vec<(String, String)> {
    let mut helps = vec![("stagger --help".to_owned(), stdout(&["--help"]))];
    for sub in declared() {
        let text = stdout(&[&sub, "--help"]);
        helps.push((format!("stagger {sub} --help"), text));
    }
    helps
}

#[test]
fn the_help_lists_exactly_the_declared_subcommands() {
    let help = stdout(&["--help"]);
    let entries = listed(&help);
    let names: BTreeSet<String> = entries.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(
        names.len(),
        entries.len(),
        "a subcommand is listed twice:\n{help}"
    );
    let mut expected = declared();
    expected.insert(BUILT_IN.to_owned());
    let missing: Vec<_> = expected.difference(&names).collect();
    let unknown: Vec<_> = names.difference(&expected).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "declared in `enum Command` but not listed: {missing:?}; listed but not declared: \
         {unknown:?}\n{help}"
    );
    for (name, about) in &entries {
        assert!(!about.is_empty(), "`{name}` is listed without an about");
    }
}

#[test]
fn every_listed_subcommand_runs_and_an_unknown_one_exits_2() {
    let help = stdout(&["--help"]);
    for (sub, about) in listed(&help) {
        if sub == BUILT_IN {
            continue;
        }
        let own = stdout(&[&sub, "--help"]);
        assert!(
            own.contains(&format!("Usage: stagger {sub}")),
            "`stagger {sub} --help` is not that subcommand's help:\n{own}"
        );
        assert!(
            own.starts_with(&about),
            "`stagger {sub} --help` does not start with the about the listing shows, \
             `{about}`:\n{own}"
        );
        // The built-in `help` subcommand reaches the same text.
        assert_eq!(stdout(&[BUILT_IN, &sub]), own, "`stagger help {sub}`");
    }
    for args in [
        &["no-such-command"][..],
        &["no-such-command", "--help"],
        &[],
    ] {
        let out = stagger(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "`stagger {}` should exit with status 2: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout.is_empty(),
            "`stagger {}` printed",
            args.join(" ")
        );
    }
}

#[test]
fn no_help_text_promises_work_that_is_not_done() {
    // Whole words only: "sooner" is fine, "(soon)" is not.
    const STALE: [&[&str]; 5] = [&["soon"], &["not", "yet"], &["todo"], &["tbd"], &["wip"]];
    for (command, text) in every_help() {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for stale in STALE {
            assert!(
                !words.windows(stale.len()).any(|w| w == stale),
                "`{command}` says \"{}\":\n{text}",
                stale.join(" ")
            );
        }
    }
}

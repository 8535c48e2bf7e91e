//! The scoreboard spreads its runs over rayon's threads; the bytes must not depend on how many.

use stagger_sim::scoreboard::Scoreboard;

fn scoreboard_json(threads: usize) -> String {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let board = pool.install(|| Scoreboard::run(1, &|_| {})).unwrap();
    serde_json::to_string(&board).unwrap()
}

#[test]
fn one_thread_or_two_the_same_bytes() {
    let one = scoreboard_json(1);
    assert_eq!(one, scoreboard_json(2));
    assert!(one.contains("\"fidelity\""));
}

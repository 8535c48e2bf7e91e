//! Progress on stderr while a long command works, for a person at a terminal only.
//!
//! A line such as `checking: 3/12 runs…` appears once the command has worked for about a
//! second, is redrawn in place (`\r`) as runs complete, and is erased before the command
//! prints its results. Nothing is written when stderr is not a terminal (a pipe, a file, a
//! test), so what a script reads is the same either way, and a command that ends within the
//! second shows nothing.
//!
//! Progress counts completed runs, or names the part under way for a command that learns of
//! nothing smaller. The clock it reads, on a thread of its own, decides only when to draw:
//! the runs never see it.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use stagger_core::{Clock, MonotonicClock};

/// How long a command works before its progress is drawn.
const AFTER: Duration = Duration::from_secs(1);

/// How often the line is redrawn when nothing else happens (to advance its seconds).
const TICK: Duration = Duration::from_millis(250);

/// What the command tells the drawing thread.
enum Message {
    /// One more run is done.
    Run,
    /// A part has started.
    Part(String),
    /// The command is done: erase the line.
    Finish,
}

/// What the line counts.
enum Shape {
    /// `checking: 3/12 runs…`
    Runs { total: usize },
    /// `simulating herd… 4 s`: the part under way and the seconds so far.
    Parts,
}

/// A command's progress, drawn on stderr by a thread of its own, on a terminal only.
pub(crate) struct Progress {
    /// `None` when nothing is drawn: stderr is not a terminal, or there is one run.
    sender: Option<Sender<Message>>,
    drawer: Option<JoinHandle<()>>,
}

impl Progress {
    /// Progress through `total` runs, as `{doing}: 3/12 runs…`; drawn only with more than
    /// one run.
    pub(crate) fn runs(doing: &str, total: usize) -> Self {
        if total < 2 {
            return Self::silent();
        }
        Self::start(doing, Shape::Runs { total })
    }

    /// Progress through named parts, as `{doing} {part}… 4 s`; each [`Progress::part`] names
    /// the part under way.
    pub(crate) fn parts(doing: &str) -> Self {
        Self::start(doing, Shape::Parts)
    }

    fn silent() -> Self {
        Self {
            sender: None,
            drawer: None,
        }
    }

    fn start(doing: &str, shape: Shape) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self::silent();
        }
        let (sender, receiver) = mpsc::channel();
        let doing = doing.to_owned();
        let drawer = std::thread::spawn(move || {
            draw(&doing, &shape, &receiver, AFTER, &mut std::io::stderr());
        });
        Self {
            sender: Some(sender),
            drawer: Some(drawer),
        }
    }

    /// Counts one run as done.
    pub(crate) fn run_done(&self) {
        self.send(Message::Run);
    }

    /// Names the part now under way.
    pub(crate) fn part(&self, name: &str) {
        self.send(Message::Part(name.to_owned()));
    }

    fn send(&self, message: Message) {
        if let Some(sender) = &self.sender {
            // A drawer that has gone has nothing left to draw.
            let _ = sender.send(message);
        }
    }

    /// Erases the line, before the command prints its results.
    pub(crate) fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.send(Message::Finish);
        self.sender = None;
        if let Some(drawer) = self.drawer.take() {
            let _ = drawer.join();
        }
    }
}

impl Drop for Progress {
    /// A command that fails erases the line too, before its error is printed.
    fn drop(&mut self) {
        self.stop();
    }
}

/// The drawing thread: waits `after`, then draws the line into `out` whenever it changes
/// (on a message, or each [`TICK`] for the seconds of a [`Shape::Parts`]), and erases it
/// when told to finish.
fn draw(
    doing: &str,
    shape: &Shape,
    messages: &mpsc::Receiver<Message>,
    after: Duration,
    out: &mut dyn Write,
) {
    let clock = MonotonicClock::new();
    let started = clock.now();
    let (mut done, mut part) = (0usize, String::new());
    let mut drawn = String::new();
    loop {
        match messages.recv_timeout(TICK) {
            Ok(Message::Run) => done += 1,
            Ok(Message::Part(name)) => part = name,
            Ok(Message::Finish) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let elapsed = clock.now().saturating_duration_since(started);
        if elapsed < after {
            continue;
        }
        let line = match shape {
            Shape::Runs { total } => format!("{doing}: {}/{total} runs…", done.min(*total)),
            Shape::Parts if part.is_empty() => format!("{doing}… {} s", elapsed.as_secs()),
            Shape::Parts => format!("{doing} {part}… {} s", elapsed.as_secs()),
        };
        if line == drawn {
            continue;
        }
        // `\r` back to the start of the line, the text, and `ESC [ K` to clear what a longer
        // line left.
        let _ = write!(out, "\r{line}\x1b[K");
        let _ = out.flush();
        drawn = line;
    }
    if !drawn.is_empty() {
        let _ = write!(out, "\r\x1b[K");
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the drawer writes for `messages`, drawing from the start (`after` zero).
    fn drawn(shape: &Shape, messages: Vec<Message>) -> String {
        let (sender, receiver) = mpsc::channel();
        for m in messages {
            sender.send(m).unwrap();
        }
        sender.send(Message::Finish).unwrap();
        let mut out = Vec::new();
        draw("checking", shape, &receiver, Duration::ZERO, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn runs_are_counted_in_place_and_the_line_is_erased_at_the_end() {
        let out = drawn(
            &Shape::Runs { total: 3 },
            vec![Message::Run, Message::Run, Message::Run],
        );
        assert_eq!(
            out,
            "\rchecking: 1/3 runs…\x1b[K\rchecking: 2/3 runs…\x1b[K\rchecking: 3/3 runs…\x1b[K\r\x1b[K"
        );
    }

    #[test]
    fn a_part_is_named_and_nothing_is_drawn_before_the_wait_is_over() {
        let out = drawn(&Shape::Parts, vec![Message::Part("herd".to_owned())]);
        assert!(out.starts_with("\rchecking herd… 0 s\x1b[K"), "{out:?}");
        assert!(out.ends_with("\r\x1b[K"), "{out:?}");
        // A command done within the wait draws nothing, and erases nothing.
        let (sender, receiver) = mpsc::channel();
        sender.send(Message::Run).unwrap();
        sender.send(Message::Finish).unwrap();
        let mut out = Vec::new();
        draw(
            "checking",
            &Shape::Runs { total: 2 },
            &receiver,
            Duration::from_secs(3600),
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn off_a_terminal_or_with_one_run_there_is_no_drawer() {
        // The tests' stderr is captured, not a terminal.
        assert!(Progress::runs("checking", 1).sender.is_none());
        if !std::io::stderr().is_terminal() {
            assert!(Progress::runs("checking", 10).drawer.is_none());
            assert!(Progress::parts("simulating").drawer.is_none());
        }
    }
}

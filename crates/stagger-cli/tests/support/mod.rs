//! What the CLI tests share: running the built binary.

#![allow(dead_code, unreachable_pub)] // Each test file uses its own subset.

use std::process::{Command, Output};

/// Runs `stagger` with `args`.
pub fn stagger(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stagger"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The stdout of a run that must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = stagger(args);
    assert!(
        out.status.success(),
        "`stagger {}` exited with {:?}: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// How a run under a memory limit ended.
#[derive(Debug)]
pub struct Limited {
    /// The exit status; `None` if a signal ended it (an abort, or the kill at the time
    /// limit).
    pub code: Option<i32>,
    /// Whether it was killed for running past the time limit.
    pub timed_out: bool,
    /// What it printed on stderr.
    pub stderr: String,
    /// What it printed on stdout.
    pub stdout: String,
}

/// A way to run `stagger` with its address space limited: `prlimit --as` (util-linux) or
/// the shell's `ulimit -v`.
#[derive(Clone, Copy, Debug)]
pub enum Limiter {
    /// `prlimit --as=BYTES -- stagger ...`
    Prlimit,
    /// `sh -c 'ulimit -v KIB && exec stagger ...'`
    Ulimit,
}

/// The memory limiter this machine has, or `None` with the reason printed loudly: tests
/// that need one then skip.
pub fn limiter() -> Option<Limiter> {
    let works = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works("prlimit", &["--as=1073741824", "--", "true"]) {
        return Some(Limiter::Prlimit);
    }
    if works("sh", &["-c", "ulimit -v 1048576 && exec true"]) {
        return Some(Limiter::Ulimit);
    }
    eprintln!(
        "SKIPPED: neither `prlimit --as` (util-linux) nor `sh -c 'ulimit -v'` can limit a \
         process's memory here, so the runs under a memory limit were not tested"
    );
    None
}

/// Runs `stagger` with `args`, its address space limited to `bytes`, killed after
/// `seconds` of wall-clock time.
pub fn stagger_limited(limiter: Limiter, bytes: u64, seconds: u64, args: &[&str]) -> Limited {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::Duration;

    let bin = env!("CARGO_BIN_EXE_stagger");
    let mut command = match limiter {
        Limiter::Prlimit => {
            let mut c = Command::new("prlimit");
            c.arg(format!("--as={bytes}")).arg("--").arg(bin).args(args);
            c
        }
        Limiter::Ulimit => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", bytes / 1024))
                .arg(bin)
                .args(args);
            c
        }
    };
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the limiter runs");
    // Drain both pipes while waiting, so that a run that prints a lot cannot block.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    // The child is waited for on a thread of its own; the test gives up on it after
    // `seconds`, and kills it by its id.
    let pid = child.id();
    let (done, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let (status, timed_out) = match waited.recv_timeout(Duration::from_secs(seconds)) {
        Ok(status) => (status.expect("the child can be waited for"), false),
        Err(_) => {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
            let status = waited
                .recv()
                .expect("the waiting thread reports")
                .expect("the killed child can be waited for");
            (status, true)
        }
    };
    Limited {
        code: status.code(),
        timed_out,
        stderr: err.join().expect("stderr is read"),
        stdout: out.join().expect("stdout is read"),
    }
}

/// Files in a folder of their own, removed when dropped.
pub struct Files(pub std::path::PathBuf);

impl Files {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("stagger-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

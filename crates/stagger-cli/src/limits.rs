//! What `stagger simulate` and `stagger check` may use: the memory of the machine and of the
//! process, read once at start, and the sizes and counts of their limit flags.
//!
//! The memory limit by default is [`SHARE`] of the smaller of the process's address-space
//! limit (`RLIMIT_AS`, the soft limit in `/proc/self/limits`) and the machine's memory
//! (`MemTotal` in `/proc/meminfo`). Where neither can be read (not Linux), there is no default
//! limit. No clock is read here, and nothing here is used by the simulation itself.

use std::fmt;

/// The share of the machine's (or the address space's) memory a run may take by default. The
/// rest is the margin for what the estimate does not count exactly: the allocator's free
/// lists, vectors grown past the estimated peak, and the process's own growth while it
/// prints.
pub(crate) const SHARE: f64 = 0.85;

/// What a run is compared against when the process's current size cannot be read.
const PROCESS_FALLBACK: u64 = 16 << 20;

/// The default `--max-events`: about 0.5 s (herd) to 10 s (open-loop with 100 000
/// clients, whose requests in flight are reached at random) of simulation in a release build,
/// as measured in docs/simulator-limits.md.
pub(crate) const DEFAULT_MAX_EVENTS: u64 = 20_000_000;

/// `--max-events`, one flag for every command that runs the simulator.
#[derive(clap::Args, Clone, Copy, Debug)]
pub(crate) struct MaxEvents {
    /// Refuse, before any run starts, a command whose runs are estimated to process more
    /// events than this in all, such as 2e7; a run that passes twice its estimate is stopped.
    #[arg(
        long = "max-events",
        value_name = "N",
        value_parser = events,
        default_value_t = DEFAULT_MAX_EVENTS,
        allow_hyphen_values = true
    )]
    pub(crate) max_events: u64,
}

/// Where the default memory limit comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Source {
    /// `--max-memory`.
    Flag,
    /// [`SHARE`] of the address-space limit, the smaller of the two.
    AddressSpace(u64),
    /// [`SHARE`] of the machine's memory, the smaller of the two.
    Machine(u64),
    /// Neither is known.
    Unknown,
}

/// The memory a run may take, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MemoryLimit {
    /// The limit in bytes, `None` for none.
    pub(crate) bytes: Option<u64>,
    /// Where it comes from.
    pub(crate) source: Source,
}

impl MemoryLimit {
    /// `--max-memory` if given, else [`SHARE`] of the smaller of the address-space limit and
    /// the machine's memory.
    pub(crate) fn new(flag: Option<u64>) -> Self {
        if let Some(bytes) = flag {
            return Self {
                bytes: Some(bytes),
                source: Source::Flag,
            };
        }
        let address_space = read("/proc/self/limits").and_then(|t| address_space_limit(&t));
        let machine = read("/proc/meminfo").and_then(|t| mem_total(&t));
        let source = match (address_space, machine) {
            (Some(a), Some(m)) if a <= m => Source::AddressSpace(a),
            (Some(a), None) => Source::AddressSpace(a),
            (_, Some(m)) => Source::Machine(m),
            (None, None) => Source::Unknown,
        };
        let bytes = match source {
            Source::AddressSpace(b) | Source::Machine(b) => Some((b as f64 * SHARE) as u64),
            Source::Flag | Source::Unknown => None,
        };
        Self { bytes, source }
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let share = SHARE * 100.0;
        match (self.bytes, self.source) {
            (Some(b), Source::Flag) => write!(f, "--max-memory {}", Bytes(b)),
            (Some(b), Source::AddressSpace(of)) => write!(
                f,
                "--max-memory {} ({share:.0}% of the address-space limit, {})",
                Bytes(b),
                Bytes(of)
            ),
            (Some(b), Source::Machine(of)) => write!(
                f,
                "--max-memory {} ({share:.0}% of the machine's {})",
                Bytes(b),
                Bytes(of)
            ),
            _ => f.write_str("no memory limit (the machine's memory is unknown)"),
        }
    }
}

/// The process's own memory now: its address space (`VmSize`) where it can be read, which is
/// what an address-space limit counts, or a fixed allowance.
pub(crate) fn process_bytes() -> u64 {
    read("/proc/self/status")
        .and_then(|t| kib_field(&t, "VmSize:"))
        .unwrap_or(PROCESS_FALLBACK)
}

/// The process's peak resident memory (`VmHWM`), if it can be read.
pub(crate) fn peak_resident_bytes() -> Option<u64> {
    read("/proc/self/status").and_then(|t| kib_field(&t, "VmHWM:"))
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The soft `Max address space` of `/proc/self/limits`, in bytes; `None` if unlimited.
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemTotal:")
}

/// A `Name:   1234 kB` field, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line[name.len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => value.checked_mul(1024),
        _ => None,
    }
}

/// Parses a size such as `2GiB`, `512MB`, `1.5 GiB` or `1000000` (bytes): a number, then
/// optionally `B`, a decimal unit (`kB`, `MB`, `GB`, `TB`) or a binary one (`KiB`, `MiB`,
/// `GiB`, `TiB`), in any case.
pub(crate) fn size(text: &str) -> Result<u64, String> {
    const HINT: &str = "a size such as 2GiB, 512MB or 1000000 (bytes)";
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not {HINT}"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("`{text}` is not {HINT}")),
    };
    let bytes = value * scale;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < 2f64.powi(64)) {
        return Err(format!("`{text}` is not {HINT}, at least 1 byte"));
    }
    Ok(bytes as u64)
}

/// Parses a count such as `20000000` or `2e7`: a whole number of at least 1.
pub(crate) fn events(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>()
        && n >= 1
    {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x < 2f64.powi(64) => Ok(x as u64),
        _ => Err(format!(
            "`{text}` is not a whole number of events of at least 1, such as 20000000 or 2e7"
        )),
    }
}

/// A byte count, printed in binary units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bytes(pub(crate) u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit < UNITS.len() - 1 {
            value /= 1024.0;
            unit += 1;
        }
        if unit == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{value:.1} {}", UNITS[unit])
        }
    }
}

/// A count of events, short: `8.0e7`, or the number itself below a million.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Count(pub(crate) u64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 1_000_000 {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:.1e}", self.0 as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_decimal_and_binary_units() {
        assert_eq!(size("2GiB"), Ok(2 << 30));
        assert_eq!(size("512MB"), Ok(512_000_000));
        assert_eq!(size("1.5 gib"), Ok(3 << 29));
        assert_eq!(size("1000000"), Ok(1_000_000));
        assert_eq!(size("64KiB"), Ok(65_536));
        assert_eq!(size("7b"), Ok(7));
        for bad in [
            "",
            "GiB",
            "-1GiB",
            "0",
            "2 GiBs",
            "1e3",
            "12 parsecs",
            "0.1B",
            "1.2.3MB",
        ] {
            assert!(size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn event_counts_are_whole_and_positive() {
        assert_eq!(events("20000000"), Ok(20_000_000));
        assert_eq!(events("2e7"), Ok(20_000_000));
        for bad in ["0", "-5", "1.5", "lots", "inf", "1e30"] {
            assert!(events(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn proc_files_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max stack size            8388608              unlimited            bytes\n\
                      Max address space         4294967296           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(4 << 30));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
        let meminfo = "MemTotal:       24576000 kB\nMemFree:        20000000 kB\n";
        assert_eq!(mem_total(meminfo), Some(24_576_000 * 1024));
        assert_eq!(
            kib_field("VmSize:\t  6000 kB\n", "VmSize:"),
            Some(6_000 * 1024)
        );
        assert_eq!(kib_field("VmSize: 6000\n", "VmSize:"), None);
    }

    #[test]
    fn figures_print_short() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(3 << 29).to_string(), "1.5 GiB");
        assert_eq!(Count(999_999).to_string(), "999999");
        assert_eq!(Count(80_000_000).to_string(), "8.0e7");
    }

    #[test]
    fn the_default_limit_is_a_share_of_the_smaller() {
        let limit = MemoryLimit::new(Some(1 << 30));
        assert_eq!(limit.bytes, Some(1 << 30));
        assert_eq!(limit.to_string(), "--max-memory 1.0 GiB");
        let default = MemoryLimit::new(None);
        if let Source::AddressSpace(of) | Source::Machine(of) = default.source {
            assert_eq!(default.bytes, Some((of as f64 * SHARE) as u64));
        }
    }
}

//! Proto3 JSON durations (`"0.1s"`), read as grpc-go reads them.

use std::time::Duration;

use super::error::{GrpcConfigError, Path};
use super::json::Json;

/// The largest proto3 duration, in seconds (10 000 years).
const MAX_PROTO_SECONDS: u64 = 315_576_000_000;

/// A proto3 JSON duration that is greater than 0.
pub(super) fn positive_duration(path: &Path, json: &Json) -> Result<Duration, GrpcConfigError> {
    let Json::String(text) = json else {
        return Err(path.error(format!(
            "must be a proto3 JSON duration such as \"0.1s\", got {}",
            json.describe()
        )));
    };
    match parse_proto_duration(text) {
        Ok((false, d)) if !d.is_zero() => Ok(d),
        Ok(_) => Err(path.error(format!("must be greater than 0, got \"{text}\""))),
        Err(why) => Err(path.error(format!(
            "must be a proto3 JSON duration such as \"0.1s\" ({why}), got \"{text}\""
        ))),
    }
}

/// Parses a proto3 JSON duration as grpc-go does: an optional `-`, seconds with up to nine
/// decimals, and `s` (`"1s"`, `"0.1s"`, `".5s"`, `"1.s"`, `"-2.000000001s"`), where the whole
/// seconds may also carry a `+` (`"+1s"`, `"-+1s"`), which grpc-go's `strconv.ParseInt` of
/// them takes. Returns whether it is negative and its size.
pub(super) fn parse_proto_duration(text: &str) -> Result<(bool, Duration), &'static str> {
    let body = text.strip_suffix('s').ok_or("no `s` suffix")?;
    let (negative, body) = body.strip_prefix('-').map_or((false, body), |b| (true, b));
    let body = match body.strip_prefix('+') {
        Some(digits) if digits.starts_with(|c: char| c.is_ascii_digit()) => digits,
        _ => body,
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
        return Err("not a decimal number of seconds");
    }
    if fraction.len() > 9 {
        return Err("more than nine decimals");
    }
    let seconds = if whole.is_empty() {
        0
    } else {
        whole.parse::<u64>().map_err(|_| "too many seconds")?
    };
    if seconds > MAX_PROTO_SECONDS {
        return Err("more than 315576000000 seconds");
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        let padded = format!("{fraction:0<9}");
        padded
            .parse::<u32>()
            .map_err(|_| "not a decimal number of seconds")?
    };
    Ok((negative, Duration::new(seconds, nanos)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_durations() {
        let ok = |s: &str| parse_proto_duration(s).unwrap();
        assert_eq!(ok("1s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("0.1s"), (false, Duration::from_millis(100)));
        assert_eq!(ok(".1s"), (false, Duration::from_millis(100)));
        assert_eq!(ok("1.s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("0.000000001s"), (false, Duration::from_nanos(1)));
        assert_eq!(ok("-2s"), (true, Duration::from_secs(2)));
        assert_eq!(ok("0s"), (false, Duration::ZERO));
        // grpc-go reads the whole seconds with strconv.ParseInt, which takes a `+`.
        assert_eq!(ok("+1s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("+1.5s"), (false, Duration::from_millis(1500)));
        assert_eq!(ok("-+1s"), (true, Duration::from_secs(1)));
        for bad in [
            "1",
            "s",
            ".s",
            "1ms",
            "0.1 s",
            "1.2.3s",
            "0.0000000001s",
            "1e3s",
            "",
            // ParseInt("+") fails in grpc-go too.
            "+.5s",
            "+s",
            "+-1s",
            // grpc-go reads these as 1 s, 0.95 s and 1.05 s: artefacts, refused.
            "--1s",
            "1.-5s",
            "1.+5s",
            " 1s",
        ] {
            assert!(parse_proto_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_proto_duration("315576000000s").is_ok());
        assert!(parse_proto_duration("315576000001s").is_err());
    }
}

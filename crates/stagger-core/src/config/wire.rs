//! Durations in configuration files.
//!
//! A duration is read from text in the forms [`crate::duration::parse`] accepts (`"100ms"`,
//! `"1.5s"`, `"1h30m"`) or from a number of milliseconds (`100`, `0.5`). It is written as
//! compact text that reads back exactly, to the nanosecond: `"100ms"`, `"1s500ms"`, `"1h30m"`.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;

/// `d` as compact text that [`crate::duration::parse`] reads back exactly
/// ([`crate::duration::compact`]).
pub(crate) fn format(d: Duration) -> String {
    crate::duration::compact(d)
}

/// Serializes a present duration as [`format`]'s text. Fields using it skip `None`.
pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&format(*d)),
        None => s.serialize_none(),
    }
}

/// Reads an optional duration, naming `field` in every error.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    d: D,
    field: &'static str,
) -> Result<Option<Duration>, D::Error> {
    d.deserialize_option(OptionalDuration(field))
}

/// A duration as text or milliseconds; `None` for an explicit null.
struct OptionalDuration(&'static str);

impl<'de> Visitor<'de> for OptionalDuration {
    type Value = Option<Duration>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: a duration such as \"100ms\", \"1.5s\" or \"1h30m\", or a number of milliseconds",
            self.0
        )
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(DurationVisitor(self.0)).map(Some)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        DurationVisitor(self.0).visit_str(text).map(Some)
    }

    fn visit_u64<E: de::Error>(self, ms: u64) -> Result<Self::Value, E> {
        DurationVisitor(self.0).visit_u64(ms).map(Some)
    }

    fn visit_i64<E: de::Error>(self, ms: i64) -> Result<Self::Value, E> {
        DurationVisitor(self.0).visit_i64(ms).map(Some)
    }

    fn visit_f64<E: de::Error>(self, ms: f64) -> Result<Self::Value, E> {
        DurationVisitor(self.0).visit_f64(ms).map(Some)
    }
}

/// A duration as text or milliseconds, for the field named `.0`.
struct DurationVisitor(&'static str);

impl<'de> Visitor<'de> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: a duration such as \"100ms\", \"1.5s\" or \"1h30m\", or a number of milliseconds",
            self.0
        )
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
        crate::duration::parse(text)
            .map_err(|e| E::custom(format!("{}: {e} (got \"{text}\")", self.0)))
    }

    fn visit_u64<E: de::Error>(self, ms: u64) -> Result<Duration, E> {
        Ok(Duration::from_millis(ms))
    }

    fn visit_i64<E: de::Error>(self, ms: i64) -> Result<Duration, E> {
        u64::try_from(ms).map(Duration::from_millis).map_err(|_| {
            E::custom(format!(
                "{}: durations cannot be negative, got {ms}",
                self.0
            ))
        })
    }

    fn visit_f64<E: de::Error>(self, ms: f64) -> Result<Duration, E> {
        if !ms.is_finite() {
            return Err(E::custom(format!(
                "{}: a duration must be finite, got {ms}",
                self.0
            )));
        }
        if ms < 0.0 {
            return Err(E::custom(format!(
                "{}: durations cannot be negative, got {ms}",
                self.0
            )));
        }
        let nanos = (ms * 1e6).round();
        if nanos < u64::MAX as f64 {
            // In range and non-negative: the cast is exact for whole numbers below 2^64.
            return Ok(Duration::from_nanos(nanos as u64));
        }
        Duration::try_from_secs_f64(ms / 1e3)
            .map_err(|_| E::custom(format!("{}: duration too large, got {ms} ms", self.0)))
    }
}

/// Writes a `deserialize_with` function for an optional duration field, naming it in errors.
macro_rules! duration_fields {
    ($($function:ident => $field:literal),* $(,)?) => {$(
        pub(crate) fn $function<'de, D: ::serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Option<::std::time::Duration>, D::Error> {
            $crate::config::wire::deserialize(d, $field)
        }
    )*};
}

duration_fields!(
    base => "base",
    cap => "cap",
    timeout => "timeout",
    attempt_timeout => "attempt_timeout",
    max_server_wait => "max_server_wait",
    ttl => "ttl",
    window => "window",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_reads_back_exactly() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_micros(7),
            Duration::from_millis(100),
            Duration::from_millis(1500),
            Duration::from_secs(5400),
            Duration::from_nanos(3_723_004_005_006),
            Duration::MAX,
        ] {
            assert_eq!(crate::duration::parse(&format(d)), Ok(d), "{}", format(d));
        }
        assert_eq!(format(Duration::from_millis(100)), "100ms");
        assert_eq!(format(Duration::from_millis(1500)), "1s500ms");
        assert_eq!(format(Duration::from_secs(5400)), "1h30m");
    }
}

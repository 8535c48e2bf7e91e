//! The command line's parameters ([`Overrides`]) and how a workload reads them: the
//! overrides given, by name in declaration order, are a map a workload's parameters are
//! deserialized from, with serde, over its published setup (its [`Default`]), as a scenario
//! file is read. A workload's struct names the overrides it takes by its fields
//! (`#[serde(default, deny_unknown_fields)]`, the fields no override sets `#[serde(skip)]`),
//! so an override it does not take is serde's unknown field, which
//! [`Workload::from_overrides`](super::Workload::from_overrides) reports as
//! [`SimError::NotApplicable`](crate::SimError::NotApplicable).

use std::fmt;
use std::time::Duration;

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use stagger_core::engine::Dispersal;

use super::partition::BudgetPartition;
use crate::model::RetryAfterForm;

/// Parameters a user may override from the command line. Each workload reads those that make
/// sense for it and refuses the others ([`Workload::from_overrides`](super::Workload::from_overrides)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Clients (or, for open arrivals, the number of arrival sources).
    pub clients: Option<u64>,
    /// Rounds to average over.
    pub rounds: Option<u32>,
    /// The server's independent failure probability per attempt, in [0, 1].
    pub failure_rate: Option<f64>,
    /// The simulated duration.
    pub duration: Option<Duration>,
    /// The offered rate, in requests per second.
    pub rate: Option<f64>,
    /// The window of the peak retry share.
    pub window: Option<Duration>,
    /// One end-to-end deadline per request, from its first attempt (`outage`).
    pub timeout: Option<Duration>,
    /// The wait a throttling dependency asks for in every failed answer, as `Retry-After`
    /// (`outage`).
    pub retry_after: Option<Duration>,
    /// A rate limiter's rate, per second (`throttle`).
    pub limit_rate: Option<f64>,
    /// A rate limiter's tokens (`throttle`).
    pub limit_burst: Option<u32>,
    /// A concurrency limiter in place of the rate limiter (`throttle`).
    pub limit_concurrency: Option<u32>,
    /// How a refusal states its wait (`throttle`).
    pub retry_after_form: Option<RetryAfterForm>,
    /// What clients add above a server's wait (`throttle`).
    pub dispersal: Option<Dispersal>,
    /// Whether the clients share a gate for the destination (`throttle`).
    pub gate: Option<bool>,
    /// Whether the client holds one budget for every host or one per host (`partition`).
    pub budget_partition: Option<BudgetPartition>,
    /// A timeout for each attempt, besides the request's deadline (`tail`).
    pub attempt_timeout: Option<Duration>,
    /// The offered load, as a share of the servers' capacity (`tail`).
    pub load: Option<f64>,
    /// The replicas in the pool (`tail`).
    pub replicas: Option<u32>,
    /// The requests each replica serves at once (`tail`).
    pub concurrency: Option<u32>,
    /// How long a replica pauses (`tail`).
    pub pause: Option<Duration>,
    /// The mean time a replica runs between pauses (`tail`).
    pub pause_every: Option<Duration>,
    /// The sub-requests each request fans out to, all needed (`tail`).
    pub fanout: Option<u32>,
}

/// Lists every field of [`Overrides`], in declaration order, once: the destructuring does not
/// compile if one is missing, and each name is its field's.
macro_rules! given {
    ($($field:ident),* $(,)?) => {
        impl Overrides {
            /// The overrides set, by name, in declaration order.
            fn values(&self) -> Vec<(&'static str, Given)> {
                let Self { $($field),* } = *self;
                [$((stringify!($field), $field.map(Given::from))),*]
                    .into_iter()
                    .filter_map(|(name, value)| Some((name, value?)))
                    .collect()
            }
        }
    };
}

given!(
    clients,
    rounds,
    failure_rate,
    duration,
    rate,
    window,
    timeout,
    retry_after,
    limit_rate,
    limit_burst,
    limit_concurrency,
    retry_after_form,
    dispersal,
    gate,
    budget_partition,
    attempt_timeout,
    load,
    replicas,
    concurrency,
    pause,
    pause_every,
    fanout,
);

impl Overrides {
    /// The names of the overrides that are set, in declaration order.
    #[must_use]
    pub fn given(&self) -> Vec<&'static str> {
        self.values().into_iter().map(|(name, _)| name).collect()
    }
}

/// Reads a workload's parameters from `overrides`, over its defaults (`#[serde(default)]`).
///
/// # Errors
///
/// The first override set, in declaration order, that is not one of the workload's fields.
///
/// # Panics
///
/// If an override does not read as the workload's field of its name: a field of another
/// type than the override's (the tests apply every override to every workload).
pub(super) fn read<W: DeserializeOwned>(overrides: &Overrides) -> Result<W, &'static str> {
    let given = overrides.values();
    W::deserialize(MapDeserializer::new(given.iter().copied())).map_err(|err| match err {
        ReadError::Unknown(field) => given
            .iter()
            .map(|&(name, _)| name)
            .find(|&name| name == field)
            .expect("serde names a key it was given"),
        ReadError::Other(message) => panic!("an override does not read as its field: {message}"),
    })
}

/// An override's value, as serde's data model has it: a duration is serde's own sequence
/// (seconds, nanoseconds), an enumeration its name (read with [`by_name`]).
#[derive(Clone, Copy, Debug)]
enum Given {
    Count(u64),
    Real(f64),
    Flag(bool),
    Span(Duration),
    Name(&'static str),
}

impl From<u64> for Given {
    fn from(n: u64) -> Self {
        Self::Count(n)
    }
}

impl From<u32> for Given {
    fn from(n: u32) -> Self {
        Self::Count(n.into())
    }
}

impl From<f64> for Given {
    fn from(x: f64) -> Self {
        Self::Real(x)
    }
}

impl From<bool> for Given {
    fn from(b: bool) -> Self {
        Self::Flag(b)
    }
}

impl From<Duration> for Given {
    fn from(d: Duration) -> Self {
        Self::Span(d)
    }
}

impl<T: Named> From<T> for Given {
    fn from(value: T) -> Self {
        Self::Name(value.name())
    }
}

impl<'de> Deserializer<'de> for Given {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self {
            Self::Count(n) => visitor.visit_u64(n),
            Self::Real(x) => visitor.visit_f64(x),
            Self::Flag(b) => visitor.visit_bool(b),
            Self::Span(d) => {
                let parts = [Self::Count(d.as_secs()), Self::from(d.subsec_nanos())];
                SeqDeserializer::new(parts.into_iter()).deserialize_any(visitor)
            }
            Self::Name(name) => visitor.visit_borrowed_str(name),
        }
    }

    /// A field that is an `Option` in the workload is `Some` when its override is given.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl IntoDeserializer<'_, ReadError> for Given {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// Why a workload's parameters could not be read: an override that is not one of its fields,
/// or (a bug) one that does not read as its field.
#[derive(Debug)]
enum ReadError {
    Unknown(String),
    Other(String),
}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::Other(message.to_string())
    }

    fn unknown_field(field: &str, _expected: &'static [&'static str]) -> Self {
        Self::Unknown(field.to_owned())
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(field) => write!(f, "unknown field `{field}`"),
            Self::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ReadError {}

/// An enumeration an override names: the command line's names, read back by [`by_name`].
pub(crate) trait Named: Copy + 'static {
    /// Every value.
    const ALL: &'static [Self];

    /// The value's name.
    fn name(self) -> &'static str;
}

impl Named for RetryAfterForm {
    const ALL: &'static [Self] = &Self::ALL;

    fn name(self) -> &'static str {
        self.name()
    }
}

impl Named for Dispersal {
    const ALL: &'static [Self] = &Self::ALL;

    fn name(self) -> &'static str {
        self.name()
    }
}

impl Named for BudgetPartition {
    const ALL: &'static [Self] = &Self::ALL;

    fn name(self) -> &'static str {
        self.name()
    }
}

/// Reads an enumeration by its name (`#[serde(deserialize_with = "by_name")]`).
pub(crate) fn by_name<'de, D: Deserializer<'de>, T: Named>(deserializer: D) -> Result<T, D::Error> {
    let name = <&str>::deserialize(deserializer)?;
    T::ALL
        .iter()
        .copied()
        .find(|value| value.name() == name)
        .ok_or_else(|| de::Error::unknown_variant(name, &[]))
}

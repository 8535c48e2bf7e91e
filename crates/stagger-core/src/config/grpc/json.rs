//! [`Json`]: a service config's values as read, before any rule is checked.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::error::{GrpcConfigError, Path};

/// A JSON value as read, so that A6's rules can be checked with the offending field's path
/// (and integers told from other numbers) rather than failing inside the deserializer.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Null => "null".to_owned(),
            Self::Bool(b) => b.to_string(),
            Self::Int(n) => n.to_string(),
            Self::Float(x) => format!("{x:?}"),
            Self::String(s) => format!("the string \"{s}\""),
            Self::Array(_) => "an array".to_owned(),
            Self::Object(_) => "an object".to_owned(),
        }
    }

    pub(super) fn object(&self, path: &Path) -> Result<&[(String, Json)], GrpcConfigError> {
        match self {
            Self::Object(fields) => Ok(fields),
            other => Err(path.error(format!("must be an object, got {}", other.describe()))),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Int(i128::from(n)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Int(i128::from(n)))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Json, E> {
        Ok(Json::Int(n))
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Json, E> {
        Ok(i128::try_from(n).map_or(Json::Float(n as f64), Json::Int))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Json, E> {
        Ok(Json::Float(x))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut fields: Vec<(String, Json)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!("duplicate field `{key}`")));
            }
            fields.push((key, value));
        }
        Ok(Json::Object(fields))
    }
}

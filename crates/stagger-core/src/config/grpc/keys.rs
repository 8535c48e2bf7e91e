//! The keys gRPC defines for each object of a service config, and how a file may spell them
//! (see [Spellings](super#spellings)).
//!
//! [`Fields::of`] matches an object's keys to its [`Schema`] once, refusing unknown keys and
//! two spellings of one field; the readers then ask for fields by their JSON names.

use super::error::{GrpcConfigError, Path};
use super::json::Json;

/// A key that gRPC defines for one kind of object.
#[derive(Clone, Copy, Debug)]
struct Key {
    /// The proto3 JSON (lowerCamel) name, matched in any case as grpc-go matches it.
    json: &'static str,
    /// The original proto field name, matched exactly.
    proto: &'static str,
}

impl Key {
    /// Whether `spelled`, a key of the file, names this field. See [Spellings](super#spellings).
    fn is_spelled(&self, spelled: &str) -> bool {
        spelled == self.proto || go_fold_eq(spelled, self.json)
    }
}

const fn key(json: &'static str, proto: &'static str) -> Key {
    Key { json, proto }
}

/// The keys of one kind of object, and what an error calls that kind of object.
#[derive(Debug)]
pub(super) struct Schema {
    what: &'static str,
    keys: &'static [Key],
}

impl Schema {
    /// The keys, for an error: their JSON names, and how else they may be spelled.
    fn describe(&self) -> String {
        let names: Vec<&str> = self.keys.iter().map(|k| k.json).collect();
        let list = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        };
        match self.keys.iter().find(|k| k.json != k.proto) {
            Some(k) => format!(
                "{list} (in any case, or as proto names such as {})",
                k.proto
            ),
            None => format!("{list} (in any case)"),
        }
    }
}

/// `service_config.proto`'s `ServiceConfig`. Only `methodConfig` and `retryThrottling` are read.
pub(super) const SERVICE_CONFIG: Schema = Schema {
    what: "a service config",
    keys: &[
        key("methodConfig", "method_config"),
        key("retryThrottling", "retry_throttling"),
        key("loadBalancingConfig", "load_balancing_config"),
        key("loadBalancingPolicy", "load_balancing_policy"),
        key("healthCheckConfig", "health_check_config"),
        key("connectionScaling", "connection_scaling"),
    ],
};

/// `MethodConfig`. `name`, `retryPolicy` and `hedgingPolicy` are read.
pub(super) const METHOD_CONFIG: Schema = Schema {
    what: "a method config",
    keys: &[
        key("name", "name"),
        key("retryPolicy", "retry_policy"),
        key("hedgingPolicy", "hedging_policy"),
        key("waitForReady", "wait_for_ready"),
        key("timeout", "timeout"),
        key("maxRequestMessageBytes", "max_request_message_bytes"),
        key("maxResponseMessageBytes", "max_response_message_bytes"),
    ],
};

/// `MethodConfig.Name`.
pub(super) const NAME: Schema = Schema {
    what: "a name entry",
    keys: &[key("service", "service"), key("method", "method")],
};

/// `MethodConfig.RetryPolicy`, and `perAttemptRecvTimeout` of A6's revision (not read).
pub(super) const RETRY_POLICY: Schema = Schema {
    what: "a retryPolicy",
    keys: &[
        key("maxAttempts", "max_attempts"),
        key("initialBackoff", "initial_backoff"),
        key("maxBackoff", "max_backoff"),
        key("backoffMultiplier", "backoff_multiplier"),
        key("retryableStatusCodes", "retryable_status_codes"),
        key("perAttemptRecvTimeout", "per_attempt_recv_timeout"),
    ],
};

/// `MethodConfig.HedgingPolicy`.
pub(super) const HEDGING_POLICY: Schema = Schema {
    what: "a hedgingPolicy",
    keys: &[
        key("maxAttempts", "max_attempts"),
        key("hedgingDelay", "hedging_delay"),
        key("nonFatalStatusCodes", "non_fatal_status_codes"),
    ],
};

/// `ServiceConfig.RetryThrottlingPolicy`.
pub(super) const RETRY_THROTTLING: Schema = Schema {
    what: "retryThrottling",
    keys: &[
        key("maxTokens", "max_tokens"),
        key("tokenRatio", "token_ratio"),
    ],
};

/// Whether `spelled` is `name` as Go's `encoding/json` (which grpc-go reads service configs
/// with) matches a key to a field: ignoring case, where case is folded as Go folds it. For an
/// ASCII `name`, that is ASCII case plus the two non-ASCII letters that fold to ASCII ones:
/// the Kelvin sign (`k`) and the long s (`s`).
fn go_fold_eq(spelled: &str, name: &str) -> bool {
    let fold = |c: char| match c {
        '\u{212A}' => 'k',
        '\u{17F}' => 's',
        c => c.to_ascii_lowercase(),
    };
    spelled.chars().map(fold).eq(name.chars().map(fold))
}

/// An object's fields, each matched to the key it spells.
#[derive(Debug)]
pub(super) struct Fields<'a> {
    path: Path,
    /// Each field's JSON name, its key as the file spells it, and its value, in file order.
    found: Vec<(&'static str, &'a str, &'a Json)>,
}

impl<'a> Fields<'a> {
    /// Matches every field of the object at `path` to one of `schema`'s keys.
    ///
    /// # Errors
    ///
    /// A key that names none of them, or a second key naming the same field, named as the
    /// file spells it.
    pub(super) fn of(
        path: &Path,
        fields: &'a [(String, Json)],
        schema: &Schema,
    ) -> Result<Self, GrpcConfigError> {
        let mut found: Vec<(&'static str, &'a str, &'a Json)> = Vec::new();
        for (spelled, value) in fields {
            let Some(key) = schema.keys.iter().find(|k| k.is_spelled(spelled)) else {
                return Err(path.field(spelled).error(format!(
                    "unknown key {spelled:?}; {}'s keys are {}",
                    schema.what,
                    schema.describe()
                )));
            };
            if let Some((_, first, _)) = found.iter().find(|(json, ..)| *json == key.json) {
                return Err(path.field(spelled).error(format!(
                    "{first:?} and {spelled:?} both set {}; give it once",
                    key.json
                )));
            }
            found.push((key.json, spelled, value));
        }
        Ok(Self {
            path: path.clone(),
            found,
        })
    }

    /// The field's path, with its key as the file spells it, and its value; `None` if it is
    /// absent or `null`.
    pub(super) fn get(&self, json: &str) -> Option<(Path, &'a Json)> {
        self.found
            .iter()
            .find(|(name, _, value)| *name == json && **value != Json::Null)
            .map(|(_, spelled, value)| (self.path.field(spelled), *value))
    }

    /// [`get`](Fields::get), or an error naming the field by its JSON name.
    pub(super) fn required(&self, json: &str) -> Result<(Path, &'a Json), GrpcConfigError> {
        self.get(json)
            .ok_or_else(|| self.path.field(json).error("is required"))
    }

    /// The field's key as the file spells it, or its JSON name if it is absent.
    pub(super) fn spelling(&self, json: &'static str) -> &'a str {
        self.found
            .iter()
            .find(|(name, ..)| *name == json)
            .map_or(json, |(_, spelled, _)| spelled)
    }
}

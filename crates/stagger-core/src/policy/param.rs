//! One parameter of a policy, as a value, so that overrides from a command line or a
//! configuration file can be applied to any policy in the catalog.

use std::time::Duration;

use super::PolicyKind;
use crate::error::ConfigError;

/// A parameter and its new value.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Param {
    /// The delay before the first retry, and the unit of growth.
    Base(Duration),
    /// The ceiling on a single delay (before jitter, for proportional jitter).
    Cap(Duration),
    /// The growth multiplier of an exponential curve.
    Factor(f64),
    /// The jitter fraction of subtractive (`jitter`) or proportional (`r`) jitter.
    Jitter(f64),
    /// The most attempts, counting the first.
    MaxAttempts(u32),
}

impl Param {
    /// The parameter's name, as the catalog, the errors and configuration files write it.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Base(_) => "base",
            Self::Cap(_) => "cap",
            Self::Factor(_) => "factor",
            Self::Jitter(_) => "jitter",
            Self::MaxAttempts(_) => "max_attempts",
        }
    }

    /// The error for a policy that has no such parameter.
    #[must_use]
    pub const fn not_applicable(&self, policy: PolicyKind) -> ConfigError {
        ConfigError::NotApplicable {
            param: self.name(),
            policy: policy.name(),
        }
    }
}

/// Writes, for a configuration type (generic over one parameter, as `Decorrelated<W: Walk>`, or
/// not), a `const` setter (`with_*`) and a getter for each listed
/// parameter, and `apply`, which routes a [`Param`] to its setter or refuses it as not
/// applicable.
macro_rules! accessors {
    ($ty:ident $(<$g:ident: $bound:path>)? { $( $(#[doc = $doc:literal])* $field:ident: $t:ty => $setter:ident, $variant:ident; )* }) => {
        impl $(<$g: $bound>)? $ty $(<$g>)? {
            $(
                $(#[doc = $doc])*
                #[must_use]
                pub const fn $setter(mut self, $field: $t) -> Self {
                    self.$field = $field;
                    self
                }

                #[doc = concat!("The `", stringify!($field), "` parameter: see [`", stringify!($ty), "::", stringify!($setter), "`].")]
                #[must_use]
                pub const fn $field(&self) -> $t {
                    self.$field
                }
            )*

            /// This configuration with `param` changed, if the policy has that parameter.
            pub(crate) fn apply(
                self,
                param: $crate::policy::Param,
            ) -> Result<Self, $crate::error::ConfigError> {
                match param {
                    $( $crate::policy::Param::$variant(value) => Ok(self.$setter(value)), )*
                    #[allow(unreachable_patterns)]
                    other => Err(other.not_applicable(
                        $crate::policy::PolicyConfig::kind(&self),
                    )),
                }
            }
        }
    };
}
pub(crate) use accessors;

//! What a retrying HTTP layer did for a response's request.

use stagger_core::engine::{StopReason, Summary};

/// A response extension set by the HTTP integrations (the tower layer and the reqwest
/// middleware): what the layer did for this response's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryReport {
    /// Attempts made, time waited, time elapsed, and the last failure's kind.
    pub summary: Summary,
    /// Why the layer gave up and returned this (failed) response; `None` on success.
    pub gave_up: Option<StopReason>,
}

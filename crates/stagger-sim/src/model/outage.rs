//! The counts an outage window adds to a run's row.

/// The counts an outage window adds to the row.
#[derive(Default)]
pub(crate) struct OutageCounts {
    pub(crate) met: u64,
    pub(crate) met_succeeded: u64,
    pub(crate) recovery_load: u64,
}

//! One module per subcommand: flags in, library calls, output out. A subcommand with several
//! stages (`check`) is a folder, one file a stage.

pub(crate) mod bench;
pub(crate) mod budgets;
pub(crate) mod catalog;
pub(crate) mod check;
pub(crate) mod explain;
pub(crate) mod policies;
pub(crate) mod schedule;
pub(crate) mod simulate;

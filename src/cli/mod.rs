//! One module per subcommand: its arguments and what it runs.

pub mod backtest;
pub mod explain;
pub mod simulate;
pub mod validate;

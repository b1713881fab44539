//! `foresight backtest`.

use std::process::ExitCode;

/// Arguments of `foresight backtest`.
#[derive(clap::Args)]
pub struct BacktestArgs {}

/// Runs `foresight backtest`.
pub fn run(_args: BacktestArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}

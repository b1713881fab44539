//! `foresight explain`.

use std::process::ExitCode;

/// Arguments of `foresight explain`.
#[derive(clap::Args)]
pub struct ExplainArgs {}

/// Runs `foresight explain`.
pub fn run(_args: ExplainArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}

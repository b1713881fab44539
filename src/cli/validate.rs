//! `foresight validate`.

use std::process::ExitCode;

/// Arguments of `foresight validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {}

/// Runs `foresight validate`.
pub fn run(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not built yet")
}

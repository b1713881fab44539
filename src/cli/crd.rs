//! `foresight crd`: prints the EffectiveHorizontalPodAutoscaler CustomResourceDefinition.

use std::io::Write;
use std::process::ExitCode;

/// Arguments of `foresight crd`.
#[derive(clap::Args)]
pub struct CrdArgs {
    /// Print JSON instead of YAML.
    #[arg(long)]
    pub json: bool,
}

/// Runs `foresight crd`.
pub fn run(args: CrdArgs) -> anyhow::Result<ExitCode> {
    let text = if args.json {
        serde_json::to_string_pretty(&foresight_k8s::crd::custom_resource_definition())?
    } else {
        foresight_k8s::crd::custom_resource_definition_yaml()?
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", text.trim_end()).and_then(|()| out.flush()) {
        // A closed pipe (`foresight crd | head`) is the reader's choice, not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
